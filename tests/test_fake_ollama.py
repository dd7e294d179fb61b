"""The scripted Ollama server, driven through the real `ollama` client on loopback."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import ollama
import pydantic
import pytest

from localagent.models.fake import FakeServer, load_scenario, main, validate_scenario

MODEL = "gpt-oss:20b"
REPO = Path(__file__).resolve().parents[1]
HELLO = REPO / "localagent" / "scenarios" / "hello.json"
VERDICT_SCHEMA = {"type": "object", "properties": {"verdict": {"type": "string"}}}
PLAN_SCHEMA = {
    "type": "object",
    "properties": {"tasks": {"type": "array"}},
    "required": ["tasks"],
}

Serve = Callable[..., FakeServer]


@pytest.fixture
def serve() -> Iterator[Serve]:
    started: list[FakeServer] = []

    def start(scenario: dict[str, Any] | Path, **kwargs: Any) -> FakeServer:
        fake = FakeServer(scenario, **kwargs).start()
        started.append(fake)
        return fake

    yield start
    for fake in started:
        fake.stop()


def client(fake: FakeServer, timeout: float = 5) -> ollama.Client:
    return ollama.Client(host=fake.url, timeout=timeout, trust_env=False)


def ask(fake: FakeServer, text: str = "hi", **kwargs: Any) -> ollama.ChatResponse:
    return client(fake).chat(MODEL, [{"role": "user", "content": text}], **kwargs)


def test_root_version_and_tags(serve: Serve) -> None:
    fake = serve({"version": "0.11.0"})
    assert httpx.get(fake.url).text == "Ollama is running"
    head = httpx.head(fake.url)
    assert head.status_code == 200
    assert head.content == b""
    assert httpx.get(f"{fake.url}/api/version").json() == {"version": "0.11.0"}
    models = client(fake).list().models
    assert [m.model for m in models] == [MODEL]
    assert models[0].details is not None
    assert models[0].details.family == "gptoss"


def test_show_reports_capabilities_and_context_length(serve: Serve) -> None:
    fake = serve({"models": [{"name": "qwen3", "context_length": 40960, "family": "qwen3"}]})
    shown = client(fake).show("qwen3:latest")
    assert shown.capabilities == ["completion", "tools"]
    assert shown.modelinfo is not None
    assert shown.modelinfo["general.architecture"] == "qwen3"
    assert shown.modelinfo["qwen3.context_length"] == 40960
    assert fake.requests == [{"model": "qwen3:latest"}]


def test_show_of_a_missing_model_is_404(serve: Serve) -> None:
    fake = serve({})
    with pytest.raises(ollama.ResponseError) as caught:
        client(fake).show("llama3:8b")
    assert caught.value.status_code == 404
    assert caught.value.error == "model 'llama3:8b' not found"


def test_chat_answers_content_thinking_and_tool_calls(serve: Serve) -> None:
    reply = {
        "content": "writing it",
        "thinking": "I should write the file.",
        "tool_calls": [{"name": "write_file", "arguments": {"path": "a.py", "content": "x"}}],
    }
    fake = serve({"replies": [reply]})
    answer = ask(fake, "x" * 40)
    assert answer.done is True
    assert answer.done_reason == "stop"
    assert answer.message.content == "writing it"
    assert answer.message.thinking == "I should write the file."
    assert answer.message.tool_calls is not None
    call = answer.message.tool_calls[0].function
    assert call.name == "write_file"
    assert call.arguments == {"path": "a.py", "content": "x"}
    assert answer.prompt_eval_count == 10
    assert answer.eval_count is not None
    assert answer.eval_count >= 1
    assert answer.total_duration


def test_chat_streams_in_chunks_and_ends_with_counts(serve: Serve) -> None:
    reply = {
        "content": "abcdefgh",
        "thinking": "hmmm",
        "chunks": 4,
        "tool_calls": [{"name": "run_cmd", "arguments": {"cmd": "python a.py"}}],
        "prompt_eval_count": 123,
        "eval_count": 7,
    }
    fake = serve({"replies": [reply]})
    parts = list(ask(fake, stream=True))
    thinking = [p.message.thinking for p in parts if p.message.thinking]
    content = [p.message.content for p in parts if p.message.content]
    calls = [p.message.tool_calls for p in parts if p.message.tool_calls]
    assert thinking == ["h", "m", "m", "m"]
    assert content == ["ab", "cd", "ef", "gh"]
    assert calls[0][0].function.arguments == {"cmd": "python a.py"}
    assert [p.done for p in parts].count(True) == 1
    last = parts[-1]
    assert last.done is True
    assert (last.prompt_eval_count, last.eval_count) == (123, 7)
    assert last.total_duration


def test_rules_substitute_groups_and_count_uses(serve: Serve) -> None:
    rule = {
        "match": r"write (?P<file>\w+\.py) saying (\w+)",
        "in": "last",
        "times": 1,
        "reply": {
            "content": "ok $2",
            "tool_calls": [{"name": "write_file", "arguments": {"path": "${file}", "text": "$2"}}],
        },
    }
    fake = serve({"rules": [rule], "default": {"content": "fallback"}})
    answer = ask(fake, "please write app.py saying hello")
    assert answer.message.content == "ok hello"
    assert answer.message.tool_calls is not None
    assert answer.message.tool_calls[0].function.arguments == {"path": "app.py", "text": "hello"}
    assert ask(fake, "please write app.py saying hello").message.content == "fallback"


def test_rule_sources_last_and_system(serve: Serve) -> None:
    rules = [
        {"match": "SECRET", "in": "system", "reply": {"content": "from system"}},
        {"match": "^first", "in": "last", "reply": {"content": "from last"}},
        {"match": "first.*second", "reply": {"content": "from all"}},
    ]
    fake = serve({"rules": rules})
    chat = client(fake).chat
    system = [{"role": "system", "content": "SECRET"}, {"role": "user", "content": "x"}]
    assert chat(MODEL, system).message.content == "from system"
    assert chat(MODEL, [{"role": "user", "content": "first"}]).message.content == "from last"
    pair = [{"role": "user", "content": "first"}, {"role": "user", "content": "second"}]
    assert chat(MODEL, pair).message.content == "from all"


def test_rule_kind_tells_plan_from_chat(serve: Serve) -> None:
    plan = json.dumps({"tasks": [{"description": "t", "subtasks": ["s"]}]})
    rules = [
        {"kind": "plan", "reply": {"content": plan}},
        {"kind": "chat", "reply": {"content": "chatting"}},
    ]
    fake = serve({"rules": rules})
    assert json.loads(ask(fake, format=PLAN_SCHEMA).message.content or "") == json.loads(plan)
    assert ask(fake).message.content == "chatting"
    assert ask(fake, format="json").message.content == plan


def test_replies_in_order_then_default(serve: Serve) -> None:
    fake = serve({"replies": [{"content": "one"}, {"content": "two"}], "default": {"content": "d"}})
    assert [ask(fake).message.content for _ in range(4)] == ["one", "two", "d", "d"]


def test_exhausted_scenario_is_500(serve: Serve) -> None:
    fake = serve({"replies": [{"content": "one"}]})
    ask(fake)
    with pytest.raises(ollama.ResponseError) as caught:
        ask(fake)
    assert caught.value.status_code == 500
    assert caught.value.error == "scenario exhausted"


def test_scripted_status_becomes_response_error(serve: Serve) -> None:
    fake = serve({"replies": [{"status": 503, "error": "busy"}, {"error": "boom"}]})
    with pytest.raises(ollama.ResponseError) as caught:
        ask(fake)
    assert (caught.value.status_code, caught.value.error) == (503, "busy")
    with pytest.raises(ollama.ResponseError) as caught:
        list(ask(fake, stream=True))
    assert (caught.value.status_code, caught.value.error) == (500, "boom")


def test_refusals_use_ollama_wording(serve: Serve) -> None:
    models = [{"name": "gemma:2b", "capabilities": ["completion"]}]
    fake = serve({"models": models, "default": {"content": "x"}})
    chat = client(fake).chat
    message = [{"role": "user", "content": "hi"}]
    tool = {"type": "function", "function": {"name": "list_dir", "parameters": {}}}
    with pytest.raises(ollama.ResponseError) as caught:
        chat("gemma:2b", message, tools=[tool])
    assert caught.value.status_code == 400
    assert "does not support tools" in caught.value.error
    assert caught.value.error == "registry.ollama.ai/library/gemma:2b does not support tools"
    with pytest.raises(ollama.ResponseError) as caught:
        chat("gemma:2b", message, think=True)
    assert (caught.value.status_code, caught.value.error) == (
        400,
        '"gemma:2b" does not support thinking',
    )
    with pytest.raises(ollama.ResponseError) as caught:
        chat("llama3", message)
    assert caught.value.status_code == 404
    assert caught.value.error == 'model "llama3" not found, try pulling it first'
    assert chat("gemma:2b", message, think=False).message.content == "x"


def test_arguments_as_a_json_string_fail_client_validation(serve: Serve) -> None:
    call = {"name": "write_file", "arguments": '{"path": "a.py"}'}
    fake = serve({"default": {"tool_calls": [call]}})
    with pytest.raises(pydantic.ValidationError):
        ask(fake)
    with pytest.raises(pydantic.ValidationError):
        list(ask(fake, stream=True))
    assert json.loads(call["arguments"]) == {"path": "a.py"}


def test_drop_mid_stream_breaks_the_client_not_the_server(serve: Serve) -> None:
    replies = [
        {"content": "abcdefgh", "chunks": 4, "drop": True},
        {"content": "abc", "drop": True},
        {"content": "fine"},
    ]
    fake = serve({"replies": replies})
    received: list[str] = []
    with pytest.raises(httpx.RemoteProtocolError):
        for part in ask(fake, stream=True):
            received.append(part.message.content or "")
    assert received == ["ab", "cd"]
    with pytest.raises(httpx.RemoteProtocolError):
        ask(fake)
    assert ask(fake).message.content == "fine"


def test_error_line_mid_stream_is_a_response_error(serve: Serve) -> None:
    reply = {"content": "abcd", "chunks": 2, "error_line": "model runner crashed"}
    fake = serve({"default": reply})
    with pytest.raises(ollama.ResponseError) as caught:
        list(ask(fake, stream=True))
    assert caught.value.error == "model runner crashed"
    assert caught.value.status_code == -1
    with pytest.raises(ollama.ResponseError) as caught:
        ask(fake)
    assert (caught.value.status_code, caught.value.error) == (500, "model runner crashed")


def test_delay_beyond_the_client_timeout_is_a_read_timeout(serve: Serve) -> None:
    fake = serve({"replies": [{"content": "late", "delay": 1.0}, {"content": "on time"}]})
    started = time.monotonic()
    with pytest.raises(httpx.ReadTimeout):
        client(fake, timeout=0.2).chat(MODEL, [{"role": "user", "content": "hi"}])
    assert time.monotonic() - started < 0.9
    assert ask(fake).message.content == "on time"


def test_stopped_server_is_a_connection_error_and_can_come_back(serve: Serve) -> None:
    fake = serve({"default": {"content": "up"}})
    talker = client(fake)
    assert talker.chat(MODEL, []).message.content == "up"
    fake.stop()
    with pytest.raises(ConnectionError):
        talker.chat(MODEL, [])
    fake.start()
    assert talker.chat(MODEL, []).message.content == "up"


def test_requests_are_recorded_in_order(serve: Serve) -> None:
    fake = serve({"default": {"content": "x"}})
    client(fake).show(MODEL)
    ask(fake, "first")
    list(ask(fake, "second", stream=True))
    assert [r.get("messages", [{}])[0].get("content") for r in fake.requests] == [
        None,
        "first",
        "second",
    ]
    assert [r["stream"] for r in fake.chat_requests] == [False, True]


@pytest.mark.parametrize(
    ("scenario", "complaint"),
    [
        ([], "scenario: expected an object"),
        ({"reply": []}, "unknown key 'reply'"),
        ({"models": []}, "models: list at least one model"),
        ({"models": [{"capabilities": []}]}, "models[0]: a model needs a name"),
        ({"rules": [{"match": "("}]}, "rules[0]: a rule needs a reply"),
        ({"rules": [{"match": "(", "reply": {}}]}, "rules[0].match: bad regular expression"),
        ({"rules": [{"reply": {}, "in": "first"}]}, "rules[0].in: expected one of"),
        ({"rules": [{"reply": {}, "times": 0}]}, "rules[0].times: must be at least 1"),
        ({"rules": [{"match": "(a)", "reply": {"content": "$2"}}]}, "$2 names no group"),
        ({"replies": [{"contents": "x"}]}, "replies[0]: unknown key 'contents'"),
        ({"replies": [{"delay": "1"}]}, "replies[0].delay: expected a number"),
        ({"replies": [{"chunks": True}]}, "replies[0].chunks: expected an integer"),
        ({"replies": [{"keepalive": -1}]}, "replies[0].keepalive: must be at least 0"),
        ({"replies": [{"drip": 1}]}, "replies[0].drip: expected true or false"),
        ({"replies": [{"status": 200}]}, "replies[0].status: expected an HTTP error status"),
        ({"default": {"tool_calls": [{"arguments": {}}]}}, "default.tool_calls[0]: a tool"),
        ({"default": {"tool_calls": [{"name": "f", "arguments": 3}]}}, "an object or a string"),
    ],
)
def test_bad_scenarios_are_refused_clearly(scenario: object, complaint: str) -> None:
    with pytest.raises(ValueError) as caught:
        validate_scenario(scenario)
    assert complaint in str(caught.value)


def test_load_scenario_names_the_file(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"replies": [', encoding="utf-8")
    with pytest.raises(ValueError, match=r"broken\.json: not valid JSON"):
        load_scenario(broken)
    with pytest.raises(ValueError, match="cannot read scenario"):
        load_scenario(tmp_path / "missing.json")
    assert main([str(broken), "--port", "0"]) == 2


def test_ollama_shaped_tool_calls_and_validated_scenarios_are_accepted(serve: Serve) -> None:
    call = {"function": {"name": "list_dir", "arguments": {"path": "."}}}
    scenario = validate_scenario({"rules": [{"match": "(.)", "reply": {"tool_calls": [call]}}]})
    fake = serve(validate_scenario(scenario))
    assert ask(fake).message.tool_calls is not None


def test_hello_scenario_writes_runs_and_completes(serve: Serve) -> None:
    fake = serve(HELLO)
    plan = json.loads(ask(fake, "Goal: hello", format=PLAN_SCHEMA).message.content or "")
    assert len(plan["tasks"][0]["subtasks"]) == 2
    calls = []
    for _ in range(6):
        tool_calls = ask(fake, "next step").message.tool_calls or []
        calls.append((tool_calls[0].function.name, dict(tool_calls[0].function.arguments)))
    assert [name for name, _ in calls] == [
        "write_file",
        "run_cmd",
        "mark_subtask_complete",
        "run_cmd",
        "mark_subtask_complete",
        "mark_subtask_complete",
    ]
    assert calls[0][1]["path"] == "hello.py"
    assert calls[1][1]["cmd"] == calls[3][1]["cmd"] == "python hello.py"
    assert [args["success"] for _, args in calls[4:]] == [True, False]
    verdict = json.loads(ask(fake, "verify", format=VERDICT_SCHEMA).message.content or "")
    assert verdict["verdict"] == "VERIFIED"


def _wait_for(path: Path, process: subprocess.Popen[str]) -> str:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if path.exists():
            return path.read_text(encoding="utf-8")
        assert process.poll() is None, process.communicate()
        time.sleep(0.02)
    raise AssertionError(f"{path} never appeared")


def test_command_line_serves_logs_and_stops_on_sigterm(tmp_path: Path) -> None:
    scenario = tmp_path / "scenario.json"
    scenario.write_text(
        json.dumps({"rules": [{"match": "(ping)", "reply": {"content": "$1 pong"}}]})
    )
    port_file, log = tmp_path / "port", tmp_path / "chat.jsonl"
    windows = sys.platform == "win32"
    command = [sys.executable, "-m", "localagent.models.fake", str(scenario), "--port", "0"]
    command += ["--port-file", str(port_file), "--log", str(log)]
    process = subprocess.Popen(
        command,
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        creationflags=subprocess.CREATE_NEW_PROCESS_GROUP if windows else 0,
    )
    try:
        port = int(_wait_for(port_file, process))
        talker = ollama.Client(host=f"http://127.0.0.1:{port}", timeout=5, trust_env=False)
        assert talker.chat(MODEL, [{"role": "user", "content": "ping"}]).message.content == (
            "ping pong"
        )
        with pytest.raises(ollama.ResponseError):
            talker.chat(MODEL, [{"role": "user", "content": "nothing"}])
        entries = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
        assert [(e["seq"], e["answered_by"], e["status"]) for e in entries] == [
            (1, "rules[0]", 200),
            (2, "exhausted", 500),
        ]
        assert entries[0]["request"]["messages"] == [{"role": "user", "content": "ping"}]
    finally:
        process.send_signal(signal.CTRL_BREAK_EVENT if windows else signal.SIGTERM)
        out, err = process.communicate(timeout=10)
    assert process.returncode == 0
    assert out == f"fake ollama listening on http://127.0.0.1:{port}\n"
    assert err == ""


def test_a_verdict_request_is_answered_by_verify_rules_or_the_verdict_reply(serve: Serve) -> None:
    fake = serve(
        {
            "rules": [{"match": "", "reply": {"content": "any rule"}}],
            "replies": [{"content": "first reply"}],
            "default": {"content": "default"},
        }
    )
    built_in = json.loads(ask(fake, "verify", format=VERDICT_SCHEMA).message.content or "")
    assert built_in == {"verdict": "VERIFIED", "unmet": [], "evidence": [], "next": "finish"}
    assert ask(fake, "next").message.content == "any rule"  # replies were not consumed
    scripted = serve(
        {
            "rules": [{"kind": "verify", "match": "GOAL", "reply": {"content": "rule verdict"}}],
            "verdict": {"content": "scenario verdict"},
        }
    )
    assert ask(scripted, "GOAL: x", format=VERDICT_SCHEMA).message.content == "rule verdict"
    assert ask(scripted, "other", format=VERDICT_SCHEMA).message.content == "scenario verdict"
