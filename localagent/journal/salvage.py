"""The history as `localagent history` shows it: every intact record, and where the damage
lies between them.

`records` and `tail` stop at the first damage, as a reader that acts on the history must;
a person reading a damaged history wants what is left around the damage, and to be told
exactly where it is and that the history is damaged (exit 2, as everywhere).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

from localagent.journal.codec import MAX_TORN, decode, is_torn
from localagent.journal.reading import History
from localagent.state import MalformedRecord, check
from localagent.system import safefs
from localagent.system.errors import JournalCorrupt

CHUNK = 1 << 16


@dataclass(frozen=True)
class Damage:
    """One damaged place, said in words: between which records, and what is wrong."""

    text: str


def intact(folder: History, last: int = 0) -> Iterator[dict[str, Any] | Damage]:
    """The intact records of the history (of its last `last` lines; 0: all, streamed),
    with a Damage where lines fail their checksum, records are missing or out of order,
    or a record has a shape the reducer cannot read. A torn last line is not damage."""
    folder.check_files()
    if not os.path.lexists(folder.history_path):
        return
    with safefs.open_file(folder.history_path, "rb") as fh:
        start = _start_of_last(fh, last) if last else 0
        fh.seek(start)
        yield from _walk(fh, start)


def _walk(fh: IO[bytes], offset: int) -> Iterator[dict[str, Any] | Damage]:
    bad_at: int | None = None
    bad_lines = 0
    previous: int | None = None
    for line in fh:
        record = decode(line)
        if record is None:
            bad_at, bad_lines = (offset if bad_at is None else bad_at), bad_lines + 1
        else:
            seq = record["seq"]
            if bad_at is not None:
                yield _unreadable(bad_at, bad_lines, previous, seq)
            if previous is not None and not 0 <= seq - previous - 1 <= bad_lines:
                yield _out_of_order(previous, seq)  # beyond what the damaged lines held
            bad_at, bad_lines = None, 0
            previous = seq if previous is None else max(previous, seq)
            yield from _malformed(record)
            yield record
        offset += len(line)
    if bad_at is not None:
        fh.seek(bad_at)
        tail = fh.read(MAX_TORN + 1)
        if len(tail) > MAX_TORN or not is_torn(tail):
            yield _unreadable(bad_at, bad_lines, previous, None)


def _unreadable(at: int, lines: int, after: int | None, before: int | None) -> Damage:
    around = [f"after record {after}"] if after is not None else []
    around += [f"before record {before}"] if before is not None else []
    where = f" ({', '.join(around)})" if around else ""
    what = "1 line" if lines == 1 else f"{lines} lines"
    return Damage(f"{what} at byte {at}{where} cannot be read (not an intact record)")


def _out_of_order(previous: int, seq: int) -> Damage:
    if seq > previous + 1:
        gone = (
            f"record {previous + 1} is"
            if seq == previous + 2
            else f"records {previous + 1}..{seq - 1} are"
        )
        return Damage(f"{gone} missing (record {seq} follows record {previous})")
    return Damage(f"record {seq} follows record {previous} (out of order)")


def _malformed(record: dict[str, Any]) -> Iterator[Damage]:
    try:
        check(record)
    except MalformedRecord as exc:
        yield Damage(f"record {record['seq']} is malformed ({exc})")


def _start_of_last(fh: IO[bytes], lines: int) -> int:
    """Where the last `lines` complete lines (and any partial line after them) start."""
    pos = end = fh.seek(0, os.SEEK_END)
    chunks: list[bytes] = []
    newlines = 0
    while pos > 0 and newlines <= lines and end - pos <= MAX_TORN * 8:
        step = min(CHUNK, pos)
        pos -= step
        fh.seek(pos)
        chunks.append(fh.read(step))
        newlines += chunks[-1].count(b"\n")
    data = b"".join(reversed(chunks))
    cut = len(data)
    for _ in range(lines + 1):
        cut = data.rfind(b"\n", 0, cut)
        if cut < 0:
            return pos
    return pos + cut + 1


def damaged(folder: History, found: list[Damage]) -> JournalCorrupt:
    """The error that ends `history` on a damaged history, after its intact records."""
    others = len(found) - 1
    more = f" (and {others} more damaged place{'s' if others > 1 else ''})" if others else ""
    return JournalCorrupt(
        f"{folder.history_path} is damaged: {found[0].text}{more}; the intact records are "
        f"shown. "
        f"{folder._how_to_repair()}"
    )
