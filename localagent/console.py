"""What the CLI writes never fails on a character, and live lines only where they work.

A Windows console takes any text (Python writes UTF-16 to it), but a pipe or a file gets
the ANSI code page (cp1252, cp932, ...), where a goal in another script raises
UnicodeEncodeError. The background agent's output is a file too.
"""

from __future__ import annotations

import contextlib
import sys
from typing import TextIO

ENABLE_VIRTUAL_TERMINAL_PROCESSING = 0x0004


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
