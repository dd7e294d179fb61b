"""Model-server faults during a real foreground run (SPEC §5, §9).

Slow replies, HTTP errors, an error line mid-stream, a dropped connection, a reply
slower than the request timeout and a server that goes away and comes back: in each
case the run waits, continues and completes, and nothing is lost or done twice. Past
the retry deadline the run exits 3, naming the reason and the host, with a journal
that `resume` carries on from.

Backoff starts at 1 s, so every test keeps its outages short.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from localagent.journal import decode
from localagent.models.fake import FakeServer

CRASH_MARK = "Traceback (most recent call last)"
GOAL = "Write a.txt and b.txt"
PLAN = json.dumps(
    {"tasks": [{"description": "Write two files", "subtasks": ["write a.txt", "write b.txt"]}]}
)
PLAN_RULE = {"kind": "plan", "reply": {"content": PLAN}}


def write(path: str, content: str, **fault: Any) -> dict[str, Any]:
    call = {"name": "write_file", "arguments": {"path": path, "content": content}}
    return {"tool_calls": [call], **fault}


def complete(reason: str) -> dict[str, Any]:
    call = {"name": "mark_subtask_complete", "arguments": {"success": True, "reason": reason}}
    return {"tool_calls": [call]}


def script(*faults: dict[str, Any], after_first: tuple[dict[str, Any], ...] = ()) -> list[Any]:
    """The two subtasks' replies, with faults before the first and after_first before the
    second; no default, so a reply lost to a fault leaves the run without an answer."""
    return [
        *faults,
        write("a.txt", "A"),
        complete("a.txt written"),
        *after_first,
        write("b.txt", "B"),
        complete("b.txt written"),
    ]


def scenario(replies: list[Any], rules: tuple[dict[str, Any], ...] = ()) -> dict[str, Any]:
    return {"rules": [*rules, PLAN_RULE], "replies": replies, "default": None}


def env_for(fake: FakeServer, deadline: float = 15, timeout: float = 10) -> dict[str, str]:
    return dict(
        os.environ,
        OLLAMA_HOST=fake.url,
        LOCALAGENT_RETRY_DEADLINE=str(deadline),
        LOCALAGENT_REQUEST_TIMEOUT=str(timeout),
    )


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "localagent", *args]


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(command(*args), env=env, text=True, capture_output=True, timeout=60)
    assert CRASH_MARK not in done.stderr, done.stderr
    return done


def start(workspace: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return cli("start", GOAL, "-w", str(workspace), "--foreground", env=env)


@contextmanager
def running(workspace: Path, env: dict[str, str]) -> Iterator[subprocess.Popen[str]]:
    """A foreground run in the background of the test; killed if the test fails early."""
    args = command("start", GOAL, "-w", str(workspace), "--foreground")
    pipe = subprocess.PIPE
    with subprocess.Popen(args, env=env, text=True, stdout=pipe, stderr=pipe) as agent:
        try:
            yield agent
        finally:
            if agent.poll() is None:
                agent.kill()


def asked(fake: FakeServer) -> list[dict[str, Any]]:
    """The plan and round requests (the goal's verdict request left out)."""
    return [r for r in fake.chat_requests if "verdict" not in str(r.get("format") or "")]


def wait_for_requests(fake: FakeServer, count: int, seconds: float = 20) -> None:
    end = time.monotonic() + seconds
    while len(asked(fake)) < count:
        assert time.monotonic() < end, f"only {len(asked(fake))} chat requests arrived"
        time.sleep(0.02)


def records(workspace: Path) -> list[dict[str, Any]]:
    """Every record of history.jsonl; each line must be whole and pass its checksum."""
    lines = (workspace / ".agent_context" / "history.jsonl").read_bytes().splitlines(True)
    found = [decode(line) for line in lines]
    assert None not in found, "history.jsonl holds a damaged line"
    assert all(line.endswith(b"\n") for line in lines)
    return found  # type: ignore[return-value]


def assert_intact(workspace: Path, status: str = "completed") -> list[dict[str, Any]]:
    """Seq contiguous, every action pair whole, each file written exactly once."""
    found = records(workspace)
    assert [r["seq"] for r in found] == list(range(1, len(found) + 1))
    # A step's `changes` record (what it changed, for `rewind`) comes before its finish.
    steps = [r for r in found if r["type"] != "changes"]
    for here, after in itertools.pairwise(steps):
        if here["type"] == "action_started":
            assert after["type"] == "action_finished", after
            assert (after["tool"], after["args"]) == (here["tool"], here["args"])
    assert sum(r["type"] == "plan" for r in found) == 1, "planned more than once"
    paths = [r["args"]["path"] for r in found if r["type"] == "action_finished"]
    expected = ["a.txt", "b.txt"] if status == "completed" else paths
    assert paths == expected, f"actions were lost or repeated: {paths}"
    info = json.loads(cli("status", "-w", str(workspace), "--json", env=dict(os.environ)).stdout)
    assert info["status"] == status
    assert info["records"] == found[-1]["seq"]
    if status == "completed":
        assert found[-1]["type"] == "goal_completed"
        # One plan, four rounds and the verdict: a failed attempt leaves no record behind.
        assert sum(r["type"] == "llm_call" for r in found) == 6
        assert (workspace / "a.txt").read_text() == "A"
        assert (workspace / "b.txt").read_text() == "B"
    return found


def test_slow_replies_under_the_timeout_are_waited_for(tmp_path: Path) -> None:
    slow = [write("a.txt", "A", delay=1.0), complete("a"), write("b.txt", "B", delay=1.0)]
    with FakeServer(scenario([*slow, complete("b")])) as fake:
        done = start(tmp_path, env_for(fake, timeout=2))
        assert done.returncode == 0, done.stderr
        assert len(asked(fake)) == 5, "a slow reply was asked for again"
    assert "retrying" not in done.stderr
    assert_intact(tmp_path)


def test_server_errors_are_retried_until_it_recovers(tmp_path: Path) -> None:
    busy = {"kind": "plan", "times": 1, "reply": {"status": 503, "error": "loading model"}}
    oom = {"status": 500, "error": "llama runner ran out of memory"}
    replies = script(after_first=(oom,))
    with FakeServer(scenario(replies, rules=(busy,))) as fake:
        done = start(tmp_path, env_for(fake))
        assert done.returncode == 0, done.stderr
        assert len(asked(fake)) == 2 + len(replies)
    assert "server error 503: loading model" in done.stderr
    assert "server error 500: llama runner ran out of memory" in done.stderr
    assert_intact(tmp_path)


def test_an_error_line_mid_stream_is_retried_and_its_partial_reply_unused(
    tmp_path: Path,
) -> None:
    # A reply of only a tool call streams that call before the error line arrives.
    broken = write("half.txt", "never", error_line="model runner has unexpectedly stopped")
    with FakeServer(scenario(script(broken))) as fake:
        done = start(tmp_path, env_for(fake))
        assert done.returncode == 0, done.stderr
    assert "model runner has unexpectedly stopped" in done.stderr
    assert not (tmp_path / "half.txt").exists()
    assert_intact(tmp_path)


def test_a_connection_dropped_mid_reply_is_retried(tmp_path: Path) -> None:
    dropped_call = write("dropped.txt", "never", drop=True)
    dropped_text = {"content": "I will now write a.txt as asked", "chunks": 4, "drop": True}
    replies = script(dropped_call, after_first=(dropped_text,))
    with FakeServer(scenario(replies)) as fake:
        done = start(tmp_path, env_for(fake))
        assert done.returncode == 0, done.stderr
        assert len(asked(fake)) == 1 + len(replies)
    assert "connection lost" in done.stderr
    assert not (tmp_path / "dropped.txt").exists()
    found = assert_intact(tmp_path)
    contents = [r["content"] for r in found if r["type"] == "llm_call" and "content" in r]
    assert not any("I will now write" in text for text in contents), "a torn reply was used"


def test_a_reply_slower_than_the_request_timeout_is_retried(tmp_path: Path) -> None:
    late = write("late.txt", "never", delay=4)
    with FakeServer(scenario(script(late))) as fake:
        done = start(tmp_path, env_for(fake, timeout=1))
        assert done.returncode == 0, done.stderr
    assert "timed out" in done.stderr
    assert not (tmp_path / "late.txt").exists()
    assert_intact(tmp_path)


def test_the_server_going_away_mid_run_is_waited_out(tmp_path: Path) -> None:
    in_flight = write("lost.txt", "never", delay=30)
    fake = FakeServer(scenario(script(after_first=(in_flight,)))).start()
    try:
        with running(tmp_path, env_for(fake)) as agent:
            wait_for_requests(fake, 4)  # the plan, a.txt, complete, and the one in flight
            fake.stop()
            time.sleep(1.5)
            fake.start()
            _, stderr = agent.communicate(timeout=30)
    finally:
        fake.stop()
    assert CRASH_MARK not in stderr, stderr
    assert agent.returncode == 0, stderr
    assert "retrying" in stderr
    assert not (tmp_path / "lost.txt").exists()
    assert_intact(tmp_path)


def test_past_the_retry_deadline_it_exits_3_and_resume_completes(tmp_path: Path) -> None:
    in_flight = write("lost.txt", "never", delay=30)
    fake = FakeServer(scenario(script(after_first=(in_flight,)))).start()
    try:
        with running(tmp_path, env_for(fake, deadline=2)) as agent:
            wait_for_requests(fake, 4)
            fake.stop()
            _, stderr = agent.communicate(timeout=30)
        assert CRASH_MARK not in stderr, stderr
        assert agent.returncode == 3, stderr
        assert "did not answer" in stderr
        assert fake.url in stderr
        assert "localagent resume" in stderr
        # Past the retry deadline the run gave up waiting: the goal is journaled suspended.
        before = assert_intact(tmp_path, status="suspended")
        assert [r["args"]["path"] for r in before if r["type"] == "action_finished"] == ["a.txt"]
        history = (tmp_path / ".agent_context" / "history.jsonl").read_bytes()

        fake.start()
        done = cli("resume", "-w", str(tmp_path), "--foreground", env=env_for(fake))
    finally:
        fake.stop()
    assert done.returncode == 0, done.stderr
    after = assert_intact(tmp_path)
    assert (tmp_path / ".agent_context" / "history.jsonl").read_bytes().startswith(history)
    assert [r["type"] for r in after[len(before) : len(before) + 2]] == ["preflight", "resumed"]
    assert not (tmp_path / "lost.txt").exists()


def test_a_server_that_never_answers_exits_3_naming_the_host(tmp_path: Path) -> None:
    fake = FakeServer(scenario(script())).start()
    fake.stop()  # a port that was just free: nothing listens there now
    done = start(tmp_path, env_for(fake, deadline=0))
    assert done.returncode == 3, done.stderr
    assert "connection refused" in done.stderr
    assert fake.url in done.stderr
    assert "ollama serve" in done.stderr
    history = tmp_path / ".agent_context" / "history.jsonl"
    journaled = [r["type"] for r in records(tmp_path)] if history.exists() else []
    assert journaled == ["goal_started", "suspended"], "work was done without a model"
    assert "connection refused" in records(tmp_path)[-1]["reason"]


def test_a_missing_model_exits_3_with_the_command_that_fetches_it(tmp_path: Path) -> None:
    other = {**scenario(script()), "models": [{"name": "qwen3:8b"}]}
    with FakeServer(other) as fake:
        done = start(tmp_path, env_for(fake))
    assert done.returncode == 3, done.stderr
    assert "ollama pull gpt-oss:20b" in done.stderr
    assert "retrying" not in done.stderr
