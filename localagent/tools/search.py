"""search_files and find_files: the workspace's text files by content, its files by name.

Matching runs in the `regex` module, not `re`: a match in `re` cannot be interrupted (it
holds the interpreter in C code), so a pattern like `(a|aa)+$` on a long line would hold
the agent for hours, while `regex` takes a timeout. Patterns are Python `re` syntax,
checked with `re` first, so an invalid one is searched as plain text with a note. A whole
call has one deadline (`ToolContext.search_seconds`) and returns what it found by then.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from re import _parser  # type: ignore[attr-defined]
from typing import TYPE_CHECKING, Annotated

from localagent.tools import gitignore
from localagent.tools.base import ToolContext, ToolError, ToolResult, describe
from localagent.tools.paths import normalize_path, relative, resolve_in_workspace
from localagent.tools.walk import POLL_SECONDS, Walk, start_of

if TYPE_CHECKING:
    import regex

MAX_RESULTS_RANGE = (1, 500)
MAX_FOUND_FILES = 200
MAX_PATTERN_CHARS = 1000
# `regex` copies the body of a counted repeat once per mandatory repetition when it
# compiles: `x{4294967294}` would take all memory. 100,000 copies compile in ~0.05 s.
MAX_EXPANSION = 100_000
LINE_CHARS = 200  # of a matching line shown, around the match
ROOM_FOR_SUMMARY = 600  # characters of the output limit kept for the closing lines
_REPEATS = (_parser.MAX_REPEAT, _parser.MIN_REPEAT, _parser.POSSESSIVE_REPEAT)


def search_files(
    ctx: ToolContext,
    pattern: Annotated[str, "Python regular expression (or plain text); (?i) ignores case."],
    path: Annotated[str, "Folder (or file) to search, relative to the workspace root."] = ".",
    glob: Annotated[str, "Only files whose name matches, e.g. '*.py' or 'src/**/*.js'."] = "",
    max_results: Annotated[int, "Show at most this many matching lines (1-500)."] = 50,
) -> ToolResult:
    """Search the workspace's text files for a regular expression and show the matching
    lines as path:line: text, skipping .git, virtual environments, binary files and what
    .gitignore ignores."""
    compiled, note = _compile(pattern)
    start = start_of(ctx.root, resolve_in_workspace(ctx.root, path), path)
    wanted = _glob_filter(glob, relative(ctx.root, start))
    walk = Walk(ctx.root, time.monotonic() + ctx.search_seconds, ctx.cancelled)
    limit = min(max(max_results, MAX_RESULTS_RANGE[0]), MAX_RESULTS_RANGE[1])
    found = Found(limit, ctx.output_limit - ROOM_FOR_SUMMARY - len(note))
    _bounded(lambda: _search(walk, walk.files(start), wanted, compiled, found), walk)
    shown, summary = found.close(pattern, path, glob)
    lines = [note] if note else []
    lines += [*shown, summary, *walk.notes(ctx.search_seconds)]
    return ToolResult(True, "\n".join(lines), facts={"searched": [normalize_path(path)]})


def _search(
    walk: Walk,
    files: Iterator[str],
    wanted: Callable[[str], bool],
    compiled: regex.Pattern[str],
    found: Found,
) -> None:
    for file in files:
        text = walk.read_text(file) if wanted(file) else None
        if text is None:
            continue
        found.files += 1
        try:
            for number, line in _matching_lines(compiled, text, walk.deadline):
                found.add(f"{file}:{number}: {line}", file)
        except TimeoutError:
            walk.stopped = "time"
            return


def _bounded(work: Callable[[], None], walk: Walk) -> None:
    """Runs work in a thread and waits for it until the walk's deadline, or a stop.

    The `regex` timeout counts CPU time, which on a busy machine passes slower than the
    clock; waiting here keeps the call to its deadline by the clock. A match still running
    then stops by itself at its timeout, within the same number of CPU seconds.
    """
    failure: list[BaseException] = []

    def target() -> None:
        try:
            work()
        except BaseException as exc:
            failure.append(exc)

    thread = threading.Thread(target=target, name="search_files", daemon=True)
    thread.start()
    while thread.is_alive() and not walk.late():
        thread.join(min(POLL_SECONDS, max(0.0, walk.deadline - time.monotonic())))
    if failure:
        raise failure[0]


def find_files(
    ctx: ToolContext,
    glob: Annotated[str, "Name pattern: '*.py' (in any folder), '**/test_*.py', 'src/**/*.js'."],
    path: Annotated[str, "Folder to look in, relative to the workspace root."] = ".",
) -> ToolResult:
    """Find files by name pattern, sorted by path, with the same skips as search_files."""
    if not glob.strip():
        raise ToolError.of("glob_empty")
    start = start_of(ctx.root, resolve_in_workspace(ctx.root, path), path)
    wanted = _glob_filter(glob, relative(ctx.root, start))
    walk = Walk(ctx.root, time.monotonic() + ctx.search_seconds, ctx.cancelled)
    matched = [file for file in walk.files(start) if wanted(file)]
    shown = matched[:MAX_FOUND_FILES]
    where = f" under {describe(path)}" if path.strip() not in (".", "") else ""
    count = f"{len(matched)} file{'' if len(matched) == 1 else 's'} match"
    summary = f"{count} {describe(glob)}{where}" if matched else ""
    summary = summary or f"no files match {describe(glob)}{where}"
    if len(matched) > len(shown):
        summary += f"; showing the first {len(shown)}: narrow the glob or the path"
    return ToolResult(True, "\n".join([*shown, summary, *walk.notes(ctx.search_seconds)]))


@dataclass
class Found:
    """The matching lines shown, within max_results and the room of the output limit,
    and the count of all of them. Filled by the search's thread until `close`."""

    limit: int
    room: int
    lines: list[str] = field(default_factory=list)
    matches: int = 0
    files: int = 0  # searched
    matched_files: set[str] = field(default_factory=set)
    used: int = 0
    closed: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, line: str, file: str) -> None:
        with self.lock:
            if self.closed:
                return
            self.matches += 1
            self.matched_files.add(file)
            if len(self.lines) < self.limit and self.used + len(line) + 1 <= self.room:
                self.lines.append(line)
                self.used += len(line) + 1
            else:
                self.room = self.used  # the lines shown stay a prefix of the sorted results

    def close(self, pattern: str, path: str, glob: str) -> tuple[list[str], str]:
        """The lines shown and the closing count; what is found after this is dropped."""
        with self.lock:
            self.closed = True
            return list(self.lines), self._summary(pattern, path, glob)

    def _summary(self, pattern: str, path: str, glob: str) -> str:
        searched = f"{self.files} file{'' if self.files == 1 else 's'} searched"
        if not self.matches:
            where = f" in {describe(glob)} files" if glob.strip() else ""
            return f"no matches for {describe(pattern)}{where} ({searched} under {describe(path)})"
        files = len(self.matched_files)
        text = (
            f"{self.matches} match{'' if self.matches == 1 else 'es'} in {files} "
            f"file{'' if files == 1 else 's'} ({searched})"
        )
        if len(self.lines) < self.matches:
            text += (
                f"; showing the first {len(self.lines)}: narrow the pattern, path or glob, "
                "or raise max_results (at most 500)"
            )
        return text


def _glob_filter(glob: str, top: str) -> Callable[[str], bool]:
    """A test of a file's path against glob, matched from the folder searched (top)."""
    if not glob.strip():
        return lambda file: True
    try:
        matches = gitignore.glob_matcher(glob)
    except re.error as exc:
        raise ToolError.of("glob_invalid", glob=describe(glob), problem=exc) from None
    prefix = "" if top == "." else top + "/"
    return lambda file: matches(file.removeprefix(prefix))


def _compile(pattern: str) -> tuple[regex.Pattern[str], str]:
    """The pattern compiled for matching, and a note if it is searched as plain text."""
    import regex  # on first use: a run that never searches does not pay for it

    if not pattern:
        raise ToolError.of("pattern_empty")
    if len(pattern) > MAX_PATTERN_CHARS:
        raise ToolError.of("pattern_long", size=len(pattern), limit=MAX_PATTERN_CHARS)
    try:
        parsed = _parser.parse(pattern, re.MULTILINE)
        re.compile(pattern, re.MULTILINE)
        if _expansion(parsed) > MAX_EXPANSION:
            raise ToolError.of("pattern_repeats", pattern=describe(pattern), limit=MAX_EXPANSION)
        return regex.compile(pattern, regex.MULTILINE), ""
    except (re.error, regex.error, RecursionError, OverflowError) as exc:
        note = (
            f"note: {describe(pattern)} is not a valid regular expression ({exc}); "
            "searched for it as plain text"
        )
        return regex.compile(regex.escape(pattern), regex.MULTILINE), note


def _expansion(node: object) -> int:
    """How many nodes `regex` builds for a parsed pattern: counted repeats are copied."""
    if isinstance(node, _parser.SubPattern):
        return sum(_item_expansion(op, value) for op, value in node.data)
    if isinstance(node, tuple | list):
        return sum(_expansion(item) for item in node)
    return 0


def _item_expansion(op: object, value: object) -> int:
    if op in _REPEATS:
        low, _, body = value  # type: ignore[misc]
        return max(low, 1) * _expansion(body)
    return 1 + _expansion(value)


def _matching_lines(
    compiled: regex.Pattern[str], text: str, deadline: float
) -> Iterator[tuple[int, str]]:
    """(line number, shown text) of each line where a match starts; TimeoutError at the
    deadline."""
    pos, number, counted = 0, 1, 0
    while pos <= len(text):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        match = compiled.search(text, pos, concurrent=True, timeout=remaining)
        if match is None:
            return
        start = match.start()
        if start == len(text) and text.endswith("\n"):
            return  # the empty "line" after the last newline
        number += text.count("\n", counted, start)
        counted = start
        begin = text.rfind("\n", 0, start) + 1
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        yield number, _shown(text[begin:end], start - begin)
        pos = end + 1


def _shown(line: str, column: int) -> str:
    """The line without its line ending, cut to LINE_CHARS around the match if longer."""
    line = line.rstrip("\r")
    if len(line) <= LINE_CHARS:
        return line
    first = max(0, min(column - LINE_CHARS // 3, len(line) - LINE_CHARS))
    cut = line[first : first + LINE_CHARS]
    return ("…" if first else "") + cut + ("…" if first + LINE_CHARS < len(line) else "")
