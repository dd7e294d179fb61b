"""The walk of search_files and find_files: the workspace's files below a path, in path
order, without what a person would not search.

Skipped: `.git`, journals, caches and virtual environments (the fingerprint's list, and
any folder holding a `pyvenv.cfg`), what the `.gitignore` files ignore, links (never
followed, so a walk neither leaves the workspace nor loops) and anything that is neither
a regular file nor a folder (FIFOs and devices are never opened). A walk ends early at
its deadline or when the agent is asked to stop, and says so.
"""

from __future__ import annotations

import os
import stat
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from localagent.tools import gitignore
from localagent.tools.base import BINARY_SNIFF_BYTES, ToolError, describe
from localagent.tools.fingerprint import is_skipped
from localagent.tools.paths import relative, touches_journal

MAX_FILE_BYTES = 1_000_000  # larger files are not searched
POLL_SECONDS = 0.1  # how often a stop request is looked for
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)  # a link swapped in after the walk looked is not followed
    | getattr(os, "O_NONBLOCK", 0)  # nor does a FIFO swapped in block the open
    | getattr(os, "O_BINARY", 0)
)
_SKIP_WORDS = {
    "binary": "binary",
    "large": f"over {MAX_FILE_BYTES // 1_000_000} MB",
    "link": "links not followed",
    "special": "not regular files",
    "unreadable": "unreadable",
}

Entry = tuple[str, bool, gitignore.Chain]  # path from the workspace root, is a folder, rules


@dataclass
class Walk:
    root: Path
    deadline: float
    cancelled: Callable[[], bool]
    skipped: Counter[str] = field(default_factory=Counter)
    stopped: str = ""  # why the walk ended early, if it did
    next_poll: float = 0.0

    def files(self, start: Path) -> Iterator[str]:
        """The files below start (or start itself), as paths relative to the root."""
        top = relative(self.root, start)
        top = "" if top == "." else top
        stack: list[Entry] = [(top, start.is_dir(), _chain_above(self.root, top))]
        while stack and not self.late():
            path, is_dir, chain = stack.pop()
            if not is_dir:
                yield path
                continue
            own = gitignore.load(self.root / path, path)
            stack.extend(reversed(self._entries(path, (*chain, own) if own else chain)))

    def late(self) -> bool:
        """Whether the walk must end: its deadline passed or a stop was asked for (looked
        up every POLL_SECONDS: the agent's check reads a file)."""
        now = time.monotonic()
        if not self.stopped and now > self.deadline:
            self.stopped = "time"
        if not self.stopped and now >= self.next_poll:
            self.next_poll = now + POLL_SECONDS
            self.stopped = "stop" if self.cancelled() else ""
        return bool(self.stopped)

    def _entries(self, folder: str, chain: gitignore.Chain) -> list[Entry]:
        try:
            with os.scandir(self.root / folder) as scan:
                entries = sorted(scan, key=lambda entry: entry.name)
        except OSError:
            self.skipped["unreadable"] += 1
            return []
        kept = []
        for entry in entries:
            path = f"{folder}/{entry.name}" if folder else entry.name
            kind = _kind(entry)
            if kind in ("link", "special"):
                self.skipped[kind] += 1
            elif _wanted(entry, path, kind == "dir", chain):
                kept.append((path, kind == "dir", chain))
        return kept

    def read_text(self, path: str) -> str | None:
        """The file's text (UTF-8, undecodable bytes replaced, '\\n' line ends), or None for a
        binary, large, unreadable or irregular file, counted in `skipped`."""
        try:
            fd = os.open(os.path.join(self.root, path), _OPEN_FLAGS)
        except OSError:
            self.skipped["unreadable"] += 1
            return None
        with os.fdopen(fd, "rb") as handle:
            why, data = _read(handle)
        if not why and b"\x00" in data[:BINARY_SNIFF_BYTES]:
            why = "binary"
        if why:
            self.skipped[why] += 1
            return None
        # `$` then matches at the end of a line written on Windows too.
        return data.decode("utf-8", errors="replace").replace("\r\n", "\n")

    def notes(self, limit_seconds: float) -> list[str]:
        """Lines saying what the walk left out and whether it ended early."""
        lines = []
        skipped = dict.copy(self.skipped)  # one step: the search's thread may still count
        if skipped:
            counts = [f"{n} {_SKIP_WORDS[k]}" for k, n in sorted(skipped.items())]
            lines.append(f"skipped: {', '.join(counts)}")
        if self.stopped == "time":
            lines.append(f"stopped at the {limit_seconds:g} s time limit: results are partial")
        elif self.stopped == "stop":
            lines.append("stopped because the agent was asked to stop: results are partial")
        return lines


def _read(handle: BinaryIO) -> tuple[str, bytes]:
    """Why an open file is not searched ("special", "large"), or "" and its content."""
    info = os.fstat(handle.fileno())
    if not stat.S_ISREG(info.st_mode):
        return "special", b""
    if info.st_size > MAX_FILE_BYTES:
        return "large", b""
    data = handle.read(info.st_size + 1)  # a buffer of the file's size, not of the limit
    return ("large", b"") if len(data) > MAX_FILE_BYTES else ("", data)


def start_of(root: Path, resolved: Path, raw: str) -> Path:
    """The folder or regular file a walk starts from, or a ToolError."""
    try:
        mode = resolved.stat().st_mode
    except FileNotFoundError:
        raise ToolError.of("no_such_path", path=describe(raw)) from None
    if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
        raise ToolError.of("not_file_or_folder", path=describe(raw))
    return resolved


def _kind(entry: os.DirEntry[str]) -> str:
    try:
        if entry.is_symlink() or _is_junction(entry):
            return "link"
        if entry.is_dir(follow_symlinks=False):
            return "dir"
        return "file" if entry.is_file(follow_symlinks=False) else "special"
    except OSError:
        return "special"


def _is_junction(entry: os.DirEntry[str]) -> bool:
    """A Windows junction (a link to a folder, anywhere) is not a symlink to Python 3.11."""
    if sys.platform != "win32":
        return False
    tag = getattr(entry.stat(follow_symlinks=False), "st_reparse_tag", 0)
    return tag == getattr(stat, "IO_REPARSE_TAG_MOUNT_POINT", -1)


def _wanted(entry: os.DirEntry[str], path: str, is_dir: bool, chain: gitignore.Chain) -> bool:
    if touches_journal((entry.name,)) or is_skipped(entry.name, is_dir):
        return False
    if is_dir and os.path.lexists(os.path.join(entry.path, "pyvenv.cfg")):
        return False  # a virtual environment, whatever its name
    return not gitignore.ignored(chain, path, is_dir)


def _chain_above(root: Path, top: str) -> gitignore.Chain:
    """The excludes files and the .gitignore files of the folders from the root down to
    start's parent."""
    chain = list(gitignore.excludes(root))
    if not top:
        return tuple(chain)
    folders = top.split("/")[:-1]
    for depth in range(len(folders) + 1):
        base = "/".join(folders[:depth])
        own = gitignore.load(root / base if base else root, base)
        chain += [own] if own else []
    return tuple(chain)
