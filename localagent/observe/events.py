"""The journal's records for other programs: one JSON object per line, printed or followed.

Records are read through the journal (`Journal.records`, `tail`, `records_after`), so a
planted symlink or FIFO is refused and a damaged history says where, as `history` does.
Each line is the record as journaled (without its checksum); characters that could drive
a terminal or split a line for a careless reader (C1 controls, bidi overrides, U+2028 and
U+2029) are written as JSON escapes, so a line is still the same JSON value.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson

from localagent.journal import Journal, encodable
from localagent.observe.report import open_journal

ENDS = frozenset({"goal_completed", "goal_failed", "stopped", "suspended"})
PER_POLL = 1000  # records read at most per poll: memory stays flat however far behind
_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def json_line(record: dict[str, Any]) -> str:
    """`record` as one line of JSON that is safe to print."""
    try:
        text = orjson.dumps(record).decode()
    except (TypeError, orjson.JSONEncodeError):
        text = orjson.dumps(encodable(record)).decode()
    return _UNSAFE.sub(lambda m: f"\\u{ord(m[0]):04x}", text)


def history(workspace: Path, last: int = 0) -> Iterator[dict[str, Any]]:
    """The records of the workspace's goal: the last `last` (0: all, streamed)."""
    journal = open_journal(workspace)
    return iter(journal.tail(last)) if last else journal.records()


class Follower:
    """The records appended since the last poll. A new goal archives the history and
    starts another: the first record changes, and reading starts over from it."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self.offset = 0
        self.last = 0
        self.first: dict[str, Any] | None = None

    def _first(self) -> dict[str, Any] | None:
        found = self.journal.records_after(0)
        try:
            return next(found)[0]
        except StopIteration:
            return None
        finally:
            found.close()

    def poll(self) -> list[dict[str, Any]]:
        first = self._first()
        if first != self.first:
            self.offset, self.last, self.first = 0, 0, first
        found: list[dict[str, Any]] = []
        reading = self.journal.records_after(self.offset)
        try:
            for record, offset in reading:
                self.offset = offset
                if record["seq"] > self.last:
                    self.last = record["seq"]
                    found.append(record)
                if len(found) >= PER_POLL:
                    break
        finally:
            reading.close()
        return found


def follow(
    journal: Journal,
    write: Callable[[dict[str, Any]], None],
    poll: float = 0.25,
    until: Callable[[Iterable[dict[str, Any]]], bool] = lambda found: False,
) -> None:
    """Write every record, then each one appended, until `until(new records)` says so
    or Ctrl-C (which ends it quietly)."""
    follower = Follower(journal)
    try:
        while True:
            found = follower.poll()
            for record in found:
                write(record)
            if until(found):
                return
            if len(found) < PER_POLL:
                time.sleep(poll)
    except KeyboardInterrupt:
        return


def show(workspace: Path, last: int, keep_following: bool, write: Callable[[str], None]) -> None:
    """`logs --events` and `history --json`: the records as JSON lines; `keep_following`
    prints every record, then each one appended, until Ctrl-C."""
    if keep_following:
        follow(open_journal(workspace), lambda record: write(json_line(record)))
        return
    for record in history(workspace, last):
        write(json_line(record))
