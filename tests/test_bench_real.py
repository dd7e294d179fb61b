"""The real-model benchmark without a real model (`scripts/bench_real.py`): its figures
and table on recorded run data, and whole benchmarks through the real CLI against the
scripted fake server (the judges: test_bench_real_judges.py)."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from localagent.models.fake import FakeServer

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"


@pytest.fixture
def scripts(monkeypatch: pytest.MonkeyPatch) -> dict[str, ModuleType]:
    monkeypatch.syspath_prepend(str(SCRIPTS))
    return {name: importlib.import_module(name) for name in ("realstats", "bench_real")}


# ---- figures from journals ---------------------------------------------------------


def started(seq: int, call: str, cmd: str = "python rps.py") -> dict[str, Any]:
    args = {"cmd": cmd, "timeout_sec": 30}
    return {
        "seq": seq,
        "type": "action_started",
        "tool": "run_cmd",
        "args": args,
        "signature": f"run_cmd {json.dumps(args)}",
        "call": call,
        "marker": f"m{seq}",
    }


def finished(seq: int, call: str, **extra: Any) -> dict[str, Any]:
    return {"seq": seq, "type": "action_finished", "tool": "run_cmd", "call": call, **extra}


def test_commands_run_twice_are_counted_from_the_journal(scripts: dict[str, ModuleType]) -> None:
    count = scripts["realstats"].repeated_commands
    assert (
        count([started(1, "1.1"), finished(2, "1.1"), started(3, "2.1"), finished(4, "2.1")]) == 0
    )
    # A kill left 1.1 open; the resumed run started the same call again.
    assert count([started(1, "1.1"), started(2, "1.1"), finished(3, "1.1")]) == 1
    # The same command started again, under a new call, with the first never finished
    # and never reported interrupted: the harness lost track of it.
    assert count([started(1, "1.1"), started(3, "2.1"), finished(4, "2.1")]) == 1
    # Told the run was interrupted, the model sent the command again: its own decision,
    # counted apart (rps-10 and mathx-16 on the GPU, `python rps_game.py` and
    # `pytest tests/test_mathx.py` each killed mid-run).
    told = [
        started(1, "1.1"),
        {"seq": 2, "type": "action_interrupted", "call": "1.1"},
        started(3, "2.1"),
        finished(4, "2.1"),
    ]
    assert (count(told), scripts["realstats"].asked_again(told)) == (0, 1)
    # The resumed run starting the interrupted call itself is the harness's repeat.
    resumed = [started(1, "1.1"), {"seq": 2, "type": "action_interrupted", "call": "1.1"}]
    assert (count([*resumed, started(3, "1.1")]), scripts["realstats"].asked_again(resumed)) == (
        1,
        0,
    )
    # A crash's leftover redone on resume.
    assert count([started(1, "1.1"), finished(2, "1.1", redone=True)]) == 1
    # A write is no command; a different command is no repeat.
    write = {**started(1, "1.1"), "tool": "write_file"}
    write.pop("marker")
    assert count([write, write, started(3, "2.1", "python a.py"), started(4, "3.1")]) == 0


def history(*records: tuple[str, dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"seq": n, "type": kind, **fields} for n, (kind, fields) in enumerate(records, 1)]


def test_a_runs_journal_gives_its_ending_rounds_and_tokens(
    scripts: dict[str, ModuleType], tmp_path: Path
) -> None:
    stats = scripts["realstats"]
    records = history(
        ("goal_started", {"goal": "g"}),
        ("llm_call", {"purpose": "plan", "prompt_tokens": 300, "completion_tokens": 50}),
        (
            "llm_call",
            {
                "purpose": "round",
                "prompt_tokens": 900,
                "completion_tokens": 40,
                "duration_ms": 1500.0,
            },
        ),
        ("llm_call", {"purpose": "round", "prompt_tokens": 1000, "completion_tokens": 30}),
        ("llm_call", {"purpose": "verify", "prompt_tokens": 400, "completion_tokens": 20}),
        ("goal_completed", {"reason": "every subtask is done", "verification": "verified"}),
    )
    path = tmp_path / "history.jsonl"
    lines = [json.dumps(r).encode() for r in records]
    lines.insert(3, b'{"seq": 99, "type": "llm_ca')  # a torn line is skipped, not fatal
    path.write_bytes(b"\n".join(lines) + b"\n")
    run = stats.Run("hello", 1)
    stats.summarize(run, stats.read_history(path))
    assert (run.outcome, run.verification, run.rounds) == ("completed", "verified", 2)
    assert (run.prompt_tokens, run.completion_tokens) == (2600, 140)
    assert run.model_seconds == 1.5


def recorded(stats: ModuleType) -> list[Any]:
    """Runs as a benchmark records them: the issue's kinds of outcome."""
    run = stats.Run
    return [
        run(
            "hello",
            1,
            30.0,
            0,
            outcome="completed",
            verification="verified",
            rounds=3,
            prompt_tokens=2000,
            completion_tokens=100,
            works=True,
        ),
        run(
            "hello",
            2,
            50.0,
            1,
            outcome="failed",
            rounds=10,
            prompt_tokens=9000,
            completion_tokens=500,
            works=True,
        ),  # achieved work that ended failed
        run(
            "rps",
            1,
            80.0,
            0,
            outcome="completed",
            verification="verified",
            rounds=8,
            prompt_tokens=7000,
            completion_tokens=700,
            works=False,
        ),  # verified but broken
        run(
            "rps",
            2,
            900.0,
            130,
            timed_out=True,
            outcome="stopped",
            rounds=20,
            prompt_tokens=30000,
            completion_tokens=2000,
            kills=2,
            repeated_commands=1,
        ),
        run(
            "rps",
            3,
            60.0,
            0,
            outcome="completed",
            verification="unverified",
            rounds=6,
            prompt_tokens=5000,
            completion_tokens=400,
            works=True,
        ),
    ]


def test_the_figures_count_what_the_issue_counts(scripts: dict[str, ModuleType]) -> None:
    groups = scripts["realstats"].by_goal(recorded(scripts["realstats"]))
    hello, rps, every = groups["hello"], groups["rps"], groups["all"]
    assert (hello["runs"], hello["said_completed"], hello["works"]) == (2, 1, 2)
    assert (hello["verified_but_broken"], hello["works_but_failed"]) == (0, 1)
    assert (rps["runs"], rps["said_completed"], rps["said_verified"], rps["works"]) == (3, 2, 1, 1)
    assert (rps["verified_but_broken"], rps["over_time"], rps["repeated_commands"]) == (1, 1, 1)
    assert (hello["median_rounds"], rps["median_rounds"]) == (6.5, 8)
    assert hello["median_tokens"] == (2100 + 9500) / 2
    assert rps["median_seconds_per_round"] == 10.0  # 80/8, 900/20, 60/6
    assert (every["runs"], every["said_completed"], every["works"]) == (5, 3, 3)


def test_the_table_has_a_row_per_goal_and_one_for_all(scripts: dict[str, ModuleType]) -> None:
    stats = scripts["realstats"]
    text = stats.render(stats.by_goal(recorded(stats)), kills=True)
    lines = text.splitlines()
    assert '"completed (verified)" but broken' in lines[0]
    assert "commands run twice" in lines[0] and "sent again by the model" in lines[0]
    cells = {
        line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]] for line in lines[2:]
    }
    assert list(cells) == ["hello", "rps", "all"]
    assert cells["rps"][:6] == ["3", "2 (1 verified)", "1", "1", "0", "1"]
    assert cells["hello"][:6] == ["2", "1 (1 verified)", "2", "0", "1", "0"]
    assert cells["rps"][-3:] == ["2", "1", "0"]


METRICS = """# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed.
# TYPE llamacpp:prompt_tokens_total counter
llamacpp:prompt_tokens_total 1234
llamacpp:tokens_predicted_total 88
"""


def test_kv_cache_reuse_from_the_engines_metrics_and_from_the_shims_log(
    scripts: dict[str, ModuleType], tmp_path: Path
) -> None:
    stats = scripts["realstats"]
    assert stats.metric(METRICS, "llamacpp:prompt_tokens_total") == 1234
    assert stats.metric(METRICS, "llamacpp:n_busy_slots_per_decode") is None
    cache = stats.cache_from_metrics(1234 - 234, 4000)
    assert cache["reuse"] == 0.75
    assert "75.0% of 4,000 prompt tokens" in stats.cache_line(cache)
    log = tmp_path / "shim.jsonl"
    log.write_text('{"prompt_n": 100, "cache_n": 900}\n{"prompt_n": 300, "cache_n": 700}\nbad\n')
    assert stats.cache_from_shim(log)["reuse"] == 0.8
    assert "not measured" in stats.cache_line({})


# ---- a whole benchmark against the fake server -------------------------------------


def scripted(goal: str, path: str, content: str) -> list[dict[str, Any]]:
    """Rules for one goal: plan it, write path, run it, then claim the subtask done."""
    plan = {"tasks": [{"description": goal, "subtasks": [f"Write {path} and run it"]}]}
    calls = [
        {"name": "write_file", "arguments": {"path": path, "content": content}},
        {"name": "run_cmd", "arguments": {"cmd": f"python {path}", "timeout_sec": 10}},
    ]
    done = {"name": "mark_subtask_complete", "arguments": {"success": True, "reason": "ran it"}}
    rules = [{"kind": "plan", "match": goal, "reply": {"content": json.dumps(plan)}}]
    rules += [
        {"kind": "chat", "match": goal, "times": 1, "reply": {"tool_calls": [c]}} for c in calls
    ]
    return [*rules, {"kind": "chat", "match": goal, "reply": {"tool_calls": [done]}}]


# The issue's broken game: every function defined, none called; it prints nothing.
UNCALLED = """import random

def play():
    choice = random.choice(["rock", "paper", "scissors"])
    print("You win!" if input() == choice else "You lose!")
"""


def fake_engine() -> FakeServer:
    """A fake llama-server serving the benchmark's model name and two scripted goals: a
    working hello and the issue's game that never calls its functions."""
    rules = scripted("Write a hello world script", "hello.py", 'print("Hello, world!")\n')
    rules += scripted("Create a rock-paper-scissors game", "rps.py", UNCALLED)
    return FakeServer(
        {"models": [{"name": "qwen2.5-coder:1.5b"}], "llama_cpp": True, "rules": rules}
    )


def bench(server: FakeServer, out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(SCRIPTS / "bench_real.py"), "--base-url", server.url + "/v1"]
    command += ["--out", str(out), "--time-limit", "60", "--max-rounds", "8", *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert "Traceback" not in done.stderr + done.stdout, done.stderr + done.stdout
    return done


def test_a_benchmark_judges_each_artefact_itself_and_tables_it(tmp_path: Path) -> None:
    out = tmp_path / "figures.json"
    with fake_engine() as server:
        done = bench(server, out, "--goals", "hello,rps", "--runs", "1")
    assert done.returncode == 0, done.stderr
    figures = json.loads(out.read_text())
    hello, rps = figures["runs"]
    assert (hello["goal"], hello["works"]) == ("hello", True), hello
    assert (rps["goal"], rps["works"]) == ("rps", False), rps
    assert "no script plays a round: rps.py: exit code 0 (no output)" in rps["judged"]
    for run in (hello, rps):  # what localagent said is what its exit code said
        assert (run["outcome"] == "completed") == (run["exit_code"] == 0), run
        assert run["rounds"] >= 1 and run["prompt_tokens"] > 0
    said_verified = rps["outcome"] == "completed" and rps["verification"] == "verified"
    assert figures["figures"]["rps"]["verified_but_broken"] == int(said_verified)
    rows = [line for line in done.stdout.splitlines() if line.startswith("|")]
    assert [row.split("|")[1].strip() for row in rows[2:]] == ["hello", "rps", "all"]
    assert "KV-cache reuse: not measured" in done.stdout


def test_a_killed_run_is_resumed_and_its_kills_are_counted(tmp_path: Path) -> None:
    out = tmp_path / "figures.json"
    with fake_engine() as server:
        done = bench(server, out, "--quick", "--kills", "1", "--kill-window", "0.2:0.3")
    assert done.returncode == 0, done.stderr
    [run] = json.loads(out.read_text())["runs"]
    assert run["kills"] == 1
    assert run["works"], run
    assert (run["outcome"] == "completed") == (run["exit_code"] == 0), run
    assert "commands run twice" in done.stdout


def test_no_engine_is_a_one_line_error(tmp_path: Path) -> None:
    command = [sys.executable, str(SCRIPTS / "bench_real.py"), "--quick"]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "REALMODEL_HOME": str(tmp_path)}
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 2
    assert done.stderr.startswith("bench_real: no engine at ")
    assert "setup.sh 1.5b" in done.stderr and "Traceback" not in done.stderr
    closed = [sys.executable, str(SCRIPTS / "bench_real.py"), "--quick", "--base-url"]
    done = subprocess.run([*closed, "http://127.0.0.1:9/v1"], capture_output=True, text=True)
    assert done.returncode == 3
    assert "no OpenAI-compatible server answers" in done.stderr


def test_a_goal_named_twice_is_a_usage_error(tmp_path: Path) -> None:
    """`--goals mathx,refactor,mathx` ran mathx, then refactor, then stopped with a
    traceback: the second mathx's workspace was the first's. Both benchmarks refuse it."""
    for script in ("bench_real.py", "bench_cache.py"):
        command = [sys.executable, str(SCRIPTS / script), "--goals", "mathx,hello,mathx"]
        done = subprocess.run(command, capture_output=True, text=True, timeout=60)
        assert done.returncode == 2, (script, done.stderr)
        assert "goal(s) named twice: mathx" in done.stderr, (script, done.stderr)
        assert "Traceback" not in done.stderr


def test_a_dir_that_is_not_there_is_made(tmp_path: Path) -> None:
    """`--dir` naming a folder not made yet stopped the benchmark with a traceback before
    its first run; a file there is a one-line error."""
    where = tmp_path / "not" / "there"
    with fake_engine() as server:
        done = bench(server, tmp_path / "figures.json", "--quick", "--keep", "--dir", str(where))
        assert done.returncode == 0, done.stderr
        assert [p.name.startswith("localagent-real-") for p in where.iterdir()] == [True]
        (tmp_path / "file").write_text("")
        done = bench(server, tmp_path / "f.json", "--quick", "--dir", str(tmp_path / "file"))
    assert done.returncode == 1 and done.stderr.startswith("bench_real: --dir "), done.stderr
