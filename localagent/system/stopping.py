"""Stopping cleanly: signals and stop requests become a reason checked at known points.

A signal handler only records who asked (`user`: Ctrl-C or `localagent stop`, which
writes its request before it signals; `system`: SIGTERM, SIGHUP, SIGBREAK with no
request, as a logout or shutdown sends them), so it can never interrupt a journal write.
The loop checks between steps; the blocking waits (a model call, a running command, a
backoff) poll `requested()` and end early by raising `StopRequested`.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from collections.abc import Callable
from types import FrameType
from typing import Any

POLL = 0.1
USER_SIGNALS = ("SIGINT",)
SYSTEM_SIGNALS = ("SIGTERM", "SIGHUP", "SIGBREAK")


class StopRequested(BaseException):
    """Raised out of a wait; BaseException so no `except Exception` eats it."""


class StopSignal:
    def __init__(self, requested_by_file: Callable[[], bool] = lambda: False) -> None:
        self.reason: str | None = None
        self.by = ""
        self._by_file = requested_by_file
        self._saved: dict[int, Any] = {}

    def request(self, reason: str, by: str = "user") -> None:
        if self.reason is None:
            self.reason, self.by = reason, by

    def requested(self) -> str | None:
        if self.reason is None and self._by_file():
            self.request("stopped with `localagent stop`", "user")
        return self.reason

    def check(self) -> None:
        if self.requested():
            raise StopRequested

    def wait(self, seconds: float) -> None:
        """Sleep that ends early, by raising StopRequested, when a stop arrives."""
        end = time.monotonic() + seconds
        while True:
            self.check()
            left = end - time.monotonic()
            if left <= 0:
                return
            time.sleep(min(POLL, left))

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        if name not in USER_SIGNALS and self._by_file():
            # `localagent stop` asks through the file first and signals only when the
            # agent has not stopped in time: the user's stop, whatever the signal.
            self.request("stopped with `localagent stop`", "user")
        self.request(f"stopped by signal {name}", "user" if name in USER_SIGNALS else "system")

    def install(self) -> None:
        """Handle the stop signals (main thread only); `uninstall` restores the old ones."""
        if threading.current_thread() is not threading.main_thread():
            return
        for name in USER_SIGNALS + SYSTEM_SIGNALS:
            if name == "SIGBREAK" and sys.platform != "win32":
                continue
            signum = getattr(signal, name, None)
            if signum is not None:
                self._saved[signum] = signal.signal(signum, self._handle)

    def uninstall(self) -> None:
        for signum, previous in self._saved.items():
            signal.signal(signum, previous)
        self._saved.clear()


def call_abandonably(
    stop: StopSignal, work: Callable[[], Any], tick: Callable[[], None] | None = None
) -> Any:
    """Run `work` on a worker thread and wait for it, polling for a stop.

    A stop abandons the call at once (StopRequested); the worker is a daemon thread
    that ends with its own timeouts. Errors of `work` are raised here. `tick` runs on
    this thread at every poll (what the worker saw is journaled from here).
    """
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = work()
        except BaseException as exc:  # handed to the waiting thread
            box["error"] = exc

    worker = threading.Thread(target=target, name="localagent-call", daemon=True)
    worker.start()
    while worker.is_alive():
        stop.check()
        if tick is not None:
            tick()
        worker.join(POLL)
    if "error" in box:
        raise box["error"]
    return box["value"]
