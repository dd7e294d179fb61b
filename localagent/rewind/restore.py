"""Putting the workspace back as it was just before a step (`localagent rewind`).

Every file a step of the agent (or an earlier rewind) changed at or after the step gets
the content it had then: the id before the first such change. A file changed outside the
agent since is the user's: the rewind refuses, naming it, unless forced. The plan is
journaled first (`rewinding`), then each file is put back atomically (a temp file beside
it, then replace), then `rewound` is journaled; a kill part way leaves each file old or
new, and the next `rewind` (or the same command again) finishes the plan before anything
else.
"""

from __future__ import annotations

import contextlib
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localagent.journal.snapshots import MissingBlob, Store, sha_of
from localagent.rewind.steps import Step
from localagent.system import safefs
from localagent.system.errors import UsageError

SHOWN = 10  # files named in a refusal


@dataclass
class Plan:
    to: int
    files: list[list[Any]] = field(default_factory=list)  # [path, id now, id restored]
    outside: list[str] = field(default_factory=list)  # changed by the user since
    lost: list[str] = field(default_factory=list)  # content not restorable


def plan(steps: list[Step], to: int, now: dict[str, str], store: Store) -> Plan:
    """What a rewind to just before `to` does to each file (`now`: the current ids). A file
    whose content is no longer what the agent's last step on it left was changed outside
    the agent since: the user's change, not to be undone unasked."""
    result = Plan(to)
    target: dict[str, str | None] = {}
    left: dict[str, str | None] = {}  # what the agent (or a rewind) last left in each file
    for step in steps:
        if step.at < to:
            continue
        for path, before, after in step.files:
            target.setdefault(path, before)
            if step.kind != "outside":
                left[path] = after
    for path in sorted(left):
        want, have = target[path], now.get(path)
        if have != left[path]:
            result.outside.append(path)
        if want == have:
            continue
        if want is not None and not _restorable(store, want):
            result.lost.append(path)
            continue
        result.files.append([path, have, want])
    return result


def _restorable(store: Store, file_id: str) -> bool:
    sha = sha_of(file_id)
    return sha is not None and store.has(sha)


def refusal(found: Plan, force: bool) -> str | None:
    """Why the rewind cannot go ahead without --force, or None."""
    if force:
        return None
    if found.outside:
        return (
            f"{_names(found.outside)} changed outside the agent after step s{found.to}; "
            "the rewind would undo that too, so nothing was changed. Keep the change (save "
            "it elsewhere), or rewind anyway with --force"
        )
    if found.lost:
        return (
            f"the content of {_names(found.lost)} before step s{found.to} is not in the "
            "snapshot store (over the size cap, or pruned), so nothing was changed; rewind "
            "the rest with --force (these files stay as they are)"
        )
    return None


def _names(paths: list[str]) -> str:
    more = f" and {len(paths) - SHOWN} more" if len(paths) > SHOWN else ""
    return ", ".join(paths[:SHOWN]) + more


def put_back(root: Path, store: Store, path: str, file_id: str | None, mark: int) -> None:
    """One file as `file_id` says, atomically: its content and mode, or absent. The temp
    file is named by the rewind (`mark`), so the same rewind run again after a kill
    replaces the one it left."""
    full = root.joinpath(*path.split("/"))
    if file_id is None:
        if safefs.lstat_kind(full) not in ("missing", "a folder"):
            safefs.unlink(full)
            _prune_empty(root, full.parent)
        return
    sha = sha_of(file_id)
    if sha is None:
        raise MissingBlob(file_id)
    data = store.read(sha)
    full.parent.mkdir(parents=True, exist_ok=True)
    temp = full.with_name(f".{full.name}.localagent-{mark % 2**32:08x}.tmp")
    with safefs.create_new(temp) as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    if sys.platform != "win32":
        os.chmod(temp, _mode(full, file_id.endswith(":x")))
    try:
        safefs.replace(temp, full)
    except OSError:
        safefs.unlink(temp)
        raise


def _mode(path: Path, executable: bool) -> int:
    """The file's mode now (644 for a new one) with the executable bits as restored:
    only that bit is snapshotted."""
    try:
        mode = os.lstat(path).st_mode & 0o777
    except OSError:
        mode = 0o644
    return mode | (mode & 0o444) >> 2 if executable else mode & ~0o111


def _prune_empty(root: Path, folder: Path) -> None:
    """Folders the removal left empty go too (empty folders are not snapshotted)."""
    while folder != root and folder.is_relative_to(root):
        with contextlib.suppress(OSError):
            os.rmdir(folder)
            folder = folder.parent
            continue
        return


def apply(
    root: Path, store: Store, files: list[list[Any]], now: dict[str, str], mark: int
) -> list[str]:
    """Put back each file still as the plan found it; the paths changed meanwhile (by
    someone else: left as they are) are returned."""
    skipped = []
    for path, was, want in files:
        have = now.get(path)
        if have == want:
            continue  # done before a kill
        if have != was:
            skipped.append(path)
            continue
        try:
            put_back(root, store, path, want, mark)
        except (OSError, MissingBlob, safefs.UnsafeFile) as exc:
            raise UsageError(f"could not put back {path}: {exc}") from None
    return skipped
