"""Background runs with real child processes: detach, status, stop, resume, locks, list."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import psutil
import pytest
from support import status_now

from localagent.daemon import detach
from localagent.journal import Journal
from localagent.models.fake import FakeServer

PLAN = '{"tasks": [{"description": "T", "subtasks": ["first step", "second step"]}]}'


def _note(n: int) -> dict:
    return {
        "delay": 0.3,
        "tool_calls": [
            {"name": "write_file", "arguments": {"path": "notes.txt", "content": f"round {n}"}}
        ],
    }


# A different note each round: real work, never a repeat for the loop guard, so the agent
# stays busy for the whole test (a repeated identical write is blocked within seconds).
SLOW = {
    "rules": [{"kind": "plan", "reply": {"content": PLAN}}],
    "replies": [_note(n) for n in range(400)],
    "default": _note(-1),
}
QUICK = {
    "rules": [
        {"kind": "plan", "reply": {"content": PLAN}},
        {
            "match": "stop now",
            "reply": {
                "tool_calls": [
                    {
                        "name": "mark_subtask_complete",
                        "arguments": {"success": True, "reason": "done"},
                    }
                ]
            },
        },
    ],
    "default": {
        "tool_calls": [
            {"name": "mark_subtask_complete", "arguments": {"success": True, "reason": "done"}}
        ]
    },
}


@pytest.fixture
def fake() -> Iterator[FakeServer]:
    with FakeServer(SLOW) as server:
        yield server


def cli(*args: str, env: dict[str, str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "localagent", *args],
        env=env,
        text=True,
        capture_output=True,
        timeout=timeout,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done


def env_for(server: FakeServer, **extra: str) -> dict[str, str]:
    return {**os.environ, "OLLAMA_HOST": server.url, "LOCALAGENT_RETRY_DEADLINE": "5", **extra}


def wait_for(predicate, seconds: float = 15.0) -> None:  # type: ignore[no-untyped-def]
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("condition not reached in time")


def status(ws: Path, env: dict[str, str]) -> dict:
    done = cli("status", "-w", str(ws), "--json", env=env)
    assert done.returncode == 0, done.stderr
    return orjson.loads(done.stdout)


def test_detach_status_stop_resume(tmp_path: Path, fake: FakeServer) -> None:
    env = env_for(fake)
    began = time.monotonic()
    done = cli("start", "keep writing notes", "-w", str(tmp_path), "--max-rounds", "200", env=env)
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - began < 5
    pid = int(done.stdout.split("pid")[1].split()[0])
    assert str(tmp_path) in done.stdout and "agent.log" in done.stdout
    info = status(tmp_path, env)
    assert info["alive"] and info["pid"] == pid and info["status"] == "in_progress"
    wait_for(lambda: status_now(tmp_path)["rounds"] >= 2)

    done = cli("stop", "-w", str(tmp_path), env=env)
    assert done.returncode == 0 and "stopped" in done.stdout
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    info = status(tmp_path, env)
    assert info["status"] == "stopped" and not info["alive"]

    done = cli("resume", "-w", str(tmp_path), env=env)
    assert done.returncode == 0, done.stderr
    wait_for(lambda: status_now(tmp_path)["alive"])
    types = [r["type"] for r in Journal(tmp_path).records()]
    assert "stopped" in types and types[-1] != "goal_started"
    assert cli("stop", "-w", str(tmp_path), "--grace", "10", env=env).returncode == 0
    assert "resumed" in [r["type"] for r in Journal(tmp_path).records()]


def _fast_note(n: int) -> dict:
    return {
        "tool_calls": [{"name": "write_file", "arguments": {"path": f"n{n}.txt", "content": "x"}}]
    }


def test_start_sees_the_run_up_however_many_records_it_wrote_first(tmp_path: Path) -> None:
    # A fast server: dozens of records before `start` first looks. The run says it is up
    # through agent.ready, not through a record among the journal's last few.
    fast = {
        "rules": [{"kind": "plan", "reply": {"content": PLAN}}],
        "replies": [_fast_note(n) for n in range(30)],
        "default": {"delay": 60},
    }
    with FakeServer(fast) as server:
        env = env_for(server)
        began = time.monotonic()
        done = cli("start", "write notes", "-w", str(tmp_path), "--max-rounds", "200", env=env)
        took = time.monotonic() - began
        try:
            assert done.returncode == 0, done.stderr
            assert "started in the background" in done.stdout, done.stdout
            assert took < 20
            wait_for(lambda: len(list(Journal(tmp_path).records())) > 8 + 4)
            kinds = [r["type"] for r in Journal(tmp_path).records()]
            assert len(kinds) - kinds.index("preflight") > 8
        finally:
            cli("stop", "-w", str(tmp_path), "--grace", "5", env=env)


def test_second_agent_on_a_busy_workspace_exits_4(tmp_path: Path) -> None:
    # The model takes its time: the agent is busy for as long as the test needs.
    waiting = {"rules": [{"kind": "plan", "reply": {"content": PLAN}}], "default": {"delay": 60}}
    with FakeServer(waiting) as server:
        _busy_workspace_refuses_others(tmp_path, env_for(server))


def _busy_workspace_refuses_others(tmp_path: Path, env: dict[str, str]) -> None:
    assert cli("start", "keep writing notes", "-w", str(tmp_path), env=env).returncode == 0
    pid = status(tmp_path, env)["pid"]
    for args in (
        ["start", "keep writing notes"],
        ["resume", "--foreground"],
        ["start", "another goal", "--foreground"],
    ):
        began = time.monotonic()
        done = cli(*args, "-w", str(tmp_path), env=env)
        assert done.returncode == 4, (args, done.stderr)
        assert str(pid) in done.stderr and time.monotonic() - began < 5
    assert cli("stop", "-w", str(tmp_path), env=env).returncode == 0


def test_stale_lock_after_sigkill_is_reclaimed(tmp_path: Path, fake: FakeServer) -> None:
    env = env_for(fake)
    assert cli("start", "keep writing notes", "-w", str(tmp_path), env=env).returncode == 0
    pid = status(tmp_path, env)["pid"]
    wait_for(lambda: status_now(tmp_path)["rounds"] >= 1)
    psutil.Process(pid).kill()  # SIGKILL; TerminateProcess on Windows
    wait_for(lambda: not status_now(tmp_path)["alive"])
    context = tmp_path / ".agent_context"
    # On Windows filelock deletes the lock file whenever a probe (status) releases it.
    assert (context / "agent.pid").exists()
    assert (context / "agent.lock").exists() or sys.platform == "win32"
    info = status(tmp_path, env)
    assert info["status"] == "in_progress" and info["pid"] is None
    done = cli("resume", "-w", str(tmp_path), env=env)
    assert done.returncode == 0, done.stderr
    wait_for(lambda: status_now(tmp_path)["alive"])
    assert status_now(tmp_path)["pid"] != pid
    assert cli("stop", "-w", str(tmp_path), env=env).returncode == 0


def test_resume_all_resumes_only_what_died(tmp_path: Path, fake: FakeServer) -> None:
    env = env_for(fake)
    died = [tmp_path / "a", tmp_path / "b"]
    stopped = tmp_path / "c"
    for ws in [*died, stopped]:
        ws.mkdir()
        assert cli("start", f"notes in {ws.name}", "-w", str(ws), env=env).returncode == 0
        if ws in died:  # at once: where starting is slow, it could finish its goal first
            pid = status(ws, env)["pid"]
            assert pid is not None  # psutil.Process(None) would be this very process
            psutil.Process(pid).kill()  # SIGKILL; TerminateProcess on Windows
            wait_for(lambda ws=ws: not status_now(ws)["alive"])
    assert cli("stop", "-w", str(stopped), env=env).returncode == 0
    done = cli("resume", "--all", env=env)
    assert done.returncode == 0, done.stderr
    for ws in died:
        assert str(ws) in done.stdout
        wait_for(lambda ws=ws: status_now(ws)["alive"])
    assert str(stopped) not in done.stdout and not status(stopped, env)["alive"]
    again = cli("resume", "--all", env=env)
    assert "nothing to resume" in again.stdout
    for ws in died:
        assert cli("stop", "-w", str(ws), env=env).returncode == 0


def test_foreground_run_finishes_and_resume_says_so(tmp_path: Path) -> None:
    with FakeServer(QUICK) as server:
        env = env_for(server)
        done = cli("start", "a quick goal", "-w", str(tmp_path), "--foreground", env=env)
        assert done.returncode == 0, done.stderr
        again = cli("resume", "-w", str(tmp_path), env=env)
        assert again.returncode == 0 and "completed" in again.stdout + again.stderr


def test_list_and_status_survive_damage(tmp_path: Path, isolated_home: Path) -> None:
    with FakeServer(QUICK) as server:
        env = env_for(server)
        kept, gone, broken = tmp_path / "kept", tmp_path / "gone", tmp_path / "broken"
        for ws in (kept, gone, broken):
            ws.mkdir()
            assert cli("start", "quick", "-w", str(ws), "--foreground", env=env).returncode == 0
    (gone / ".agent_context" / "history.jsonl").unlink()
    (gone / ".agent_context" / "state.json").unlink()
    gone.rename(tmp_path / "elsewhere")
    history = broken / ".agent_context" / "history.jsonl"
    lines = history.read_bytes().splitlines(keepends=True)
    history.write_bytes(lines[0] + b"\x00garbage\n" + b"".join(lines[1:]))
    (broken / ".agent_context" / "state.json").unlink()

    done = cli("list", "--json", env=env)
    assert done.returncode == 0, done.stderr
    rows = {row["workspace"]: row for row in orjson.loads(done.stdout)["workspaces"]}
    assert rows[str(kept)]["status"] == "completed"
    assert rows[str(gone)]["status"] == "missing"
    assert rows[str(broken)]["status"] == "damaged" and "damaged" in rows[str(broken)]["error"]

    bad = cli("status", "-w", str(broken), env=env)
    assert bad.returncode == 2 and "damaged" in bad.stderr
    nothing = cli("status", "-w", str(tmp_path / "elsewhere"), env=env)
    assert nothing.returncode == 2 and "no goal" in nothing.stderr

    registry = isolated_home / "data" / "workspaces.json"
    registry.write_bytes(b"{not json")
    done = cli("list", env=env)
    assert done.returncode == 0 and "damaged" in done.stderr
    assert (isolated_home / "data" / "workspaces.json.broken").exists()


def test_doctor_reports_each_check_with_a_fix(tmp_path: Path) -> None:
    with FakeServer(
        {"models": [{"name": "small:1b", "capabilities": ["completion"], "context_length": 4096}]}
    ) as server:
        env = env_for(server, OLLAMA_MODEL="small:1b")
        done = cli("doctor", "-w", str(tmp_path), env=env)
        assert done.returncode == 0, done.stdout
        assert "Ollama 0.12.3" in done.stdout and "text protocol" in done.stdout
        assert "backend       ollama" in done.stdout
        assert "LOCALAGENT_NUM_CTX=4096" in done.stdout
        missing = cli("doctor", "-w", str(tmp_path), env={**env, "OLLAMA_MODEL": "nope:7b"})
        assert missing.returncode == 3 and "ollama pull nope:7b" in missing.stdout
    down = cli("doctor", "-w", str(tmp_path), env=env)
    assert down.returncode == 3 and "ollama serve" in down.stdout


def test_doctor_names_the_openai_backend_and_says_when_tools_need_jinja(tmp_path: Path) -> None:
    models = [{"name": "model.gguf", "capabilities": ["completion"], "context_length": 4096}]
    with FakeServer({"models": models, "llama_cpp": True}) as server:
        env = env_for(
            server,
            OLLAMA_MODEL="model.gguf",
            LOCALAGENT_BACKEND="openai",
            LOCALAGENT_BASE_URL=server.url + "/v1",
        )
        done = cli("doctor", "-w", str(tmp_path), env=env)
        assert done.returncode == 0, done.stdout
        assert f"openai (an OpenAI-compatible server at {server.url}/v1)" in done.stdout
        assert "model.gguf" in done.stdout and "LOCALAGENT_NUM_CTX=4096" in done.stdout
        assert "refuses tool calls (tools param requires --jinja flag)" in done.stdout
        assert "start llama-server with --jinja" in done.stdout, done.stdout
        assert "[ ok ] prompt cache  llama-server has one slot" in done.stdout, done.stdout
    down = cli("doctor", "-w", str(tmp_path), env=env)
    assert down.returncode == 3 and "LOCALAGENT_BASE_URL" in down.stdout
    # llama-server's default of four slots: a call killed with the agent runs on in its
    # slot, and the resumed run's first call goes to an empty one (0.00 of it from the
    # cache, measured) where one slot serves it whole.
    with FakeServer({"models": models, "llama_cpp": True, "slots": 4}) as server:
        env["LOCALAGENT_BASE_URL"] = server.url + "/v1"
        done = cli("doctor", "-w", str(tmp_path), env=env)
        assert done.returncode == 0, done.stdout
        assert "[warn] prompt cache  llama-server has 4 slots" in done.stdout, done.stdout
        assert "start llama-server with -np 1" in done.stdout, done.stdout


def test_the_background_agent_is_started_out_of_the_terminals_reach(tmp_path: Path) -> None:
    from localagent.daemon.detach import job_note, popen_detached

    with (tmp_path / "out").open("wb") as sink:
        proc, note = popen_detached(
            [sys.executable, "-c", "import time; time.sleep(30)"], tmp_path, sink
        )
    try:
        assert proc.poll() is None
        if sys.platform == "win32":
            # Out of the terminal's job where the job allows it, else said; never an error.
            assert note in ("", detach.BREAKAWAY_REFUSED)
            assert job_note() in (None, detach.BREAKAWAY_REFUSED.removeprefix("note: "))
        else:
            assert note == "" and job_note() is None
            assert os.getsid(proc.pid) == proc.pid != os.getsid(0)  # its own session
    finally:
        proc.kill()
        proc.wait(10)


@pytest.mark.parametrize("goal", ["-x", "--help", "-w elsewhere"])
def test_a_background_goal_may_begin_with_a_dash(tmp_path: Path, goal: str) -> None:
    with FakeServer(QUICK) as server:
        env = env_for(server)
        done = cli("start", "-w", str(tmp_path), "--", goal, env=env)
        assert done.returncode == 0, done.stderr
        wait_for(lambda: status_now(tmp_path)["status"] == "completed")
    started = next(r for r in Journal(tmp_path).records() if r["type"] == "goal_started")
    assert started["goal"] == goal
    assert not (tmp_path / "elsewhere").exists()
