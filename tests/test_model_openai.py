"""The OpenAI-compatible adapter against the scripted server's /v1 endpoints."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from support import backend_env, call, cli_env, closed_port, done, plan_rule, records, run_cli

from localagent.config.settings import Settings
from localagent.loop import planner
from localagent.models import make_model
from localagent.models.calls import function_tools
from localagent.models.config import ModelConfig
from localagent.models.fake import FakeServer
from localagent.models.openai import OpenAIModel
from localagent.system.errors import AgentError, ModelUnavailable
from localagent.textcalls import UNPARSED, ToolCall
from localagent.tools import catalog

MODEL = "coder:7b"
HELLO = [{"role": "user", "content": "hello"}]


def scenario(**fields: Any) -> dict[str, Any]:
    return {"models": [{"name": MODEL, "context_length": 4096}], **fields}


def model_for(url: str, delays: list[float] | None = None, **settings: Any) -> OpenAIModel:
    values = {
        "backend": "openai",
        "base_url": url + "/v1",
        "model": MODEL,
        "retry_deadline": 5.0,
        **settings,
    }
    model = make_model(ModelConfig.of(Settings(**values)))
    assert isinstance(model, OpenAIModel)
    if delays is not None:
        model.wait = delays.append
    return model


def test_preflight_reads_the_context_size_and_caps_num_ctx() -> None:
    with FakeServer(scenario(default={"content": "hi"})) as server:
        model = model_for(server.url, num_ctx=8192)
        assert model.preflight().context_length == 4096 and model.num_ctx == 4096
        assert model.backend == "openai"
        model.chat(HELLO)
        assert "cache_prompt" not in server.chat_requests[0]


def test_llama_cpp_props_give_the_context_and_turn_on_prompt_caching() -> None:
    models = [{"name": "whatever.gguf", "context_length": 2048}]
    with FakeServer({"models": models, "llama_cpp": True, "default": {"content": "hi"}}) as server:
        # llama-server serves its one model whatever name is asked for.
        model = model_for(server.url, model="whatever.gguf", num_ctx=8192)
        assert model.preflight().context_length == 2048 and model.num_ctx == 2048
        model.chat(HELLO)
        assert server.chat_requests[0]["cache_prompt"] is True


def test_lm_studio_names_the_context_its_model_is_loaded_with() -> None:
    """LM Studio's /v1/models says nothing of context; its /api/v0 does."""
    models = [{"name": "qwen3-coder:30b", "context_length": 32768}]
    with FakeServer({"models": models, "lm_studio": True}) as server:
        model = model_for(server.url, model="qwen3-coder:30b", num_ctx=8192)
        assert model.preflight().context_length == 4096 and model.num_ctx == 4096
        assert "max_model_len" not in str(server.requests)
    with FakeServer({"models": models}) as plain:  # vLLM's max_model_len; no /api/v0 asked
        model = model_for(plain.url, model="qwen3-coder:30b", num_ctx=8192)
        assert model.preflight().context_length == 32768 and model.num_ctx == 8192


def test_a_model_the_server_does_not_serve_is_named_with_what_it_serves() -> None:
    with FakeServer(scenario()) as server:
        model = model_for(server.url, model="absent:1b")
        with pytest.raises(ModelUnavailable, match=r"absent:1b.*it serves: coder:7b"):
            model.preflight()
        with pytest.raises(ModelUnavailable, match="OLLAMA_MODEL"):
            model.chat(HELLO)


def test_a_base_url_without_the_api_says_to_check_it() -> None:
    with FakeServer(scenario()) as server:
        model = make_model(
            ModelConfig.of(
                Settings(backend="openai", base_url=server.url, model=MODEL, retry_deadline=1)
            )
        )
        with pytest.raises(ModelUnavailable, match=r"LOCALAGENT_BASE_URL.*/v1"):
            model.preflight()


def test_a_server_that_is_down_is_retried_then_named() -> None:
    delays: list[float] = []
    model = model_for(f"http://127.0.0.1:{closed_port()}", delays, retry_deadline=2.5)
    started = time.monotonic()
    with pytest.raises(ModelUnavailable, match="LOCALAGENT_BASE_URL"):
        model.chat(HELLO)
    assert delays[:1] == [1.0] and time.monotonic() - started < 5
    assert model.health().up is False


def test_tool_calls_arrive_in_pieces_with_the_servers_ids() -> None:
    replies = [
        {"content": "writing", **call("write_file", path="a.py", content="print(1)\n")},
        {"tool_calls": [{"name": "list_dir", "arguments": '{"path": "src"}'}], "eval_count": 7},
        {"tool_calls": [{"name": "read_file", "arguments": "{broken"}]},
    ]
    with FakeServer(scenario(replies=replies)) as server:
        model = model_for(server.url)
        first = model.chat(HELLO, tools=catalog().specs())
        assert first.content == "writing"
        assert first.tool_calls == [
            ToolCall("write_file", {"path": "a.py", "content": "print(1)\n"}, "call0001x0")
        ]
        second = model.chat(HELLO, tools=catalog().specs())
        assert second.tool_calls[0].arguments == {"path": "src"}
        assert second.completion_tokens == 7 and second.prompt_tokens > 0
        third = model.chat(HELLO, tools=catalog().specs())
        assert third.tool_calls[0].arguments == {UNPARSED: "{broken"}
        assert server.chat_requests[0]["tools"] == function_tools(catalog().specs())


def test_past_exchanges_go_back_with_matching_call_ids() -> None:
    calls = [{"id": "call0001x0", "name": "list_dir", "arguments": {"path": "."}}]
    history = [
        *HELLO,
        {"role": "assistant", "content": "", "tool_calls": calls},
        {"role": "tool", "content": "a.txt", "tool": "list_dir", "call": "call0001x0"},
    ]
    with FakeServer(scenario(default={"content": "ok"})) as server:
        model = model_for(server.url)
        assert model.chat(history).content == "ok"
        sent = server.chat_requests[0]["messages"]
        assert sent[1]["tool_calls"][0]["function"] == {
            "name": "list_dir",
            "arguments": '{"path": "."}',
        }
        assert sent[2] == {"role": "tool", "tool_call_id": "call0001x0", "content": "a.txt"}
        # A strict server refuses a result that answers no call: our bug, said plainly.
        stray = [*history[:2], {**history[2], "call": "other"}]
        with pytest.raises(AgentError, match=r"HTTP 400.*tool_call_id"):
            model.chat(stray)


def test_a_server_without_tools_is_driven_by_the_text_protocol_once() -> None:
    models = [{"name": MODEL, "capabilities": ["completion"]}]
    reply = {"content": '{"name": "list_dir", "arguments": {"path": "."}}'}
    with FakeServer({"models": models, "default": reply}) as server:
        delays: list[float] = []
        model = model_for(server.url, delays)
        model.preflight()
        answer = model.chat(HELLO, tools=catalog().specs())
        assert "list_dir" in answer.content and model.native_tools is False
        assert "--jinja" in model.tools_note and "--jinja" in model.tools_fix
        model.chat(HELLO, tools=catalog().specs())
        assert [bool(r.get("tools")) for r in server.chat_requests] == [True, False, False]
        assert delays == []  # a refusal is not a server failure to wait out


def test_plans_use_response_format_and_fall_back_to_the_schema_in_the_prompt() -> None:
    plan = {"tasks": [{"description": "Write it", "subtasks": ["Write a.py"]}]}
    rule = {"kind": "plan", "reply": {"content": json.dumps(plan)}}
    prompt_rule = {"match": "JSON schema", "in": "last", "reply": {"content": json.dumps(plan)}}
    with FakeServer(scenario(rules=[rule])) as server:
        tasks = planner.Planner(model_for(server.url)).decompose("goal", lambda reply: None)
        assert tasks == plan["tasks"]
        sent = server.chat_requests[0]["response_format"]
        assert sent["json_schema"]["schema"] == planner.PLAN_SCHEMA
    with FakeServer(scenario(rules=[prompt_rule], response_format=False)) as server:
        model = model_for(server.url)
        assert planner.Planner(model).decompose("goal", lambda reply: None) == plan["tasks"]
        first, second = server.chat_requests
        assert "response_format" in first and "response_format" not in second
        # after the last message: the system prompt, the front every call shares, is kept
        assert json.dumps(planner.PLAN_SCHEMA) in second["messages"][-1]["content"]
        assert second["messages"][0] == first["messages"][0]


def test_streams_that_break_are_retried_and_cut_offs_are_said() -> None:
    replies = [
        {"content": "a long answer cut short", "drop": True},
        {"content": "half", "error_line": "slot crashed"},
        {"content": "whole", "done_reason": "length"},
    ]
    with FakeServer(scenario(replies=replies)) as server:
        delays: list[float] = []
        reply = model_for(server.url, delays).chat(HELLO)
        assert (reply.content, reply.cut_off) == ("whole", "length")
        assert delays == [1.0, 2.0]


def test_a_server_that_does_not_stream_is_read_whole() -> None:
    # As a server that ignores `stream` would answer: one JSON body.
    reply = {**call("list_dir", path="."), "whole": True}
    with FakeServer(scenario(default=reply)) as server:
        found = model_for(server.url).chat(HELLO, tools=catalog().specs())
        assert found.tool_calls == [ToolCall("list_dir", {"path": "."}, "call0001x0")]


def test_the_api_key_comes_from_the_environment_only(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeServer(scenario(api_key="sk-local", default={"content": "ok"})) as server:
        monkeypatch.delenv("LOCALAGENT_API_KEY", raising=False)
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        with pytest.raises(AgentError, match=r"401.*LOCALAGENT_API_KEY"):
            model_for(server.url).chat(HELLO)
        with pytest.raises(AgentError, match=r"401.*LOCALAGENT_API_KEY"):
            model_for(server.url).preflight()
        monkeypatch.setenv("OPENAI_API_KEY", "sk-local")
        assert model_for(server.url).chat(HELLO).content == "ok"
        monkeypatch.setenv("LOCALAGENT_API_KEY", "sk-local")
        monkeypatch.setenv("OPENAI_API_KEY", "wrong")
        model = model_for(server.url)
        assert model.health().up and model.chat(HELLO).content == "ok"
        assert "sk-local" not in repr(model.config)


def test_a_goal_started_on_ollama_resumes_on_an_openai_compatible_server(tmp_path: Any) -> None:
    """`resume --backend openai` moves a goal to another server; the change is journaled
    and the next plain resume keeps it."""
    down = cli_env(f"http://127.0.0.1:{closed_port()}", LOCALAGENT_RETRY_DEADLINE="1")
    first = run_cli(down, "start", "Write hello.py", "-w", str(tmp_path), "--foreground")
    assert first.returncode == 3, first.stderr
    scenario = {
        "rules": [plan_rule(("Hello", ["Write hello.py"]))],
        "replies": [call("write_file", path="hello.py", content="print('hi')\n")],
        "default": done("written"),
    }
    with FakeServer(scenario) as server:
        env = backend_env("openai", server.url, LOCALAGENT_VERIFY="0")
        env.pop("LOCALAGENT_BACKEND")
        bad = run_cli(env, "resume", "-w", str(tmp_path), "--backend", "grpc")
        resumed = run_cli(env, "resume", "-w", str(tmp_path), "--foreground", "--backend", "openai")
        bodies = server.chat_requests
    assert bad.returncode == 2 and "backend" in bad.stderr, bad.stderr
    assert resumed.returncode == 0, resumed.stderr
    assert (tmp_path / "hello.py").read_text() == "print('hi')\n"
    assert bodies and all("options" not in body and "stream" in body for body in bodies)
    kinds = {r["type"]: r for r in records(tmp_path)}
    assert kinds["goal_started"]["settings"]["backend"] == "ollama"
    # The flag, and the server the run now talks to (journaled for the next resume).
    assert kinds["resumed"]["settings"] == {"backend": "openai", "base_url": server.url + "/v1"}
    assert kinds["preflight"]["backend"] == "openai"
