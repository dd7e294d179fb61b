"""The lifecycle of one run in this process: the workspace lock, the stop signals and
the log, each taken on entry and given back on exit, whatever happened in between; and
the run's ending, journaled in one place (`Run.end`) and returned as an `Outcome`.

A log that cannot be written (a full disk) is said once and never changes the outcome;
notes go to stderr through `say`, which a closed terminal cannot turn into an error.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType

from localagent.journal import Disk, Journal
from localagent.system.console import PrintableFormatter, printable
from localagent.system.errors import AgentError, disk_error
from localagent.system.exits import Outcome
from localagent.system.lock import WorkspaceLock
from localagent.system.names import display
from localagent.system.stopping import StopSignal


class Run:
    """The workspace lock, the stop signals and the log of one run in this process.

    Signal handlers are installed only when asked (the CLI asks; an embedding program
    keeps its own) and are restored on exit, as is everything else this changed.
    """

    def __init__(
        self,
        workspace: Path,
        disk: Disk | None = None,
        signals: bool = True,
        verbose: bool = False,
        part: str = "",
    ) -> None:
        self.journal = Journal(workspace, disk, part)
        self.lock = WorkspaceLock(self.journal.dir)
        self.stop = StopSignal(self.journal.stop_requested)
        self.signals = signals
        self.verbose = verbose
        self._file: logging.Handler | None = None
        self._console: logging.Handler | None = None
        self._level: int | None = None  # the logger's level before the run, restored after

    def __enter__(self) -> Run:
        self.lock.acquire(self.journal.log_path)
        try:
            if self.signals:
                self.stop.install()
            try:
                self.journal.clear_stop()
            except OSError as exc:
                raise disk_error(self.journal.stop_path, exc) from None
            self._start_logging()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            self.journal.finish(best_effort=True)
            with contextlib.suppress(OSError, AgentError):
                self.journal.clear_stop()  # a request that came as the run ended is spent
            self.stop.uninstall()
            self._stop_logging()
        finally:
            with contextlib.suppress(OSError):  # the OS drops the lock with the process
                self.lock.release()

    def end(self, outcome: Outcome) -> None:
        """Journal how the run ended: every ending of a run is written here."""
        if outcome.status == "stopped":
            self.journal.append("stopped", reason=outcome.reason, by=outcome.by or "user")
        elif outcome.status == "suspended":
            self.journal.append("suspended", reason=outcome.reason)
        else:
            kind = f"goal_{outcome.status}"
            self.journal.append(kind, reason=outcome.reason, verification=outcome.verification)

    def _stop_logging(self) -> None:
        if self._console is not None:
            logging.getLogger("localagent").removeHandler(self._console)
            self._console = None
        self.close_log()
        if self._level is not None:
            logging.getLogger("localagent").setLevel(self._level)
            self._level = None

    def close_log(self) -> None:
        """Close agent.log (before the archive moves it: Windows cannot move an open
        file). A log that could not be written (a full disk) is said once, and never
        changes the outcome of the run."""
        handler, self._file = self._file, None
        if handler is None:
            return
        logging.getLogger("localagent").removeHandler(handler)
        try:
            handler.close()  # flushes what a failed write left buffered
        except (OSError, ValueError) as exc:
            say(
                f"the log {display(self.journal.log_path)} could not be written "
                f"({getattr(exc, 'strerror', None) or exc}); the run itself is journaled"
            )

    @contextlib.contextmanager
    def log_closed(self) -> Iterator[None]:
        """agent.log closed meanwhile, then a new one opened (the archive moves it)."""
        self.close_log()
        try:
            yield
        finally:
            self.open_log()

    def open_log(self) -> None:
        if self._file is not None:
            return
        try:
            self._file = self.journal.log_handler()
        except OSError as exc:
            where = display(self.journal.log_path)
            say(f"cannot write the log {where} ({exc.strerror}); going on")
            return
        self._file.setFormatter(
            logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
        )
        logging.getLogger("localagent").addHandler(self._file)

    def _start_logging(self) -> None:
        self._level = logging.getLogger("localagent").level
        logging.getLogger("localagent").setLevel(logging.INFO)
        self.open_log()
        if self.verbose:
            self._console = logging.StreamHandler(sys.stderr)
            self._console.setFormatter(PrintableFormatter("%(levelname)s %(message)s"))
            self._console.setLevel(logging.WARNING)
            logging.getLogger("localagent").addHandler(self._console)


def say(message: str) -> None:
    """A note on stderr that a closed or full terminal cannot turn into an error."""
    with contextlib.suppress(OSError, ValueError):
        print(f"localagent: {printable(message)}", file=sys.stderr, flush=True)
