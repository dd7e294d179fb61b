"""The whole agent, end to end: the real CLI in a subprocess, the real `ollama` client,
and a scripted model server on loopback in this process.

Tests that take a `backend` run twice: against the fake's Ollama API and against its
OpenAI-compatible API (the representative ones: a goal to its end, several tasks, a
blocked loop, text calls, tool errors, tools refused, a missing model, a server that
is down, a kill mid-reply and resume). The rest run against Ollama only: what they
prove (the round limit, the loop guard, the journal across runs and kills during a
command) happens after the reply is read, the same whichever API carried it.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from support import (
    backend_env,
    call,
    cli_env,
    closed_port,
    done,
    messages_text,
    plan_rule,
    read_history,
    record_types,
    records,
    run_cli,
    start_cli,
    wait_for,
)

import localagent
from localagent.models.fake import FakeServer
from localagent.prompts.texts import FORMAT_ERROR, NO_TOOL_CALL

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="uses POSIX signals")

HELLO_GOAL = "Write hello.py that prints Hello, world!"
WRITE_GOAL = "Write the data files"
FAILING_REPLAN = {"kind": "plan", "match": "failed:", "reply": {"content": "no plan"}}


@pytest.fixture(params=["ollama", "openai"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


def hello_scenario() -> Path:
    return Path(localagent.__file__).parent / "scenarios" / "hello.json"


def rounds(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The chat requests of agent rounds (not plan or verdict requests)."""
    return [r for r in requests if not r.get("format") and not r.get("response_format")]


def num_ctx_sent(requests: list[dict[str, Any]], backend: str) -> set[int | None]:
    if backend == "openai":
        assert not any("num_ctx" in json.dumps(r) for r in requests)
    """The num_ctx of each request: Ollama's option; OpenAI-compatible servers take none."""
    return {r.get("options", {}).get("num_ctx") for r in requests}


def writer(files: list[str], delay: float = 0.0, tasks: int = 1) -> dict[str, Any]:
    """A model that writes `Write file NAME` subtasks, and marks each done once the
    probe lists the file as existing, whatever happened before (a crash, a stop)."""
    subtasks = [f"Write file {name}" for name in files]
    size = -(-len(subtasks) // tasks)
    plan = [(f"Part {i + 1}", subtasks[i * size : (i + 1) * size]) for i in range(tasks)]
    written = r"Files that exist: [^\n]*\b(\S+)\b.*ACTIVE SUBTASK: Write file \1$"
    return {
        "rules": [
            plan_rule(*plan),
            {"match": written, "in": "last", "reply": {**done("$1 exists"), "delay": delay}},
            {
                "match": r"ACTIVE SUBTASK: Write file (\S+)",
                "in": "last",
                "reply": {**call("write_file", path="$1", content="data of $1\n"), "delay": delay},
            },
        ]
    }


def assert_contiguous(recs: list[dict[str, Any]]) -> None:
    assert [r["seq"] for r in recs] == list(range(1, len(recs) + 1))


def state_json(ws: Path) -> dict[str, Any]:
    return json.loads((ws / ".agent_context" / "state.json").read_text())


# ---- goals that end ------------------------------------------------------------------


def test_hello_world(ws: Path, backend: str) -> None:
    with FakeServer(hello_scenario()) as server:
        result = run_cli(
            backend_env(backend, server.url), "start", HELLO_GOAL, "-w", str(ws), "--foreground"
        )
    assert result.returncode == 0, result.stderr
    assert "goal completed" in result.stderr
    assert (ws / "hello.py").read_text() == 'print("Hello, world!")\n'
    recs = records(ws)
    assert_contiguous(recs)
    kinds = [r["type"] for r in recs]
    assert kinds[0] == "goal_started" and recs[0]["goal"] == HELLO_GOAL
    assert kinds[-1] == "goal_completed" and kinds.count("subtask_completed") == 2
    run = next(r for r in recs if r["type"] == "action_finished" and r["tool"] == "run_cmd")
    assert run["ok"] and run["returncode"] == 0 and "Hello, world!" in run["result"]
    started = [r["tool"] for r in recs if r["type"] == "action_started"]
    assert started == ["write_file", "run_cmd", "run_cmd"]
    assert all(r["tools"] for r in rounds(server.chat_requests))
    # The same num_ctx on every call (a change reloads the model).
    assert len(num_ctx_sent(server.chat_requests, backend)) == 1
    assert recs[0]["settings"]["backend"] == backend
    verdict = next(r for r in recs if r["type"] == "verdict")
    assert (verdict["verdict"], verdict["source"]) == ("VERIFIED", "model")
    assert recs[-1]["verification"] == "verified"
    state = state_json(ws)
    assert state["goal"]["status"] == "completed" and state["seq"] == len(recs)
    assert all(s["status"] == "completed" for s in state["goal"]["tasks"][0]["subtasks"])


def test_several_tasks_and_subtasks(ws: Path, backend: str) -> None:
    files = ["a.txt", "b.txt", "c.txt", "d.txt"]
    with FakeServer(writer(files, tasks=2)) as server:
        result = run_cli(
            backend_env(backend, server.url), "start", WRITE_GOAL, "-w", str(ws), "--foreground"
        )
    assert result.returncode == 0, result.stderr
    assert all((ws / name).read_text() == f"data of {name}\n" for name in files)
    recs = records(ws)
    assert_contiguous(recs)
    assert record_types(ws).count("subtask_completed") == 4
    tasks = state_json(ws)["goal"]["tasks"]
    assert [t["description"] for t in tasks] == ["Part 1", "Part 2"]
    assert all(t["status"] == "completed" for t in tasks)
    # The summary follows the plan: the second task's subtasks were active in turn.
    sent = rounds(server.chat_requests)
    assert "ACTIVE SUBTASK: Write file d.txt" in messages_text(sent[-1])
    # Each round's prompt starts with the whole previous prompt, byte for byte as sent,
    # so the server's KV cache (llama.cpp's cache_prompt) reuses it.
    as_sent = [b"".join(json.dumps(m).encode() for m in r["messages"]) for r in sent]
    assert len(sent) == 8
    assert [new.startswith(old) for old, new in pairwise(as_sent)] == [True] * 7


def test_max_rounds_ends_the_goal_failed(ws: Path) -> None:
    scenario = {
        "rules": [
            plan_rule(("Keep busy", ["Write many files"])),
            {
                "match": r"round (\d+) of",
                "in": "last",
                "reply": call("write_file", path="f$1.txt", content="x"),
            },
        ]
    }
    with FakeServer(scenario) as server:
        env = cli_env(server.url)
        result = run_cli(
            env, "start", "Keep busy", "-w", str(ws), "--foreground", "--max-rounds", "3"
        )
    assert result.returncode == 1
    assert "round limit of 3" in result.stderr
    recs = records(ws)
    assert recs[-1]["type"] == "goal_failed" and "round limit of 3" in recs[-1]["reason"]
    assert sum(r["type"] == "llm_call" and r["purpose"] == "round" for r in recs) == 3
    assert sorted(p.name for p in ws.glob("f*.txt")) == ["f1.txt", "f2.txt", "f3.txt"]


# ---- loops -----------------------------------------------------------------------------


def test_a_model_insisting_on_a_repeated_command_is_blocked(ws: Path, backend: str) -> None:
    (ws / "check.py").write_text("import sys\nprint('not yet')\nsys.exit(1)\n")
    scenario = {
        "rules": [
            plan_rule(("Check the project", ["Run check.py until it passes"])),
            {"kind": "chat", "reply": call("run_cmd", cmd="python check.py")},
        ]
    }
    with FakeServer(scenario) as server:
        env = backend_env(backend, server.url)
        result = run_cli(
            env, "start", "Make check.py pass", "-w", str(ws), "--foreground", "--max-rounds", "40"
        )
    assert result.returncode == 1
    recs = records(ws)
    assert_contiguous(recs)
    kinds = [r["type"] for r in recs]
    # Twice in all: the replanned subtasks have the same text and nothing changed, so the
    # guard's memory of the first one stays (issue 25, item 6).
    assert sum(r["type"] == "action_started" and r["tool"] == "run_cmd" for r in recs) == 2
    assert sum(r["type"] == "plan" for r in recs) == 3
    blocked = [r for r in recs if r["type"] == "action_blocked"]
    assert blocked and blocked[0]["tool"] == "run_cmd"
    assert blocked[0]["args"] == {"cmd": "python check.py"}
    assert "not executed" in blocked[0]["reason"]
    assert kinds.count("loop_detected") == len(blocked)
    loops = json.loads((ws / ".agent_context" / "loops.json").read_text())
    assert len(loops) == len(blocked)
    first = loops[0]
    assert (first["tool"], first["pattern"], first["count"]) == ("run_cmd", "repeat", 3)
    assert first["signature"].startswith("run_cmd ")
    assert first["seq_range"][0] == blocked[0]["seq"]
    failed = [r for r in recs if r["type"] == "subtask_failed"]
    assert failed and "repeating blocked actions" in failed[0]["reason"]
    assert kinds[-1] == "goal_failed"
    used = sum(r["type"] == "llm_call" and r["purpose"] == "round" for r in recs)
    assert used <= 15, f"{used} rounds of 40 burnt on a loop"  # 5 per subtask attempt
    # The model was told, in the request after the first block, why nothing ran.
    assert any("BLOCKED" in messages_text(r) for r in rounds(server.chat_requests))


def test_rerunning_a_command_after_editing_a_file_is_not_blocked(ws: Path) -> None:
    failing = "import sys\nprint('attempt {n}')\nsys.exit(1)\n"
    attempts = [failing.format(n=n) for n in (1, 2, 3)] + ["print('all good')\n"]
    replies = []
    for content in attempts:
        replies += [
            call("write_file", path="check.py", content=content),
            call("run_cmd", cmd="python check.py"),
        ]
    scenario = {
        "rules": [plan_rule(("Fix the project", ["Make check.py pass"]))],
        "replies": [*replies, done("check.py exits 0")],
    }
    with FakeServer(scenario) as server:
        env = cli_env(server.url)
        result = run_cli(env, "start", "Make check.py pass", "-w", str(ws), "--foreground")
    assert result.returncode == 0, result.stderr
    recs = records(ws)
    assert "action_blocked" not in [r["type"] for r in recs]
    runs = [r for r in recs if r["type"] == "action_finished" and r["tool"] == "run_cmd"]
    assert [r["returncode"] for r in runs] == [1, 1, 1, 0]


def test_alternating_actions_are_blocked(ws: Path) -> None:
    (ws / "notes.txt").write_text("nothing here\n")
    read, look = call("read_file", path="notes.txt"), call("list_dir", path=".")
    scenario = {
        "rules": [FAILING_REPLAN, plan_rule(("Look around", ["Find the bug"]))],
        "replies": [read, look] * 6,
    }
    with FakeServer(scenario) as server:
        env = cli_env(server.url)
        result = run_cli(env, "start", "Find the bug", "-w", str(ws), "--foreground")
    assert result.returncode == 1
    recs = records(ws)
    started = [r["tool"] for r in recs if r["type"] == "action_started"]
    assert started == ["read_file", "list_dir", "read_file"]
    blocked = [r for r in recs if r["type"] == "action_blocked"]
    assert (blocked[0]["tool"], blocked[0]["pattern"]) == ("list_dir", "alternating")
    assert "alternating" in blocked[0]["reason"]
    assert [r["type"] for r in recs].count("subtask_failed") == 1
    assert recs[-1]["type"] == "goal_failed"


# ---- replies that are not native tool calls ---------------------------------------------


def fenced(name: str, **arguments: Any) -> dict[str, Any]:
    body = json.dumps({"name": name, "arguments": arguments})
    return {"content": f"I will call a tool.\n```json\n{body}\n```"}


def test_text_tool_calls_run_like_native_ones_and_prose_is_corrected(
    ws: Path, backend: str
) -> None:
    scenario = {
        "rules": [plan_rule(("Notes", ["Write notes.txt"]))],
        "replies": [
            fenced("write_file", path="notes.txt", content="first\n"),
            {"content": "The file is written, I believe the work is finished."},
            fenced("read_file", path="notes.txt"),
            done("notes.txt is written"),
        ],
    }
    with FakeServer(scenario) as server:
        env = backend_env(backend, server.url)
        result = run_cli(env, "start", "Write notes.txt", "-w", str(ws), "--foreground")
    assert result.returncode == 0, result.stderr
    assert (ws / "notes.txt").read_text() == "first\n"
    recs = records(ws)
    calls = [r for r in recs if r["type"] == "llm_call" and r["purpose"] == "round"]
    assert calls[0]["tool_calls"] == [
        {
            "id": "1.1",
            "name": "write_file",
            "arguments": {"path": "notes.txt", "content": "first\n"},
        }
    ]
    feedback = [r for r in recs if r["type"] == "feedback"]
    assert [f["text"] for f in feedback] == [NO_TOOL_CALL]
    sent = rounds(server.chat_requests)
    assert NO_TOOL_CALL not in messages_text(sent[1])
    assert NO_TOOL_CALL in messages_text(sent[2])


def test_unknown_tools_and_bad_arguments_come_back_as_tool_errors(ws: Path, backend: str) -> None:
    scenario = {
        "rules": [plan_rule(("Notes", ["Write notes.txt"]))],
        "replies": [
            call("delete_everything", path="."),
            call("write_file", path="notes.txt"),
            call("write_file", path="../outside.txt", content="x"),
            call("write_file", path="notes.txt", content="ok\n"),
            call("read_file", path="notes.txt"),
            done("written"),
        ],
    }
    with FakeServer(scenario) as server:
        env = backend_env(backend, server.url)
        result = run_cli(env, "start", "Write notes.txt", "-w", str(ws), "--foreground")
    assert result.returncode == 0, result.stderr
    finished = [r for r in records(ws) if r["type"] == "action_finished"]
    assert [r["ok"] for r in finished] == [False, False, False, True, True]
    assert "unknown tool 'delete_everything'" in finished[0]["result"]
    assert "missing required parameter 'content'" in finished[1]["result"]
    assert "outside the workspace" in finished[2]["result"]
    assert not (ws.parent / "outside.txt").exists()
    # Each error reached the model in the next request.
    assert "unknown tool" in messages_text(rounds(server.chat_requests)[1])


def test_consecutive_format_errors_fail_the_subtask(ws: Path, backend: str) -> None:
    broken = '{"name": "write_file", "arguments": {"path": "a.txt", "content": "x"'
    scenario = {
        "rules": [FAILING_REPLAN, plan_rule(("Notes", ["Write notes.txt"]))],
        "replies": [
            {"content": "Let me think about which file to write."},
            {"content": f"Calling write_file now: {broken}"},
            {"content": "Still thinking."},
        ],
    }
    with FakeServer(scenario) as server:
        env = backend_env(backend, server.url)
        result = run_cli(env, "start", "Write notes.txt", "-w", str(ws), "--foreground")
    assert result.returncode == 1
    recs = records(ws)
    assert "action_started" not in [r["type"] for r in recs]
    feedback = [r for r in recs if r["type"] == "feedback"]
    assert len(feedback) == 3 and all(f["format_error"] for f in feedback)
    assert feedback[1]["text"].startswith(FORMAT_ERROR.split("{")[0])
    assert "no valid JSON" in feedback[1]["text"]
    assert FORMAT_ERROR.split("{")[0] in messages_text(rounds(server.chat_requests)[2])
    failed = [r for r in recs if r["type"] == "subtask_failed"]
    assert len(failed) == 1 and "3 replies in a row" in failed[0]["reason"]
    assert recs[-1]["type"] == "goal_failed"


def test_a_model_without_tool_support_is_driven_by_the_text_protocol(ws: Path) -> None:
    models = [{"name": "tiny:1b", "capabilities": ["completion"], "context_length": 4096}]
    scenario = {
        "models": models,
        # The second subtask names no file: a small model's first write of hello.py then
        # leaves its check to the model (see test_write_subtask.py).
        "rules": [plan_rule(("Hello", ["Write hello.py", "Run the script"]))],
        "replies": [
            fenced("write_file", path="hello.py", content="print('hi')\n"),
            fenced("run_cmd", cmd="python hello.py"),
            fenced("mark_subtask_complete", success=True, reason="written"),
            {"content": '{"tool": "run_cmd", "args": {"cmd": "python hello.py"}}'},
            fenced("mark_subtask_complete", success=True, reason="it printed hi"),
        ],
    }
    with FakeServer(scenario) as server:
        env = cli_env(server.url, OLLAMA_MODEL="tiny:1b")
        result = run_cli(env, "start", "Say hi", "-w", str(ws), "--foreground")
    assert result.returncode == 0, result.stderr
    assert (ws / "hello.py").read_text() == "print('hi')\n"
    sent = rounds(server.chat_requests)
    assert len(sent) == 5
    assert not any(r.get("tools") for r in server.chat_requests)
    system = sent[0]["messages"][0]
    assert system["role"] == "system" and "no native tool calling" in system["content"]
    assert "- mark_subtask_complete(success: boolean, reason: string)" in system["content"]
    assert all(r["options"]["num_ctx"] == 4096 for r in server.chat_requests)
    # Tool results come back as user turns the model can read without tool support.
    assert any(
        m["role"] == "user" and m["content"].startswith("[result of run_cmd]")
        for m in sent[4]["messages"]
    )
    run = next(r for r in records(ws) if r["type"] == "action_finished" and r["tool"] == "run_cmd")
    assert run["returncode"] == 0 and "hi" in run["result"]


def test_a_refusal_of_tools_mid_run_switches_to_the_text_protocol(ws: Path, backend: str) -> None:
    # Older servers report no capabilities; only the refusal of `tools=` reveals it.
    scenario = {
        "models": [{"name": "old:7b", "capabilities": []}],
        "rules": [plan_rule(("Notes", ["Write notes.txt"]))],
        "replies": [
            fenced("write_file", path="notes.txt", content="n\n"),
            fenced("read_file", path="notes.txt"),
            fenced("mark_subtask_complete", success=True, reason="written"),
        ],
    }
    with FakeServer(scenario) as server:
        env = backend_env(backend, server.url, OLLAMA_MODEL="old:7b")
        result = run_cli(env, "start", "Write notes.txt", "-w", str(ws), "--foreground")
    assert result.returncode == 0, result.stderr
    assert (ws / "notes.txt").read_text() == "n\n"
    # The small profile's plan call carries no tools: the first round's are refused, and
    # the text protocol runs from then on.
    sent = server.chat_requests
    assert (sent[0].get("format") or sent[0].get("response_format")) and not sent[0].get("tools")
    assert [bool(r.get("tools")) for r in sent[:3]] == [False, True, False]
    assert not any(r.get("tools") for r in sent[2:])
    assert "no native tool calling" in rounds(sent)[-1]["messages"][0]["content"]


# ---- the model server ------------------------------------------------------------------


def test_a_missing_model_exits_3_and_says_how_to_pull_it(ws: Path, backend: str) -> None:
    with FakeServer({"models": [{"name": "other:7b"}]}) as server:
        env = backend_env(backend, server.url, OLLAMA_MODEL="coder:13b")
        result = run_cli(env, "start", "Anything", "-w", str(ws), "--foreground")
    assert result.returncode == 3
    fix = "ollama pull coder:13b" if backend == "ollama" else "it serves: other:7b"
    assert fix in result.stderr


def test_a_server_that_is_down_exits_3_naming_the_host(ws: Path, backend: str) -> None:
    port = closed_port()
    env = backend_env(backend, f"http://127.0.0.1:{port}", LOCALAGENT_RETRY_DEADLINE="2")
    started = time.monotonic()
    result = run_cli(env, "start", "Anything", "-w", str(ws), "--foreground")
    assert result.returncode == 3
    assert f"127.0.0.1:{port}" in result.stderr
    assert time.monotonic() - started < 15
    # Nothing was lost: the goal is journaled (with the wait) and waits for `resume`.
    assert record_types(ws) == ["goal_started", "waiting", "suspended"]


# ---- crashes, stops and goal identity ---------------------------------------------------

FILES = [f"f{i:02d}.txt" for i in range(1, 7)]


def finish(proc: subprocess.Popen[str]) -> tuple[int, str]:
    _, err = proc.communicate(timeout=60)
    assert "Traceback" not in err, err
    return proc.returncode, err


def test_sigkill_mid_run_then_resume_loses_nothing(ws: Path, backend: str) -> None:
    with FakeServer(writer(FILES, delay=0.05)) as server:
        env = backend_env(backend, server.url)
        proc = start_cli(env, "start", WRITE_GOAL, "-w", str(ws), "--foreground")
        try:
            wait_for(lambda: record_types(ws).count("subtask_completed") >= 2)
            before = records(ws)
        finally:
            proc.kill()
        assert finish(proc)[0] == -signal.SIGKILL
        assert "goal_completed" not in record_types(ws)
        result = run_cli(env, "resume", "-w", str(ws), "--foreground")
    assert result.returncode == 0, result.stderr
    recs = records(ws)
    assert_contiguous(recs)
    assert recs[: len(before)] == before, "records journaled before the kill were lost"
    kinds = [r["type"] for r in recs]
    assert kinds.count("goal_started") == 1 and kinds.count("resumed") == 1
    assert kinds[-1] == "goal_completed" and kinds.count("subtask_completed") == len(FILES)
    assert all((ws / name).read_text() == f"data of {name}\n" for name in FILES)
    assert state_json(ws)["seq"] == len(recs)


SLOW_SCRIPT = """\
import os, pathlib, time
runs = pathlib.Path("runs.txt")
first = not runs.exists()
with runs.open("a") as fh:
    fh.write(f"{os.getpid()}\\n")
if first:
    time.sleep(60)
print("job finished")
"""


def test_sigkill_during_a_command_is_reported_and_not_rerun_blindly(ws: Path) -> None:
    (ws / "slow.py").write_text(SLOW_SCRIPT)
    job = call("run_cmd", cmd="python slow.py", timeout_sec=120)
    scenario = {
        "rules": [
            plan_rule(("Run the job", ["Run slow.py once"])),
            {"match": r"Recent commands: [^\n]*python slow\.py -> 0", "reply": done("ran")},
            {"match": "was interrupted", "reply": job},
            {"match": "ACTIVE SUBTASK: Run slow.py", "in": "last", "reply": job},
        ]
    }
    runs = ws / "runs.txt"
    with FakeServer(scenario) as server:
        env = cli_env(server.url)
        proc = start_cli(env, "start", "Run the slow job", "-w", str(ws), "--foreground")
        try:
            wait_for(lambda: runs.exists() and "action_started" in record_types(ws))
        finally:
            proc.kill()
            finish(proc)
            orphan = int(runs.read_text().split()[0]) if runs.exists() else None
            if orphan is not None:  # the job runs in a session of its own and outlives us
                with contextlib.suppress(ProcessLookupError):
                    os.kill(orphan, signal.SIGKILL)
        asked_before = len(server.chat_requests)
        result = run_cli(env, "resume", "-w", str(ws), "--foreground")
        after = rounds(server.chat_requests[asked_before:])
    assert result.returncode == 0, result.stderr
    recs = records(ws)
    assert_contiguous(recs)
    kinds = [r["type"] for r in recs]
    resumed = kinds.index("resumed")
    interrupted = [r for r in recs if r["type"] == "action_interrupted"]
    assert len(interrupted) == 1 and interrupted[0]["tool"] == "run_cmd"
    assert interrupted[0]["args"]["cmd"] == "python slow.py"
    # Nothing ran between the restart and the model's next answer.
    next_call = kinds.index("llm_call", resumed)
    assert "action_started" not in kinds[resumed:next_call]
    assert "interrupted" in messages_text(after[0])
    assert len(runs.read_text().split()) == 2, "run once before the kill, once when asked again"
    assert kinds[-1] == "goal_completed"


def test_start_with_the_same_goal_resumes_it(ws: Path) -> None:
    goal = "Write file g.txt"
    with FakeServer({"models": [{"name": "other:1b"}]}) as server:
        result = run_cli(cli_env(server.url), "start", goal, "-w", str(ws), "--foreground")
    assert result.returncode == 3
    assert record_types(ws) == ["goal_started", "suspended"]
    with FakeServer(writer(["g.txt"])) as server:
        result = run_cli(cli_env(server.url), "start", goal, "-w", str(ws), "--foreground")
    assert result.returncode == 0, result.stderr
    kinds = record_types(ws)
    assert kinds.count("goal_started") == 1
    assert kinds[1:4] == ["suspended", "preflight", "resumed"]
    assert kinds[-1] == "goal_completed"
    assert not (ws / ".agent_context" / "archive").exists()


def test_a_different_goal_archives_the_previous_one(ws: Path) -> None:
    with FakeServer(hello_scenario()) as server:
        result = run_cli(cli_env(server.url), "start", HELLO_GOAL, "-w", str(ws), "--foreground")
    assert result.returncode == 0
    first = records(ws)
    with FakeServer(writer(["x.txt"])) as server:
        result = run_cli(cli_env(server.url), "start", WRITE_GOAL, "-w", str(ws), "--foreground")
    assert result.returncode == 0, result.stderr
    archived = list((ws / ".agent_context" / "archive").iterdir())
    assert len(archived) == 1
    assert (archived[0] / "state.json").exists()
    old = read_history(archived[0] / "history.jsonl")
    assert [r["seq"] for r in old] == [r["seq"] for r in first]
    assert old[0]["goal"] == HELLO_GOAL
    now = records(ws)
    assert now[0]["seq"] == 1 and now[0]["type"] == "goal_started"
    assert now[0]["goal"] == WRITE_GOAL and now[-1]["type"] == "goal_completed"


def test_resume_of_a_completed_goal_says_so(ws: Path) -> None:
    with FakeServer(hello_scenario()) as server:
        env = cli_env(server.url)
        assert run_cli(env, "start", HELLO_GOAL, "-w", str(ws), "--foreground").returncode == 0
        before = records(ws)
        result = run_cli(env, "resume", "-w", str(ws), "--foreground")
        asked = len(server.chat_requests)
    assert result.returncode == 0
    assert "completed" in (result.stdout + result.stderr)
    assert records(ws) == before
    assert asked == 7  # the plan, five rounds and the verdict; the resume asked nothing


def test_resume_with_nothing_to_resume_exits_2(ws: Path) -> None:
    result = run_cli(cli_env(f"127.0.0.1:{closed_port()}"), "resume", "-w", str(ws), "--foreground")
    assert result.returncode == 2
    assert "nothing to resume" in result.stderr


# Each signal once and each API once: how a signal is handled does not depend on the API.
@pytest.mark.parametrize(
    ("signum", "backend"),
    [(signal.SIGINT, "openai"), (signal.SIGTERM, "ollama")],
    ids=["openai-ctrl-c", "ollama-sigterm"],
)
def test_a_stop_signal_journals_stopped_and_resume_completes(
    ws: Path, signum: int, backend: str
) -> None:
    with FakeServer(writer(FILES[:3], delay=0.2)) as server:
        env = backend_env(backend, server.url)
        proc = start_cli(env, "start", WRITE_GOAL, "-w", str(ws), "--foreground")
        try:
            wait_for(lambda: "action_finished" in record_types(ws))
            proc.send_signal(signum)
            code, err = finish(proc)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert code == 130, err
        assert "localagent resume" in err
        kinds = record_types(ws)
        assert kinds[-1] == "stopped" and "goal_completed" not in kinds
        assert state_json(ws)["goal"]["status"] == "stopped"
        result = run_cli(env, "resume", "-w", str(ws), "--foreground")
    assert result.returncode == 0, result.stderr
    recs = records(ws)
    assert_contiguous(recs)
    kinds = [r["type"] for r in recs]
    assert kinds.index("stopped") < kinds.index("resumed")
    assert kinds[-1] == "goal_completed"
    assert all((ws / name).exists() for name in FILES[:3])


def test_a_prose_reply_to_the_refused_tools_call_is_asked_again_with_the_protocol(
    ws: Path,
    backend: str,
) -> None:
    # The plan (made with tools offered) went through; the first round's call is refused,
    # as a resumed run's first call is when the plan came from an earlier process.
    refused = {"status": 400, "error": "registry.ollama.ai/library/old:7b does not support tools"}
    scenario = {
        "models": [{"name": "old:7b"}],
        "rules": [plan_rule(("Notes", ["Write notes.txt"]))],
        "replies": [
            refused,
            {"content": "Sure, I will write the notes file now."},
            fenced("write_file", path="notes.txt", content="n\n"),
            fenced("read_file", path="notes.txt"),
            fenced("mark_subtask_complete", success=True, reason="written"),
        ],
    }
    with FakeServer(scenario) as server:
        env = backend_env(backend, server.url, OLLAMA_MODEL="old:7b")
        result = run_cli(env, "start", "Write notes.txt", "-w", str(ws), "--foreground")
    assert result.returncode == 0, result.stderr
    assert "feedback" not in record_types(ws)
    # Refused with tools, retried without, then asked again with the protocol described.
    sent = rounds(server.chat_requests)
    assert sent[0].get("tools") and not sent[1].get("tools")
    assert "no native tool calling" not in sent[1]["messages"][0]["content"]
    assert "no native tool calling" in sent[2]["messages"][0]["content"]


def test_the_api_key_reaches_the_server_and_nothing_else(ws: Path) -> None:
    key = "sk-local-4f1e9a"
    scenario = {**json.loads(hello_scenario().read_text()), "api_key": key}
    with FakeServer(scenario) as server:
        env = backend_env("openai", server.url, LOCALAGENT_API_KEY=key)
        result = run_cli(env, "start", HELLO_GOAL, "-w", str(ws), "--foreground")
        status = run_cli(env, "status", "-w", str(ws), "--json")
    assert result.returncode == 0, result.stderr
    assert key not in result.stdout + result.stderr + status.stdout
    assert json.loads(status.stdout)["backend"] == "openai"
    for path in (ws / ".agent_context").rglob("*"):
        assert not path.is_file() or key.encode() not in path.read_bytes(), path
