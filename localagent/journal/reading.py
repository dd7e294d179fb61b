"""Reading the history without loading it: every record, the records after an offset,
the last few, and the goal at a glance."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from localagent.journal.codec import MAX_TORN, decode, is_torn
from localagent.journal.files import Folder
from localagent.journal.replay import SNAPSHOT_EVERY, read_snapshot
from localagent.system import safefs
from localagent.system.errors import JournalCorrupt

TAIL_CHUNK = 1 << 16
_STATUS_AFTER = {
    "goal_started": "in_progress",
    "resumed": "in_progress",
    "stopped": "stopped",
    "goal_completed": "completed",
    "goal_failed": "failed",
}


class History(Folder):
    """The history as readers see it; `Journal` builds on it."""

    def records(self) -> Iterator[dict[str, Any]]:
        """Stream every intact record from the start (never the whole file in memory).

        A torn last line ends the stream quietly; any other damage raises JournalCorrupt.
        """
        for record, _ in self.records_after(0):
            yield record

    def records_after(self, offset: int) -> Iterator[tuple[dict[str, Any], int]]:
        """Each intact record from byte `offset` on, with the offset a reader that follows
        the history goes on from: just after the record, or at its start while its line has
        no newline yet (the reader sees the record again, so it skips seqs it has seen).
        A torn or half-appended last line ends the stream quietly; any other damage raises
        JournalCorrupt.

        A line with no newline is the end of the file as it was read: what a writer
        appends meanwhile is never judged with it (a healthy history beside a running
        agent is never called damaged)."""
        self.check_files()
        if not os.path.lexists(self.history_path):
            return
        last = 0
        bad = b""  # the undecodable lines after the last record, as first read
        with safefs.open_file(self.history_path, "rb") as fh:
            fh.seek(offset)
            for line in fh:
                record = decode(line)
                if record is None:
                    bad += line
                    if len(bad) > MAX_TORN or not line.endswith(b"\n"):
                        break
                    continue
                if bad:
                    raise JournalCorrupt(self._damaged_somewhere(offset, last))
                last = record["seq"]
                if not line.endswith(b"\n"):
                    yield record, offset
                    return
                offset += len(line)
                yield record, offset
        if bad and (len(bad) > MAX_TORN or not is_torn(bad)):
            raise JournalCorrupt(self._damaged_somewhere(offset, last))

    def _damaged_somewhere(self, at: int, after: int) -> str:
        return (
            f"{self.history_path} is damaged at byte {at} (after record {after}); the "
            f"history cannot be shown past it. {self._how_to_repair()}"
        )

    def peek(self) -> tuple[str, str | None]:
        """The goal's text and status, cheaply: the snapshot and the records after it
        found at the end of the history (never the whole file). For `list`."""
        self.check_files()
        snapshot = read_snapshot(self)
        goal = snapshot.goal
        text, status = (goal.text, goal.status) if goal else ("", None)
        for record in self.tail(SNAPSHOT_EVERY + 20):
            if record["seq"] <= snapshot.seq:
                continue
            if record["type"] == "goal_started":
                text = str(record.get("goal", ""))
            status = _STATUS_AFTER.get(record["type"], status or "in_progress")
        if status is not None and not text:
            first = next(iter(self.records()), None)
            text = str(first.get("goal", "")) if first else ""
        return text, status

    def tail(self, n: int) -> list[dict[str, Any]]:
        """The last `n` intact records, read backwards from the end of the file."""
        self.check_files()
        if n <= 0 or not os.path.lexists(self.history_path):
            return []
        chunks: list[bytes] = []
        newlines = 0
        with safefs.open_file(self.history_path, "rb") as fh:
            pos = end = fh.seek(0, os.SEEK_END)
            # Each chunk is counted once and joined once: linear even in a history with
            # few or no newlines.
            while pos > 0 and newlines <= n:
                step = min(TAIL_CHUNK, pos)
                pos -= step
                fh.seek(pos)
                chunks.append(fh.read(step))
                newlines += chunks[-1].count(b"\n")
                if newlines == 0 and end - pos > MAX_TORN:
                    # Longer than any torn write: damage, as records_after says too.
                    raise JournalCorrupt(
                        f"{self.history_path} is damaged near its end. {self._how_to_repair()}"
                    )
        data = b"".join(reversed(chunks))
        lines = data.split(b"\n")
        if pos > 0:
            lines = lines[1:]
        lines = lines[-(n + 1) :]  # judge only what was asked for, not what was read past
        decoded = [decode(line) for line in lines]
        good = [i for i, r in enumerate(decoded) if r is not None]
        last_good = good[-1] if good else -1
        after = b"\n".join(lines[last_good + 1 :])
        damaged = any(r is None and lines[i].strip() for i, r in enumerate(decoded[:last_good]))
        if damaged or not is_torn(after):
            raise JournalCorrupt(
                f"{self.history_path} is damaged near its end. {self._how_to_repair()}"
            )
        return [r for r in decoded if r is not None][-n:]
