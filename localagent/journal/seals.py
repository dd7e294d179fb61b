"""Whose journal it is, sealing a journal anew once the user adopts it, and mending
damage that lies before the snapshot's offset.

A record or snapshot counts as this user's only when its seal holds under this user's
key (`codec`). A history with any replayed record that does not is foreign: it is read
and shown, but what it names runs only once the user adopts it.
"""

from __future__ import annotations

import os
from typing import IO

from localagent.journal.codec import decode, encode, now_iso
from localagent.journal.files import Folder
from localagent.journal.replay import Scan
from localagent.state import State
from localagent.state.programs import would_run
from localagent.system import safefs
from localagent.system.errors import ForeignJournal
from localagent.system.names import display

UNSEALED_SNAPSHOT = (
    "state.json was not sealed by this user's agent; the state was rebuilt from history.jsonl"
)


def why_foreign(scan: Scan) -> str:
    """Why this user's agent did not write the history ("" when it did)."""
    if not scan.unsealed:
        return ""
    if scan.forged:
        return (
            f"record {scan.unsealed} of history.jsonl carries a seal that is not this user's "
            f"(another user's agent wrote it, or it was edited since)"
        )
    return (
        f"record {scan.unsealed} of history.jsonl carries no seal (it was written by hand, "
        f"by another program, or by a localagent from before journals were sealed)"
    )


def refusal(folder: Folder, state: State, why: str) -> ForeignJournal:
    """The error that says what resuming a foreign journal would run, and how to adopt it."""
    found = would_run(state) or ["nothing beyond this user's own settings, and no owed calls"]
    where = display(folder.workspace)
    return ForeignJournal(
        f"the journal in {where} was not written by this user's agent: {why}. Nothing it "
        f"names runs without your say-so; resuming it would run:\n"
        + "\n".join(f"  - {line}" for line in found)
        + f"\nRead it first with: localagent status -w {where} (or localagent trace). To "
        f"resume it as your own, give the same command again with --adopt"
    )


def reseal(folder: Folder) -> int:
    """Write history.jsonl anew with every record sealed by this user's key; the new size.
    Lines that are not records stay as they are. An OSError is the journal's to report."""
    seal = folder.seal()
    temp = folder.dir / "history.jsonl.tmp"
    size = 0
    with (
        safefs.open_file(folder.history_path, "rb") as old,
        safefs.create_new(temp) as new,
    ):
        for line in old:
            record = decode(line)
            data = line if record is None else encode(record, seal)
            folder.disk.write(new, data)
            size += len(data)
        folder.disk.fsync(new)
    folder.disk.replace(temp, folder.history_path)
    folder.disk.fsync_dir(folder.dir)
    return size


def mend_prefix(folder: Folder, state: State) -> int:
    """Damage before the snapshot's offset, once the user accepts the loss: the snapshot
    stands for those records, so loading never reads them, but every reader of the
    history stops there. Each damaged line moves to history.jsonl.broken and a `lost`
    record takes each seq it held, so the history reads end to end again. Returns the
    snapshot's offset in the mended file. An OSError is the journal's to report."""
    offset = state.history_offset
    if not _damaged_before(folder, offset):
        return offset
    temp = folder.dir / "history.jsonl.tmp"
    written = moved = last = 0
    lost: list[int] = []
    with (
        safefs.open_file(folder.history_path, "rb") as old,
        safefs.create_new(temp) as new,
        safefs.open_file(folder.broken_path, "ab") as broken,
    ):
        gap = False
        for line in old:
            record = decode(line)
            if record is None:
                folder.disk.write(broken, line)
                moved += len(line)
                gap = True
            else:
                if gap:
                    lost += range(last + 1, record["seq"])
                    written += _fill(folder, new, range(last + 1, record["seq"]))
                folder.disk.write(new, line)
                written += len(line)
                last, gap = record["seq"], False
            if written + moved >= offset:
                break
        if gap:
            lost += range(last + 1, state.seq + 1)
            written += _fill(folder, new, range(last + 1, state.seq + 1))
        while chunk := old.read(1 << 20):
            folder.disk.write(new, chunk)
        folder.disk.fsync(broken)
        folder.disk.fsync(new)
    folder.disk.replace(temp, folder.history_path)
    folder.disk.fsync_dir(folder.dir)
    folder.notes.append(
        f"repair: {moved} damaged bytes before the snapshot moved to {folder.broken_path.name}"
        f" (records {_ranges(lost) or 'none'} lost; the snapshot holds what they did)"
    )
    return written


def _damaged_before(folder: Folder, offset: int) -> bool:
    if not offset or not os.path.lexists(folder.history_path):
        return False
    read = 0
    with safefs.open_file(folder.history_path, "rb") as fh:
        for line in fh:
            if decode(line) is None:
                return True
            read += len(line)
            if read >= offset:
                return False
    return False


def _fill(folder: Folder, fh: IO[bytes], seqs: range) -> int:
    """A `lost` record in place of each seq a damaged line held; the bytes written."""
    size = 0
    for seq in seqs:
        line = encode({"seq": seq, "ts": now_iso(), "type": "lost"}, folder.seal())
        folder.disk.write(fh, line)
        size += len(line)
    return size


def _ranges(seqs: list[int]) -> str:
    if not seqs:
        return ""
    return f"{seqs[0]}..{seqs[-1]}" if len(seqs) > 1 else str(seqs[0])
