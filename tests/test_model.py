"""The Ollama adapter against the scripted server, through the real `ollama` client."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from support import call, closed_port

from localagent.config.settings import Settings
from localagent.loop.planner import PLAN_SCHEMA
from localagent.models.config import ModelConfig
from localagent.models.fake import FakeServer
from localagent.models.ollama import OllamaModel, normalize_host
from localagent.system.errors import AgentError, ModelUnavailable
from localagent.textcalls import UNPARSED, ToolCall
from localagent.tools import catalog

MODEL = "coder:7b"
HELLO = [{"role": "user", "content": "hello"}]


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("0.0.0.0", "http://127.0.0.1:11434"),
        ("0.0.0.0:11434", "http://127.0.0.1:11434"),
        ("localhost", "http://localhost:11434"),
        ("http://host:1234/", "http://host:1234"),
        ("[::]:11434", "http://127.0.0.1:11434"),
        ("", "http://127.0.0.1:11434"),
        ("  192.168.1.5:9000  ", "http://192.168.1.5:9000"),
        ("https://models.example.com:8443/ollama/", "https://models.example.com:8443/ollama"),
        ("[::1]:11434", "http://[::1]:11434"),
        # A URL without a port means its scheme's port, as the ollama CLI reads it.
        ("http://localhost", "http://localhost:80"),
        ("https://models.example.com/", "https://models.example.com:443"),
    ],
)
def test_normalize_host(given: str, expected: str) -> None:
    assert normalize_host(given) == expected


@pytest.fixture
def fake(request: pytest.FixtureRequest) -> Iterator[FakeServer]:
    scenario = getattr(request, "param", None) or {"models": [{"name": MODEL}]}
    with FakeServer(scenario) as server:
        yield server


def model_for(server_url: str, delays: list[float] | None = None, **settings: Any) -> OllamaModel:
    values = {"ollama_host": server_url, "model": MODEL, "retry_deadline": 5.0, **settings}
    wait = delays.append if delays is not None else time.sleep
    return OllamaModel(ModelConfig.of(Settings(**values)), wait=wait)


def scenario(**fields: Any) -> dict[str, Any]:
    return {"models": [{"name": MODEL, "context_length": 4096}], **fields}


def test_preflight_caps_num_ctx_at_the_models_context_length() -> None:
    with FakeServer(scenario()) as server:
        small = model_for(server.url, num_ctx=8192)
        info = small.preflight()
        assert (info.context_length, small.num_ctx, small.native_tools) == (4096, 4096, True)
        roomy = model_for(server.url, num_ctx=2048)
        roomy.preflight()
        assert roomy.num_ctx == 2048


def test_preflight_sees_a_model_without_tools() -> None:
    models = [{"name": MODEL, "capabilities": ["completion"]}]
    with FakeServer({"models": models, "default": {"content": "hi"}}) as server:
        model = model_for(server.url)
        assert model.preflight().capabilities == ["completion"]
        assert model.native_tools is False
        model.chat(HELLO, tools=catalog().specs())
        assert not server.chat_requests[0].get("tools")


def test_a_missing_model_says_how_to_pull_it(fake: FakeServer) -> None:
    model = model_for(fake.url, model="absent:1b")
    with pytest.raises(ModelUnavailable, match=r"ollama pull absent:1b"):
        model.preflight()
    with pytest.raises(ModelUnavailable, match=r"ollama pull absent:1b"):
        model.chat(HELLO)


def test_a_server_that_is_down_is_reported_quickly_with_its_host() -> None:
    port = closed_port()
    delays: list[float] = []
    model = model_for(f"127.0.0.1:{port}", delays, retry_deadline=0.5)
    started = time.monotonic()
    with pytest.raises(ModelUnavailable, match=rf"127\.0\.0\.1:{port}") as caught:
        model.preflight()
    assert time.monotonic() - started < 3
    assert "ollama serve" in caught.value.message


def test_a_server_that_stays_down_is_retried_with_backoff_until_the_deadline() -> None:
    delays: list[float] = []
    model = model_for(f"127.0.0.1:{closed_port()}", delays, retry_deadline=20)
    with pytest.raises(ModelUnavailable):
        model.chat(HELLO)
    # The recorded waits took no time, so the deadline is reached only through
    # the real clock; every wait before it doubles.
    assert delays[:4] == [1.0, 2.0, 4.0, 8.0]


def test_a_server_error_is_retried_then_succeeds() -> None:
    replies = [{"status": 500, "error": "boom"}, {"content": "hello there"}]
    with FakeServer(scenario(replies=replies)) as server:
        delays: list[float] = []
        model = model_for(server.url, delays)
        reply = model.chat(HELLO)
        assert reply.content == "hello there"
        assert delays == [1.0]
        assert len(server.chat_requests) == 2


def test_a_dropped_stream_is_retried() -> None:
    replies = [{"content": "a long answer cut short", "drop": True}, {"content": "whole"}]
    with FakeServer(scenario(replies=replies)) as server:
        delays: list[float] = []
        assert model_for(server.url, delays).chat(HELLO).content == "whole"
        assert delays == [1.0]


def test_no_tool_support_switches_to_the_text_protocol_and_retries() -> None:
    # Older servers report no capabilities, so only the chat refusal reveals it.
    models = [{"name": MODEL, "capabilities": []}]
    reply = {"content": '```json\n{"name": "list_dir", "arguments": {"path": "."}}\n```'}
    with FakeServer({"models": models, "default": reply}) as server:
        model = model_for(server.url)
        model.preflight()
        assert model.native_tools is True
        answer = model.chat(HELLO, tools=catalog().specs())
        assert "list_dir" in answer.content
        assert model.native_tools is False
        first, second = server.chat_requests
        assert first["tools"] and not second.get("tools")
        model.chat(HELLO, tools=catalog().specs())
        assert not server.chat_requests[2].get("tools")


def test_tool_arguments_sent_as_a_json_string_are_recovered() -> None:
    text_args = '{"path": "notes.txt", "content": "x"}'
    # The official client's models refuse this answer; the stream is read leniently, so
    # the first reply is used: no second generation, and its tokens are counted.
    rule = {
        "times": 1,
        "reply": {
            "tool_calls": [{"name": "write_file", "arguments": text_args}],
            "eval_count": 12,
        },
    }
    after = call("list_dir", path=".")
    with FakeServer(scenario(rules=[rule], replies=[after])) as server:
        model = model_for(server.url)
        reply = model.chat(HELLO, tools=catalog().specs())
        assert reply.tool_calls == [ToolCall("write_file", {"path": "notes.txt", "content": "x"})]
        assert reply.completion_tokens == 12
        assert len(server.chat_requests) == 1
        assert server.chat_requests[0].get("stream", True) is True
        assert model.chat(HELLO, tools=catalog().specs()).tool_calls == [
            ToolCall("list_dir", {"path": "."})
        ]


def test_unparseable_string_arguments_reach_the_tools_as_a_readable_error() -> None:
    rule = {"reply": {"tool_calls": [{"name": "write_file", "arguments": "{broken"}]}}
    with FakeServer(scenario(rules=[rule])) as server:
        reply = model_for(server.url).chat(HELLO, tools=catalog().specs())
        assert reply.tool_calls == [ToolCall("write_file", {UNPARSED: "{broken"})]


def test_lone_surrogates_from_the_server_become_encodable_text() -> None:
    reply = {"content": "half \ud800 a pair", **call("write_file", path="a\udfff.txt", content="x")}
    with FakeServer(scenario(default=reply)) as server:
        answer = model_for(server.url).chat(HELLO, tools=catalog().specs())
    orjson.dumps([answer.content, answer.tool_calls[0].arguments])  # what the journal does
    assert answer.content.startswith("half ") and answer.content.endswith(" a pair")
    assert answer.tool_calls[0].arguments["content"] == "x"


def test_num_ctx_and_temperature_are_identical_on_every_call() -> None:
    plan = '{"tasks": [{"description": "d", "subtasks": ["s"]}]}'
    replies = [
        {"content": plan},
        {"status": 503, "error": "loading"},
        call("list_dir", path="."),
        {"content": "plain"},
    ]
    with FakeServer(scenario(replies=replies)) as server:
        model = model_for(server.url, [], num_ctx=16384, temperature=0.35)
        model.preflight()
        model.chat(HELLO, schema=PLAN_SCHEMA)
        model.chat(HELLO, tools=catalog().specs())
        model.chat(HELLO)
        requests = server.chat_requests
        assert len(requests) == 4
        options = {"num_ctx": 4096, "temperature": 0.35, "num_predict": 2048}
        assert all(r["options"] == options for r in requests)
        assert requests[0]["format"] == PLAN_SCHEMA and not requests[0].get("tools")


def test_thinking_is_kept_out_of_the_reply_and_tokens_are_counted() -> None:
    reply = {"thinking": "SECRET REASONING", "content": "answer", "prompt_eval_count": 321}
    with FakeServer(scenario(default=reply | {"eval_count": 7})) as server:
        answer = model_for(server.url).chat(HELLO)
        assert answer.content == "answer"
        assert (answer.prompt_tokens, answer.completion_tokens) == (321, 7)
        assert answer.duration_ms > 0


def test_a_server_that_always_refuses_tools_does_not_spin() -> None:
    refusal = {"status": 400, "error": "registry.ollama.ai/library/x does not support tools"}
    with FakeServer(scenario(default=refusal)) as server:
        model = model_for(server.url)
        with pytest.raises(AgentError, match="refused the request"):
            model.chat(HELLO, tools=catalog().specs())
        assert len(server.chat_requests) == 2  # with tools, then once without


def test_a_busy_server_is_waited_out() -> None:
    replies = [{"status": 429, "error": "server busy, please try again"}, {"content": "ok"}]
    with FakeServer(scenario(replies=replies)) as server:
        delays: list[float] = []
        reply = model_for(server.url, delays).chat(HELLO)
    assert reply.content == "ok" and delays == [1.0]


@pytest.mark.parametrize(
    "reply",
    [
        {"body": "<html><body>Proxy login required</body></html>"},
        {"body": "\x00\x01garbage\xff", "content_type": "application/x-ndjson"},
        {"body": '{"message": "not a stream"}\n[1, 2]\n', "content_type": "application/x-ndjson"},
    ],
    ids=["html-page", "garbage", "not-ollama"],
)
def test_a_reply_that_is_not_ollama_is_a_server_error(reply: dict[str, Any]) -> None:
    with FakeServer(scenario(default=reply)) as server:
        model = model_for(server.url, retry_deadline=0)
        with pytest.raises(ModelUnavailable, match=r"could not be read|did not answer"):
            model.chat(HELLO, tools=catalog().specs())


def test_tool_calls_that_are_not_objects_reach_the_tools_as_mistakes() -> None:
    body = (
        '{"message": {"role": "assistant", "content": "", "tool_calls": ["write_file", 7]}}\n'
        '{"message": {"role": "assistant", "content": ""}, "done": true}\n'
    )
    with FakeServer(scenario(default={"body": body, "content_type": "application/x-ndjson"})) as s:
        reply = model_for(s.url).chat(HELLO, tools=catalog().specs())
    assert [c.name for c in reply.tool_calls] == ["write_file", "7"]
    assert all(UNPARSED in c.arguments for c in reply.tool_calls)
