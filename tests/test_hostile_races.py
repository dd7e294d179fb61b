"""Races between commands and the agent: `stop` while the agent is just finishing, and
background `start`s on one workspace at the same moment."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from support import cli_env, done, plan_rule, record_types, run_cli

from localagent import daemon
from localagent.fake_ollama import FakeOllama

# The last subtask's reply comes late, so the test can be ready for the agent's end.
FINISHING = {"rules": [plan_rule(("T", ["only step"]))], "default": {**done(), "delay": 0.4}}
MOMENTS = 16


def _stops_at_the_end(ws: Path) -> list[object]:
    """Call `stop` from threads at many moments of the agent's own end: when it has
    journaled its goal's end, and every few milliseconds after, as it writes its snapshot,
    releases the workspace and exits. Returns each call's message (or its exception)."""
    results: list[object] = []

    def one() -> None:
        try:
            results.append(daemon.stop(ws, grace=10))
        except BaseException as exc:  # any exception is the failure shown
            results.append(exc)

    end = time.monotonic() + 20
    while "goal_completed" not in record_types(ws):
        assert time.monotonic() < end, record_types(ws)
        time.sleep(0.002)
    threads = []
    for _ in range(MOMENTS):
        threads.append(threading.Thread(target=one))
        threads[-1].start()
        time.sleep(0.004)
    for thread in threads:
        thread.join(30)
    return results


def test_stop_racing_the_agents_own_end_says_what_happened(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with FakeOllama(FINISHING) as fake:
        env = cli_env(fake.url)
        started = run_cli(env, "start", "finish soon", "-w", str(ws))
        assert started.returncode == 0, started.stderr
        results = _stops_at_the_end(ws)
        after = run_cli(env, "stop", "-w", str(ws))
    assert after.returncode == 0 and after.stdout.startswith("no agent is running"), after
    assert all(isinstance(r, str) for r in results), results
    # Nobody stopped it: no message may claim so; each says how the goal ended.
    assert record_types(ws)[-1] == "goal_completed", record_types(ws)
    assert all("completed" in r and "stopped the agent" not in r for r in results), results
    assert not (ws / ".agent_context" / "stop.request").exists()
