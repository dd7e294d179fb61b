"""Loading: the snapshot plus the records after it, and the repair of a torn tail.

Only a crash in the middle of an append is repaired without asking; anything else is
damage, described here for `Journal.load` to refuse (or, once the loss is accepted, cut).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import IO

import orjson

from localagent.journal.codec import MAX_TORN, _seq_of, decode_sealed, is_torn, snapshot_sealed
from localagent.journal.files import Folder
from localagent.state import State, apply, migrate
from localagent.system import safefs
from localagent.system.errors import JournalCorrupt

SNAPSHOT_EVERY = 200  # records at most between two snapshots: what loading replays


@dataclass
class Scan:
    """What replaying found after the last intact record; nothing is changed yet."""

    end: int  # byte offset just after the last intact record
    cut_at: int | None = None  # where the torn or damaged part starts
    damage: str = ""  # why the part from cut_at is damage, not a torn write
    unterminated: bool = False  # the last record is whole but lost its newline
    unsealed: int = 0  # the first replayed record this user's agent did not seal
    forged: bool = False  # it carries a seal, but not this user's (or was edited)


class _Mismatch(Exception):
    """The snapshot's offset does not line up with the history; replay from the start."""


def read_snapshot(folder: Folder) -> State:
    """The snapshot, or an empty state (with a note) when it is missing or unreadable."""
    return load_snapshot(folder)[0]


def load_snapshot(folder: Folder, sealed: bool = False) -> tuple[State, bool | None]:
    """The snapshot, and (when `sealed` is asked) whether this user's agent sealed it:
    True, False, or None when it carries no seal. A missing or unreadable snapshot is an
    empty state, and True: there is nothing in it to trust."""
    try:
        raw = safefs.read_bytes(folder.state_path)
        data = orjson.loads(raw)
    except FileNotFoundError:
        if os.path.lexists(folder.history_path):
            folder.notes.append("state.json was missing; rebuilt from history.jsonl")
        return State(), True
    except (OSError, ValueError):
        folder.notes.append("state.json was unreadable; rebuilt from history.jsonl")
        return State(), True
    try:
        state = State.model_validate(migrate(data))
    except ValueError as exc:
        if "newer than" in str(exc):
            raise JournalCorrupt(f"{folder.state_path}: {exc}") from None
        folder.notes.append("state.json had an unexpected shape; rebuilt from history.jsonl")
        return State(), True
    return state, snapshot_sealed(raw, folder.seal()) if sealed else True


def replay_history(folder: Folder, snapshot: State) -> tuple[State, Scan]:
    with safefs.open_file(folder.history_path, "rb") as fh:
        if snapshot.seq or snapshot.history_offset:
            try:
                return snapshot, _replay(folder, fh, snapshot)
            except _Mismatch:
                folder.notes.append(
                    "state.json does not match history.jsonl; rebuilt from the history"
                )
        state = State()
        return state, _replay(folder, fh, state)


def _replay(folder: Folder, fh: IO[bytes], state: State) -> Scan:
    """Apply the records after the snapshot; find where the intact part ends.

    A line with no newline yet is the end of the file as it was read: a writer may be
    appending it now, so what follows it is never judged (a reader beside a running
    agent must not call a healthy history damaged)."""
    start = good_end = state.history_offset
    if start:
        fh.seek(start - 1)
        if fh.read(1) != b"\n":
            raise _Mismatch
    fh.seek(start)
    scan = Scan(start)
    bad = b""  # the undecodable lines after the last record, as first read
    seal = folder.seal()
    for line in fh:
        record, sealed = decode_sealed(line, seal)
        if record is None:
            bad += line
            if len(bad) > MAX_TORN or not line.endswith(b"\n"):
                break
            continue
        if bad or record["seq"] != state.seq + 1:
            if state.seq and good_end == start:
                raise _Mismatch
            if bad:
                return _stop(scan, good_end, _damaged(folder, good_end, state.seq, record["seq"]))
            gap = f"{folder.history_path}: record {record['seq']} follows {state.seq}."
            return _stop(scan, good_end, gap)
        try:
            apply(state, record)
        except (LookupError, TypeError, ValueError, AttributeError) as exc:
            malformed = (
                f"{folder.history_path}: record {record['seq']} ({record.get('type')!r}) "
                f"is malformed: {exc}."
            )
            return _stop(scan, good_end, malformed)
        if sealed is not True and not scan.unsealed:
            scan.unsealed, scan.forged = record["seq"], sealed is False
        good_end += len(line)
        if not line.endswith(b"\n"):
            scan.unterminated = True
            break
    scan.end = good_end
    if not bad or (len(bad) <= MAX_TORN and is_torn(bad)):
        scan.cut_at = good_end if bad else None
        return scan
    if state.seq and good_end == start:
        raise _Mismatch
    return _stop(scan, good_end, _damaged_end(folder, good_end, state.seq))


def _stop(scan: Scan, at: int, damage: str) -> Scan:
    scan.end = scan.cut_at = at
    scan.damage = damage
    return scan


def _damaged(folder: Folder, at: int, after: int, before: int) -> str:
    return (
        f"{folder.history_path} is damaged at byte {at} (after record {after}, before "
        f"record {before}); records after the damage exist, so nothing was cut."
    )


def _damaged_end(folder: Folder, at: int, after: int) -> str:
    return (
        f"{folder.history_path} is damaged at byte {at} (after record {after}): the "
        f"lines there are complete but fail their checksum. A crash leaves at most a "
        f"partial last line, so this is damage, not an interrupted write."
    )


def shorter(folder: Folder, have: int, said: int) -> str:
    what = "is missing" if not os.path.lexists(folder.history_path) else f"holds {have} records"
    return (
        f"{folder.history_path} {what} but {folder.state_path} says {said} were written: "
        f"the history was cut or emptied (records {have + 1}..{said} are gone), and "
        f"resuming from it could repeat finished actions."
    )


def terminate(folder: Folder, offset: int) -> int:
    """End the last record's line (a crash took only its newline); the new end.
    An OSError is the journal's to report (it stops writing)."""
    with safefs.open_file(folder.history_path, "r+b", buffering=0) as fh:
        folder.disk.truncate(fh, offset)
        fh.seek(offset)
        folder.disk.write(fh, b"\n")
        folder.disk.fsync(fh)
    return offset + 1


def cut_tail(folder: Folder, offset: int, damaged: bool) -> int:
    """Move everything from `offset` to history.jsonl.broken; return the highest
    seq found in what was moved (0 if none). An OSError is the journal's to report."""
    last = size = 0
    with safefs.open_file(folder.history_path, "r+b", buffering=0) as fh:
        fh.seek(offset)
        with safefs.open_file(folder.broken_path, "ab", buffering=0) as broken:
            for line in fh:
                last = max(last, _seq_of(line))
                size += len(line)
                folder.disk.write(broken, line)
            folder.disk.fsync(broken)
        folder.disk.truncate(fh, offset)
        folder.disk.fsync(fh)
    what = "damaged lines" if damaged else "a torn last record"
    folder.notes.append(
        f"cut {what} ({size} bytes) from history.jsonl; kept in {folder.broken_path.name}"
    )
    return last
