"""What a run's rounds cost, as the journal records it and the views show it: a reply
cut off as a loop keeps its usage (estimated, flagged), and `status --json` gives the
seconds per round and the share of the prompt served from the server's cache."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support import backend_env, done, plan_rule, records, run_cli

from localagent.models.fake import FakeServer
from localagent.state import MalformedRecord, check

GOAL = "Write a hello world script"
PLAN = plan_rule((GOAL, ["write_file hello_world.py", "run python hello_world.py"]))
ARGS = '"arguments": {"path": "hello_world.py", "content": "print(\'Hello, world!\')"}'
# The 0.5B's round 2 verbatim: the same call four times, until the loop cut.
REPEATED = ('{"name": "write_file", ' + ARGS + "\n" + '{"name": "write_file", ' + ARGS + "}\n") * 2
RUN_AND_DONE = {
    "content": '{"name": "run_cmd", "arguments": {"cmd": "python hello_world.py"}}\n'
    '{"name": "mark_subtask_complete", "arguments": {"success": true, '
    '"reason": "it printed Hello, world!"}}'
}


def looped() -> dict[str, Any]:
    """The repeated-call reply as llama-server streamed it: far past the loop cut."""
    return {"content": REPEATED * 40, "chunks": 320}


def rounds(ws: Path) -> list[dict[str, Any]]:
    return [r for r in records(ws) if r["type"] == "llm_call" and r["purpose"] == "round"]


def run_goal(
    ws: Path,
    backend: str,
    replies: list[dict[str, Any]],
    cache: bool = False,
    plan: dict[str, Any] = PLAN,
) -> dict[str, str]:
    """Runs the goal to its end; the CLI's environment for the same server is returned."""
    scenario = {"models": [{"name": "qwen2.5-coder:0.5b"}], "llama_cpp": backend == "openai"}
    scenario |= {"prompt_cache": cache}
    scenario |= {"rules": [plan], "replies": replies, "default": done()}
    with FakeServer(scenario) as server:
        env = backend_env(backend, server.url, OLLAMA_MODEL="qwen2.5-coder:0.5b")
        env |= {"LOCALAGENT_VERIFY": "0", "LOCALAGENT_MAX_ROUNDS": "4"}
        ran = run_cli(env, "start", GOAL, "-w", str(ws), "--foreground")
    assert ran.returncode == 0, ran.stderr
    return env


@pytest.mark.parametrize("backend", ["ollama", "openai"])
def test_a_reply_cut_off_as_a_loop_keeps_its_usage(tmp_path: Path, backend: str) -> None:
    """The stream is closed before the chunk that carries the usage: the round records
    one completion token per chunk read and the prompt's size estimated, flagged."""
    env = run_goal(tmp_path, backend, [looped(), RUN_AND_DONE])
    cut, whole = rounds(tmp_path)[:2]
    assert cut["cut_off"] == "loop" and cut["estimated"] is True
    assert 0 < cut["completion_tokens"] < looped()["chunks"]  # read up to the cut
    assert cut["prompt_tokens"] == cut["prompt_chars"] // 4 > 0
    assert "cached_tokens" not in cut  # no share of the cache is made up
    assert "estimated" not in whole and whole["completion_tokens"] > 0
    shown = run_cli(env, "trace", "-w", str(tmp_path)).stdout
    estimate = f"~{cut['prompt_tokens']}+~{cut['completion_tokens']} tokens"
    assert estimate in shown and f" {whole['prompt_tokens']}+" in shown


def test_the_estimated_flag_has_a_shape_and_old_records_read() -> None:
    base = {"type": "llm_call", "seq": 3, "purpose": "round", "prompt_tokens": 5}
    check(base)  # a journal from before the flag
    check({**base, "estimated": True})
    with pytest.raises(MalformedRecord, match="estimated"):
        check({**base, "estimated": "yes"})


def test_status_json_shows_the_seconds_per_round_and_the_cache_share(tmp_path: Path) -> None:
    write = {"content": '{"name": "write_file", ' + ARGS + "}"}
    pause = {"chunk_delay": 0.05, "chunks": 3}
    env = run_goal(tmp_path, "openai", [write | pause, RUN_AND_DONE | pause], cache=True)
    shown = json.loads(run_cli(env, "status", "--json", "-w", str(tmp_path)).stdout)
    pace = shown["pace"]
    assert pace["rounds_timed"] == 1 and pace["seconds_per_round"] >= 0.1
    calls = [r for r in records(tmp_path) if r["type"] == "llm_call"]
    last = calls[-1]
    assert pace["cache_share_last_call"] == round(last["cached_tokens"] / last["prompt_tokens"], 3)
    cached = sum(r["cached_tokens"] for r in calls)
    assert pace["cache_share_run"] == round(cached / sum(r["prompt_tokens"] for r in calls), 3)


def test_status_json_says_null_where_the_server_said_nothing(tmp_path: Path) -> None:
    (tmp_path / "hello_world.py").write_text("print('Hello, world!')")
    plan = plan_rule((GOAL, ["run python hello_world.py"]))
    env = run_goal(tmp_path, "ollama", [RUN_AND_DONE], plan=plan)
    pace = json.loads(run_cli(env, "status", "--json", "-w", str(tmp_path)).stdout)["pace"]
    assert pace == {
        "seconds_per_round": None,
        "rounds_timed": 0,
        "cache_share_last_call": None,
        "cache_share_run": None,
    }
