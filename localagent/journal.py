"""The journal: the only code that reads or writes `WORKSPACE/.agent_context/`.

`history.jsonl` is the write-ahead log (one checksummed orjson record per line, fsynced
before `append` returns); `state.json` is a snapshot of the state folded from it, with
the `seq` and byte offset it covers, so loading reads only the records after it.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
import zlib
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, NoReturn

import orjson
from pydantic import ValidationError

from localagent.errors import JournalCorrupt, JournalWriteFailed
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
_CRC_PREFIX = b',"crc":"'
_CRC_TAIL = len(_CRC_PREFIX) + 8 + 2


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
        # Windows refuses to replace a file another process holds open (a reader, an
        # antivirus scan); it clears within moments, so retry for about two seconds.
        deadline = time.monotonic() + 2.0
        while True:
            try:
                os.replace(src, dst)
                return
            except PermissionError:
                if sys.platform != "win32" or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def fsync_dir(self, path: Path) -> None:
        if sys.platform == "win32":
            return  # NTFS has no directory handle to fsync; the rename is journaled by NTFS
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def encode(record: dict[str, Any]) -> bytes:
    body = orjson.dumps(record)
    return body[:-1] + _CRC_PREFIX + b"%08x" % zlib.crc32(body) + b'"}\n'


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


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


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

    # ---- loading -------------------------------------------------------------

    def exists(self) -> bool:
        return self.history_path.exists() or self.state_path.exists()

    def load(self, repair: bool = True) -> State:
        """Snapshot plus the records after it. `repair` cuts a torn tail (owner only)."""
        state = self._read_snapshot()
        if not self.history_path.exists():
            if state.seq:
                raise JournalCorrupt(
                    f"{self.history_path} is missing but {self.state_path} "
                    f"covers {state.seq} records; restore it from a backup"
                )
            self.state = state
            return state
        size = self.history_path.stat().st_size
        if state.history_offset > size:
            self.notes.append("state.json is ahead of history.jsonl; rebuilt from the history")
            state = State()
        try:
            end = self._replay(state, repair)
        except _Mismatch:
            self.notes.append("state.json does not match history.jsonl; rebuilt from the history")
            state = State()
            end = self._replay(state, repair)
        state.history_offset = end
        self.state = state
        return state

    def _read_snapshot(self) -> State:
        try:
            data = orjson.loads(self.state_path.read_bytes())
        except FileNotFoundError:
            if self.history_path.exists():
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

    def _replay(self, state: State, repair: bool) -> int:
        """Apply the records after the snapshot; return the byte offset of the intact end."""
        with self.history_path.open("rb") as fh:
            fh.seek(state.history_offset)
            good_end = state.history_offset
            bad_at: int | None = None
            unterminated = False
            for line in fh:
                record = decode(line)
                if record is None:
                    bad_at = good_end if bad_at is None else bad_at
                    continue
                if bad_at is not None:
                    if state.seq and bad_at == state.history_offset:
                        raise _Mismatch
                    raise JournalCorrupt(
                        f"{self.history_path} is damaged at byte {bad_at} (before record "
                        f"{record['seq']}); records after the damage exist, so nothing was "
                        f"cut. Inspect or restore the file, then resume."
                    )
                if record["seq"] != state.seq + 1:
                    if state.seq and good_end == state.history_offset:
                        raise _Mismatch
                    raise JournalCorrupt(
                        f"{self.history_path}: record {record['seq']} follows "
                        f"{state.seq}; the history has a gap"
                    )
                try:
                    apply(state, record)
                except (KeyError, TypeError, ValueError, ValidationError) as exc:
                    raise JournalCorrupt(
                        f"{self.history_path}: record {record['seq']} "
                        f"({record.get('type')}) is malformed: {exc!r}"
                    ) from None
                good_end += len(line)
                unterminated = not line.endswith(b"\n")
        if bad_at is not None and repair:
            self._cut_tail(bad_at)
        if unterminated and repair:
            # The last record is whole but lost its newline; end it so appends stay separate.
            good_end = self._terminate(good_end)
        return good_end

    def _terminate(self, offset: int) -> int:
        try:
            with self.history_path.open("r+b", buffering=0) as fh:
                self.disk.truncate(fh, offset)
                fh.seek(offset)
                self.disk.write(fh, b"\n")
                self.disk.fsync(fh)
        except OSError as exc:
            self._fail(self.history_path, exc)
        return offset + 1

    def _cut_tail(self, offset: int) -> None:
        try:
            with self.history_path.open("r+b", buffering=0) as fh:
                fh.seek(offset)
                torn = fh.read()
                with self.broken_path.open("ab", buffering=0) as broken:
                    self.disk.write(broken, torn)
                    self.disk.fsync(broken)
                self.disk.truncate(fh, offset)
                self.disk.fsync(fh)
        except OSError as exc:
            self._fail(self.history_path, exc)
        self.notes.append(
            f"cut a torn last record ({len(torn)} bytes) from history.jsonl; "
            f"kept in {self.broken_path.name}"
        )

    # ---- writing -------------------------------------------------------------

    def append(self, type_: str, **fields: Any) -> dict[str, Any]:
        """Write one record durably, then fold it into the state."""
        self._usable()
        record = {"seq": self.state.seq + 1, "ts": now_iso(), "type": type_, **fields}
        line = encode(record)
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
        return record

    def _open(self) -> IO[bytes]:
        if self._fh is None:
            self.dir.mkdir(parents=True, exist_ok=True)
            # Unbuffered: each record is one write() the moment it is appended, so a failure
            # can never leave bytes in a buffer that a later close() would slip out.
            self._fh = self.history_path.open("ab", buffering=0)
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
        self._write_atomic(
            self.state_path,
            orjson.dumps(self.state.model_dump(mode="json"), option=orjson.OPT_INDENT_2),
        )
        self._since_snapshot = 0

    def record_loop(self, entry: dict[str, Any]) -> None:
        self._usable()
        try:
            loops = orjson.loads(self.loops_path.read_bytes())
            if not isinstance(loops, list):
                loops = []
        except (OSError, ValueError):
            loops = []
        loops.append(entry)
        self._write_atomic(self.loops_path, orjson.dumps(loops, option=orjson.OPT_INDENT_2))

    def _write_atomic(self, path: Path, data: bytes) -> None:
        tmp = path.with_name(path.name + ".tmp")
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            with tmp.open("wb") as fh:
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
        """Move a previous goal's files to `archive/<timestamp>/`; nothing is deleted."""
        self.close()
        names = [
            p
            for p in (
                self.state_path,
                self.history_path,
                self.loops_path,
                self.broken_path,
                self.log_path,
            )
            if p.exists()
        ]
        if not names:
            return None
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        target = self.dir / "archive" / stamp
        try:
            target.mkdir(parents=True)
            for path in names:
                self.disk.replace(path, target / path.name)
            self.disk.fsync_dir(self.dir)
        except OSError as exc:
            self._fail(target, exc)
        self.state = State()
        return target

    # ---- stop requests (`localagent stop` asks, the running agent checks) ----------

    def request_stop(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        self.stop_path.write_bytes(now_iso().encode())

    def stop_requested(self) -> bool:
        return self.stop_path.exists()

    def clear_stop(self) -> None:
        self.stop_path.unlink(missing_ok=True)

    # ---- reading -------------------------------------------------------------

    def records(self) -> Iterator[dict[str, Any]]:
        """Stream every intact record from the start (never the whole file in memory).

        A torn tail ends the stream quietly; a damaged line with records after it raises.
        """
        if not self.history_path.exists():
            return
        offset = 0
        bad_at: int | None = None
        with self.history_path.open("rb") as fh:
            for line in fh:
                record = decode(line)
                if record is None:
                    bad_at = offset if bad_at is None else bad_at
                elif bad_at is not None:
                    raise JournalCorrupt(
                        f"{self.history_path} is damaged at byte {bad_at} (before record "
                        f"{record['seq']}); inspect or restore the file"
                    )
                else:
                    yield record
                offset += len(line)

    def tail(self, n: int) -> list[dict[str, Any]]:
        """The last `n` intact records, read backwards from the end of the file."""
        if n <= 0 or not self.history_path.exists():
            return []
        with self.history_path.open("rb") as fh:
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
        decoded = [decode(line) for line in lines]
        last_good = max((i for i, r in enumerate(decoded) if r is not None), default=-1)
        if any(r is None and lines[i].strip() for i, r in enumerate(decoded[:last_good])):
            raise JournalCorrupt(
                f"{self.history_path} is damaged near its end; inspect or restore the file"
            )
        return [r for r in decoded if r is not None][-n:]


class _Mismatch(Exception):
    """The snapshot's offset does not line up with the history; replay from the start."""
