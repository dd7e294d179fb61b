"""Putting a previous goal's files away when a new goal starts; nothing is deleted."""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime
from pathlib import Path

from localagent.journal.files import ARCHIVE_DIR, QUESTIONS_DIR, Folder
from localagent.system import safefs

# What archive() leaves in place: the live process's lock, the workspace-wide caches and
# the questions' own journal.
KEPT_BY_ARCHIVE = frozenset(
    {ARCHIVE_DIR, "agent.lock", "agent.pid", "index", "answers", QUESTIONS_DIR}
)
_STAMP = re.compile(r"\d{8}T\d{6}\d*Z")
# Moved last, in this order: a kill part way leaves the history (and the snapshot with it,
# or nothing that claims more than the history holds), so the old goal still loads whole;
# the next start puts the rest away.
_LAST = ("state.json", "history.jsonl")


def archive(folder: Folder) -> Path | None:
    """Move a previous goal's files to `archive/<timestamp>/`; the folder, or None when
    there was nothing to move.

    Everything of the goal goes (history, snapshot, loops, logs and their rotations,
    outputs); only `archive/`, the live process's lock and pid file and the
    workspace-wide caches stay. An OSError is the journal's to report.
    """
    folder.check_files()
    if not folder.dir.is_dir():
        return None
    names = sorted(
        (n for n in os.listdir(folder.dir) if n not in KEPT_BY_ARCHIVE and ".tmp" not in n),
        key=lambda n: (_LAST.index(n) if n in _LAST else -1, n),
    )
    if not names:
        return None
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    safefs.check_dir(folder.dir / ARCHIVE_DIR)
    target = folder.dir / ARCHIVE_DIR / stamp
    target.mkdir(parents=True)
    for name in names:
        _move(folder, folder.dir / name, target / name)
    folder.disk.fsync_dir(folder.dir)
    return target


def _move(folder: Folder, path: Path, dest: Path) -> None:
    if path == folder.out_path:
        # The background process writes its own output there: copy it, then empty it.
        with safefs.open_file(path, "r+b") as fh, safefs.open_file(dest, "xb") as copy:
            copy.write(fh.read())
            fh.truncate(0)
        return
    folder.disk.replace(path, dest)


def archived(folder: Folder) -> list[str]:
    """The archived goals' folder names (their timestamps), the newest first; anything
    else planted in `archive/` is left out."""
    folder.check_dir()
    safefs.check_dir(folder.dir / ARCHIVE_DIR)
    try:
        names = os.listdir(folder.dir / ARCHIVE_DIR)
    except (FileNotFoundError, NotADirectoryError):
        return []
    kept = [
        n
        for n in names
        if _STAMP.fullmatch(n) and safefs.lstat_kind(folder.dir / ARCHIVE_DIR / n) == "a folder"
    ]
    return sorted(kept, reverse=True)
