"""`.agent_context/` itself: its paths, the checks that refuse planted files, the files
other modules open through the journal, and stop requests."""

from __future__ import annotations

import contextlib
import logging
import os
import re
from logging.handlers import RotatingFileHandler
from pathlib import Path
from typing import IO, Literal

from localagent.journal.codec import now_iso, sealer
from localagent.journal.disk import Disk
from localagent.journal.outputstore import FOLDER as OUTPUTS_FOLDER
from localagent.journal.outputstore import OutputStore
from localagent.journal.snapshots import FOLDER as SNAPSHOTS_FOLDER
from localagent.journal.snapshots import Store as SnapshotStore
from localagent.system import safefs, userkey
from localagent.system.names import display

CONTEXT_DIR = ".agent_context"
# Research (`localagent ask`) keeps its own journal here, beside the goal's, so a question
# never puts a goal away; it has its own lock, so it can run while the goal's agent does.
QUESTIONS_DIR = "ask"
ARCHIVE_DIR = "archive"
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

TEMP_FILES = ("state.json.tmp", "loops.json.tmp", "history.jsonl.tmp")
_ROTATED_LOG = re.compile(r"agent\.log\.\d+")


def resume_hint(workspace: str | Path, part: str = "") -> str:
    """How the user goes on with the goal (or the question, for `part` QUESTIONS_DIR) of
    `workspace`: the one wording every command shows."""
    where = display(workspace)
    if part == QUESTIONS_DIR:
        return f"ask the same question again to go on (localagent ask ... -w {where})"
    return f"resume with: localagent resume -w {where}"


class _SafeRotatingHandler(RotatingFileHandler):
    """agent.log: never opened through a symlink or FIFO, and a log that cannot be
    written (full disk, read-only folder) never changes the outcome of a run."""

    def _open(self) -> IO[str]:
        return safefs.open_file(Path(self.baseFilename), self.mode)

    def handleError(self, record: logging.LogRecord) -> None:
        pass


class Folder:
    """The journal's folder and the disk it is written through; `Journal` builds on it.

    `part` is a folder below `.agent_context/` that holds a journal of its own: the
    questions' (`ask`) or an archived goal's (`archive/<timestamp>`)."""

    def __init__(self, workspace: Path, disk: Disk | None = None, part: str = "") -> None:
        self.workspace = workspace
        self.part = part
        self.top = workspace / CONTEXT_DIR
        self.dir = self.top / part if part else self.top
        self.history_path = self.dir / "history.jsonl"
        self.state_path = self.dir / "state.json"
        self.loops_path = self.dir / "loops.json"
        self.log_path = self.dir / "agent.log"
        self.broken_path = self.dir / "history.jsonl.broken"
        self.stop_path = self.dir / "stop.request"
        self.out_path = self.dir / "agent.out"
        self.ready_path = self.dir / "agent.ready"
        self.disk = disk or Disk()
        self.notes: list[str] = []  # what loading found and repaired, for the user
        self._sealer: userkey.Sealer | None = None

    def seal(self) -> userkey.Sealer:
        """What seals this user's records and checks seals (KeyUnavailable: exit 2)."""
        if self._sealer is None:
            self._sealer = sealer()
        return self._sealer

    def resume_hint(self) -> str:
        """How the user goes on with this journal's goal or question."""
        return resume_hint(self.workspace, self.part)

    # ---- planted files ---------------------------------------------------------------

    def check_dir(self) -> None:
        """Refuse a `.agent_context` (or a folder below it on the way to this journal)
        that is a symlink: the journal would live elsewhere."""
        path = self.top
        safefs.check_dir(path)
        for name in self.dir.relative_to(self.top).parts:
            path = path / name
            safefs.check_dir(path)

    def check_files(self) -> None:
        """Refuse a symlink, FIFO, socket or device under any journal file's name, and an
        `outputs` that is not a plain folder."""
        self.check_dir()
        safefs.check_dir(self.dir / OUTPUTS_FOLDER)
        safefs.check_dir(self.dir / SNAPSHOTS_FOLDER)
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

    def exists(self) -> bool:
        self.check_dir()
        return os.path.lexists(self.history_path) or os.path.lexists(self.state_path)

    def _how_to_repair(self) -> str:
        return (
            f"Nothing was changed. Restore the file from a backup, or accept the loss and "
            f"go on from what is left with: localagent resume --repair -w {self.workspace}"
        )

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

    def snapshot_store(self, max_bytes: int) -> SnapshotStore | None:
        """The store of the workspace's contents before each step (None when `max_bytes`
        is 0: no snapshots)."""
        return SnapshotStore(self.dir / SNAPSHOTS_FOLDER, max_bytes) if max_bytes > 0 else None

    def research_folder(self, name: Literal["index", "answers"]) -> Path:
        """`index/` (the code index) or `answers/` (research answers), created as a plain
        folder; a link or anything else planted under the name is refused."""
        self.ensure_dir()
        path = self.top / name  # shared by the goal and the questions
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

    # ---- the start signal (a background run tells its starter it passed its preflight) ----

    def signal_ready(self, what: str) -> None:
        """Say "preflight" (the run is working) or "suspended" (it cannot), with our pid."""
        safefs.write_atomic(self.ready_path, f"{os.getpid()} {what}".encode())

    def ready(self) -> tuple[int, str] | None:
        """The pid and word of the signal, or None while there is none (or it is unreadable)."""
        try:
            pid, what = safefs.read_bytes(self.ready_path, 100).decode().split()
            return int(pid), what
        except (OSError, ValueError):
            return None

    def clear_ready(self) -> None:
        safefs.unlink(self.ready_path)

    # ---- stop requests (`localagent stop` asks, the running agent checks) ------------------

    def request_stop(self) -> None:
        self.ensure_dir()
        safefs.write_new(self.stop_path, now_iso().encode())

    def stop_requested(self) -> bool:
        return os.path.lexists(self.stop_path)

    def clear_stop(self) -> None:
        self.check_dir()
        safefs.unlink(self.stop_path)
