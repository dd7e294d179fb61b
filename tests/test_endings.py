"""Every way a run ends is journaled, and the exit code follows from that ending alone:
a model error after the preflight, a stop while `ask` builds its embedding index, and a
`stop` that has to signal the agent (journaled as the user's stop, said as a clean one).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from research_support import make_package
from support import (
    backend_env,
    cli_env,
    plan_rule,
    read_history,
    records,
    run_cli,
    start_cli,
    wait_for,
)

from localagent.models.fake import FakeServer

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="uses POSIX signals")


@pytest.fixture(params=["ollama", "openai"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_a_model_error_after_the_preflight_is_journaled_and_shown(
    tmp_path: Path, backend: str
) -> None:
    scenario = {
        "rules": [plan_rule(("Look", ["List the files"]))],
        "default": {"status": 400, "error": "the prompt is malformed"},
    }
    with FakeServer(scenario) as server:
        env = backend_env(backend, server.url)
        result = run_cli(env, "start", "Look", "-w", str(tmp_path), "--foreground")
        status = run_cli(env, "status", "-w", str(tmp_path))
        shown = run_cli(env, "status", "-w", str(tmp_path), "--json")
        listed = run_cli(env, "list")
    assert result.returncode == 1, result.stderr
    assert "HTTP 400" in result.stderr and "resume" in result.stderr
    last = records(tmp_path)[-1]
    assert last["type"] == "suspended" and "HTTP 400" in last["reason"], last
    assert "suspended" in status.stdout and "the prompt is malformed" in status.stdout
    info = json.loads(shown.stdout)
    assert info["status"] == "suspended" and "HTTP 400" in info["suspended"]
    assert "suspended" in listed.stdout, listed.stdout


QUESTION = "How does a session add basic auth to a request?"


def stop_and_reap(
    env: dict[str, str], agent: subprocess.Popen[str], workspace: Path, *flags: str
) -> tuple[str, str]:
    """`localagent stop` while this test reaps the agent it started (an unreaped child
    stays a zombie, which `stop` would wait out as a live process): the agent's stderr
    and what `stop` said."""
    stop = start_cli(env, "stop", "-w", str(workspace), *flags)
    _, err = agent.communicate(timeout=30)
    out, stop_err = stop.communicate(timeout=30)
    assert stop.returncode == 0 and "Traceback" not in stop_err, stop_err
    return err, out + stop_err


def test_a_stop_while_ask_builds_its_index_is_journaled(tmp_path: Path) -> None:
    root = make_package(tmp_path / "ws")
    scenario = {
        "models": [{"name": "gpt-oss:20b"}, {"name": "embedder"}],
        "embed_delay": 30,
    }
    with FakeServer(scenario) as server:
        env = cli_env(server.url, LOCALAGENT_EMBED_MODEL="embedder")
        proc = start_cli(env, "ask", QUESTION, "-w", str(root), "--foreground")
        try:
            wait_for(lambda: any(path.endswith("embed") for path, _ in server._received))
            err, said = stop_and_reap(env, proc, root)
        finally:
            proc.kill()
    assert "Traceback" not in err, err
    assert proc.returncode == 130, err
    assert "stopped the agent" in said, said
    last = read_history(root / ".agent_context" / "ask" / "history.jsonl")[-1]
    assert last["type"] == "stopped" and last["by"] == "user", last


def test_stop_with_no_grace_is_the_users_stop_and_said_as_clean(tmp_path: Path) -> None:
    scenario = {
        "rules": [plan_rule(("Look", ["List the files"]))],
        "default": {"content": "thinking", "delay": 30},
    }
    with FakeServer(scenario) as server:
        env = cli_env(server.url)
        proc = start_cli(env, "start", "Look", "-w", str(tmp_path), "--foreground")
        try:
            wait_for(lambda: len(server.chat_requests) >= 2)
            err, said = stop_and_reap(env, proc, tmp_path, "--grace", "0")
        finally:
            proc.kill()
    assert proc.returncode == 130, err
    assert "stopped the agent" in said and "force" not in said, said
    stopped = [r for r in records(tmp_path) if r["type"] == "stopped"]
    assert len(stopped) == 1 and stopped[0]["by"] == "user", stopped


def test_a_signal_without_a_stop_request_is_the_systems_stop(tmp_path: Path) -> None:
    scenario = {
        "rules": [plan_rule(("Look", ["List the files"]))],
        "default": {"content": "thinking", "delay": 30},
    }
    with FakeServer(scenario) as server:
        proc = start_cli(cli_env(server.url), "start", "Look", "-w", str(tmp_path), "--foreground")
        try:
            wait_for(lambda: len(server.chat_requests) >= 2)
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=30)
        finally:
            proc.kill()
    assert proc.returncode == 130, err
    stopped = [r for r in records(tmp_path) if r["type"] == "stopped"]
    assert len(stopped) == 1 and stopped[0]["by"] == "system", stopped
