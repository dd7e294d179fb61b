"""The Journal: loads the state from `.agent_context/`, appends records durably, writes the
snapshot, and archives a finished goal's files (the package docstring says how)."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, NoReturn

import orjson

from localagent.journal import seals
from localagent.journal.archive import archive
from localagent.journal.codec import _line, encodable, now_iso, seal_snapshot
from localagent.journal.disk import Disk
from localagent.journal.reading import History
from localagent.journal.replay import (
    SNAPSHOT_EVERY,
    Scan,
    cut_tail,
    load_snapshot,
    replay_history,
    shorter,
    terminate,
)
from localagent.state import MalformedRecord, State, check, fold
from localagent.system import safefs
from localagent.system.errors import JournalCorrupt, JournalWriteFailed, RecordRefused

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


class Journal(History):
    """The owner of `.agent_context/`: one per workspace and process."""

    def __init__(self, workspace: Path, disk: Disk | None = None, part: str = "") -> None:
        super().__init__(workspace, disk, part)
        self.state = State()
        self._fh: IO[bytes] | None = None
        self.failure: str | None = None
        self._since_snapshot = 0
        # Why this user's agent did not write the loaded journal ("" when it did): its
        # settings and owed calls then run only once the user adopts it (`adopt`).
        self.foreign = ""
        # Called with each record once it is durable and folded in (the Python API's
        # `on_event`); what it raises is logged, never the end of the run.
        self.on_record: Callable[[dict[str, Any]], None] | None = None

    # ---- loading -----------------------------------------------------------------------

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
        state, sealed = load_snapshot(self, sealed=True)
        said = state.seq  # how many records the snapshot says were written
        if sealed is not True:
            self.notes.append(seals.UNSEALED_SNAPSHOT)
            state = State()  # only this user's own snapshot stands for the records it covers
        if repair and accept_loss and state.history_offset:
            state.history_offset = seals.mend_prefix(self, state)
        scan = Scan(0)
        if os.path.lexists(self.history_path):
            state, scan = replay_history(self, state)
        elif said:
            state = State()
        problems = [scan.damage] if scan.damage else []
        if state.seq < said:
            problems.append(shorter(self, state.seq, said))
        if problems and not accept_loss:
            raise JournalCorrupt(" ".join(problems) + " " + self._how_to_repair())
        self.foreign = seals.why_foreign(scan)
        last = said
        try:
            if repair and scan.cut_at is not None:
                last = max(last, cut_tail(self, scan.cut_at, damaged=bool(scan.damage)))
            elif repair and scan.unterminated:
                scan.end = terminate(self, scan.end)
        except OSError as exc:
            self._fail(self.history_path, exc)
        state.history_offset = scan.end
        self.state = state
        if problems:
            self._lost(state.seq, last)
            if repair:
                self._replace_snapshot()
        return state

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

    # ---- writing -----------------------------------------------------------------------

    def append(self, type_: str, **fields: Any) -> dict[str, Any]:
        """Write one record durably, sealed with this user's key, then fold it into the
        state. A record the reducer could not read back is refused (RecordRefused) and
        nothing is written."""
        self._usable()
        record = {"seq": self.state.seq + 1, "ts": now_iso(), "type": type_, **fields}
        try:
            line = _line(record, self.seal())
        except (TypeError, orjson.JSONEncodeError):
            # Fold what was written, so the live state equals a replay of the history.
            record = encodable(record)
            line = _line(record, self.seal())
        try:
            check(record)
        except MalformedRecord as exc:
            raise RecordRefused(
                f"the agent stopped rather than journal a {type_} record it could not read "
                f"back ({exc}); nothing of it was written"
            ) from None
        try:
            fh = self._open()
            self.disk.write(fh, line)
            self.disk.fsync(fh)
        except OSError as exc:
            self._fail(self.history_path, exc)
        fold(self.state, record)
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

    def refuse_foreign(self) -> None:
        """ForeignJournal (saying what resuming would run) if another agent wrote it."""
        if self.foreign:
            raise seals.refusal(self, self.state, self.foreign)

    def adopt(self) -> None:
        """Make a journal another agent wrote this user's own, as the user asked: the
        adoption is journaled, then every record and the snapshot are sealed anew."""
        if not self.foreign:
            return
        self.append("adopted", was=self.foreign, would_run=seals.would_run(self.state))
        self.close()
        try:
            self.state.history_offset = seals.reseal(self)
        except OSError as exc:
            self._fail(self.history_path, exc)
        self.foreign = ""
        self.snapshot()

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
        again = (
            f"localagent resume -w {self.workspace}"
            if self.state.goal is not None
            else "the same localagent start again (nothing of the goal was journaled yet)"
        )
        self.failure = (
            f"could not write {path}: {exc.strerror or exc}; the agent stopped without "
            f"going further. Fix the disk (free space?), then run: {again}"
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
        if not self.foreign:  # a state folded from another agent's records stays unsealed
            body = seal_snapshot(body, self.seal())
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
        """Move a previous goal's files to `archive/<timestamp>/` (see `archive.archive`)."""
        self.close()
        try:
            target = archive(self)
        except OSError as exc:
            self._fail(Path(exc.filename or self.dir / "archive"), exc)
        self.state = State()
        self.foreign = ""
        return target
