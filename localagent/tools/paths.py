"""Confinement: every path a tool is given is resolved inside the workspace, outside its
journal, with names every supported system accepts."""

from __future__ import annotations

import sys
import typing
from pathlib import Path, PureWindowsPath

from localagent.system.filenames import name_problem
from localagent.tools.base import JOURNAL_DIR, ToolError, describe

MAX_NAME_SIZE = 255  # bytes (UTF-16 units on Windows) in one file or folder name
# Bytes in a whole path (UTF-16 units on Windows): under PATH_MAX (4096) on Linux, and the
# same limit on Windows so that a path means the same everywhere.
MAX_PATH_SIZE = 4000


def workspace_file(root: Path, raw: str) -> bool:
    """Whether the workspace holds the regular file `raw` names, no link followed out of
    it (False for a path that would leave it, or cannot be looked at)."""
    try:
        return resolve_in_workspace(root, raw).is_file()
    except (ToolError, OSError, ValueError):
        return False


def resolve_in_workspace(root: Path, raw: str) -> Path:
    """The resolved path that raw names inside root, or ToolError if it would leave it.

    Backslashes count as separators on every platform, so a path means the same
    thing whichever system runs the agent.
    """
    if not raw.strip():
        raise ToolError.of("path_empty")
    if "\x00" in raw:
        raise ToolError.of("path_nul", path=describe(raw))
    normalized = raw.replace("\\", "/")
    outside = ToolError.of("outside_workspace", path=describe(raw))
    drive = PureWindowsPath(normalized).drive
    # `C:x` is relative to drive C's current folder, wherever that is.
    if drive and (sys.platform != "win32" or not PureWindowsPath(normalized).root):
        raise outside
    # Before anything touches the disk: on Windows, resolving `CON` opens the console.
    named = normalized[len(drive) :].split("/")
    if touches_journal(tuple(named)):
        raise _journal_error(raw)
    _check_names(raw, named)
    _check_length(raw, normalized)
    try:
        resolved = (root / normalized).resolve()
    except (OSError, RuntimeError) as exc:
        raise ToolError.of("path_unresolvable", path=describe(raw), problem=exc) from exc
    if not resolved.is_relative_to(root):
        raise outside
    parts = resolved.relative_to(root).parts
    if touches_journal(parts):
        raise _journal_error(raw)
    _check_names(raw, parts)  # a link inside the workspace may lead to such a name
    return resolved


def _journal_error(raw: str) -> ToolError:
    # Nested ones too: a workspace inside this one has its own journal.
    return ToolError.of("path_in_journal", path=describe(raw), journal=JOURNAL_DIR)


def _check_names(raw: str, parts: typing.Iterable[str]) -> None:
    for part in parts:
        problem = name_problem(part)
        if problem is not None:
            raise ToolError.of("bad_name", path=describe(raw), problem=problem)


def name_size(name: str) -> int:
    """A file name's size as the file system counts it: UTF-16 units on Windows, else bytes."""
    if sys.platform == "win32":
        return len(name.encode("utf-16-le", "surrogatepass")) // 2
    return len(name.encode("utf-8", "surrogateescape"))


def _check_length(raw: str, normalized: str) -> None:
    longest = max(normalized.split("/"), key=name_size)
    if name_size(longest) > MAX_NAME_SIZE:
        raise ToolError.of(
            "name_too_long",
            path=describe(raw),
            size=name_size(longest),
            name=describe(longest),
            limit=MAX_NAME_SIZE,
        )
    if name_size(normalized) > MAX_PATH_SIZE:
        raise ToolError.of(
            "path_too_long", path=describe(raw), size=name_size(normalized), limit=MAX_PATH_SIZE
        )


def relative(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix() if path != root else "."


def touches_journal(parts: tuple[str, ...]) -> bool:
    """Whether a path goes through a journal folder, this workspace's or a nested one's.

    Windows ignores trailing dots and spaces in names, so `.agent_context.` is the same.
    """
    return any(part.rstrip(" .").casefold() == JOURNAL_DIR for part in parts)


def normalize_path(raw: str) -> str:
    """`./a.py`, `a.py` and `.\\a.py` alike: '/' separators, no '.' or empty segments, no
    trailing '/'; leading slashes (absolute, UNC) are kept, and '..' is left alone."""
    text = raw.replace("\\", "/")
    lead = "/" * (len(text) - len(text.lstrip("/")))
    parts = [part for part in text.split("/") if part not in ("", ".")]
    return lead + "/".join(parts) if parts or lead else "."
