"""A command runs at most once per `action_started`, and never before that record is
durable: its processes carry the environment marker the record names, so whatever a
crash interrupted is found again, killed, and told to the model, never run blindly.

The crashes land at chosen journal disk operations (`scripts/crash_every_op.py`, on its
goal of two checking commands) or as a SIGKILL while a command runs; the real command
line resumes against the fake Ollama server.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import psutil
import pytest
from support import call, cli_env, done, plan_rule, records, run_cli, start_cli, wait_for

from localagent.models.fake import FakeServer
from localagent.system.proctree import MARKER_VARIABLE

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"


@pytest.fixture(scope="module")
def crash() -> Iterator[ModuleType]:
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(SCRIPTS))
        yield importlib.import_module("crash_every_op")


@pytest.fixture(scope="module")
def harness(
    crash: ModuleType, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Any, list[str], list[int]]]:
    root = tmp_path_factory.mktemp("exactly-once")
    with FakeServer(crash.scenario(crash.BATCHES, crash.PER_BATCH)) as server:
        runner = crash.Harness(root, crash.agent_env(server.url, root / "home"))
        ops = runner.count()
        yield runner, ops, runner.command_ops(ops)


def _crash_and_resume(
    crash: ModuleType, harness: tuple[Any, list[str], list[int]], mode: str, at: int
) -> tuple[list[dict[str, Any]], list[list[str]]]:
    """The history and check.py's runs (batch, marker) after a crash at operation `at`
    and the resume; every check of the harness holds."""
    runner, ops, _ = harness
    trial = crash.Trial(mode, at, ops[at - 1])
    ws = runner.root / trial.name
    crash.prepare_workspace(ws, crash.PER_BATCH, 0.0)
    runner.crash_and_recover(ws, trial)
    runs = (ws / "runs.log").read_text(encoding="utf-8").splitlines()
    return records(ws), [line.split() for line in runs]


def _checks(history: list[dict[str, Any]], batch: str) -> list[dict[str, Any]]:
    return [
        r
        for r in history
        if r["type"] in ("action_started", "action_interrupted", "action_finished")
        and r["tool"] == "run_cmd"
        and r["args"]["cmd"] == f"python check.py {batch}"
    ]


@pytest.mark.parametrize("mode", ["before", "torn"])
def test_a_crash_before_a_commands_record_is_written_leaves_it_unrun(
    crash: ModuleType, harness: tuple[Any, list[str], list[int]], mode: str
) -> None:
    """The crash lands on the write of the second command's `action_started`: the
    command has not started, so the resumed run starts it, once."""
    history, runs = _crash_and_resume(crash, harness, mode, harness[2][1])
    started, finished = _checks(history, "2")
    assert [started["type"], finished["type"]] == ["action_started", "action_finished"]
    assert [run for run in runs if run[0] == "2"] == [["2", started["marker"]]]


def test_a_crash_once_the_record_is_durable_is_told_and_the_command_ran_once(
    crash: ModuleType, harness: tuple[Any, list[str], list[int]]
) -> None:
    """The crash lands just after the fsync of the second command's `action_started`:
    the record is durable and the command has not started. The resumed run tells the
    model (nothing was left running to kill); the model runs it again, and that is its
    only run."""
    history, runs = _crash_and_resume(crash, harness, "after", harness[2][1] + 1)
    first, interrupted, again, finished = _checks(history, "2")
    assert interrupted["type"] == "action_interrupted" and interrupted["killed"] is False
    assert again["type"] == "action_started" and finished["type"] == "action_finished"
    assert first["marker"] != again["marker"]
    assert [run for run in runs if run[0] == "2"] == [["2", again["marker"]]]


# The command notes its pid, starts a daemon that leaves its session (and notes its pid),
# then both sleep far past the test: only a kill by the marker they carry ends them.
LINGER = """\
import os, subprocess, sys, time
with open("pids.txt", "a") as fh:
    fh.write(f"{os.getpid()}\\n")
if len(sys.argv) == 1:
    subprocess.Popen([sys.executable, __file__, "daemon"], start_new_session=True)
time.sleep(120)
"""


def _pids(path: Path) -> list[int]:
    return [int(pid) for pid in path.read_text().split()] if path.exists() else []


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


@pytest.mark.skipif(sys.platform == "win32", reason="there the command's job ends with its agent")
def test_a_command_left_running_by_a_killed_agent_is_found_by_its_marker(
    tmp_path: Path,
) -> None:
    (tmp_path / "linger.py").write_text(LINGER, encoding="utf-8")
    job = call("run_cmd", cmd="python linger.py", timeout_sec=300)
    scenario = {
        "rules": [
            plan_rule(("Run the job", ["Run linger.py once"])),
            {"match": "was interrupted", "reply": done("it was killed")},
            {"match": "ACTIVE SUBTASK: Run linger.py", "in": "last", "reply": job},
        ]
    }
    pids_file = tmp_path / "pids.txt"
    pids: list[int] = []
    with FakeServer(scenario) as server:
        # Outside a sandbox, whose processes would die with the agent: these must outlive it.
        env = cli_env(server.url, LOCALAGENT_SANDBOX="off")
        agent = start_cli(env, "start", "Run the job", "-w", str(tmp_path), "--foreground")
        try:
            wait_for(lambda: len(_pids(pids_file)) == 2)
            pids = _pids(pids_file)
            started = next(r for r in records(tmp_path) if r["type"] == "action_started")
            for pid in pids:
                assert psutil.Process(pid).environ()[MARKER_VARIABLE] == started["marker"]
        finally:
            agent.kill()  # SIGKILL: the command and its daemon live on
            agent.communicate(timeout=30)
        try:
            assert all(_alive(pid) for pid in pids)
            resumed = run_cli(env, "resume", "-w", str(tmp_path), "--foreground")
            assert resumed.returncode == 0, resumed.stderr
            assert not any(_alive(pid) for pid in pids)
        finally:
            for pid in pids:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
    history = records(tmp_path)
    interrupted = [r for r in history if r["type"] == "action_interrupted"]
    assert len(interrupted) == 1 and interrupted[0]["killed"] is True
    assert [r["type"] for r in history].count("action_started") == 1
    assert len(_pids(pids_file)) == 2  # it never ran again
    assert history[-1]["type"] == "goal_completed"


def test_the_processes_of_a_command_carry_the_marker_its_record_names(tmp_path: Path) -> None:
    """What the model runs sees the marker in its environment, and each action has its
    own: the journal can name them before they exist."""
    (tmp_path / "show.py").write_text(
        f"import os\nprint(os.environ.get({MARKER_VARIABLE!r}))\n", encoding="utf-8"
    )
    show = call("run_cmd", cmd="python show.py")
    scenario = {"rules": [plan_rule(("Show", ["Run show.py twice"]))], "replies": [show, show]}
    scenario["default"] = done()
    with FakeServer(scenario) as server:
        result = run_cli(cli_env(server.url), "start", "Show", "-w", str(tmp_path), "--foreground")
    assert result.returncode == 0, result.stderr
    history = records(tmp_path)
    markers = [r["marker"] for r in history if r["type"] == "action_started"]
    shown = [r["result"].split("\n")[1] for r in history if r["type"] == "action_finished"]
    assert len(markers) == 2 and markers[0] != markers[1] and shown == markers
