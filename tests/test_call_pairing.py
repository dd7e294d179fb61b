"""One call, one result, on the wire: every tool call of a reply the agent sends back is
answered by exactly one tool message, with its id, in order, whatever ended the call
(run, blocked, skipped because the subtask ended, interrupted by a crash). Both
backends; the fake's OpenAI side also refuses an unpaired prompt with HTTP 400, as
strict servers do."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest
from support import backend_env, call, done, plan_rule, records, run_cli, start_cli, wait_for

from localagent.models.fake import FakeServer

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="uses POSIX signals")
FAILING_REPLAN = {"kind": "plan", "match": "failed:", "reply": {"content": "no plan"}}


@pytest.fixture(params=["ollama", "openai"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def rounds(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in requests if not r.get("format") and not r.get("response_format")]


def answered(request: dict[str, Any], backend: str) -> list[tuple[list[str], list[str]]]:
    """For each assistant message with tool calls: its calls and the tool messages right
    after it (ids for OpenAI, tool names for Ollama, which carries no ids)."""
    messages = request["messages"]
    found = []
    for i, message in enumerate(messages):
        if message["role"] == "tool":
            before = messages[i - 1]
            assert before["role"] == "tool" or before.get("tool_calls"), messages
        if not message.get("tool_calls"):
            continue
        if backend == "openai":
            calls = [c["id"] for c in message["tool_calls"]]
        else:
            calls = [c["function"]["name"] for c in message["tool_calls"]]
        answers = []
        for later in messages[i + 1 :]:
            if later["role"] != "tool":
                break
            answers.append(later["tool_call_id"] if backend == "openai" else later["tool_name"])
        found.append((calls, answers))
    return found


def assert_paired(requests: list[dict[str, Any]], backend: str) -> int:
    """Every reply's calls answered one each, in order; how many calls that was."""
    seen = 0
    for request in rounds(requests):
        for calls, answers in answered(request, backend):
            assert answers == calls, request["messages"]
            seen += len(calls)
    return seen


def test_a_call_after_the_subtask_ended_is_answered_as_skipped(
    tmp_path: Path, backend: str
) -> None:
    pair = [
        {"name": "mark_subtask_complete", "arguments": {"success": True, "reason": "written"}},
        {"name": "list_dir", "arguments": {"path": "."}},
    ]
    scenario = {
        "rules": [plan_rule(("Write", ["Write a.txt", "Look around"]))],
        "replies": [call("write_file", path="a.txt", content="a\n"), {"tool_calls": pair}],
        "default": done("looked"),
    }
    with FakeServer(scenario) as server:
        env = backend_env(backend, server.url)
        result = run_cli(env, "start", "Write", "-w", str(tmp_path), "--foreground", "--no-verify")
        requests = server.chat_requests
    assert result.returncode == 0, result.stderr
    assert [r["type"] for r in records(tmp_path)].count("action_finished") == 1
    assert assert_paired(requests, backend) >= 3
    later = rounds(requests)[2]["messages"]
    skipped = [m for m in later if m["role"] == "tool" and "NOT RUN" in m["content"]]
    assert len(skipped) == 1, later


def test_a_loop_guard_failure_answers_the_blocked_call_once(tmp_path: Path, backend: str) -> None:
    scenario = {
        "rules": [plan_rule(("Look", ["List the files"])), FAILING_REPLAN],
        "default": call("list_dir", path="."),
    }
    with FakeServer(scenario) as server:
        env = backend_env(backend, server.url)
        result = run_cli(env, "start", "Look", "-w", str(tmp_path), "--foreground", "--no-verify")
        requests = server.chat_requests
    assert result.returncode == 1, result.stderr
    kinds = [r["type"] for r in records(tmp_path)]
    assert "action_blocked" in kinds and "subtask_failed" in kinds
    assert assert_paired(requests, backend) >= 4
    for request in rounds(requests):
        for message in request["messages"]:
            if message["role"] == "tool":
                assert "subtask failed" not in message["content"]


SLOW = "import time\ntime.sleep(60)\n"


def test_a_crash_between_calls_then_resume_answers_each_call_once(
    tmp_path: Path, backend: str
) -> None:
    (tmp_path / "slow.py").write_text(SLOW)
    both = {
        "tool_calls": [
            {"name": "write_file", "arguments": {"path": "a.txt", "content": "a\n"}},
            {"name": "run_cmd", "arguments": {"cmd": "python slow.py", "timeout_sec": 120}},
        ]
    }
    scenario = {
        "rules": [
            plan_rule(("Work", ["Write a.txt and run slow.py"])),
            {"match": "was interrupted", "in": "all", "reply": done("written and ran")},
        ],
        "replies": [both],
    }
    with FakeServer(scenario) as server:
        env = backend_env(backend, server.url)
        proc = start_cli(env, "start", "Work", "-w", str(tmp_path), "--foreground", "--no-verify")
        try:
            wait_for(
                lambda: any(
                    r["type"] == "action_started" and r["tool"] == "run_cmd"
                    for r in records(tmp_path)
                )
            )
        finally:
            proc.kill()
            proc.communicate(timeout=60)
            _kill_sleepers(tmp_path)
        before = len(server.chat_requests)
        result = run_cli(env, "resume", "-w", str(tmp_path), "--foreground")
        after = server.chat_requests[before:]
    assert result.returncode == 0, result.stderr
    assert assert_paired(after, backend) >= 2
    first = answered(rounds(after)[0], backend)
    assert len(first[-1][0]) == 2


def _kill_sleepers(root: Path) -> None:
    """The command runs in a session of its own and outlives the killed agent."""
    import psutil

    for proc in psutil.process_iter(["cmdline", "cwd"]):
        with contextlib.suppress(psutil.Error):
            line, cwd = proc.info["cmdline"] or [], proc.info["cwd"]
            if "slow.py" in line[-1:] and cwd == str(root):
                os.kill(proc.pid, signal.SIGKILL)
