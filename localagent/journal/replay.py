"""Loading: the snapshot plus the records after it, and the repair of a torn tail.

Only a crash in the middle of an append is repaired without asking; anything else is
damage, described here for `Journal.load` to refuse (or, once the loss is accepted, cut).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import IO

import orjson
from pydantic import ValidationError

from localagent import safefs
from localagent.errors import JournalCorrupt
from localagent.journal.codec import MAX_TORN, _seq_of, decode, is_torn
from localagent.journal.files import Folder
from localagent.state import State, apply, migrate

SNAPSHOT_EVERY = 200  # records at most between two snapshots: what loading replays


@dataclass
class Scan:
    """What replaying found after the last intact record; nothing is changed yet."""

    end: int  # byte offset just after the last intact record
    cut_at: int | None = None  # where the torn or damaged part starts
    damage: str = ""  # why the part from cut_at is damage, not a torn write
    unterminated: bool = False  # the last record is whole but lost its newline


class _Mismatch(Exception):
    """The snapshot's offset does not line up with the history; replay from the start."""


def read_snapshot(folder: Folder) -> State:
    """The snapshot, or an empty state (with a note) when it is missing or unreadable."""
    try:
        data = orjson.loads(safefs.read_bytes(folder.state_path))
    except FileNotFoundError:
        if os.path.lexists(folder.history_path):
            folder.notes.append("state.json was missing; rebuilt from history.jsonl")
        return State()
    except (OSError, ValueError):
        folder.notes.append("state.json was unreadable; rebuilt from history.jsonl")
        return State()
    try:
        return State.model_validate(migrate(data))
    except ValueError as exc:
        if "newer than" in str(exc):
            raise JournalCorrupt(f"{folder.state_path}: {exc}") from None
        folder.notes.append("state.json had an unexpected shape; rebuilt from history.jsonl")
        return State()


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
    """Apply the records after the snapshot; find where the intact part ends."""
    start = good_end = state.history_offset
    if start:
        fh.seek(start - 1)
        if fh.read(1) != b"\n":
            raise _Mismatch
    fh.seek(start)
    bad_at: int | None = None
    unterminated = False
    for line in fh:
        record = decode(line)
        if record is None:
            bad_at = good_end if bad_at is None else bad_at
            continue
        if bad_at is not None:
            if state.seq and bad_at == start:
                raise _Mismatch
            return Scan(good_end, bad_at, _damaged(folder, bad_at, state.seq, record["seq"]))
        if record["seq"] != state.seq + 1:
            if state.seq and good_end == start:
                raise _Mismatch
            gap = f"{folder.history_path}: record {record['seq']} follows {state.seq}."
            return Scan(good_end, good_end, gap)
        try:
            apply(state, record)
        except (KeyError, TypeError, ValueError, ValidationError) as exc:
            malformed = (
                f"{folder.history_path}: record {record['seq']} ({record.get('type')}) "
                f"is malformed: {exc!r}."
            )
            return Scan(good_end, good_end, malformed)
        good_end += len(line)
        unterminated = not line.endswith(b"\n")
    if bad_at is None:
        return Scan(good_end, unterminated=unterminated)
    fh.seek(bad_at)
    tail = fh.read(MAX_TORN + 1)
    if len(tail) <= MAX_TORN and is_torn(tail):
        return Scan(good_end, bad_at)
    if state.seq and bad_at == start:
        raise _Mismatch
    return Scan(good_end, bad_at, _damaged_end(folder, bad_at, state.seq))


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
