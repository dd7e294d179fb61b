"""The model server's prompt cache: what each call's prompt shares with the one before, the
figures the server gives of it, and the views that show them.

A run against the fake server with `prompt_cache` on: it counts, as llama-server with one
slot does, the tokens of each request's tools and messages shared from the start with the
previous request, and says so in llama.cpp's `timings`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from support import call, cli_env, done, plan_rule, records, run_cli, start_cli, wait_for

import localagent
from localagent.config.settings import Settings
from localagent.models import make_model, numbers
from localagent.models.config import ModelConfig
from localagent.models.fake import FakeServer
from localagent.models.fake.cache import CHARS_PER_TOKEN
from localagent.observe import watch
from localagent.state import State
from localagent.state.reduce import apply
from localagent.verify import verdict

MODEL = "coder:7b"
HELLO = [{"role": "user", "content": "hello"}]
BACKENDS = ("ollama", "openai")
VERIFIED_REPLY = '{"verdict": "VERIFIED", "unmet": [], "evidence": [], "next": "finish"}'


def scenario(**fields: Any) -> dict[str, Any]:
    return {"models": [{"name": MODEL, "context_length": 8192}], **fields}


def model_for(backend: str, url: str) -> Any:
    where = {"base_url": url + "/v1"} if backend == "openai" else {"ollama_host": url}
    return make_model(
        ModelConfig.of(Settings(backend=backend, model=MODEL, retry_deadline=0.0, **where))
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_servers_cache_figures_are_read_through_both_apis(backend: str) -> None:
    replies = [
        {"content": "a", "timings": {"cache_n": 300, "prompt_n": 20}},
        {"content": "b", "timings": {"cache_n": -3, "prompt_n": 20}},  # no count is negative
        {"content": "c", "timings": {"cache_n": True, "prompt_n": 20}},
        {"content": "d", "timings": {"cache_n": 10**30, "prompt_n": 1}},
        {"content": "e", "timings": {"cache_n": 5, "prompt_n": "20"}},
        {"content": "f", "timings": {"cache_n": 0, "prompt_n": 40}},
    ]
    with FakeServer(scenario(replies=replies)) as server:
        model = model_for(backend, server.url)
        got = [model.chat(HELLO) for _ in replies]
    assert (got[0].cached_tokens, got[0].prompt_tokens) == (300, 320)
    assert got[0].usage()["cached_tokens"] == 300
    assert [r.cached_tokens for r in got[1:5]] == [None] * 4
    assert all("cached_tokens" not in r.usage() for r in got[1:5])
    assert (got[5].cached_tokens, got[5].prompt_tokens) == (0, 40)


def test_openais_cached_tokens_count_only_within_the_prompt() -> None:
    assert numbers.cached(None, {"cached_tokens": 900}, 1000) == (900, 1000)
    assert numbers.cached(None, {"cached_tokens": 0}, 1000) == (0, 1000)
    assert numbers.cached(None, {"cached_tokens": 1001}, 1000) is None  # past the prompt
    assert numbers.cached(None, {"cached_tokens": 5}, 0) is None  # a prompt of no size
    assert numbers.cached(None, {"cached_tokens": "900"}, 1000) is None
    assert numbers.cached({"cache_n": 7}, {"cached_tokens": 900}, 1000) == (900, 1000)


def test_an_ollama_count_of_only_what_it_read_means_the_rest_was_cached() -> None:
    """Some Ollama versions count only the prompt tokens read anew: far fewer than the
    prompt holds means the rest came from the cache. A count it did not believably send
    says nothing."""
    prompt = [{"role": "user", "content": "x" * 4000}]  # about 1,000 tokens
    replies = [{"content": "a", "prompt_eval_count": 40}, {"content": "b"}]
    replies.append({"content": "c", "prompt_eval_count": 10**30})
    with FakeServer(scenario(replies=replies)) as server:
        model = model_for("ollama", server.url)
        got = [model.chat(prompt) for _ in replies]
    assert (got[0].cached_tokens, got[0].prompt_tokens) == (960, 1000)
    assert (got[1].cached_tokens, got[1].prompt_tokens) == (None, 1000)  # the whole prompt
    assert (got[2].cached_tokens, got[2].prompt_tokens) == (None, 0)


TWO_FILES = {
    "rules": [plan_rule(("Write both", ["Write a.txt", "Write b.txt"]))],
    "replies": [
        call("write_file", path="a.txt", content="A\n"),
        done("a.txt written"),
        call("write_file", path="b.txt", content="B\n"),
        done("b.txt written"),
    ],
    "prompt_cache": True,
}


def run_two_files(ws: Path, backend: str, profile: str = "full") -> list[dict[str, Any]]:
    """The run's chat requests, as the fake server received them."""
    with FakeServer(scenario(**TWO_FILES)) as server:
        where = {"base_url": server.url + "/v1"} if backend == "openai" else {}
        result = localagent.run_goal(
            "Write a.txt and b.txt", ws, ollama_host=server.url, model=MODEL,
            backend=backend, checks=[], profile=profile, **where,
        )  # fmt: skip
        assert result.status == "completed", result.reason
        return server.chat_requests


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_call_opens_as_the_rounds_do_with_the_same_options(
    tmp_path: Path, backend: str
) -> None:
    """Plan, rounds and verdict: the same system prompt and tools first, so no call evicts
    the front the rounds share; and the same load options (`num_ctx`), so Ollama never
    reloads the model. A verdict's reply has a lower cap (Ollama compares only the load
    options: num_ctx, num_batch, num_gpu, main_gpu, use_mmap, num_thread)."""
    sent = run_two_files(tmp_path, backend)
    kinds = ["plan" if "tasks" in json.dumps(r.get("format") or r.get("response_format"))
             else "verify" if "verdict" in json.dumps(r.get("format") or r.get("response_format"))
             else "round" for r in sent]  # fmt: skip
    assert kinds[0] == "plan" and kinds[-1] == "verify" and kinds.count("round") == 4
    assert len({json.dumps(r["messages"][0]) for r in sent}) == 1
    assert len({json.dumps(r.get("tools")) for r in sent}) == 1 and sent[0]["tools"]
    if backend == "ollama":
        assert len({r["options"]["num_ctx"] for r in sent}) == 1
        caps = [r["options"]["num_predict"] for r in sent]
    else:
        caps = [r["max_tokens"] for r in sent]
    assert len(set(caps[:-1])) == 1 and caps[-1] == min(caps[0], verdict.VERDICT_TOKENS)
    calls = [r for r in records(tmp_path) if r["type"] == "llm_call"]
    assert len(calls) == len(sent) and calls[0]["cached_tokens"] == 0
    front = len(json.dumps([sent[0]["tools"], [sent[0]["messages"][0]]])) // CHARS_PER_TOKEN
    assert all(c["cached_tokens"] >= front * 0.9 for c in calls[1:]), [
        (c["purpose"], c["cached_tokens"], c["prompt_tokens"]) for c in calls
    ]


def kinds_of(sent: list[dict[str, Any]]) -> list[str]:
    return ["plan" if "tasks" in json.dumps(r.get("format") or r.get("response_format"))
            else "verify" if "verdict" in json.dumps(r.get("format") or r.get("response_format"))
            else "round" for r in sent]  # fmt: skip


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_small_profile_asks_for_plans_on_their_own_front(tmp_path: Path, backend: str) -> None:
    """Qwen2.5-Coder-1.5B on llama-server answered every plan request that carried the
    tools with `"subtasks": ["{{"]`, and gave real plans without them. A request that
    shares the start of the rounds' prompt takes their cache slot and keeps the engine from
    restoring their state after it (measured: the next round read 909 of 1,012 tokens
    again, against 12 when the plan's prompt shared nothing). So in the small profile plan
    requests open with their own system prompt and no tools."""
    sent = run_two_files(tmp_path, backend, profile="small")
    kinds = kinds_of(sent)
    assert kinds[0] == "plan" and kinds[-1] == "verify" and kinds.count("round") == 4
    assert [bool(r.get("tools")) for r in sent] == [k != "plan" for k in kinds]
    rounds_front = {r["messages"][0]["content"] for r, k in zip(sent, kinds, strict=True)
                    if k == "round"}  # fmt: skip
    (front,) = rounds_front
    own = sent[0]["messages"][0]["content"]
    shared = next((i for i, (a, b) in enumerate(zip(own, front, strict=False)) if a != b), 0)
    assert shared < len(own) // 10


@pytest.mark.parametrize("profile", ["small", "full"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_the_verdict_is_asked_as_the_turn_after_the_last_round(
    tmp_path: Path, backend: str, profile: str
) -> None:
    """The verdict request is the last round's prompt, its reply and result, and the
    verdict's own turn: the server's cache serves all but that turn. Asked on a front of its
    own, the 1.5B's verdicts read the goal and the plan again, 300-450 tokens each."""
    sent = run_two_files(tmp_path, backend, profile=profile)
    kinds = kinds_of(sent)
    last, verify = sent[-2], sent[-1]
    assert kinds[-2:] == ["round", "verify"]
    assert verify["tools"] == last["tools"]
    # The last round's messages, its facts at the end included, then its reply and result.
    assert verify["messages"][: len(last["messages"])] == last["messages"]
    reply, result, turn = verify["messages"][len(last["messages"]) :]
    assert reply["role"] == "assistant" and "b.txt written" in json.dumps(reply)
    assert "subtask completed" in result["content"]
    assert turn["role"] == "user" and turn["content"].startswith("[verdict] ")
    assert "Plan progress: completed 1.1-1.2\nEVIDENCE:\nseq " in turn["content"]
    assert "GOAL:" not in turn["content"]  # the goal and the plan are above it
    calls = [r for r in records(tmp_path) if r["type"] == "llm_call"]
    rounds = [c for c in calls if c["purpose"] == "round"]
    assert calls[-1]["purpose"] == "verify"
    assert calls[-1]["cached_tokens"] >= rounds[-1]["prompt_tokens"] * 0.9


def test_the_views_show_the_cache_and_the_seconds_per_round(tmp_path: Path) -> None:
    run_two_files(tmp_path, "ollama")
    recs = records(tmp_path)
    state = State()
    for rec in recs:
        apply(state, rec)
    calls = [r for r in recs if r["type"] == "llm_call"]
    assert state.tokens.cached == sum(c["cached_tokens"] for c in calls) > 0
    assert state.tokens.measured == sum(c["prompt_tokens"] for c in calls)
    shown = watch.view(state, recs, False, None, 0.0)
    share = state.tokens.cached / state.tokens.measured
    assert shown.cache.startswith(f"{share:.0%} of the prompt from the server's cache (last")
    assert re.search(r"; [\d.]+ s/round$", shown.speed), shown.speed
    trace = run_cli(cli_env("http://127.0.0.1:9"), "trace", "-w", str(tmp_path)).stdout
    assert re.search(r"model call \(verify\): [\d,]+\+[\d,]+ tokens \(\d+% of the prompt", trace)


def cut_off_run(stall: bool) -> dict[str, Any]:
    """Two files; the first reply is cut off (the next round must say so). With `stall`,
    the second round's reply takes long enough for the agent to be killed waiting for it,
    and the same reply answers the resumed run at once."""
    second = done("a.txt written")
    replies = [
        {**call("write_file", path="a.txt", content="A\n"), "done_reason": "length"},
        *([{**second, "delay": 30}] if stall else []),
        second,
        call("write_file", path="b.txt", content="B\n"),
        done("b.txt written"),
    ]
    return scenario(
        rules=[plan_rule(("Write both", ["Write a.txt", "Write b.txt"]))],
        replies=replies,
        prompt_cache=True,
    )


def killed_and_resumed(
    server: FakeServer, goal: list[str], ws: Path, waiting: int
) -> list[dict[str, Any]]:
    """The requests of a run killed (-9) once the server got `waiting` of them, then
    resumed to its end."""
    env = cli_env(server.url, OLLAMA_MODEL=MODEL)
    proc = start_cli(env, *goal, "-w", str(ws))
    try:
        wait_for(lambda: len(server.chat_requests) == waiting)
    finally:
        proc.kill()
        proc.communicate(timeout=30)
    resumed = run_cli(env, "resume", "-w", str(ws), "--foreground")
    assert resumed.returncode == 0, resumed.stderr
    return server.chat_requests


def test_a_resumed_runs_first_prompt_is_the_one_the_crashed_run_sent(tmp_path: Path) -> None:
    """Killed (-9) while waiting for the model, then resumed: the first request is byte for
    byte the one the killed run was waiting on and the one a run never killed sends, so
    the server's prompt cache (which outlives the agent) serves it whole."""
    goal = ["start", "Write a.txt and b.txt", "--foreground"]
    whole = tmp_path / "whole"
    with FakeServer(cut_off_run(stall=False)) as server:
        ended = run_cli(cli_env(server.url, OLLAMA_MODEL=MODEL), *goal, "-w", str(whole))
        assert ended.returncode == 0, ended.stderr
        never_killed = server.chat_requests
    killed = tmp_path / "killed"
    with FakeServer(cut_off_run(stall=True)) as server:
        sent = killed_and_resumed(server, goal, killed, 3)  # the plan, round 1, round 2
    assert "length cap" in json.dumps(never_killed[2]["messages"][-1])  # the notice it earned
    assert json.dumps(sent[3], sort_keys=True) == json.dumps(sent[2], sort_keys=True)
    assert json.dumps(sent[3], sort_keys=True) == json.dumps(never_killed[2], sort_keys=True)
    first = [r for r in records(killed) if r["type"] == "llm_call"][2]
    assert first["cached_tokens"] >= 0.8 * first["prompt_tokens"]


def test_a_full_window_drops_half_of_it_then_grows_by_appending(tmp_path: Path) -> None:
    """Twelve big results in a small context: past the budget the oldest exchanges go until
    half the room is free, then rounds append again. Most rounds are served from the cache;
    dropping a few exchanges every round would make every round past the budget a miss."""
    names = [f"f{i:02d}.txt" for i in range(12)]
    for name in names:
        (tmp_path / name).write_text(f"{name} " + "word " * 300 + "\n")
    replies = [call("read_file", path=name) for name in names]
    plan = plan_rule(("Read", ["Read the twelve files"]))
    cache = scenario(rules=[plan], replies=replies, default=done("read"), prompt_cache=True)
    with FakeServer(cache) as server:
        result = localagent.run_goal(
            "Read the twelve files", tmp_path, ollama_host=server.url, model=MODEL,
            num_ctx=6144, num_predict=512, history_keep=20, verify=False, retry_deadline=0,
        )  # fmt: skip
        assert result.status == "completed", result.reason
    rounds = [r for r in records(tmp_path) if r.get("purpose") == "round"]
    starts = [r["window"] for r in rounds]
    assert starts == sorted(starts) and starts[-1] > 0 and len(set(starts)) <= 2, starts
    read = [r["prompt_tokens"] - r["cached_tokens"] for r in rounds]
    # A round whose window did not move reads only what the last round appended (one
    # exchange of about 500 tokens and the facts); with the old window, shortening the
    # older results each round over budget made rounds read 700 to 3,000 tokens.
    kept = [n for i, n in enumerate(read[1:], 1) if starts[i] == starts[i - 1]]
    assert len(kept) >= len(rounds) - 2 and max(kept) <= 600, read


def written(name: str, **arguments: Any) -> dict[str, Any]:
    """A reply holding one call written in its text, as Qwen2.5-Coder-1.5B writes them."""
    return {"content": "{" + json.dumps({"name": name, "arguments": arguments}) + "}"}


@pytest.mark.parametrize("backend", BACKENDS)
def test_calls_written_in_the_text_go_back_as_written_so_the_reply_stays_cached(
    tmp_path: Path, backend: str
) -> None:
    """A server holds the reply it generated after the prompt. Calls the model wrote in
    its text went back as the server's own calls too, rendered anew after the text and
    read again every round (a write: its whole content); now the reply goes back as it
    was written, each result after it as a message of its own, and the next round reads
    only what is new. Calls the server itself parsed still go back as its calls."""
    replies = [
        written("write_file", path="a.txt", content="A\n" * 200),
        done("a.txt written"),  # a call of the server's own
        written("write_file", path="b.txt", content="B\n"),
        written("mark_subtask_complete", success=True, reason="b.txt written"),
    ]
    fields = {**TWO_FILES, "replies": replies}
    with FakeServer(scenario(**fields)) as fake:
        where = {"base_url": fake.url + "/v1"} if backend == "openai" else {}
        result = localagent.run_goal(
            "Write a.txt and b.txt", tmp_path, ollama_host=fake.url, model=MODEL,
            backend=backend, checks=[], **where,
        )  # fmt: skip
        sent = fake.chat_requests
    assert result.status == "completed", result.reason
    assert (tmp_path / "a.txt").read_text() == "A\n" * 200
    rounds = [r for r in sent if not (r.get("format") or r.get("response_format"))]
    after_write = rounds[1]["messages"]
    reply = next(i for i, m in enumerate(after_write) if m["role"] == "assistant")
    assert after_write[reply] == {"role": "assistant", "content": replies[0]["content"]}
    assert after_write[reply + 1]["role"] == "user"
    assert after_write[reply + 1]["content"].startswith("[result of write_file]\n")
    native = rounds[2]["messages"]
    answered = next(i for i, m in enumerate(native) if m.get("tool_calls"))
    assert native[answered + 1]["role"] == "tool"
    calls = [r for r in records(tmp_path) if r["type"] == "llm_call" and r["purpose"] == "round"]
    # The round after the 400-character write reads its result and facts, not the write.
    new = len(json.dumps(after_write[reply + 1 :])) // CHARS_PER_TOKEN
    assert calls[1]["prompt_tokens"] - calls[1]["cached_tokens"] <= new + 8, calls[1]


def test_a_repeated_output_is_read_once_and_named_by_its_round(tmp_path: Path) -> None:
    """Qwen2.5-Coder-1.5B ran a failing `python -m pytest` twice before each blocked
    third, nothing changed between: the second run's 400-500 tokens of output were the same
    words, read again by the engine. The second result names the round that gave it."""
    lines = [f"print('line {i}: assert compute({i}) == {i * i}')" for i in range(30)]
    (tmp_path / "fail.py").write_text("\n".join([*lines, "raise SystemExit(1)"]) + "\n")
    replies = [call("run_cmd", cmd="python fail.py")] * 2
    replies.append(call("read_file", path="fail.py"))
    plan = plan_rule(("Check", ["Run fail.py and read it"]))
    cache = scenario(rules=[plan], replies=replies, default=done("read"), prompt_cache=True)
    with FakeServer(cache) as server:
        localagent.run_goal(
            "Run fail.py and read it", tmp_path, ollama_host=server.url, model=MODEL,
            verify=False, retry_deadline=0,
        )  # fmt: skip
        sent = [r for r in server.chat_requests if r.get("tools")]
    results = [m["content"] for m in sent[3]["messages"] if m["role"] == "tool"]
    assert len(results) == 3 and "line 29: assert compute(29)" in results[0]
    assert results[1] == (
        "exit code 1\n(The same output, word for word, as this call gave in round 1, above.)"
    )
    assert "line 0" in results[2]  # a different call's result is shown whole
    before = json.dumps(sent[2]["messages"][:-1])  # without the facts sent last
    assert json.dumps(sent[3]["messages"]).startswith(before[:-1])  # appended to, unchanged
    rounds = [r for r in records(tmp_path) if r.get("purpose") == "round"]
    read = [r["prompt_tokens"] - r["cached_tokens"] for r in rounds]
    assert read[2] * 3 < read[1], read  # the repeat's round read a line, not the output


def test_a_task_that_restates_the_goal_is_not_read_twice_every_round(tmp_path: Path) -> None:
    """A small model's one-task plan repeats the goal as its task (the 1.5B's mathx plan,
    with a comma and a full stop added): 60 tokens in every round's prompt twice, and its
    first round read 1,561 tokens. The plan names it as the goal."""
    goal = "Write a.txt holding the letter A, then b.txt holding the letter B, both in one go"
    restated = goal.replace("A, then", "A then") + "."
    scripted = {**TWO_FILES, "rules": [plan_rule((restated, ["Write a.txt", "Write b.txt"]))]}
    with FakeServer(scenario(**scripted)) as server:
        result = localagent.run_goal(
            goal, tmp_path, ollama_host=server.url, model=MODEL, checks=[], profile="small"
        )
        assert result.status == "completed", result.reason
        rounds = [r for r in server.chat_requests if r.get("tools")]
    summary = rounds[0]["messages"][1]["content"]
    assert summary.startswith(f"GOAL: {goal}\n\nPLAN:\n1. The goal above.\n    1.1. Write a.txt\n")
    assert summary.count("letter B") == 1


def test_a_verdict_cut_by_a_kill_is_asked_again_as_it_was(tmp_path: Path) -> None:
    """Killed (-9) while waiting for the verdict, then resumed: the verdict request is
    rebuilt from the journal byte for byte, so the server's cache serves all of it."""
    stalled = {"content": VERIFIED_REPLY, "delay": 30}
    verdicts = [{"kind": "verify", "times": 1, "reply": stalled}]
    cache = {**TWO_FILES, "rules": TWO_FILES["rules"] + verdicts}
    goal = ["start", "Write a.txt and b.txt", "--foreground"]
    with FakeServer(scenario(**cache)) as server:
        sent = killed_and_resumed(server, goal, tmp_path, 6)  # the plan, 4 rounds, the verdict
    assert len(sent) == 7 and kinds_of(sent)[-2:] == ["verify", "verify"]
    assert json.dumps(sent[6], sort_keys=True) == json.dumps(sent[5], sort_keys=True)
    last = [r for r in records(tmp_path) if r["type"] == "llm_call"][-1]
    assert last["purpose"] == "verify"
    assert last["cached_tokens"] >= 0.95 * last["prompt_tokens"]
