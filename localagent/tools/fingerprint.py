"""A cheap fingerprint of a workspace, to tell whether a command changed it.

Only names, sizes and modification times are read, never contents; folders that tools
and caches churn (`.git`, virtual environments, `__pycache__`, ...) are skipped, links
are never followed, and the walk stops after a fixed number of entries so a huge tree
costs a bounded time.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

MAX_ENTRIES = 5000
SKIPPED_DIRS = frozenset(
    {
        ".git",
        ".agent_context",
        ".venv",
        "venv",
        "node_modules",
        "__pycache__",
        ".pytest_cache",
        ".ruff_cache",
        ".mypy_cache",
        # pytest plugins (pytest-benchmark, hypothesis) make these on every run in the folder.
        ".benchmarks",
        ".hypothesis",
    }
)
SKIPPED_SUFFIXES = (".pyc",)


def is_skipped(name: str, is_dir: bool) -> bool:
    """Whether a walk of the workspace skips this entry (caches, environments, the journal)."""
    if is_dir:
        return name in SKIPPED_DIRS or name.casefold() == ".agent_context"
    return name.endswith(SKIPPED_SUFFIXES)


def fingerprint(root: Path, limit: int = MAX_ENTRIES) -> str:
    """A digest of the relative paths, sizes and mtimes under root; equal if nothing changed.

    Folders count by name only: their own mtime moves whenever a skipped cache inside
    them is written. Never raises: an unreadable entry counts as such.
    """
    digest = hashlib.blake2b(digest_size=16)
    count = 0
    pending = [(root, "")]
    while pending and count < limit:
        folder, prefix = pending.pop()
        for entry in _entries(folder, prefix, digest):
            if count >= limit:
                break
            count += 1
            relative = prefix + entry.name
            digest.update(_describe(entry, relative, pending).encode("utf-8", "surrogatepass"))
    digest.update(f"entries={count};complete={not pending and count < limit}".encode())
    return digest.hexdigest()


def _entries(folder: Path, prefix: str, digest: hashlib.blake2b) -> list[os.DirEntry[str]]:
    """The entries of folder that count, in name order (scandir's order is arbitrary)."""
    try:
        with os.scandir(folder) as scan:
            entries = [entry for entry in scan if not _skipped(entry)]
    except OSError as exc:
        digest.update(f"{prefix}\0unreadable {exc.errno}\n".encode("utf-8", "surrogatepass"))
        return []
    return sorted(entries, key=lambda entry: entry.name)


def _skipped(entry: os.DirEntry[str]) -> bool:
    try:
        return is_skipped(entry.name, entry.is_dir(follow_symlinks=False))
    except OSError:
        return False


def _describe(entry: os.DirEntry[str], relative: str, pending: list[tuple[Path, str]]) -> str:
    try:
        if entry.is_dir(follow_symlinks=False):
            pending.append((Path(entry.path), relative + "/"))
            return f"{relative}/\n"
        info = entry.stat(follow_symlinks=False)
    except OSError:
        return f"{relative}\0unreadable\n"
    return f"{relative}\0{info.st_size}\0{info.st_mtime_ns}\n"
