"""What the CLI writes never fails on a character, never drives the terminal, and live
lines only where they work.

A Windows console takes any text (Python writes UTF-16 to it), but a pipe or a file gets
the ANSI code page (cp1252, cp932, ...), where a goal in another script raises
UnicodeEncodeError. The background agent's output is a file too.

Text from outside (a model's reply, a tool's output, a file name, a server's error, a
goal read from a planted journal) can hold escape sequences that retitle, clear or
rewrite a terminal; `printable` is the one place that makes such text inert.
"""

from __future__ import annotations

import contextlib
import logging
import re
import sys
from typing import TextIO

ENABLE_VIRTUAL_TERMINAL_PROCESSING = 0x0004
# C0 and C1 controls (ESC starts every escape sequence, U+009B is a one-character CSI,
# U+009D an OSC), DEL, the bidirectional overrides that reorder what a line shows, the
# line separators, and lone surrogates (undecodable bytes, which a stream cannot encode).
_OTHER_UNSAFE = "\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\ud800-\udfff"
_ANY_CONTROL = re.compile("[\x00-\x1f" + _OTHER_UNSAFE + "]")
_CONTROL_BUT_LINES = re.compile("[\x00-\x08\x0b-\x1f" + _OTHER_UNSAFE + "]")


def _escape(found: re.Match[str]) -> str:
    code = ord(found[0])
    return f"\\x{code:02x}" if code < 256 else f"\\u{code:04x}"


def printable(text: str, one_line: bool = False) -> str:
    """`text` as it may reach a terminal: every control character written as an escape
    (`\\x1b`, `\\u202e`), so no sequence in it can act; other Unicode text is kept.
    Newlines and tabs stay, unless `one_line` (a `\\r\\n` is a newline)."""
    if one_line:
        return _ANY_CONTROL.sub(_escape, text)
    return _CONTROL_BUT_LINES.sub(_escape, text.replace("\r\n", "\n"))


def say(text: str, err: bool = False, nl: bool = True) -> None:
    """Print `text` (stdout, or stderr with `err`) made printable: for anything that may
    hold text from outside."""
    # typer's own click: the CLI has it loaded already, a second click costs ~40 ms.
    import typer

    typer.echo(printable(text), err=err, nl=nl)


class PrintableFormatter(logging.Formatter):
    """Log lines for a terminal: a logged reply or error cannot drive it."""

    def format(self, record: logging.LogRecord) -> str:
        return printable(super().format(record))


def utf8_streams() -> None:
    """stdout and stderr: UTF-8 when they go to a pipe or a file, whatever the code page;
    a terminal keeps its own encoding. Either way a character it cannot hold is replaced
    rather than raised. Call once, first thing in main()."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is None:  # replaced by something else (a test runner's capture)
            continue
        if _is_terminal(stream):
            reconfigure(errors="replace")
        else:
            reconfigure(encoding="utf-8", errors="replace")


def live_line_supported(stream: TextIO) -> bool:
    """Whether `\\r` plus escape codes redraw a line on stream: a terminal that understands
    them. A legacy Windows console shows the codes raw unless virtual terminal processing
    can be switched on, which this tries."""
    if not _is_terminal(stream):
        return False
    if sys.platform != "win32":
        return True
    return _enable_windows_escapes(stream)


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (OSError, ValueError, AttributeError):
        return False


def _enable_windows_escapes(stream: TextIO) -> bool:
    import ctypes
    import msvcrt  # Windows only

    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined]
    try:
        handle = msvcrt.get_osfhandle(stream.fileno())  # type: ignore[attr-defined]
    except (OSError, ValueError):
        return False
    mode = ctypes.c_uint32()
    if not kernel32.GetConsoleMode(ctypes.c_void_p(handle), ctypes.byref(mode)):
        return False
    if mode.value & ENABLE_VIRTUAL_TERMINAL_PROCESSING:
        return True
    wanted = mode.value | ENABLE_VIRTUAL_TERMINAL_PROCESSING
    with contextlib.suppress(OSError):
        return bool(kernel32.SetConsoleMode(ctypes.c_void_p(handle), wanted))
    return False
