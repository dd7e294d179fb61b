"""The journal: the only code that reads or writes `WORKSPACE/.agent_context/`.

`history.jsonl` is the write-ahead log (one checksummed orjson record per line, fsynced
before `append` returns); `state.json` is a snapshot of the state folded from it, with
the `seq` and byte offset it covers, so loading reads only the records after it.

Only a crash in the middle of an append is repaired without asking: it leaves a partial
last line (or a last line the filesystem never wrote, read back as NUL bytes). Anything
else (complete lines that fail their checksum, a gap, a history shorter than the
snapshot says) is damage: loading refuses it with `JournalCorrupt` until the user
accepts the loss (`load(accept_loss=True)`, behind `localagent resume --repair`).
Files in `.agent_context/` are opened through `safefs`: never through a symlink, never
a FIFO or a device.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import reprlib
import sys
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from logging.handlers import RotatingFileHandler
from pathlib import Path
from typing import IO, Any, Literal, NoReturn

import orjson
from pydantic import ValidationError

from localagent import safefs
from localagent.errors import JournalCorrupt, JournalWriteFailed
from localagent.outputstore import FOLDER as OUTPUTS_FOLDER
from localagent.outputstore import OutputStore
from localagent.state import State, apply, migrate

CONTEXT_DIR = ".agent_context"
SNAPSHOT_EVERY = 200
# Records after which the snapshot is rewritten: plan changes, subtask boundaries, run ends.
SNAPSHOT_AFTER = frozenset(
    {
        "goal_started",
        "plan",
        "subtask_completed",
        "subtask_failed",
        "resumed",
        "stopped",
        "goal_completed",
        "goal_failed",
    }
)
# Files that must be regular files when present; temp files are removed instead.
JOURNAL_FILES = frozenset(
    {
        "history.jsonl",
        "history.jsonl.broken",
        "state.json",
        "state.json.broken",
        "loops.json",
        "agent.log",
        "agent.out",
        "agent.pid",
        "agent.lock",
    }
)
TEMP_FILES = ("state.json.tmp", "loops.json.tmp")
# What archive() leaves in place: the live process's lock and the workspace-wide caches.
KEPT_BY_ARCHIVE = frozenset({"archive", "agent.lock", "agent.pid", "index", "answers"})
_STATUS_AFTER = {
    "goal_started": "in_progress",
    "resumed": "in_progress",
    "stopped": "stopped",
    "goal_completed": "completed",
    "goal_failed": "failed",
}
_ROTATED_LOG = re.compile(r"agent\.log\.\d+")
_SEQ_AT_START = re.compile(rb'\{"seq":(\d{1,18}),')
_CRC_PREFIX = b',"crc":"'
_CRC_TAIL = len(_CRC_PREFIX) + 8 + 2
MAX_DEPTH = 200  # orjson refuses more than 255 levels; the record itself adds a few
MAX_TORN = 8 << 20  # a torn write is at most one record; a longer damaged tail is damage
_SHORT_REPR = reprlib.Repr()
_SHORT_REPR.maxlevel, _SHORT_REPR.maxstring, _SHORT_REPR.maxother = 8, 400, 400


class Disk:
    """Every write, fsync and rename the journal does goes through here (one seam)."""

    def write(self, fh: IO[bytes], data: bytes) -> None:
        view = memoryview(data)
        while view:  # an unbuffered write may be short; never leave a record half-written
            written = fh.write(view)
            if not written:
                raise OSError(f"wrote nothing of {len(view)} bytes")
            view = view[written:]

    def fsync(self, fh: IO[bytes]) -> None:
        fh.flush()
        os.fsync(fh.fileno())

    def truncate(self, fh: IO[bytes], size: int) -> None:
        fh.truncate(size)

    def replace(self, src: Path, dst: Path) -> None:
        safefs.replace(src, dst)

    def fsync_dir(self, path: Path) -> None:
        if sys.platform == "win32":
            return  # NTFS has no directory handle to fsync; the rename is journaled by NTFS
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


# ---- records -------------------------------------------------------------------------


def encodable(value: Any, depth: int = 0) -> Any:
    """`value` as orjson can always write it: integers beyond 64 bits as their digits,
    nesting deeper than MAX_DEPTH as a short repr, lone surrogates escaped, other
    types as their repr. Lossless for everything orjson takes as it is."""
    if value is None or isinstance(value, bool | float):
        return value
    if isinstance(value, int):
        return value if -(2**63) <= value < 2**64 else str(value)
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if depth >= MAX_DEPTH:
        return _SHORT_REPR.repr(value)
    if isinstance(value, dict):
        return {encodable(str(k)): encodable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [encodable(v, depth + 1) for v in value]
    return _SHORT_REPR.repr(value)


def _line(record: dict[str, Any]) -> bytes:
    body = orjson.dumps(record)
    return body[:-1] + _CRC_PREFIX + b"%08x" % zlib.crc32(body) + b'"}\n'


def encode(record: dict[str, Any]) -> bytes:
    """One checksummed line; never fails (see `encodable`)."""
    try:
        return _line(record)
    except (TypeError, orjson.JSONEncodeError):
        return _line(encodable(record))


def decode(line: bytes) -> dict[str, Any] | None:
    """The record of one line, or None if the line is torn, damaged or not ours."""
    line = line.rstrip(b"\r\n")
    if len(line) <= _CRC_TAIL or line[-_CRC_TAIL:-10] != _CRC_PREFIX or line[-2:] != b'"}':
        return None
    body = line[:-_CRC_TAIL] + b"}"
    try:
        if zlib.crc32(body) != int(line[-10:-2], 16):
            return None
        record = orjson.loads(body)
    except ValueError:
        return None
    ok = isinstance(record, dict) and isinstance(record.get("seq"), int) and "type" in record
    return record if ok else None


def _seq_of(line: bytes) -> int:
    """The seq a line says it holds, read even from a damaged line (0 if none)."""
    found = _SEQ_AT_START.match(line)
    return int(found[1]) if found else 0


def is_torn(tail: bytes) -> bool:
    """Whether the bytes after the last intact record are what a crash during one append
    leaves: a partial last line (no newline yet), a last line whose pages the filesystem
    never wrote (NUL bytes), or nothing but padding. Complete lines are never torn."""
    if b"\n" not in tail or not tail.strip(b"\0\r\n\t "):
        return True
    written = tail.rstrip(b"\0")
    return b"\0" in tail and b"\n" not in written[:-1]


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class _Scan:
    """What replaying found after the last intact record; nothing is changed yet."""

    end: int  # byte offset just after the last intact record
    cut_at: int | None = None  # where the torn or damaged part starts
    damage: str = ""  # why the part from cut_at is damage, not a torn write
    unterminated: bool = False  # the last record is whole but lost its newline


class _Mismatch(Exception):
    """The snapshot's offset does not line up with the history; replay from the start."""


class _SafeRotatingHandler(RotatingFileHandler):
    """agent.log: never opened through a symlink or FIFO, and a log that cannot be
    written (full disk, read-only folder) never changes the outcome of a run."""

    def _open(self) -> IO[str]:
        return safefs.open_file(Path(self.baseFilename), self.mode)

    def handleError(self, record: logging.LogRecord) -> None:
        pass


class Journal:
    def __init__(self, workspace: Path, disk: Disk | None = None) -> None:
        self.workspace = workspace
        self.dir = workspace / CONTEXT_DIR
        self.history_path = self.dir / "history.jsonl"
        self.state_path = self.dir / "state.json"
        self.loops_path = self.dir / "loops.json"
        self.log_path = self.dir / "agent.log"
        self.broken_path = self.dir / "history.jsonl.broken"
        self.stop_path = self.dir / "stop.request"
        self.out_path = self.dir / "agent.out"
        self.disk = disk or Disk()
        self.state = State()
        self.notes: list[str] = []
        self._fh: IO[bytes] | None = None
        self.failure: str | None = None
        self._since_snapshot = 0
        # Called with each record once it is durable and folded in (the Python API's
        # `on_event`); what it raises is logged, never the end of the run.
        self.on_record: Callable[[dict[str, Any]], None] | None = None

    # ---- planted files ---------------------------------------------------------------

    def check_dir(self) -> None:
        """Refuse a `.agent_context` that is a symlink (the journal would live elsewhere)."""
        safefs.check_dir(self.dir)

    def check_files(self) -> None:
        """Refuse a symlink, FIFO, socket or device under any journal file's name, and an
        `outputs` that is not a plain folder."""
        self.check_dir()
        safefs.check_dir(self.dir / OUTPUTS_FOLDER)
        try:
            entries = list(os.scandir(self.dir))
        except (FileNotFoundError, NotADirectoryError):
            return
        for entry in entries:
            ours = entry.name in JOURNAL_FILES or _ROTATED_LOG.fullmatch(entry.name)
            if ours and (entry.is_symlink() or not entry.is_file(follow_symlinks=False)):
                kind = safefs.lstat_kind(entry.path) or "not a regular file"
                raise safefs.unsafe(entry.path, kind)

    def ensure_dir(self) -> None:
        self.check_dir()
        self.dir.mkdir(parents=True, exist_ok=True)
        self.check_dir()

    def _remove_temp_files(self) -> None:
        """Temp files left by a kill (or planted) are removed, never written through."""
        for name in TEMP_FILES:
            path = self.dir / name
            if safefs.lstat_kind(path) == "a folder":
                raise safefs.unsafe(path, "a folder")
            with contextlib.suppress(OSError):  # a read-only folder fails later, clearly
                safefs.unlink(path)

    # ---- loading -----------------------------------------------------------------------

    def exists(self) -> bool:
        self.check_dir()
        return os.path.lexists(self.history_path) or os.path.lexists(self.state_path)

    def load(self, repair: bool = True, accept_loss: bool = False) -> State:
        """Snapshot plus the records after it.

        `repair` (the owner only) cuts a torn tail and removes stale temp files. Damage
        raises JournalCorrupt, unless `accept_loss`: then what is left of history.jsonl is
        kept, the damaged part moved to history.jsonl.broken, the old snapshot to
        state.json.broken, and a note says which records were lost.
        """
        self.check_files()
        if repair:
            self._remove_temp_files()
        state = self._read_snapshot()
        said = state.seq  # how many records the snapshot says were written
        scan = _Scan(0)
        if os.path.lexists(self.history_path):
            state, scan = self._replay_history(state)
        elif said:
            state = State()
        problems = [scan.damage] if scan.damage else []
        if state.seq < said:
            problems.append(self._shorter(state.seq, said))
        if problems and not accept_loss:
            raise JournalCorrupt(" ".join(problems) + " " + self._how_to_repair())
        last = said
        if repair and scan.cut_at is not None:
            last = max(last, self._cut_tail(scan.cut_at, damaged=bool(scan.damage)))
        elif repair and scan.unterminated:
            scan.end = self._terminate(scan.end)
        state.history_offset = scan.end
        self.state = state
        if problems:
            self._lost(state.seq, last)
            if repair:
                self._replace_snapshot()
        return state

    def _shorter(self, have: int, said: int) -> str:
        what = "is missing" if not os.path.lexists(self.history_path) else f"holds {have} records"
        return (
            f"{self.history_path} {what} but {self.state_path} says {said} were written: "
            f"the history was cut or emptied (records {have + 1}..{said} are gone), and "
            f"resuming from it could repeat finished actions."
        )

    def _how_to_repair(self) -> str:
        return (
            f"Nothing was changed. Restore the file from a backup, or accept the loss and "
            f"go on from what is left with: localagent resume --repair -w {self.workspace}"
        )

    def _lost(self, kept: int, last: int) -> None:
        lost = f"records {kept + 1}..{last}" if last > kept else "damaged lines with no record"
        self.notes.append(
            f"repair: {lost} of the history were lost and are not replayed; the state was "
            f"rebuilt from the {kept} records left in {self.history_path.name}"
        )

    def _replace_snapshot(self) -> None:
        """After an accepted loss the old snapshot would refuse the next load: keep it
        aside and write the rebuilt one."""
        try:
            if os.path.lexists(self.state_path):
                self.disk.replace(self.state_path, self.dir / "state.json.broken")
        except OSError as exc:
            self._fail(self.state_path, exc)
        self.snapshot()

    def _read_snapshot(self) -> State:
        try:
            data = orjson.loads(safefs.read_bytes(self.state_path))
        except FileNotFoundError:
            if os.path.lexists(self.history_path):
                self.notes.append("state.json was missing; rebuilt from history.jsonl")
            return State()
        except (OSError, ValueError):
            self.notes.append("state.json was unreadable; rebuilt from history.jsonl")
            return State()
        try:
            return State.model_validate(migrate(data))
        except ValueError as exc:
            if "newer than" in str(exc):
                raise JournalCorrupt(f"{self.state_path}: {exc}") from None
            self.notes.append("state.json had an unexpected shape; rebuilt from history.jsonl")
            return State()

    def _replay_history(self, snapshot: State) -> tuple[State, _Scan]:
        with safefs.open_file(self.history_path, "rb") as fh:
            if snapshot.seq or snapshot.history_offset:
                try:
                    return snapshot, self._replay(fh, snapshot)
                except _Mismatch:
                    self.notes.append(
                        "state.json does not match history.jsonl; rebuilt from the history"
                    )
            state = State()
            return state, self._replay(fh, state)

    def _replay(self, fh: IO[bytes], state: State) -> _Scan:
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
                return _Scan(good_end, bad_at, self._damaged(bad_at, state.seq, record["seq"]))
            if record["seq"] != state.seq + 1:
                if state.seq and good_end == start:
                    raise _Mismatch
                gap = f"{self.history_path}: record {record['seq']} follows {state.seq}."
                return _Scan(good_end, good_end, gap)
            try:
                apply(state, record)
            except (KeyError, TypeError, ValueError, ValidationError) as exc:
                malformed = (
                    f"{self.history_path}: record {record['seq']} ({record.get('type')}) "
                    f"is malformed: {exc!r}."
                )
                return _Scan(good_end, good_end, malformed)
            good_end += len(line)
            unterminated = not line.endswith(b"\n")
        if bad_at is None:
            return _Scan(good_end, unterminated=unterminated)
        fh.seek(bad_at)
        tail = fh.read(MAX_TORN + 1)
        if len(tail) <= MAX_TORN and is_torn(tail):
            return _Scan(good_end, bad_at)
        if state.seq and bad_at == start:
            raise _Mismatch
        return _Scan(good_end, bad_at, self._damaged_end(bad_at, state.seq))

    def _damaged(self, at: int, after: int, before: int) -> str:
        return (
            f"{self.history_path} is damaged at byte {at} (after record {after}, before "
            f"record {before}); records after the damage exist, so nothing was cut."
        )

    def _damaged_end(self, at: int, after: int) -> str:
        return (
            f"{self.history_path} is damaged at byte {at} (after record {after}): the "
            f"lines there are complete but fail their checksum. A crash leaves at most a "
            f"partial last line, so this is damage, not an interrupted write."
        )

    def _terminate(self, offset: int) -> int:
        try:
            with safefs.open_file(self.history_path, "r+b", buffering=0) as fh:
                self.disk.truncate(fh, offset)
                fh.seek(offset)
                self.disk.write(fh, b"\n")
                self.disk.fsync(fh)
        except OSError as exc:
            self._fail(self.history_path, exc)
        return offset + 1

    def _cut_tail(self, offset: int, damaged: bool) -> int:
        """Move everything from `offset` to history.jsonl.broken; return the highest
        seq found in what was moved (0 if none)."""
        last = size = 0
        try:
            with safefs.open_file(self.history_path, "r+b", buffering=0) as fh:
                fh.seek(offset)
                with safefs.open_file(self.broken_path, "ab", buffering=0) as broken:
                    for line in fh:
                        last = max(last, _seq_of(line))
                        size += len(line)
                        self.disk.write(broken, line)
                    self.disk.fsync(broken)
                self.disk.truncate(fh, offset)
                self.disk.fsync(fh)
        except OSError as exc:
            self._fail(self.history_path, exc)
        what = "damaged lines" if damaged else "a torn last record"
        self.notes.append(
            f"cut {what} ({size} bytes) from history.jsonl; kept in {self.broken_path.name}"
        )
        return last

    # ---- writing -----------------------------------------------------------------------

    def append(self, type_: str, **fields: Any) -> dict[str, Any]:
        """Write one record durably, then fold it into the state."""
        self._usable()
        record = {"seq": self.state.seq + 1, "ts": now_iso(), "type": type_, **fields}
        try:
            line = _line(record)
        except (TypeError, orjson.JSONEncodeError):
            # Fold what was written, so the live state equals a replay of the history.
            record = encodable(record)
            line = _line(record)
        try:
            fh = self._open()
            self.disk.write(fh, line)
            self.disk.fsync(fh)
        except OSError as exc:
            self._fail(self.history_path, exc)
        apply(self.state, record)
        self.state.history_offset += len(line)
        self._since_snapshot += 1
        if type_ in SNAPSHOT_AFTER or self._since_snapshot >= SNAPSHOT_EVERY:
            self.snapshot()
        if self.on_record is not None:
            try:
                self.on_record(record)
            except Exception as exc:
                logging.getLogger("localagent").warning(
                    "the event callback failed on %s record %d: %r", type_, record["seq"], exc
                )
        return record

    def _open(self) -> IO[bytes]:
        if self._fh is None:
            self.ensure_dir()
            # Unbuffered: each record is one write() the moment it is appended, so a failure
            # can never leave bytes in a buffer that a later close() would slip out.
            self._fh = safefs.open_file(self.history_path, "ab", buffering=0)
        return self._fh

    def _usable(self) -> None:
        if self.failure is not None:
            raise JournalWriteFailed(self.failure)

    def _fail(self, path: Path, exc: OSError) -> NoReturn:
        # After a failed fsync the page cache may no longer match the disk; nothing more
        # is written by this process. The next load repairs the tail and carries on.
        self.failure = (
            f"could not write {path}: {exc.strerror or exc}; the agent stopped without "
            f"going further. Fix the disk (free space?), then run: localagent resume "
            f"-w {self.workspace}"
        )
        with contextlib.suppress(OSError):
            self.close()
        raise JournalWriteFailed(self.failure) from None

    def snapshot(self) -> None:
        self._usable()
        data = self.state.model_dump(mode="json")
        try:
            body = orjson.dumps(data, option=orjson.OPT_INDENT_2)
        except (TypeError, orjson.JSONEncodeError):
            body = orjson.dumps(encodable(data), option=orjson.OPT_INDENT_2)
        self._write_atomic(self.state_path, body)
        self._since_snapshot = 0

    def record_loop(self, entry: dict[str, Any]) -> None:
        self._usable()
        try:
            loops = orjson.loads(safefs.read_bytes(self.loops_path))
            if not isinstance(loops, list):
                loops = []
        except (OSError, ValueError):
            loops = []
        loops.append(encodable(entry))
        self._write_atomic(self.loops_path, orjson.dumps(loops, option=orjson.OPT_INDENT_2))

    def _write_atomic(self, path: Path, data: bytes) -> None:
        tmp = path.with_name(path.name + ".tmp")
        try:
            self.ensure_dir()
            with safefs.create_new(tmp) as fh:
                self.disk.write(fh, data)
                self.disk.fsync(fh)
            self.disk.replace(tmp, path)
            self.disk.fsync_dir(self.dir)
        except OSError as exc:
            self._fail(path, exc)

    def close(self) -> None:
        if self._fh is not None:
            fh, self._fh = self._fh, None
            fh.close()

    def finish(self, best_effort: bool = False) -> None:
        """The last snapshot (if records came after the previous one), then close.

        `best_effort` (a run ending in an error) swallows a failure of the snapshot;
        otherwise it raises JournalWriteFailed, so a disk problem is never hidden.
        """
        try:
            if self.failure is None and self.state.goal is not None and self._since_snapshot:
                self.snapshot()
        except JournalWriteFailed:
            if not best_effort:
                raise
        finally:
            with contextlib.suppress(OSError):
                self.close()

    def archive(self) -> Path | None:
        """Move a previous goal's files to `archive/<timestamp>/`; nothing is deleted.

        Everything of the goal goes (history, snapshot, loops, logs and their rotations,
        outputs); only `archive/`, the live process's lock and pid file and the
        workspace-wide caches stay.
        """
        self.close()
        self.check_files()
        if not self.dir.is_dir():
            return None
        names = sorted(
            n for n in os.listdir(self.dir) if n not in KEPT_BY_ARCHIVE and ".tmp" not in n
        )
        if not names:
            return None
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        safefs.check_dir(self.dir / "archive")
        target = self.dir / "archive" / stamp
        try:
            target.mkdir(parents=True)
            for name in names:
                self._archive_one(self.dir / name, target / name)
            self.disk.fsync_dir(self.dir)
        except OSError as exc:
            self._fail(target, exc)
        self.state = State()
        return target

    def _archive_one(self, path: Path, dest: Path) -> None:
        if path == self.out_path:
            # The background process writes its own output there: copy it, then empty it.
            with safefs.open_file(path, "r+b") as fh, safefs.open_file(dest, "xb") as copy:
                copy.write(fh.read())
                fh.truncate(0)
            return
        self.disk.replace(path, dest)

    # ---- files other modules open --------------------------------------------------------

    def log_handler(self, max_bytes: int = 1_000_000, backups: int = 3) -> RotatingFileHandler:
        """A rotating handler for agent.log that never opens it through a symlink or FIFO."""
        self.ensure_dir()
        return _SafeRotatingHandler(
            self.log_path, maxBytes=max_bytes, backupCount=backups, encoding="utf-8"
        )

    def output_store(self, max_bytes: int) -> OutputStore | None:
        """The store of whole outputs (None when `max_bytes` is 0), rid of the temp files
        a killed run left in it."""
        if max_bytes <= 0:
            return None
        store = OutputStore(self.dir / OUTPUTS_FOLDER, max_bytes)
        store.remove_temps()
        return store

    def research_folder(self, name: Literal["index", "answers"]) -> Path:
        """`index/` (the code index) or `answers/` (research answers), created as a plain
        folder; a link or anything else planted under the name is refused."""
        self.ensure_dir()
        path = self.dir / name
        safefs.check_dir(path)
        path.mkdir(exist_ok=True)
        safefs.check_dir(path)
        return path

    def open_out(self) -> IO[bytes]:
        """agent.out opened for appending (the background process's stdout and stderr)."""
        self.ensure_dir()
        return safefs.open_file(self.out_path, "ab")

    def read_text(self, path: Path, limit: int | None = None) -> str:
        """The end of a journal file (agent.log, agent.out) as text; "" if it is absent."""
        try:
            with safefs.open_file(path, "rb") as fh:
                if limit is not None:
                    fh.seek(max(0, fh.seek(0, os.SEEK_END) - limit))
                return fh.read().decode("utf-8", errors="replace")
        except FileNotFoundError:
            return ""

    # ---- stop requests (`localagent stop` asks, the running agent checks) ------------------

    def request_stop(self) -> None:
        self.ensure_dir()
        safefs.write_new(self.stop_path, now_iso().encode())

    def stop_requested(self) -> bool:
        return os.path.lexists(self.stop_path)

    def clear_stop(self) -> None:
        self.check_dir()
        safefs.unlink(self.stop_path)

    # ---- reading -----------------------------------------------------------------------

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
        JournalCorrupt."""
        self.check_files()
        if not os.path.lexists(self.history_path):
            return
        last = 0
        with safefs.open_file(self.history_path, "rb") as fh:
            fh.seek(offset)
            for line in fh:
                record = decode(line)
                if record is None:
                    fh.seek(offset)
                    tail = fh.read(MAX_TORN + 1)
                    if len(tail) <= MAX_TORN and is_torn(tail):
                        return
                    raise JournalCorrupt(self._damaged_somewhere(offset, last))
                last = record["seq"]
                if line.endswith(b"\n"):
                    offset += len(line)
                yield record, offset

    def _damaged_somewhere(self, at: int, after: int) -> str:
        return (
            f"{self.history_path} is damaged at byte {at} (after record {after}); the "
            f"history cannot be shown past it. {self._how_to_repair()}"
        )

    def peek(self) -> tuple[str, str | None]:
        """The goal's text and status, cheaply: the snapshot and the records after it
        found at the end of the history (never the whole file). For `list`."""
        self.check_files()
        snapshot = self._read_snapshot()
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
        with safefs.open_file(self.history_path, "rb") as fh:
            end = fh.seek(0, os.SEEK_END)
            data = b""
            pos = end
            while pos > 0 and data.count(b"\n") <= n:
                step = min(65536, pos)
                pos -= step
                fh.seek(pos)
                data = fh.read(step) + data
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
