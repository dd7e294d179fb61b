"""Seeing the workspace as the snapshot store does: each file's id, and what changed.

A file's id is the SHA-256 of its content, with ":x" when it is executable (POSIX), or
"big:SIZE:MTIME" for a file over `BIG_FILE` bytes (never copied, so never restored), or
"unkept:SIZE" for one that could not be read or stored (a full disk): not restorable.
A scan reuses the id of a file whose size and time did not move since the last one,
unless that time is too recent to trust (a write within the same clock tick keeps it),
and stores every content it had to read, so the store holds each file the workspace has.
"""

from __future__ import annotations

import os
import re
import stat
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from localagent.journal.snapshots import Store
from localagent.tools.fingerprint import is_skipped

BIG_FILE = 8 << 20
RACY_NS = 2_000_000_000  # a time this close to the scan may hide a second write
Change = list[Any]  # [path, id before or None, id after or None]
# The temp file of a write under way (a tool's or a rewind's): never the workspace's.
TEMP_NAME = re.compile(r"\..+\.localagent-[0-9a-f]{8}\.tmp", re.DOTALL)


def skipped(name: str, is_dir: bool) -> bool:
    """Never snapshotted: the user's repository (a `.git` file too: a worktree's
    pointer), the journal, virtual environments and caches."""
    if not is_dir and TEMP_NAME.fullmatch(name):
        return True
    return name == ".git" or is_skipped(name, is_dir)


def under(files: dict[str, Any], scope: list[str] | None) -> list[str]:
    """The paths of `files` under `scope`: looked up, not searched, for an edit's files."""
    if scope is None:
        return list(files)
    found = []
    for top in scope:
        if top in files:
            found.append(top)
        else:  # a folder (a move of one), or nothing yet
            found += [path for path in files if path.startswith(top + "/")]
    return found


def scan(
    root: Path,
    store: Store,
    old: dict[str, list[Any]],
    scope: list[str] | None = None,
    durable: bool = True,
) -> tuple[dict[str, list[Any]], int]:
    """The files under `scope` (relative paths; None: the whole workspace) as
    {path: [size, mtime_ns, id]}, and the bytes newly stored."""
    found: dict[str, list[Any]] = {}
    stored = 0
    now = time.time_ns()
    for rel, info in _files(root, scope):
        entry = old.get(rel)
        if entry and _unmoved(entry, info, now):
            found[rel] = entry
            continue
        if info.st_size > BIG_FILE:
            found[rel] = [info.st_size, info.st_mtime_ns, f"big:{info.st_size}:{info.st_mtime_ns}"]
            continue
        try:
            sha, added = store.put_file(root / rel, info.st_size, durable)
        except OSError:
            if os.path.lexists(root / rel):  # unreadable, or the store's disk is full
                found[rel] = [info.st_size, info.st_mtime_ns, f"unkept:{info.st_size}"]
            continue  # gone meanwhile: as if it were not there
        stored += added
        found[rel] = [info.st_size, info.st_mtime_ns, sha + (":x" if _executable(info) else "")]
    return found, stored


def changes(
    old: dict[str, list[Any]], new: dict[str, list[Any]], scope: list[str] | None
) -> list[Change]:
    """[path, before, after] for each file under `scope` whose id differs, by path."""
    paths = set(under(old, scope)) | set(new)
    out = []
    for path in sorted(paths):
        before = old[path][2] if path in old else None
        after = new[path][2] if path in new else None
        if before != after:
            out.append([path, before, after])
    return out


def _unmoved(entry: list[Any], info: os.stat_result, now: int) -> bool:
    """Whether a file is as the last scan saw it, by its size, time and mode."""
    same = entry[0] == info.st_size and entry[1] == info.st_mtime_ns
    return same and now - info.st_mtime_ns > RACY_NS and _same_mode(entry[2], info)


def _executable(info: os.stat_result) -> bool:
    return sys.platform != "win32" and bool(info.st_mode & stat.S_IXUSR)


def _same_mode(file_id: str, info: os.stat_result) -> bool:
    return file_id.startswith("big:") or file_id.endswith(":x") == _executable(info)


def _files(root: Path, scope: list[str] | None) -> Iterator[tuple[str, os.stat_result]]:
    """Each regular file under the scope, with its lstat; links are never followed."""
    for top in [""] if scope is None else scope:
        if top and any(skipped(part, True) for part in top.split("/")[:-1]):
            continue
        try:
            info = os.lstat(root / top) if top else None
        except OSError:
            continue
        if info is not None and stat.S_ISREG(info.st_mode):
            if not skipped(top.rsplit("/", 1)[-1], False):
                yield top, info
        elif (info is None or stat.S_ISDIR(info.st_mode)) and not (
            top and skipped(top.rsplit("/", 1)[-1], True)
        ):
            yield from _walk(root, top)


def _walk(root: Path, top: str) -> Iterator[tuple[str, os.stat_result]]:
    pending = [top]
    while pending:
        folder = pending.pop()
        prefix = folder + "/" if folder else ""
        try:
            with os.scandir(root / folder if folder else root) as entries:
                listed = list(entries)
        except OSError:
            continue
        for entry in listed:
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                if skipped(entry.name, is_dir):
                    continue
                if is_dir:
                    pending.append(prefix + entry.name)
                elif entry.is_file(follow_symlinks=False):
                    yield prefix + entry.name, entry.stat(follow_symlinks=False)
            except OSError:
                continue
