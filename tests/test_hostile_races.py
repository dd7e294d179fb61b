"""Races between commands and the agent: `stop` while the agent is just finishing, and
background `start`s on one workspace at the same moment."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
from support import cli_env, done, plan_rule, record_types, records, run_cli, start_cli

from localagent.daemon.stop import record_stop, stop
from localagent.journal import Journal
from localagent.models.fake import FakeServer
from localagent.observe.report import status_info
from localagent.system.lock import LOCK_NAME

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
            results.append(stop(ws, grace=10))
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
    with FakeServer(FINISHING) as fake:
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


# The model takes its time, so the winner is still working when the starts have ended.
WORKING = {"rules": [plan_rule(("T", ["a step"]))], "default": {**done(), "delay": 30}}


def _finished_goal(ws: Path) -> None:
    """A workspace whose previous goal is completed: a new goal archives it first."""
    journal = Journal(ws)
    journal.append("goal_started", goal="an older goal")
    journal.append("goal_completed", reason="done")
    journal.finish()


def test_parallel_background_starts_one_says_started_the_others_exit_4(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    _finished_goal(ws)
    with FakeServer(WORKING) as fake:
        env = cli_env(fake.url)
        goals = ["one goal", "one goal", "another goal"]
        procs = [start_cli(env, "start", goal, "-w", str(ws)) for goal in goals]
        try:
            ends = [(p.wait(60), *p.communicate()) for p in procs]
        finally:
            for p in procs:
                p.kill()
        info = status_info(ws)
        try:
            assert info["alive"] and info["pid"], info
            assert not [err for _, _, err in ends if "Traceback" in err], ends
            winners = [out for code, out, _ in ends if code == 0]
            assert len(winners) == 1, ends
            assert winners[0].startswith("started in the background"), winners
            assert f"pid        {info['pid']}" in winners[0]
            losers = [err for code, _, err in ends if code != 0]
            said = "\n".join(f"exit {code}: {err.strip()}" for code, _, err in ends)
            assert [code for code, _, _ in ends].count(4) == 2, said
            assert all(f"pid {info['pid']}" in err and "held by" in err for err in losers), losers
            assert info["goal"] in goals
        finally:
            if info["pid"]:
                psutil.Process(info["pid"]).kill()
    assert record_types(ws).count("goal_started") == 1


# Holds the workspace lock like a dying agent whose lock Windows releases late.
HOLD_LOCK = (
    "import sys, time; from filelock import FileLock; lock = FileLock(sys.argv[1]); "
    "lock.acquire(); print('held', flush=True); time.sleep(float(sys.argv[2])); lock.release()"
)


def test_a_forced_stop_is_journaled_when_the_lock_is_released_late(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    journal.append("goal_started", goal="a goal")
    journal.finish()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(journal.dir / LOCK_NAME), "1.0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        began = time.monotonic()
        record_stop(journal, "stopped with `localagent stop` (forced)", wait=10)
        assert 0.5 < time.monotonic() - began < 5
    finally:
        holder.wait(10)
    last = records(tmp_path)[-1]
    assert last["type"] == "stopped" and last["by"] == "user" and "forced" in last["reason"]
