"""The prompt-cache benchmark (`scripts/bench_cache.py`) without a real model: a whole
benchmark through the real CLI against the fake server counting a one-slot prompt cache,
killed mid-call and resumed."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from localagent.models.fake import FakeServer

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"
GOAL = "Write a hello world script"


def hello_rules() -> list[dict[str, Any]]:
    """Plan, write hello.py, run it; the first claim of done is slow (the kill lands in
    it), the resumed run's is not."""
    plan = {"tasks": [{"description": GOAL, "subtasks": ["Write hello.py and run it"]}]}
    write = {"name": "write_file", "arguments": {"path": "hello.py", "content": "print('hi')\n"}}
    run = {"name": "run_cmd", "arguments": {"cmd": "python hello.py", "timeout_sec": 10}}
    done = {"name": "mark_subtask_complete", "arguments": {"success": True, "reason": "ran it"}}
    rules = [{"kind": "plan", "reply": {"content": json.dumps(plan)}}]
    rules += [{"kind": "chat", "times": 1, "reply": {"tool_calls": [c]}} for c in (write, run)]
    rules.append({"kind": "chat", "times": 1, "reply": {"tool_calls": [done], "delay": 2}})
    return [*rules, {"kind": "chat", "reply": {"tool_calls": [done]}}]


def bench(tmp_path: Path, *extra: str) -> tuple[subprocess.CompletedProcess[str], Any]:
    """The benchmark run on the fake server, hello killed after round 2 and resumed: its
    output and its figures (`--out`), once it ended cleanly."""
    scenario = {
        "models": [{"name": "qwen2.5-coder:0.5b"}],
        "llama_cpp": True,
        "rules": hello_rules(),
        "prompt_cache": True,
    }
    out = tmp_path / "figures.json"
    with FakeServer(scenario) as server:
        command = [sys.executable, str(SCRIPTS / "bench_cache.py"), "--base-url", server.url]
        command += ["--out", str(out), "--dir", str(tmp_path / "runs"), "--kill-after", "2"]
        done = subprocess.run([*command, *extra], capture_output=True, text=True, timeout=120)
    assert "Traceback" not in done.stderr + done.stdout, done.stderr + done.stdout
    assert done.returncode == 0, done.stderr + done.stdout
    return done, json.loads(out.read_text())


def test_a_benchmark_reads_the_cache_figures_of_every_call_and_of_the_resume(
    tmp_path: Path,
) -> None:
    done, result = bench(tmp_path)
    found = result["figures"]
    assert found["calls"] >= 5 and found["reuse"] > 0.5  # the plan, 3 rounds, resumed, verdict
    calls = [c for run in result["runs"] for c in run["calls"]][2:]  # a fresh engine's first two
    warm = 1 - sum(c["prompt"] - c["cached"] for c in calls) / sum(c["prompt"] for c in calls)
    assert found["reuse_warm"] == pytest.approx(warm) and found["reuse_warm"] > found["reuse"]
    assert f"without the engine's first two calls: {warm:.3f}\n" in done.stdout
    [after] = found["after_resume"]
    assert after >= 0.8  # the resumed run's first prompt is the one the killed run sent
    assert found["first_round_prompt"][0] > 0 and found["seconds_per_round"] is not None
    assert re.search(
        r"after kill -9 and resume, share from the cache: (0\.[89]\d|1\.00)\n", done.stdout
    )


def test_by_part_says_where_the_read_tokens_went(tmp_path: Path) -> None:
    """Every token the engine read is put down to one part of the prompt: their sum is
    what the calls read, and the round's parts are among them."""
    # the killed call's reply finds no one to read it: that is no error of the benchmark
    done, result = bench(tmp_path, "--by-part")
    parts = dict(result["figures"]["read_by_part"])
    again = parts.pop("read again")
    read = sum(c["prompt"] - c["cached"] for run in result["runs"] for c in run["calls"])
    # the fake counts a prompt's tokens rounded down, its pieces up: a token a call at most
    assert 0 <= sum(parts.values()) - read <= result["figures"]["calls"], (parts, read)
    assert {"system prompts", "tool results", "round facts"} <= set(parts), parts
    assert re.search(r"tokens read, by part of the prompt \([\d,]+\): system prompts", done.stdout)
    # every round's prompt starts with the one before it, the resumed round's is the one
    # the killed call sent and the verdict goes on from the rounds: all of it is news
    assert again == 0
    assert f"of them read again (an earlier prompt sent them there): {again:,}" in done.stdout
    runs = result["figures"]["reuse_by_run"]
    assert list(runs) == ["hello"] and runs["hello"] == pytest.approx(result["figures"]["reuse"])
    assert f"each run's reuse: hello {runs['hello']:.3f}\n" in done.stdout
    # what each call read, to be read: a block for each call the engine answered, the
    # rounds' each with its status, read anew every round
    reads = Path(result["reads"])
    assert f"what each call read: {reads}\n" in done.stdout
    blocks = re.findall(
        r"^=== call \d+: [\d,]+ tokens, [\d,]+ from the cache, ([\d,]+) read",
        reads.read_text(encoding="utf-8"),
        re.M,
    )
    assert len(blocks) == result["figures"]["calls"]
    assert sum(int(b.replace(",", "")) for b in blocks) == sum(parts.values())
    assert "[status] round 2 of" in reads.read_text(encoding="utf-8")


def test_tokens_read_again_are_those_an_earlier_request_sent_at_the_same_place() -> None:
    """Read past the cached tokens, a token is read again when an earlier request had the
    same tokens up to and including it; past the longest such run it is news."""
    sys.path.insert(0, str(SCRIPTS))
    try:
        from cachereads import read_again
    finally:
        sys.path.remove(str(SCRIPTS))
    front, plan, facts = ["<s>", "sys", "tools"], ["plan", "?"], ["goal", "r1", "r2"]
    earlier = [front + facts[:2], plan]
    assert read_again(front + facts, 0, earlier) == 5  # all it shares with the first round
    assert read_again(front + facts, 3, earlier) == 2  # the front came from the cache
    assert read_again(front + facts, 5, earlier) == 0  # what was sent before all came back
    assert read_again(plan + facts, 0, earlier) == 2
    assert read_again(["other"], 0, earlier) == 0  # news
    assert read_again(front, 0, []) == 0  # the first request: nothing was sent before


def test_by_part_needs_the_openai_api(tmp_path: Path) -> None:
    command = [sys.executable, str(SCRIPTS / "bench_cache.py"), "--api", "ollama", "--by-part"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "--by-part records the OpenAI API" in done.stderr


def test_a_folder_that_holds_runs_already_is_refused_before_the_engine_starts(
    tmp_path: Path,
) -> None:
    """Given a `--dir` with a goal's runs in it, the benchmark died with a traceback once
    the engine had started (FileExistsError); now it says so first."""
    (tmp_path / "hello" / "ws").mkdir(parents=True)
    command = [sys.executable, str(SCRIPTS / "bench_cache.py"), "--dir", str(tmp_path)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr + done.stdout
    assert "holds runs of hello already: give an empty --dir" in done.stderr
    assert "Traceback" not in done.stderr
    (tmp_path / "file").write_text("")
    done = subprocess.run(
        [*command[:2], "--dir", str(tmp_path / "file")], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and done.stderr.startswith("bench_cache: --dir "), done.stderr


def test_a_verdicts_own_turn_is_counted_as_its_request() -> None:
    """A verdict request goes on from the rounds' messages: its last message is its own
    request, not a note of the rounds."""
    sys.path.insert(0, str(SCRIPTS))
    try:
        from cachereads import part
    finally:
        sys.path.remove(str(SCRIPTS))
    messages = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "GOAL: x"},
        {"role": "assistant", "content": '{"name": "run_cmd"}'},
        {"role": "user", "content": "[result of run_cmd]\nexit code 0"},
        {"role": "user", "content": "[verdict] Check whether the goal above is achieved."},
    ]
    asked = [part(messages, i, rounds=True, asks=True) for i in range(len(messages))]
    assert asked == [
        "system prompts", "goal and plan", "replies", "tool results",
        "plan, replan and verdict requests",
    ]  # fmt: skip
    assert part(messages, 4, rounds=True) == "notes"  # a round's own note, as before
