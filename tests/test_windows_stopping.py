"""Ctrl+C during a model call ends the wait at once, on Windows too: the main thread polls
the stop flag while the call runs on a worker, so it never waits for the first token."""

from __future__ import annotations

import signal
import threading
import time

import pytest

from localagent.system.stopping import StopRequested, StopSignal, call_abandonably


def test_ctrl_c_abandons_a_call_that_has_not_answered() -> None:
    stop = StopSignal()
    stop.install()
    began = time.monotonic()
    answered = threading.Event()
    try:
        threading.Timer(0.3, signal.raise_signal, args=(signal.SIGINT,)).start()
        with pytest.raises(StopRequested):
            call_abandonably(stop, lambda: answered.wait(20))
    finally:
        stop.uninstall()
        answered.set()
    assert time.monotonic() - began < 3
    assert stop.by == "user" and "SIGINT" in (stop.reason or "")
