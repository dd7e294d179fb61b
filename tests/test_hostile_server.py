"""A model server that is not on our side, through both adapters and the real CLI.

Absurd numbers (token counts, context lengths, model sizes) are not believed; an answer
is bounded in bytes and in time whatever its framing: one line that never ends, keep-alive
comments forever, a byte at a time, bytes that come just often enough to keep a read
alive. Each test guards itself: a regression stops the server instead of taking the
machine's memory or the suite's time.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest
from support import backend_env, call, done, plan_rule, records, run_cli, start_cli

from localagent.config.settings import Settings
from localagent.models import Model, Reply, make_model
from localagent.models.config import ModelConfig
from localagent.models.fake import FakeServer
from localagent.system.errors import ModelUnavailable

MODEL = "coder:7b"
HELLO = [{"role": "user", "content": "hello"}]
BACKENDS = ("ollama", "openai")
HUGE = 10**30
MIB = 1 << 20
CEILING = 400 * MIB  # past this much more memory the guard stops the server: a regression


def scenario(reply: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"models": [{"name": MODEL, "context_length": 8192}], "default": reply, **fields}


def model_for(backend: str, url: str, **settings: Any) -> Model:
    where = {"base_url": url + "/v1"} if backend == "openai" else {"ollama_host": url}
    values = {"backend": backend, "model": MODEL, "retry_deadline": 0.0, **where, **settings}
    return make_model(ModelConfig.of(Settings(**values)))


class Guarded:
    """What a call did: its reply or error, how long it took, how much memory it added."""

    def __init__(self) -> None:
        self.reply: Reply | None = None
        self.error: BaseException | None = None
        self.seconds = 0.0
        self.growth = 0


def guarded(call_: Callable[[], Reply], server: FakeServer, seconds: float = 12) -> Guarded:
    """Run `call_` on a thread, sampling this process's memory; past CEILING or `seconds`
    the server is stopped, which ends any stream the call is still reading."""
    me, seen = psutil.Process(), Guarded()
    base = peak = me.memory_info().rss
    started = time.monotonic()

    def target() -> None:
        try:
            seen.reply = call_()
        except BaseException as exc:  # reported to the test
            seen.error = exc
        seen.seconds = time.monotonic() - started

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    while worker.is_alive():
        peak = max(peak, me.memory_info().rss)
        if peak - base > CEILING or time.monotonic() - started > seconds:
            server.stop()
        worker.join(0.01)
    seen.growth = peak - base
    return seen


# ---- numbers -------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_absurd_token_counts_are_not_believed(backend: str) -> None:
    reply = {"content": "ok", "prompt_eval_count": HUGE, "eval_count": HUGE}
    with FakeServer(scenario(reply)) as server:
        got = model_for(backend, server.url).chat(HELLO)
    assert (got.content, got.prompt_tokens, got.completion_tokens) == ("ok", 0, 0)
    assert json.dumps(got.usage())  # plain numbers, as the journal writes them


def test_absurd_context_lengths_and_sizes_are_not_believed() -> None:
    # A name with no size in it: an OpenAI-compatible server's silence falls back on the name.
    models = [{"name": "coder", "context_length": HUGE, "parameter_size": "999999999999999T"}]
    with FakeServer({"models": models, "llama_cpp": True}) as server:
        for backend in BACKENDS:
            model = model_for(backend, server.url, num_ctx=4096, model="coder:latest")
            info = model.preflight()
            assert (info.context_length, info.parameters, model.num_ctx) == (None, None, 4096)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_embedding_past_any_float_is_a_garbled_answer(backend: str) -> None:
    vector = "[1" + "0" * 400 + "]"
    body = f'{{"data": [{{"index": 0, "embedding": {vector}}}]}}'
    if backend == "ollama":
        body = f'{{"embeddings": [{vector}]}}'
    with FakeServer(scenario({"content": "?"}, embed_body=body)) as server:
        model = model_for(backend, server.url, embed_model=MODEL)
        with pytest.raises(ModelUnavailable, match="could not be read"):
            model.embed(["x"])


def test_a_journal_of_absurd_counts_stays_readable(tmp_path: Path) -> None:
    """Through the CLI: the run completes, its records hold no number past the bound,
    and `status` reads the journal."""
    absurd = {"prompt_eval_count": HUGE, "eval_count": HUGE}
    rules = [plan_rule(("Write a.txt", ["write a.txt"]))]
    replies = [{**call("write_file", path="a.txt", content="A"), **absurd}, {**done(), **absurd}]
    with FakeServer(scenario({"content": "?"}, rules=rules, replies=replies)) as server:
        env = backend_env("ollama", server.url, OLLAMA_MODEL=MODEL)
        ended = run_cli(env, "start", "Write a.txt", "-w", str(tmp_path), "--foreground")
        assert ended.returncode == 0, ended.stderr
    rounds = [r for r in records(tmp_path) if r.get("purpose") == "round"]
    assert [(r["prompt_tokens"], r["completion_tokens"]) for r in rounds] == [(0, 0), (0, 0)]
    status = run_cli(env, "status", "-w", str(tmp_path), "--json")
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["status"] == "completed"


# ---- bytes ---------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_line_that_never_ends_is_cut_at_the_byte_bound(backend: str) -> None:
    with FakeServer(scenario({"endless_line": True})) as server:
        model = model_for(backend, server.url, num_predict=16, retry_deadline=1.5)
        seen = guarded(lambda: model.chat(HELLO), server)
    assert seen.growth < 64 * MIB, f"the reply took {seen.growth / MIB:.0f} MiB"
    assert isinstance(seen.error, ModelUnavailable), seen.error
    assert "its answer passed 4.0 MiB" in seen.error.message
    assert "does it honour num_predict" in seen.error.message
    assert seen.seconds < 5


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_reply_past_the_byte_bound_is_kept_cut_off(backend: str) -> None:
    """Whole chunks as fast as the server can send them: what came is the reply."""
    reply = {"content": "partial", "endless": True, "chunk_delay": 0}
    with FakeServer(scenario(reply)) as server:
        seen = guarded(lambda: model_for(backend, server.url, num_predict=16).chat(HELLO), server)
    assert seen.error is None, seen.error
    assert seen.reply is not None and seen.reply.cut_off == "length"
    assert seen.reply.content == "partial"
    assert seen.growth < 64 * MIB


# ---- time ----------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_keep_alives_forever_end_at_the_call_deadline(backend: str) -> None:
    with FakeServer(scenario({"keepalive": 10**6, "chunk_delay": 0.02})) as server:
        model = model_for(backend, server.url, call_deadline=1.0)
        seen = guarded(lambda: model.chat(HELLO), server)
    assert isinstance(seen.error, ModelUnavailable), seen.error
    assert "no complete answer within 1 s" in seen.error.message
    assert seen.seconds < 2.5


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_byte_at_a_time_ends_at_the_call_deadline(backend: str) -> None:
    with FakeServer(scenario({"content": "slowly", "drip": True, "chunk_delay": 0.05})) as server:
        model = model_for(backend, server.url, call_deadline=1.0)
        seen = guarded(lambda: model.chat(HELLO), server)
    assert isinstance(seen.error, ModelUnavailable), seen.error
    assert seen.seconds < 2.5


def test_the_deadline_holds_between_bytes_that_keep_a_read_alive() -> None:
    """A keep-alive every 1.9 s never lets a read time out and never reaches the clock
    check in time: the connection is cut at the deadline."""
    with FakeServer(scenario({"keepalive": 10**6, "chunk_delay": 1.9})) as server:
        model = model_for("ollama", server.url, call_deadline=2.0, request_timeout=30)
        seen = guarded(lambda: model.chat(HELLO), server)
    assert isinstance(seen.error, ModelUnavailable), seen.error
    assert seen.seconds < 3.2


def test_a_reply_still_coming_at_the_deadline_is_kept_cut_off() -> None:
    with FakeServer(scenario({"content": "thinking", "endless": True})) as server:
        model = model_for("openai", server.url, call_deadline=1.0)
        seen = guarded(lambda: model.chat(HELLO), server)
    assert seen.error is None and seen.reply is not None, seen.error
    assert (seen.reply.content, seen.reply.cut_off) == ("thinking", "deadline")
    assert seen.seconds < 2.5


# ---- the CLI -------------------------------------------------------------------------


def watched(env: dict[str, str], workspace: Path) -> dict[str, Any]:
    """A foreground start to its end, its peak memory sampled; killed past CEILING or 30 s."""
    agent = start_cli(env, "start", "Write a.txt", "-w", str(workspace), "--foreground")
    seen: dict[str, Any] = {"peak": 0}
    started = time.monotonic()
    try:
        process = psutil.Process(agent.pid)
        while agent.poll() is None:
            with contextlib.suppress(psutil.Error):  # it ended between the two looks
                seen["peak"] = max(seen["peak"], process.memory_info().rss)
            if seen["peak"] > CEILING or time.monotonic() - started > 30:
                agent.kill()
            time.sleep(0.01)
        _, seen["stderr"] = agent.communicate(timeout=30)
    finally:
        if agent.poll() is None:
            agent.kill()
    seen["code"], seen["seconds"] = agent.returncode, time.monotonic() - started
    return seen


@pytest.mark.parametrize(
    ("backend", "reply", "reason"),
    [
        ("openai", {"endless_line": True}, "its answer passed 4.0 MiB"),
        ("ollama", {"keepalive": 10**6, "chunk_delay": 0.05}, "no complete answer within 1 s"),
    ],
)
def test_a_run_against_a_hostile_server_ends_with_its_reason_journaled(
    tmp_path: Path, backend: str, reply: dict[str, Any], reason: str
) -> None:
    with FakeServer(scenario(reply)) as server:
        env = backend_env(
            backend,
            server.url,
            OLLAMA_MODEL=MODEL,
            LOCALAGENT_NUM_PREDICT="16",
            LOCALAGENT_CALL_DEADLINE="1",
            LOCALAGENT_REQUEST_TIMEOUT="1",
            LOCALAGENT_RETRY_DEADLINE="2.5",
        )
        seen = watched(env, tmp_path)
    assert "Traceback" not in seen["stderr"] and "internal error" not in seen["stderr"]
    assert seen["code"] == 3, seen["stderr"]
    assert reason in seen["stderr"] and server.url in seen["stderr"]
    assert seen["peak"] < 250 * MIB, f"the agent took {seen['peak'] / MIB:.0f} MiB"
    assert seen["seconds"] < 15
    waiting = [r for r in records(tmp_path) if r["type"] == "waiting"]
    assert waiting and reason in waiting[0]["reason"]
