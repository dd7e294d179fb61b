"""A scripted stand-in for a model server, for tests, demos and CI.

It speaks enough of the Ollama HTTP API (`/`, `/api/version`, `/api/tags`,
`/api/ps`, `/api/show`, `/api/chat`, `/api/embed`) for the official `ollama` Python client,
and of the OpenAI-compatible API (`/v1/models`, `/v1/chat/completions`, `/v1/embeddings`,
llama.cpp's `/props`; see `localagent.models.fake_openai`) for the `openai` backend, and
answers chat requests from a scenario file instead of a model, so the whole agent
can run end to end on a machine with no model server and no GPU.

    python -m localagent.models.fake SCENARIO.json [--host 127.0.0.1] [--port 11434]
                                     [--log requests.jsonl] [--port-file port.txt]

`--port 0` picks a free port; `--port-file` then receives the port number
(written atomically once the server listens). `--log` appends one JSON line
per chat request: `seq`, `ts`, `path`, `status`, `answered_by` (`"rules[2]"`,
`"replies[0]"`, `"verdict"`, `"default"`, `"exhausted"`, or null when the request was
refused before a reply was chosen) and the request body as `request`.
SIGTERM or Ctrl-C stops the server with exit code 0.

The package ships a demo, `localagent/scenarios/hello.json`: a model that
plans one task, writes hello.py, runs `python hello.py` and marks each
subtask complete. Serve it on the default port and run the agent against it:

    python -m localagent.models.fake localagent/scenarios/hello.json
    localagent start "Write hello.py that prints Hello, world!" --foreground

Scenario file
-------------
A JSON object; every key is optional:

    {
      "models": [{"name": "gpt-oss:20b", "capabilities": ["completion", "tools", "thinking"],
                  "context_length": 131072, "family": "gptoss"}],
      "version": "0.12.3",
      "rules": [{"match": "REGEX", "in": "all", "kind": "any", "times": 1, "reply": REPLY}],
      "replies": [REPLY, ...],
      "default": REPLY,
      "verdict": REPLY,
      "llama_cpp": false, "response_format": true, "api_key": ""
    }

`llama_cpp` serves llama.cpp's `/props`; `lm_studio` serves LM Studio's
`/api/v0/models/ID` (and leaves the context size out of `/v1/models`, as LM
Studio does); `response_format: false` refuses OpenAI structured output;
`api_key` makes the /v1 endpoints demand that key.
`models` lists the pulled models (default: `gpt-oss:20b` as above). A model
needs only `name`; `capabilities` defaults to `["completion", "tools"]`,
`context_length` to 32768, and `family`, `parameter_size`,
`quantization_level` are made up when absent. A name without a tag means
`NAME:latest`, as in Ollama. Chat requests for an unlisted model get 404,
requests with `tools` for a model without the `tools` capability get 400
"... does not support tools", and `think` for a model without `thinking`
gets 400 "... does not support thinking", with Ollama's own wording. Embedding
requests for a listed model get `toy_embedding` vectors (hashed words, deterministic).

Each chat request is answered by the first of:

1. the first rule that fits: its `kind` matches (`"verify"`: the request's
   `format` schema has a `verdict` property, i.e. a goal verdict; `"plan"`: any
   other request with a `format`, i.e. structured output; `"chat"`: it has
   none; `"any"`, the default: chat and plan), its `match` regex (Python
   syntax, `.` matches newlines; default `""` matches everything) is found in the text named by `in`
   (`"all"`, the default: the content of every message joined by blank
   lines; `"last"`: the last message; `"system"`: the first system
   message), and it has uses left (`times`; default unlimited). In a rule's
   reply, `$1`, `$2`, `${name}` in any string, tool-call arguments included,
   are replaced by the regex groups; naming a group the regex lacks is an
   error when the scenario is loaded.
2. for a verdict request: `verdict` (default: VERIFIED, no unmet requirements),
   so scenarios that do not care about verification need not script it;
3. the next unused entry of `replies`, in order;
4. `default`; when it is null or absent the answer is HTTP 500
   `{"error": "scenario exhausted"}`.

A REPLY is an object; every key is optional:

    content            the model's text (for a plan request: the plan as JSON text)
    thinking           the thinking text
    tool_calls         [{"name": "write_file", "arguments": {"path": "a.py", ...}}];
                       `arguments` may be a JSON string, passed through as given
                       (the real client then fails validation, as with some models)
    prompt_eval_count  tokens reported for the prompt (default: message characters / 4)
    eval_count         tokens reported for the answer (default: its characters / 4)
    done_reason        default "stop"
    delay              seconds to wait before answering
    status, error      answer with this HTTP status (default 500) and {"error": error}
    drop               true: a stream sends about half its chunks, then the connection
                       is closed mid-body; otherwise it is closed with no response
    error_line         a stream sends about half its chunks, then {"error": error_line}
                       as Ollama does; without streaming: HTTP 500 with that error
    chunks             how many pieces streamed content and thinking are cut into (3)
    chunk_delay        seconds to wait between streamed chunks
    endless            true: stream thinking chunks (every chunk_delay, default 0.05 s)
                       until the client hangs up, as a model that never stops does
    body               answer with exactly this text instead (status 200 unless
                       `body_status` says otherwise; `content_type` default text/html):
                       a proxy's page, garbage, a shape that is not Ollama's
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import re
import signal
import socket
import socketserver
import sys
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import FrameType
from typing import Any, TextIO

from localagent.models import fake_openai

DEFAULT_MODEL: dict[str, Any] = {
    "name": "gpt-oss:20b",
    "capabilities": ["completion", "tools", "thinking"],
    "context_length": 131072,
    "family": "gptoss",
}
DEFAULT_VERSION = "0.12.3"
DEFAULT_CHUNKS = 3
CHAT_PATHS = ("/api/chat", "/v1/chat/completions")
EMBED_PATHS = ("/api/embed", "/v1/embeddings")
EMBED_DIMS = 64

# bool is an int to Python, but never a count, a status or a delay here.
_CHECKS: dict[str, Callable[[Any], bool]] = {
    "a string": lambda v: isinstance(v, str),
    "an integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "a number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "true or false": lambda v: isinstance(v, bool),
    "a list": lambda v: isinstance(v, list),
    "an object": lambda v: isinstance(v, dict),
    "an object or a string": lambda v: isinstance(v, dict | str),
    "an object or null": lambda v: v is None or isinstance(v, dict),
    "an integer or null": lambda v: v is None or (isinstance(v, int) and not isinstance(v, bool)),
}
_SCENARIO_FIELDS = {
    "models": "a list",
    "version": "a string",
    "rules": "a list",
    "replies": "a list",
    "default": "an object or null",
    "verdict": "an object",
    "llama_cpp": "true or false",
    "lm_studio": "true or false",
    "response_format": "true or false",
    "api_key": "a string",
}
_MODEL_FIELDS = {
    "name": "a string",
    "capabilities": "a list",
    "context_length": "an integer",
    "family": "a string",
    "parameter_size": "a string",
    "quantization_level": "a string",
}
VERIFIED = {"content": '{"verdict": "VERIFIED", "unmet": [], "evidence": [], "next": "finish"}'}
_RULE_FIELDS = {
    "match": "a string",
    "in": "a string",
    "kind": "a string",
    "times": "an integer or null",
    "reply": "an object",
}
_REPLY_FIELDS = {
    "content": "a string",
    "thinking": "a string",
    "tool_calls": "a list",
    "prompt_eval_count": "an integer",
    "eval_count": "an integer",
    "done_reason": "a string",
    "delay": "a number",
    "status": "an integer",
    "error": "a string",
    "drop": "true or false",
    "error_line": "a string",
    "chunks": "an integer",
    "chunk_delay": "a number",
    "endless": "true or false",
    "body": "a string",
    "body_status": "an integer",
    "content_type": "a string",
}
_CALL_FIELDS = {"name": "a string", "arguments": "an object or a string"}
_GROUP_REF = re.compile(r"\$(?:\{(\w+)\}|(\d+))")


# --- scenario validation ---------------------------------------------------------------


def load_scenario(path: Path) -> dict[str, Any]:
    """Read and validate a scenario file; any problem is a ValueError naming the file."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"cannot read scenario {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ValueError(f"{path}: not valid JSON: {exc}") from None
    try:
        return validate_scenario(data)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


def validate_scenario(data: object) -> dict[str, Any]:
    """Check a scenario and return a copy with every default filled in."""
    spec = _fields(data, "scenario", _SCENARIO_FIELDS)
    models = spec.get("models", [DEFAULT_MODEL])
    if not models:
        raise ValueError("models: list at least one model")
    default = spec.get("default")
    return {
        "models": [_model(item, f"models[{i}]") for i, item in enumerate(models)],
        "version": spec.get("version", DEFAULT_VERSION),
        "rules": [_rule(item, f"rules[{i}]") for i, item in enumerate(spec.get("rules", []))],
        "replies": [
            _reply(item, f"replies[{i}]") for i, item in enumerate(spec.get("replies", []))
        ],
        "default": None if default is None else _reply(default, "default"),
        "verdict": _reply(spec.get("verdict", VERIFIED), "verdict"),
        "llama_cpp": spec.get("llama_cpp", False),
        "lm_studio": spec.get("lm_studio", False),
        "response_format": spec.get("response_format", True),
        "api_key": spec.get("api_key", ""),
    }


def _fields(value: object, where: str, fields: dict[str, str]) -> dict[str, Any]:
    """A copy of value after checking it is an object with only known, well-typed keys."""
    if not isinstance(value, dict):
        raise ValueError(f"{where}: expected an object, got {json.dumps(value, default=repr)}")
    for key, item in value.items():
        if key not in fields:
            raise ValueError(f"{where}: unknown key {key!r} (known: {', '.join(fields)})")
        if not _CHECKS[fields[key]](item):
            got = json.dumps(item, default=repr)
            raise ValueError(f"{where}.{key}: expected {fields[key]}, got {got}")
    return dict(value)


def _at_least(spec: dict[str, Any], key: str, minimum: float, where: str) -> None:
    if spec.get(key) is not None and spec[key] < minimum:
        raise ValueError(f"{where}.{key}: must be at least {minimum}, got {spec[key]}")


def _one_of(spec: dict[str, Any], key: str, choices: tuple[str, ...], where: str) -> str:
    value = spec.setdefault(key, choices[0])
    if value not in choices:
        raise ValueError(f"{where}.{key}: expected one of {', '.join(choices)}, got {value!r}")
    return value


def _model(value: object, where: str) -> dict[str, Any]:
    spec = _fields(value, where, _MODEL_FIELDS)
    if "name" not in spec:
        raise ValueError(f"{where}: a model needs a name")
    capabilities = spec.setdefault("capabilities", ["completion", "tools"])
    if not all(isinstance(item, str) for item in capabilities):
        raise ValueError(f"{where}.capabilities: expected a list of strings")
    _at_least(spec, "context_length", 1, where)
    spec["name"] = _full_name(spec["name"])
    base, _, tag = spec["name"].partition(":")
    size = re.search(r"\d+(?:\.\d+)?[bm]", tag, re.I)
    spec.setdefault("context_length", 32768)
    spec.setdefault("family", re.sub(r"[^a-z0-9]", "", base.lower()) or "llama")
    spec.setdefault("parameter_size", size[0].upper() if size else "7B")
    spec.setdefault("quantization_level", "Q4_K_M")
    return spec


def _full_name(name: str) -> str:
    return name if ":" in name else f"{name}:latest"


def _rule(value: object, where: str) -> dict[str, Any]:
    spec = _fields(value, where, _RULE_FIELDS)
    if "reply" not in spec:
        raise ValueError(f"{where}: a rule needs a reply")
    try:
        pattern = re.compile(spec.setdefault("match", ""), re.S)
    except re.error as exc:
        raise ValueError(f"{where}.match: bad regular expression: {exc}") from None
    _one_of(spec, "in", ("all", "last", "system"), where)
    _one_of(spec, "kind", ("any", "chat", "plan", "verify"), where)
    _at_least(spec, "times", 1, where)
    spec.setdefault("times", None)
    spec["reply"] = _reply(spec["reply"], f"{where}.reply")
    for text in _strings(spec["reply"]):
        for ref in _GROUP_REF.finditer(text):
            if not _has_group(pattern, _group_key(ref)):
                raise ValueError(f"{where}.reply: {ref[0]} names no group of the rule's match")
    return spec


def _has_group(pattern: re.Pattern[str], key: int | str) -> bool:
    return key in pattern.groupindex if isinstance(key, str) else key <= pattern.groups


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    return [text for item in items for text in _strings(item)]


def _reply(value: object, where: str) -> dict[str, Any]:
    reply = _fields(value, where, _REPLY_FIELDS)
    for key, minimum in (("prompt_eval_count", 0), ("eval_count", 0), ("chunks", 1), ("delay", 0)):
        _at_least(reply, key, minimum, where)
    if "error" in reply or "status" in reply:
        if not 400 <= reply.setdefault("status", 500) <= 599:
            raise ValueError(
                f"{where}.status: expected an HTTP error status, got {reply['status']}"
            )
        reply.setdefault("error", "scripted error")
    calls = reply.get("tool_calls", [])
    reply["tool_calls"] = [
        _tool_call(call, f"{where}.tool_calls[{i}]") for i, call in enumerate(calls)
    ]
    return reply


def _tool_call(value: object, where: str) -> dict[str, Any]:
    # Calls copied from a real Ollama answer are wrapped in "function"; accept both shapes.
    if isinstance(value, dict) and set(value) == {"function"}:
        value, where = value["function"], f"{where}.function"
    call = _fields(value, where, _CALL_FIELDS)
    if "name" not in call:
        raise ValueError(f"{where}: a tool call needs a name")
    return {"name": call["name"], "arguments": call.get("arguments", {})}


# --- choosing replies ------------------------------------------------------------------


class _Script:
    """Picks the reply for each chat request; its counters are shared by all connections."""

    def __init__(self, scenario: dict[str, Any]) -> None:
        self._rules = [(rule, re.compile(rule["match"], re.S)) for rule in scenario["rules"]]
        self._uses_left: list[int | None] = [rule["times"] for rule in scenario["rules"]]
        self._replies: list[dict[str, Any]] = scenario["replies"]
        self._next_reply = 0
        self._default: dict[str, Any] | None = scenario["default"]
        self._verdict: dict[str, Any] = scenario["verdict"]
        self._lock = threading.Lock()

    def choose(self, body: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
        kind = _kind(body)
        with self._lock:
            for index, (rule, pattern) in enumerate(self._rules):
                if self._uses_left[index] == 0:
                    continue
                if rule["kind"] != kind and (rule["kind"] != "any" or kind == "verify"):
                    continue
                found = pattern.search(_rule_text(body, rule["in"]))
                if found is None:
                    continue
                if self._uses_left[index] is not None:
                    self._uses_left[index] -= 1
                return f"rules[{index}]", _substitute(rule["reply"], found)
            if kind == "verify":
                return "verdict", self._verdict
            if self._next_reply < len(self._replies):
                self._next_reply += 1
                return f"replies[{self._next_reply - 1}]", self._replies[self._next_reply - 1]
        if self._default is None:
            return "exhausted", None
        return "default", self._default


def _kind(body: dict[str, Any]) -> str:
    """ "verify" for a verdict request (its schema has a `verdict`), "plan" for any other
    structured-output request, "chat" otherwise."""
    schema = body.get("format")
    response_format = body.get("response_format")
    if isinstance(response_format, dict):  # OpenAI's structured output
        schema = (response_format.get("json_schema") or {}).get("schema") or {"type": "object"}
    if not schema:
        return "chat"
    properties = schema.get("properties") if isinstance(schema, dict) else None
    return "verify" if isinstance(properties, dict) and "verdict" in properties else "plan"


def _messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body.get("messages") or [] if isinstance(m, dict)]


def _content(message: dict[str, Any]) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else ""


def _rule_text(body: dict[str, Any], source: str) -> str:
    messages = _messages(body)
    if source == "last":
        return _content(messages[-1]) if messages else ""
    if source == "system":
        return next((_content(m) for m in messages if m.get("role") == "system"), "")
    return "\n\n".join(_content(m) for m in messages)


def _group_key(ref: re.Match[str]) -> int | str:
    key = ref[1] or ref[2]
    return int(key) if key.isdigit() else key


def _substitute(value: Any, found: re.Match[str]) -> Any:
    if isinstance(value, str):
        return _GROUP_REF.sub(lambda ref: found.group(_group_key(ref)) or "", value)
    if isinstance(value, dict):
        return {key: _substitute(item, found) for key, item in value.items()}
    if isinstance(value, list):
        return [_substitute(item, found) for item in value]
    return value


# --- response bodies -------------------------------------------------------------------


def toy_embedding(text: str, dims: int = EMBED_DIMS) -> list[float]:
    """A deterministic stand-in for an embedding: the text's words (and the parts of its
    identifiers) hashed into `dims` buckets, normalised. Texts sharing words are near."""
    vector = [0.0] * dims
    for word in re.findall(r"[A-Za-z]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", text)):
        bucket = int.from_bytes(hashlib.blake2b(word.lower().encode(), digest_size=4).digest())
        vector[bucket % dims] += 1.0
    norm = sum(x * x for x in vector) ** 0.5 or 1.0
    return [round(x / norm, 6) for x in vector]


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def _digest(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()


def _details(model: dict[str, Any]) -> dict[str, Any]:
    return {
        "parent_model": "",
        "format": "gguf",
        "family": model["family"],
        "families": [model["family"]],
        "parameter_size": model["parameter_size"],
        "quantization_level": model["quantization_level"],
    }


def _tags(models: list[dict[str, Any]]) -> dict[str, Any]:
    listed = [
        {
            "name": m["name"],
            "model": m["name"],
            "modified_at": _now(),
            "size": 4_000_000_000,
            "digest": _digest(m["name"]),
            "details": _details(m),
        }
        for m in models
    ]
    return {"models": listed}


def _show(model: dict[str, Any]) -> dict[str, Any]:
    family = model["family"]
    return {
        "license": "",
        "modelfile": f"# Modelfile generated by fake ollama\nFROM {model['name']}\n",
        "parameters": "temperature 1",
        "template": "{{ .Prompt }}",
        "details": _details(model),
        "model_info": {
            "general.architecture": family,
            f"{family}.context_length": model["context_length"],
        },
        "capabilities": model["capabilities"],
        "modified_at": _now(),
    }


def _chat_refusal(body: dict[str, Any], model: dict[str, Any] | None) -> tuple[int, str] | None:
    name = body.get("model")
    if not name:
        return 400, "model is required"
    if model is None:
        return 404, f'model "{name}" not found, try pulling it first'
    if body.get("tools") and "tools" not in model["capabilities"]:
        return 400, f"registry.ollama.ai/library/{model['name']} does not support tools"
    if body.get("think") and "thinking" not in model["capabilities"]:
        return 400, f'"{name}" does not support thinking'
    return None


def _wire_calls(reply: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"function": call} for call in reply["tool_calls"]]


def _message(reply: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.get("content", "")}
    if reply.get("thinking"):
        message["thinking"] = reply["thinking"]
    if reply["tool_calls"]:
        message["tool_calls"] = _wire_calls(reply)
    return message


def _split(text: str, pieces: int) -> list[str]:
    size = -(-len(text) // pieces)
    return [text[i : i + size] for i in range(0, len(text), size)] if text else []


def _stream_messages(reply: dict[str, Any]) -> list[dict[str, Any]]:
    """The partial messages of a stream, in Ollama's order: thinking, content, tool calls."""
    pieces = reply.get("chunks", DEFAULT_CHUNKS)
    parts = [
        {"role": "assistant", "content": "", "thinking": piece}
        for piece in _split(reply.get("thinking", ""), pieces)
    ]
    parts += [{"role": "assistant", "content": p} for p in _split(reply.get("content", ""), pieces)]
    if reply["tool_calls"]:
        parts.append({"role": "assistant", "content": "", "tool_calls": _wire_calls(reply)})
    return parts


def _final_fields(body: dict[str, Any], reply: dict[str, Any], started: int) -> dict[str, Any]:
    prompt_chars = sum(len(_content(m)) for m in _messages(body))
    answer_chars = len(reply.get("content", "")) + len(reply.get("thinking", ""))
    answer_chars += len(json.dumps(reply["tool_calls"])) if reply["tool_calls"] else 0
    # Split the real elapsed time so rates computed from the durations stay finite.
    elapsed = max(1000, time.perf_counter_ns() - started)
    load, prompt = elapsed // 10, elapsed * 3 // 10
    return {
        "done": True,
        "done_reason": reply.get("done_reason", "stop"),
        "total_duration": elapsed,
        "load_duration": load,
        "prompt_eval_count": reply.get("prompt_eval_count", max(1, prompt_chars // 4)),
        "prompt_eval_duration": prompt,
        "eval_count": reply.get("eval_count", max(1, answer_chars // 4)),
        "eval_duration": elapsed - load - prompt,
    }


# --- HTTP ------------------------------------------------------------------------------


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64
    # Quick restarts on the same port need SO_REUSEADDR on POSIX; on Windows
    # it would let the fake bind a port a real Ollama already holds.
    allow_reuse_address = sys.platform != "win32"

    def __init__(self, address: tuple[str, int], fake: FakeServer) -> None:
        self.fake = fake
        super().__init__(address, _Handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind resolves the host's FQDN, which can stall for
        # seconds on machines with slow DNS; the name is never used here.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]


class _Handler(BaseHTTPRequestHandler):
    # HTTP/1.1 so streams use chunked encoding: a dropped stream then reads
    # as truncated to the client instead of as a clean end of body.
    protocol_version = "HTTP/1.1"
    server_version = "fake-ollama"
    # Streamed chunks are small writes; with Nagle on, each waits for a delayed ACK (~40 ms).
    disable_nagle_algorithm = True
    timeout = 60
    server: _Server

    def setup(self) -> None:
        super().setup()
        self.server.fake._track(self.connection, open_=True)

    def finish(self) -> None:
        self.server.fake._track(self.connection, open_=False)
        with contextlib.suppress(OSError):
            super().finish()

    def handle(self) -> None:
        # A client that hangs up mid-answer is routine here (drops, timeouts).
        with contextlib.suppress(ConnectionError, TimeoutError):
            super().handle()

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_HEAD(self) -> None:
        if self.path == "/":
            self._send(200, b"", "text/plain; charset=utf-8", length=len(b"Ollama is running"))
        else:
            self._send(404, b"", "text/plain; charset=utf-8")

    def do_GET(self) -> None:
        fake = self.server.fake
        key = fake.scenario["api_key"]
        if (
            self.path.startswith("/v1/")
            and key
            and self.headers.get("Authorization") != f"Bearer {key}"
        ):
            self._send_error(401, "Incorrect API key provided", openai=True)
        elif self.path == "/":
            self._send(200, b"Ollama is running", "text/plain; charset=utf-8")
        elif self.path == "/api/version":
            self._send_json(200, {"version": fake.scenario["version"]})
        elif self.path == "/api/tags":
            self._send_json(200, _tags(fake.scenario["models"]))
        elif self.path == "/api/ps":
            self._send_json(200, {"models": []})
        elif self.path == "/v1/models":
            self._send_json(200, fake_openai.models(fake.scenario))
        elif self.path == "/props" and fake.scenario["llama_cpp"]:
            self._send_json(200, fake_openai.props(fake.scenario))
        elif self.path.startswith("/api/v0/models/") and fake.scenario["lm_studio"]:
            shown = fake_openai.lm_studio_model(fake.scenario, self.path)
            self._send_json(*((200, shown) if shown else (404, {"error": "model not found"})))
        else:
            self._send(404, b"404 page not found", "text/plain; charset=utf-8")

    def do_POST(self) -> None:
        body = self._read_json()
        if body is None:
            return
        if self.path == "/api/show":
            self._answer_show(body)
        elif self.path == "/api/chat":
            self._answer_chat(body, time.perf_counter_ns())
        elif self.path == "/v1/chat/completions":
            self._answer_chat(body, time.perf_counter_ns(), openai=True)
        elif self.path in EMBED_PATHS:
            self._answer_embed(body, openai=self.path.startswith("/v1/"))
        else:
            self._send(404, b"404 page not found", "text/plain; charset=utf-8")

    def _read_json(self) -> dict[str, Any] | None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw) if raw else None
        except ValueError as exc:
            self._send_json(400, {"error": f"invalid JSON: {exc}"})
            return None
        if not isinstance(body, dict):
            self._send_json(400, {"error": "missing request body"})
            return None
        return body

    def _answer_show(self, body: dict[str, Any]) -> None:
        fake = self.server.fake
        fake._note("/api/show", body)
        name = body.get("model") or body.get("name") or ""
        model = fake._model(name)
        if model is None:
            self._send_json(404, {"error": f"model '{name}' not found"})
        else:
            self._send_json(200, _show(model))

    def _answer_embed(self, body: dict[str, Any], openai: bool) -> None:
        fake = self.server.fake
        fake._note(self.path, body)
        name, texts = body.get("model") or "", body.get("input")
        texts = [texts] if isinstance(texts, str) else texts
        if fake._model(name) is None:
            self._send_error(404, f"model '{name}' not found", openai)
        elif not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            self._send_error(400, "input must be a string or a list of strings", openai)
        elif openai:
            data = [
                {"object": "embedding", "index": i, "embedding": toy_embedding(t)}
                for i, t in enumerate(texts)
            ]
            self._send_json(200, {"object": "list", "model": name, "data": data})
        else:
            vectors = [toy_embedding(t) for t in texts]
            self._send_json(200, {"model": name, "embeddings": vectors})

    def _answer_chat(self, body: dict[str, Any], started: int, openai: bool = False) -> None:
        fake = self.server.fake
        path = self.path
        model = fake._model(body.get("model") or "")
        if openai:
            auth = self.headers.get("Authorization", "")
            refusal = fake_openai.refusal(body, model, fake.scenario, auth)
        else:
            refusal = _chat_refusal(body, model)
        if refusal is not None:
            fake._note(path, body, status=refusal[0])
            self._send_error(refusal[0], refusal[1], openai)
            return
        answered_by, reply = fake._script.choose(body)
        if reply is None:
            fake._note(path, body, answered_by, 500)
            self._send_error(500, "scenario exhausted", openai)
            return
        seq = fake._note(path, body, answered_by, reply.get("status", 200))
        if fake._stopping.wait(reply.get("delay", 0)):
            self.close_connection = True
        elif "body" in reply:
            content_type = reply.get("content_type", "text/html; charset=utf-8")
            self._send(reply.get("body_status", 200), reply["body"].encode(), content_type)
        elif "status" in reply:
            self._send_error(reply["status"], reply["error"], openai)
        elif body.get("stream", not openai) and openai:
            self._events(body, reply, seq)
        elif body.get("stream", True) and not openai:
            self._stream(body, reply, started)
        elif reply.get("drop"):
            self.close_connection = True
        elif "error_line" in reply:
            self._send_error(500, reply["error_line"], openai)
        elif openai:
            self._send_json(200, fake_openai.completion(body, reply, seq))
        else:
            message = {"model": body["model"], "created_at": _now(), "message": _message(reply)}
            self._send_json(200, message | _final_fields(body, reply, started))

    def _send_error(self, status: int, error: str, openai: bool) -> None:
        self._send_json(status, fake_openai.error(status, error) if openai else {"error": error})

    def _events(self, body: dict[str, Any], reply: dict[str, Any], seq: int) -> None:
        """An OpenAI-style stream of server-sent events."""
        parts = fake_openai.events(body, reply, seq)
        broken = reply.get("drop") or "error_line" in reply
        sent = parts[: max(1, len(parts) // 2)] if broken else parts
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        pause = reply.get("chunk_delay", 0.05 if reply.get("endless") else 0)
        for event in sent:
            self._event(event)
            if pause and self.server.fake._stopping.wait(pause):
                return
        while reply.get("endless") and not self.server.fake._stopping.wait(pause):
            self._event(fake_openai.endless(body, seq))
        if reply.get("drop"):
            self.close_connection = True
            return
        if "error_line" in reply:
            self._event(fake_openai.error(500, reply["error_line"]))
        else:
            for event in fake_openai.ending(body, reply, seq):
                self._event(event)
            self._write_chunk(b"data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")

    def _event(self, payload: dict[str, Any]) -> None:
        self._write_chunk(b"data: " + json.dumps(payload).encode() + b"\n\n")

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def _stream(self, body: dict[str, Any], reply: dict[str, Any], started: int) -> None:
        parts = _stream_messages(reply)
        broken = reply.get("drop") or "error_line" in reply
        sent = parts[: max(1, len(parts) // 2)] if broken else parts
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        pause = reply.get("chunk_delay", 0.05 if reply.get("endless") else 0)
        for message in sent:
            self._chunk({"model": body["model"], "created_at": _now(), "message": message})
            if pause and self.server.fake._stopping.wait(pause):
                return
        while reply.get("endless") and not self.server.fake._stopping.wait(pause):
            thinking = {"role": "assistant", "content": "", "thinking": "and then "}
            self._chunk({"model": body["model"], "created_at": _now(), "message": thinking})
        if reply.get("drop"):
            # No terminating chunk: the client sees the body end mid-stream.
            self.close_connection = True
            return
        if "error_line" in reply:
            self._chunk({"error": reply["error_line"]})
        else:
            last = {"role": "assistant", "content": ""}
            head = {"model": body["model"], "created_at": _now(), "message": last}
            self._chunk(head | _final_fields(body, reply, started))
        self.wfile.write(b"0\r\n\r\n")

    def _chunk(self, payload: dict[str, Any]) -> None:
        self._write_chunk(json.dumps(payload).encode() + b"\n")

    def _send_json(self, status: int, payload: dict[str, Any]) -> None:
        self._send(status, json.dumps(payload).encode(), "application/json; charset=utf-8")

    def _send(self, status: int, data: bytes, content_type: str, length: int | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data) if length is None else length))
        self.end_headers()
        self.wfile.write(data)


# --- the server ------------------------------------------------------------------------


class FakeServer:
    """A scripted model server (Ollama and OpenAI-compatible) on a background thread;
    restartable on the same port."""

    def __init__(
        self,
        scenario: dict[str, Any] | Path | str,
        host: str = "127.0.0.1",
        port: int = 0,
        log_path: Path | None = None,
    ) -> None:
        if isinstance(scenario, dict):
            self.scenario = validate_scenario(scenario)
        else:
            self.scenario = load_scenario(Path(scenario))
        self.host = host
        self.port = port
        self.log_path = log_path
        self._script = _Script(self.scenario)
        self._models = {m["name"]: m for m in self.scenario["models"]}
        self._received: list[tuple[str, dict[str, Any]]] = []
        self._chats = 0
        self._lock = threading.Lock()
        self._connections: set[socket.socket] = set()
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._log: TextIO | None = None

    @property
    def url(self) -> str:
        if not self.port:
            raise RuntimeError("the fake Ollama server has not been started")
        return f"http://{self.host}:{self.port}"

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every chat and /api/show body received, in order."""
        with self._lock:
            return [body for _, body in self._received]

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        with self._lock:
            return [body for path, body in self._received if path in CHAT_PATHS]

    def start(self) -> FakeServer:
        if self._server is not None:
            return self
        self._stopping.clear()
        if self.log_path is not None:
            # Held open until stop() so each request costs one write and flush.
            self._log = Path(self.log_path).open("a", encoding="utf-8")  # noqa: SIM115
        try:
            server = _Server((self.host, self.port), self)
        except OSError:
            self._close_log()
            raise
        self.port = server.server_address[1]
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"fake-ollama-{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        self._stopping.set()
        server.shutdown()
        server.server_close()
        # Keep-alive connections would otherwise go on being served after a
        # stop, hiding a "server went away" from the client.
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        if self._thread is not None:
            self._thread.join()
        self._close_log()

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _model(self, name: str) -> dict[str, Any] | None:
        return self._models.get(_full_name(name)) if name else None

    def _track(self, connection: socket.socket, open_: bool) -> None:
        with self._lock:
            if open_:
                self._connections.add(connection)
            else:
                self._connections.discard(connection)

    def _note(
        self, path: str, body: dict[str, Any], answered_by: str | None = None, status: int = 200
    ) -> int:
        """Keep a request; returns the number of chat requests so far."""
        with self._lock:
            self._received.append((path, body))
            if path not in CHAT_PATHS:
                return self._chats
            self._chats += 1
            if self._log is None:
                return self._chats
            entry = {
                "seq": self._chats,
                "ts": _now(),
                "path": path,
                "status": status,
                "answered_by": answered_by,
                "request": body,
            }
            self._log.write(json.dumps(entry) + "\n")
            self._log.flush()
            return self._chats

    def _close_log(self) -> None:
        with self._lock:
            log, self._log = self._log, None
        if log is not None:
            log.close()


# --- command line ----------------------------------------------------------------------


def _write_atomically(path: Path, text: str) -> None:
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def _on_signals(handler: Callable[[int, FrameType | None], None]) -> dict[int, Any]:
    """Route every stop signal to handler; returns the handlers it replaced."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    names = ("SIGINT", "SIGTERM", "SIGBREAK")
    numbers = [getattr(signal, name) for name in names if hasattr(signal, name)]
    return {number: signal.signal(number, handler) for number in numbers}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m localagent.models.fake",
        description="Serve a scripted fake of the Ollama API from a scenario file.",
    )
    parser.add_argument("scenario", type=Path, help="scenario JSON file")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=11434, help="0 picks a free port")
    parser.add_argument("--log", type=Path, help="append each chat request here as JSON")
    parser.add_argument("--port-file", type=Path, help="write the bound port here")
    args = parser.parse_args(argv)
    try:
        fake = FakeServer(args.scenario, args.host, args.port, args.log).start()
    except ValueError as exc:
        print(f"fake ollama: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"fake ollama: cannot start on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    stopping = threading.Event()
    replaced = _on_signals(lambda number, frame: stopping.set())
    try:
        if args.port_file is not None:
            _write_atomically(args.port_file, f"{fake.port}\n")
        print(f"fake ollama listening on {fake.url}", flush=True)
        while not stopping.wait(0.2):
            pass
    finally:
        fake.stop()
        for number, previous in replaced.items():
            signal.signal(number, previous)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
