"""Stopping cleanly: signals and stop requests become a reason checked between steps.

A model call may take minutes, and nothing of it is journaled until it returns, so a
stop that arrives during one abandons it at once (`StopRequested`); a tool that is
running is allowed to finish its step.
"""

from __future__ import annotations

import signal
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType


class StopRequested(BaseException):
    """Raised inside an abandonable wait; BaseException so no `except Exception` eats it."""


class StopSignal:
    def __init__(self, requested_by_file: Callable[[], bool] = lambda: False) -> None:
        self.reason: str | None = None
        self._by_file = requested_by_file
        self._abandonable = False

    def request(self, reason: str) -> None:
        if self.reason is None:
            self.reason = reason

    def requested(self) -> str | None:
        if self.reason is None and self._by_file():
            self.reason = "stop requested with `localagent stop`"
        return self.reason

    @contextmanager
    def abandonable(self) -> Iterator[None]:
        if self.requested():
            raise StopRequested
        self._abandonable = True
        try:
            yield
        finally:
            self._abandonable = False

    def wait(self, seconds: float) -> None:
        """Sleep that ends early, by raising StopRequested, when a stop arrives."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if self.requested():
                raise StopRequested
            time.sleep(min(0.2, max(0.0, end - time.monotonic())))

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.request(f"stopped by signal {signal.Signals(signum).name}")
        if self._abandonable:
            self._abandonable = False
            raise StopRequested

    def install(self) -> None:
        names = ["SIGINT", "SIGTERM"] + (["SIGBREAK"] if sys.platform == "win32" else [])
        for name in names:
            signal.signal(getattr(signal, name), self._handle)
