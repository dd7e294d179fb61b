"""Outputs too long for an observation: stored whole by the journal's output store, and
read back by line (read_output) or searched (search_output).

A plain string is searched in this process, linearly. A regular expression runs in a
child process killed after REGEX_SECONDS: Python's `re` cannot be interrupted, and a
catastrophic pattern such as `(a+)+$` would otherwise hang the agent.
"""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
from collections.abc import Iterator
from typing import IO, Annotated

from localagent.journal.outputstore import Stored
from localagent.system.safefs import UnsafeFile
from localagent.tools.base import ToolContext, ToolError, ToolResult, describe

log = logging.getLogger("localagent.tools")
LINE_BYTES = 4096  # of each line, searched and shown at most
SHOWN_CHARS = 300  # of a matching line, shown
MAX_MATCHES = 50
MAX_PATTERN = 1000
REGEX_SECONDS = 5.0
IDS_SHOWN = 20
_SPECIAL = set(".^$*+?{}[]\\|()")
# Runs in the child: reads a JSON header line, then the output; writes one JSON line per
# match shown, then the number of matching lines.
_REGEX_SEARCH = """\
import json, re, sys
source, out = sys.stdin.buffer, sys.stdout.buffer
head = json.loads(source.readline())
pattern, found = re.compile(head["pattern"]), 0
for number, raw in enumerate(source, 1):
    line = raw[: head["line_bytes"]].decode("utf-8", "replace").rstrip("\\r\\n")
    if pattern.search(line):
        found += 1
        if found <= head["max"]:
            out.write(json.dumps([number, line[: head["shown"]]]).encode() + b"\\n")
out.write(json.dumps(found).encode() + b"\\n")
"""


# ---- storing (for the registry and run_cmd) -----------------------------------------------


def store_text(ctx: ToolContext, text: str) -> tuple[Stored | None, str]:
    """Store a long observation whole: what was stored, or None and why not ("" when this
    context stores nothing)."""
    if ctx.outputs is None or ctx.output_id is None:
        return None, ""
    try:
        return ctx.outputs.save(ctx.output_id, text), ""
    except (OSError, UnsafeFile) as exc:
        return None, not_stored(ctx, exc)


def not_stored(ctx: ToolContext, exc: OSError | UnsafeFile) -> str:
    problem = exc.strerror or str(exc) if isinstance(exc, OSError) else str(exc)
    log.warning("an output was not stored: %s", problem)
    return ctx.prompts.render("output_not_stored", problem=problem)


def stored_note(ctx: ToolContext, stored: Stored) -> str:
    """How the model reads the rest of a stored output."""
    lines = f"{stored.lines:,}"
    if stored.dropped:
        size, dropped = f"{stored.size:,}", f"{stored.dropped:,}"
        cut = {"size": size, "dropped": dropped}
        return ctx.prompts.render("output_stored_cut", id=stored.id, lines=lines, **cut)
    return ctx.prompts.render("output_stored", id=stored.id, lines=lines)


# ---- the tools ----------------------------------------------------------------------------


def read_output(
    ctx: ToolContext,
    id: Annotated[int, "The stored output's id, as its observation names it."],
    start_line: Annotated[int, "First line to show (1-based)."] = 1,
    end_line: Annotated[int, "Last line to show; 0 reads to the end (as much as fits)."] = 0,
) -> ToolResult:
    """Read lines of a long output that was stored whole (its observation showed only the
    head and tail), shown with their line numbers."""
    first = max(start_line, 1)
    if end_line and end_line < first:
        raise ToolError.of("end_before_start", end_line=end_line, start_line=first)
    room = max(ctx.output_limit - 200, ctx.output_limit // 2)  # the header and how to go on
    shown: list[str] = []
    used = total = 0
    with _open(ctx, id) as fh:
        for number, text, cut in _lines(fh):
            total = number
            if number < first or (end_line and number > end_line) or used > room:
                continue
            line = f"{number:>5}| {text}" + (f" [... {cut} more bytes]" if cut else "")
            used += len(line) + 1
            if used <= room:
                shown.append(line)
    if first > total:
        raise ToolError.of("output_past_end", id=id, total=total, start_line=first)
    end = first + len(shown) - 1
    wanted = min(end_line, total) if end_line else total
    body = "\n".join(shown)
    if end < wanted:
        body += f"\n[... lines {end + 1}-{wanted} not shown; read on with start_line={end + 1}]"
    return ToolResult(True, f"output {id} lines {first}-{end} of {total}:\n{body}")


def search_output(
    ctx: ToolContext,
    id: Annotated[int, "The stored output's id, as its observation names it."],
    pattern: Annotated[str, "A regular expression (Python syntax) or a plain string."],
) -> ToolResult:
    """Find the lines of a long output stored whole that match a pattern; each result is
    `line: text`, to read around with read_output."""
    if not pattern:
        raise ToolError.of("output_pattern_empty")
    if len(pattern) > MAX_PATTERN:
        raise ToolError.of("output_pattern_long", size=len(pattern), limit=MAX_PATTERN)
    regex, how = _as_regex(pattern)
    with _open(ctx, id) as fh:
        if regex:
            matches, found = _regex_matches(fh, pattern)
        else:
            matches, found = _plain_matches(fh, pattern)
    if not found:
        return ToolResult(True, f"no line of output {id} matches {describe(pattern)}{how}")
    shown = _fitting([f"{n}: {text}" for n, text in matches], ctx.output_limit - 400)
    more = f" (the first {len(shown)} shown)" if found > len(shown) else ""
    header = f"{found} lines of output {id} match {describe(pattern)}{how}{more}:"
    return ToolResult(True, "\n".join([header, *shown]))


# ---- reading the store ---------------------------------------------------------------------


def _open(ctx: ToolContext, output_id: int) -> IO[bytes]:
    if ctx.outputs is None:
        raise ToolError.of("outputs_not_stored")
    try:
        if not 0 < output_id < 10**18:  # no such seq; an absurd name never reaches the disk
            raise FileNotFoundError(output_id)
        return ctx.outputs.open(output_id)
    except FileNotFoundError:
        listing = _listing(ctx.outputs.ids())
        raise ToolError.of("no_stored_output", id=output_id, listing=listing) from None
    except UnsafeFile as exc:
        raise ToolError.of("stored_output_unreadable", id=output_id, problem=exc) from None


def _listing(ids: list[int]) -> ToolError:
    if not ids:
        return ToolError.of("no_outputs_yet")
    older = len(ids) - IDS_SHOWN
    more = ToolError.of("stored_outputs_older", count=older) if older > 0 else ""
    shown = ", ".join(str(i) for i in ids[-IDS_SHOWN:])
    return ToolError.of("stored_outputs", ids=shown, older=more)


def _lines(fh: IO[bytes]) -> Iterator[tuple[int, str, int]]:
    """Each line's number, its first LINE_BYTES as text, and how many bytes of it were
    left out; memory stays bounded whatever the length of a line."""
    number = 0
    while head := fh.readline(LINE_BYTES):
        number += 1
        cut = 0
        if not head.endswith(b"\n"):
            while rest := fh.readline(1 << 16):  # the rest of a long line, skipped
                cut += len(rest.rstrip(b"\r\n"))
                if rest.endswith(b"\n"):
                    break
        text = head.rstrip(b"\r\n").decode("utf-8", errors="replace").replace("\x00", "\ufffd")
        yield number, text, cut


def _fitting(lines: list[str], room: int) -> list[str]:
    """The first lines that fit in `room` characters (one at least)."""
    used = 0
    for count, line in enumerate(lines):
        used += len(line) + 1
        if used > room and count:
            return lines[:count]
    return lines


def _as_regex(pattern: str) -> tuple[bool, str]:
    """Whether to search `pattern` as a regular expression, and what to say about it."""
    if not _SPECIAL & set(pattern):
        return False, ""
    try:
        re.compile(pattern)
    except re.error as exc:
        return False, f" (as plain text: not a valid regular expression, {exc})"
    return True, ""


def _plain_matches(fh: IO[bytes], pattern: str) -> tuple[list[tuple[int, str]], int]:
    matches: list[tuple[int, str]] = []
    found = 0
    for number, text, _ in _lines(fh):
        if pattern in text:
            found += 1
            if found <= MAX_MATCHES:
                matches.append((number, text[:SHOWN_CHARS]))
    return matches, found


def _regex_matches(fh: IO[bytes], pattern: str) -> tuple[list[tuple[int, str]], int]:
    head = {"pattern": pattern, "line_bytes": LINE_BYTES, "shown": SHOWN_CHARS}
    data = json.dumps({**head, "max": MAX_MATCHES}).encode() + b"\n" + fh.read()
    argv = [sys.executable, "-I", "-S", "-c", _REGEX_SEARCH]
    flags = getattr(subprocess, "CREATE_NO_WINDOW", 0)
    try:
        done = subprocess.run(
            argv, input=data, capture_output=True, timeout=REGEX_SECONDS, creationflags=flags
        )
    except subprocess.TimeoutExpired:
        raise ToolError.of(
            "regex_too_slow", pattern=describe(pattern), seconds=f"{REGEX_SECONDS:g}"
        ) from None
    lines = [line for line in done.stdout.split(b"\n") if line]
    if done.returncode != 0 or not lines:
        why = done.stderr.decode("utf-8", errors="replace").strip().splitlines()[-1:]
        raise ToolError.of("output_search_failed", problem=why[0] if why else done.returncode)
    matches = [(int(n), str(text)) for n, text in map(json.loads, lines[:-1])]
    return matches, int(json.loads(lines[-1]))
