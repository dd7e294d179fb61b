"""The OpenAI-compatible side of the fake server: its bodies, events and refusals.

The same scenarios answer `/v1/chat/completions` as answer `/api/chat`; this module
shapes them as llama.cpp's server, vLLM or LM Studio would: `/v1/models`, llama.cpp's
`/props` (when the scenario says `"llama_cpp": true`), server-sent events with tool
calls in pieces and arguments as JSON text, usage when asked, and their refusals:
tools without `--jinja` (HTTP 500, llama.cpp's wording), an unknown model (404), a
`response_format` the server cannot do (400, when the scenario says
`"response_format": false`), a `tool` message whose `tool_call_id` matches no call
(400, as strict servers do), an assistant message whose calls are not answered one
by one by the tool messages right after it (400, "Not the same number of function
calls and responses", as strict servers say), and a wrong or missing API key (401,
when the scenario sets `"api_key"`).
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import unquote

JINJA = "tools param requires --jinja flag"


def error(status: int, message: str) -> dict[str, Any]:
    kind = "invalid_request_error" if status < 500 else "server_error"
    return {"error": {"code": status, "message": message, "type": kind}}


def models(scenario: dict[str, Any]) -> dict[str, Any]:
    listed = [
        {"id": m["name"], "object": "model", "created": 0, "owned_by": "fake"}
        | ({} if scenario["lm_studio"] else {"max_model_len": m["context_length"]})
        | ({"meta": _meta(m)} if scenario["llama_cpp"] else {})
        for m in scenario["models"]
    ]
    return {"object": "list", "data": listed}


def _meta(model: dict[str, Any]) -> dict[str, Any]:
    """llama.cpp's `meta` of a /v1/models entry: the trained context and the parameter
    count, from the model's `parameter_size` ("1.5B", "494.03M")."""
    found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMBT])\s*", model["parameter_size"], re.I)
    scale = {"K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}
    count = int(float(found[1]) * scale[found[2].upper()]) if found else None
    return {"n_ctx_train": model["context_length"], "n_params": count}


def lm_studio_models(scenario: dict[str, Any]) -> dict[str, Any]:
    """LM Studio's `/api/v1/models` (0.4 and later): each model's key and `params_string`."""
    listed = [
        {
            "type": "llm",
            "key": m["name"],
            "params_string": m["parameter_size"],
            "max_context_length": m["context_length"],
            "loaded_instances": [],
        }
        for m in scenario["models"]
    ]
    return {"models": listed}


def lm_studio_model(scenario: dict[str, Any], path: str) -> dict[str, Any] | None:
    """LM Studio's `/api/v0/models/ID`: the model loaded with half its context at most."""
    wanted = unquote(path.removeprefix("/api/v0/models/"))
    found = next((m for m in scenario["models"] if m["name"] == wanted), None)
    if found is None:
        return None
    return {
        "id": found["name"],
        "object": "model",
        "type": "llm",
        "state": "loaded",
        "max_context_length": found["context_length"],
        "loaded_context_length": min(found["context_length"], 4096),
    }


def props(scenario: dict[str, Any]) -> dict[str, Any]:
    first = scenario["models"][0]
    return {
        "default_generation_settings": {"n_ctx": first["context_length"]},
        "total_slots": scenario["slots"],
        "model_path": f"/models/{first['name']}.gguf",
    }


def _unmatched_result(messages: list[Any]) -> str | None:
    """The id of a tool message that answers no call of an assistant message before it."""
    ids: set[str] = set()
    for m in messages:
        if not isinstance(m, dict):
            continue
        for call in m.get("tool_calls") or []:
            ids.add(str(call.get("id")) if isinstance(call, dict) else "")
        if m.get("role") == "tool" and m.get("tool_call_id") not in ids:
            return str(m.get("tool_call_id"))
    return None


def _unpaired(messages: list[Any]) -> str | None:
    """What is wrong when the tool messages right after an assistant message do not
    answer its calls one each, in order (None when they do)."""
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or not m.get("tool_calls"):
            continue
        ids = [str(c.get("id")) if isinstance(c, dict) else "" for c in m["tool_calls"]]
        answers = []
        for later in messages[i + 1 :]:
            if not isinstance(later, dict) or later.get("role") != "tool":
                break
            answers.append(str(later.get("tool_call_id")))
        if len(answers) != len(ids):
            return "Not the same number of function calls and responses"
        if answers != ids:
            return f"the tool messages answer {answers}, not the calls {ids} in order"
    return None


def refusal(
    body: dict[str, Any], model: dict[str, Any] | None, scenario: dict[str, Any], auth: str
) -> tuple[int, str] | None:
    key = scenario.get("api_key")
    if key and auth != f"Bearer {key}":
        return 401, "Incorrect API key provided"
    if not body.get("model"):
        return 400, "model is required"
    if model is None:
        return 404, f"The model `{body['model']}` does not exist."
    if body.get("tools") and "tools" not in model["capabilities"]:
        return 500, JINJA
    if body.get("response_format") and not scenario.get("response_format", True):
        return 400, "response_format json_schema is not supported by this server"
    unmatched = _unmatched_result(body.get("messages") or [])
    if unmatched is not None:
        return 400, f"a tool message's tool_call_id {unmatched!r} matches no tool call"
    unpaired = _unpaired(body.get("messages") or [])
    if unpaired is not None:
        return 400, unpaired
    return None


def _wire_calls(reply: dict[str, Any], seq: int) -> list[dict[str, Any]]:
    calls = []
    for i, call in enumerate(reply["tool_calls"]):
        args = call["arguments"]
        text = args if isinstance(args, str) else json.dumps(args)
        function = {"name": call["name"], "arguments": text}
        calls.append(
            {"index": i, "id": f"call{seq:04d}x{i}", "type": "function", "function": function}
        )
    return calls


def _usage(body: dict[str, Any], reply: dict[str, Any]) -> dict[str, int]:
    prompt_chars = sum(
        len(m.get("content") or "") for m in body.get("messages") or [] if isinstance(m, dict)
    )
    answer_chars = len(reply.get("content", "")) + len(json.dumps(reply["tool_calls"]))
    prompt = reply.get("prompt_eval_count", max(1, prompt_chars // 4))
    completion = reply.get("eval_count", max(1, answer_chars // 4))
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _finish(reply: dict[str, Any]) -> str:
    if reply.get("done_reason") == "length":
        return "length"
    return "tool_calls" if reply["tool_calls"] else "stop"


def completion(body: dict[str, Any], reply: dict[str, Any], seq: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.get("content", "")}
    if reply["tool_calls"]:
        message["tool_calls"] = [
            {k: v for k, v in call.items() if k != "index"} for call in _wire_calls(reply, seq)
        ]
    return {
        "id": f"chatcmpl-{seq}",
        "object": "chat.completion",
        "model": body["model"],
        "choices": [{"index": 0, "message": message, "finish_reason": _finish(reply)}],
        "usage": _usage(body, reply),
        **_timings(reply),
    }


def _timings(reply: dict[str, Any]) -> dict[str, Any]:
    """llama.cpp's figures of the prompt cache, sent beside the usage."""
    return {"timings": reply["timings"]} if "timings" in reply else {}


def _split(text: str, pieces: int) -> list[str]:
    size = -(-len(text) // pieces)
    return [text[i : i + size] for i in range(0, len(text), size)] if text else []


def _chunk(
    body: dict[str, Any], seq: int, delta: dict[str, Any], finish: str | None = None
) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{seq}",
        "object": "chat.completion.chunk",
        "model": body["model"],
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def events(body: dict[str, Any], reply: dict[str, Any], seq: int) -> list[dict[str, Any]]:
    """The events of a stream before its end: reasoning, content, then each tool call with
    its arguments in two fragments, as llama.cpp sends them."""
    pieces = reply.get("chunks", 3)
    parts = [
        _chunk(body, seq, {"reasoning_content": p})
        for p in _split(reply.get("thinking", ""), pieces)
    ]
    parts += [_chunk(body, seq, {"content": p}) for p in _split(reply.get("content", ""), pieces)]
    for call in _wire_calls(reply, seq):
        text = call["function"]["arguments"]
        half = len(text) // 2
        head = {**call, "function": {"name": call["function"]["name"], "arguments": text[:half]}}
        tail = {"index": call["index"], "function": {"arguments": text[half:]}}
        parts += [
            _chunk(body, seq, {"tool_calls": [head]}),
            _chunk(body, seq, {"tool_calls": [tail]}),
        ]
    return parts


def endless(body: dict[str, Any], seq: int) -> dict[str, Any]:
    return _chunk(body, seq, {"reasoning_content": "and then "})


def ending(body: dict[str, Any], reply: dict[str, Any], seq: int) -> list[dict[str, Any]]:
    """The last events: the finish reason, then the usage when the client asked for it."""
    last = [_chunk(body, seq, {}, _finish(reply))]
    options = body.get("stream_options")
    if isinstance(options, dict) and options.get("include_usage"):
        usage = {
            **_chunk(body, seq, {}),
            "choices": [],
            "usage": _usage(body, reply),
            **_timings(reply),
        }
        last.append(usage)
    return last
