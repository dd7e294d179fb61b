"""Shared pieces of the model and end-to-end tests: scenario replies, the CLI as a
subprocess, and reading a workspace's journal."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from localagent.journal import decode
from localagent.models.fake import FakeServer

CLI_TIMEOUT = 60


def call(name: str, **arguments: Any) -> dict[str, Any]:
    """A scenario reply holding one native tool call."""
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def done(reason: str = "done", success: bool = True) -> dict[str, Any]:
    return call("mark_subtask_complete", success=success, reason=reason)


# The verifier model's reply that the goal is achieved, with nothing unmet.
VERIFIED = {
    "content": json.dumps({"verdict": "VERIFIED", "unmet": [], "evidence": [], "next": "finish"})
}


def plan_rule(*tasks: tuple[str, list[str]], match: str = "") -> dict[str, Any]:
    """A rule answering every plan request with these (description, subtasks) tasks."""
    plan = {"tasks": [{"description": d, "subtasks": subs} for d, subs in tasks]}
    return {"kind": "plan", "match": match, "reply": {"content": json.dumps(plan)}}


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cli_env(host: str, **extra: str) -> dict[str, str]:
    # The interpreter running the tests (with pytest) comes first on PATH, so commands
    # the agent runs in a workspace without a virtual environment find it.
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    env = dict(os.environ, OLLAMA_HOST=host, PATH=path, **extra)
    env.pop("PYTHONWARNINGS", None)
    return env


def backend_env(backend: str, url: str, **extra: str) -> dict[str, str]:
    """The CLI's environment for a fake server at `url` spoken to as `backend`."""
    if backend == "openai":
        extra = {"LOCALAGENT_BACKEND": "openai", "LOCALAGENT_BASE_URL": url + "/v1", **extra}
    return cli_env(url, **extra)


def cli_args(*args: str) -> list[str]:
    return [sys.executable, "-m", "localagent", *args]


def run_cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """Run the real CLI to its end; its output must never hold a traceback."""
    done_ = subprocess.run(
        cli_args(*args),
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=CLI_TIMEOUT,
    )
    assert "Traceback" not in done_.stderr, done_.stderr
    return done_


def start_cli(env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        cli_args(*args),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )


def records(workspace: Path) -> list[dict[str, Any]]:
    return read_history(workspace / ".agent_context" / "history.jsonl")


def read_history(path: Path) -> list[dict[str, Any]]:
    """The intact records of a history file, each line parsed as the journal does."""
    if not path.exists():
        return []
    found = []
    for line in path.read_bytes().splitlines(keepends=True):
        record = decode(line)
        if record is not None:
            found.append(record)
    return found


def records_of(workspace: Path, kind: str) -> list[dict[str, Any]]:
    return [r for r in records(workspace) if r["type"] == kind]


def round_calls(workspace: Path) -> list[dict[str, Any]]:
    """The `llm_call` records of the rounds (not plan, replan or verdict)."""
    return [r for r in records_of(workspace, "llm_call") if r["purpose"] == "round"]


def small_model_goal(
    ws: Path,
    goal: str,
    plan: dict[str, Any],
    replies: list[dict[str, Any]],
    verdict: dict[str, Any] | None = None,
    **env: str,
) -> tuple[subprocess.CompletedProcess[str], list[Any]]:
    """`goal` run to its end in the foreground by Qwen2.5-Coder-0.5B as llama-server
    serves it (the small profile, no verifier, 6 rounds unless `env` says otherwise),
    with `replies` scripted (and the `verdict`'s reply): the CLI's result and the chat
    requests the server saw."""
    scenario = {"models": [{"name": "qwen2.5-coder:0.5b"}], "llama_cpp": True}
    scenario |= {"rules": [plan], "replies": replies, "default": done("done")}
    scenario |= {"verdict": verdict} if verdict is not None else {}
    with FakeServer(scenario) as server:
        given = {"OLLAMA_MODEL": "qwen2.5-coder:0.5b", "LOCALAGENT_VERIFY": "0"}
        given |= {"LOCALAGENT_MAX_ROUNDS": "6", **env}
        environ = backend_env("openai", server.url, **given)
        ran = run_cli(environ, "start", goal, "-w", str(ws), "--foreground")
        return ran, server.chat_requests


def ruff_step(
    ws: Path, goal: str, step: str, reply: str
) -> tuple[subprocess.CompletedProcess[str], list[Any]]:
    """`goal` planned as the one run `step`, the small model sending `reply` (a ruff run)
    every round, three rounds; skipped where no ruff program is on PATH."""
    if shutil.which("ruff") is None:
        pytest.skip("no ruff program on PATH")
    replies = [{"content": reply}] * 3
    return small_model_goal(ws, goal, plan_rule((goal, [step])), replies, LOCALAGENT_MAX_ROUNDS="3")


def record_types(workspace: Path) -> list[str]:
    return [r["type"] for r in records(workspace)]


def status_now(workspace: Path) -> dict[str, Any]:
    """What `status --json` prints, computed here by the code the command runs: for a
    test that polls, without starting a process for every look."""
    from localagent.observe.report import status_info

    return status_info(workspace)


def wait_for(condition: Callable[[], bool], timeout: float = 20.0) -> None:
    end = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > end:
            raise AssertionError("timed out waiting for the condition")
        time.sleep(0.02)


def messages_text(request: dict[str, Any]) -> str:
    return "\n\n".join(str(m.get("content", "")) for m in request.get("messages", []))


# Each level prints its pid, starts the next level, then sleeps far past any timeout.
TREE_SCRIPT = """
import os, subprocess, sys, time
depth = int(sys.argv[1]) if len(sys.argv) > 1 else 0
print(f"pid={os.getpid()}", flush=True)
if depth < 2:
    subprocess.Popen([sys.executable, __file__, str(depth + 1)])
time.sleep(60)
"""


def handed_back(ws: Path) -> list[str]:
    """The subtasks of the first task of the latest plan, which must be a hand-back."""
    back = records_of(ws, "plan")[-1]
    assert back.get("by") == "handback", back
    return list(back["tasks"][0]["subtasks"])


def verdict_and_back(
    ws: Path, goal: str, steps: list[str], replies: list[str]
) -> tuple[list[str], dict[str, Any]]:
    """`goal` planned as `steps`, one round for each of `replies`, then verified (the
    small profile with its verifier): what the verdict found unmet, and the plan after it."""
    rounds = [{"content": r} for r in replies]
    small_model_goal(
        ws, goal, plan_rule((goal, steps)), rounds, VERIFIED,
        LOCALAGENT_MAX_ROUNDS=str(len(replies)), LOCALAGENT_VERIFY="1",
    )  # fmt: skip
    (verdict,) = records_of(ws, "verdict")
    return verdict["unmet"], records_of(ws, "plan")[-1]


def real_goal(key: str) -> Any:
    """A goal of the real-model benchmark (`scripts/realgoals.py`): its `text` and the
    files a workspace starts with (`seed`), as the model's verbatim replies met them."""
    scripts = str(Path(__file__).resolve().parent.parent / "scripts")
    if scripts not in sys.path:
        sys.path.insert(0, scripts)
    return importlib.import_module("realgoals").GOALS[key]


def pytest_in(ws: Path) -> subprocess.CompletedProcess[str]:
    """The workspace's tests, run by the interpreter running these."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=ws, capture_output=True, text=True, timeout=CLI_TIMEOUT * 2,
    )  # fmt: skip
