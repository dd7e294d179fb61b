"""The run configuration: journaled once when the goal starts, read back on resume, and
the goals of `resume --all` each resumed against their own model server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import psutil
from support import cli_env, closed_port, records, run_cli, status_now, wait_for

from localagent.journal import encode
from localagent.models.fake import FakeServer

PLAN = '{"tasks": [{"description": "T", "subtasks": ["first step", "second step"]}]}'


def _note(n: int) -> dict[str, Any]:
    path = {"path": "notes.txt", "content": f"round {n}"}
    return {"delay": 0.2, "tool_calls": [{"name": "write_file", "arguments": path}]}


# Busy for the whole test: a different note every round.
SLOW = {
    "rules": [{"kind": "plan", "reply": {"content": PLAN}}],
    "replies": [_note(n) for n in range(400)],
    "default": _note(-1),
}


def _no_ollama(**extra: str) -> dict[str, str]:
    """An environment whose Ollama (the default backend) is not there."""
    down = f"http://127.0.0.1:{closed_port()}"
    return cli_env(down, LOCALAGENT_RETRY_DEADLINE="2", **extra)


def _status(env: dict[str, str], ws: Path) -> dict[str, Any]:
    done = run_cli(env, "status", "-w", str(ws), "--json")
    assert done.returncode == 0, done.stderr
    return orjson.loads(done.stdout)


def _start_and_kill(env: dict[str, str], ws: Path, *flags: str) -> None:
    """A background goal that dies (as in a crash) once it has done some work."""
    ws.mkdir()
    # Far more rounds than the test lasts: the goal must not end before it is killed.
    started = run_cli(
        env, "start", "keep writing notes", "-w", str(ws), "--max-rounds", "400", *flags
    )
    assert started.returncode == 0, started.stdout + started.stderr
    wait_for(lambda: status_now(ws)["rounds"] >= 1)
    psutil.Process(_status(env, ws)["pid"]).kill()
    wait_for(lambda: not status_now(ws)["alive"])


def _stop(env: dict[str, str], ws: Path) -> None:
    assert run_cli(env, "stop", "-w", str(ws), "--grace", "5").returncode == 0


def test_resume_all_resumes_a_goal_on_its_journaled_openai_server(tmp_path: Path) -> None:
    env, ws = _no_ollama(), tmp_path / "ws"
    with FakeServer(SLOW) as server:
        url = server.url + "/v1"
        _start_and_kill(env, ws, "--backend", "openai", "--base-url", url)
        started = next(r for r in records(ws) if r["type"] == "goal_started")
        assert started["settings"]["backend"] == "openai"
        assert started["settings"]["base_url"] == url
        asked = len(server.chat_requests)
        resumed = run_cli(env, "resume", "--all")
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
        assert "started in the background" in resumed.stdout
        wait_for(lambda: len(server.chat_requests) > asked)
        _stop(env, ws)


def test_a_goal_started_with_the_server_in_the_environment_resumes_without_it(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    with FakeServer(SLOW) as server:
        url = server.url + "/v1"
        _start_and_kill(_no_ollama(LOCALAGENT_BACKEND="openai", LOCALAGENT_BASE_URL=url), ws)
        asked, env = len(server.chat_requests), _no_ollama()
        resumed = run_cli(env, "resume", "--all")
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
        wait_for(lambda: len(server.chat_requests) > asked)
        _stop(env, ws)


def test_resume_all_waits_for_each_goals_server_and_names_the_one_down(tmp_path: Path) -> None:
    env = _no_ollama()
    up, gone = tmp_path / "up", tmp_path / "gone"
    with FakeServer(SLOW) as server:
        _start_and_kill(env, up, "--backend", "openai", "--base-url", server.url + "/v1")
        with FakeServer(SLOW) as other:
            gone_url = other.url + "/v1"
            _start_and_kill(env, gone, "--backend", "openai", "--base-url", gone_url)
        asked = len(server.chat_requests)
        listed = run_cli(env, "list", "--json").stdout
        states = (_status(env, up), _status(env, gone))
        resumed = run_cli(env, "resume", "--all")
        assert "resuming 2 goals:" in resumed.stdout, (resumed.stdout, listed, states)
        assert resumed.returncode == 3, resumed.stdout + resumed.stderr
        assert f"{up}" in resumed.stdout and "started in the background" in resumed.stdout
        assert gone_url in resumed.stderr and str(gone) in resumed.stderr
        wait_for(lambda: len(server.chat_requests) > asked)
        assert not _status(env, gone)["alive"]
        _stop(env, up)


def test_a_server_address_in_the_environment_wins_over_the_journaled_one(
    tmp_path: Path,
) -> None:
    """The server moved: the environment says where it is now; the journal remembers
    the address only for when nothing says."""
    ws = tmp_path / "ws"
    with FakeServer(SLOW) as server:
        _start_and_kill(_no_ollama(), ws, "--backend", "openai", "--base-url", server.url + "/v1")
    with FakeServer(SLOW) as moved:
        env = _no_ollama(LOCALAGENT_BASE_URL=moved.url + "/v1")
        resumed = run_cli(env, "resume", "--all")
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
        wait_for(lambda: len(moved.chat_requests) > 0)
        _stop(env, ws)


def test_a_foreign_journal_names_the_server_it_would_send_the_code_to(tmp_path: Path) -> None:
    ws, ts, planted = tmp_path / "ws", "2026-01-01T00:00:00.000Z", "http://203.0.113.7:8080/v1"
    settings = {"backend": "openai", "base_url": planted}
    started = {"seq": 1, "ts": ts, "type": "goal_started", "goal": "G", "settings": settings}
    (ws / ".agent_context").mkdir(parents=True)
    (ws / ".agent_context" / "history.jsonl").write_bytes(encode(started, False))
    with FakeServer(SLOW) as server:
        env = cli_env(server.url, LOCALAGENT_BASE_URL=server.url + "/v1")
        refused = run_cli(env, "resume", "-w", str(ws), "--foreground")
        asked = len(server.requests)
    assert refused.returncode == 2, refused.stderr
    assert "not written by this user's agent" in refused.stderr
    assert f"model server at {orjson.dumps(planted).decode()}" in refused.stderr, refused.stderr
    assert asked == 0
