"""The adapter for OpenAI-compatible servers: llama.cpp's llama-server, LM Studio, vLLM,
LocalAI, Jan, Ollama's /v1, a remote GPU box. The only code that knows their wire format.

`/chat/completions` streamed as server-sent events, with `tools` and, for plans and
verdicts, `response_format` json_schema; a server that refuses the schema gets it in the
prompt instead (the callers validate either way). A server that refuses tools (llama.cpp
without `--jinja`) is driven by the text protocol, as an Ollama model without tools is.
`/models` for the model list, llama.cpp's `/props` for the context size.

The API key comes from LOCALAGENT_API_KEY (or OPENAI_API_KEY) and only ever goes into
the Authorization header: it is no setting, so it is never journaled or logged.
"""

from __future__ import annotations

import dataclasses
import json
import os
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import httpx

from localagent.errors import ModelUnavailable
from localagent.models.base import (
    Downgrade,
    HttpModel,
    Refused,
    Retry,
    count,
    error_text,
    read_call,
)
from localagent.models.protocol import Health, Message, ModelInfo, Reply
from localagent.settings import Settings
from localagent.stopping import StopSignal
from localagent.textcalls import UNPARSED, ToolCall, valid_unicode

KEY_VARIABLES = ("LOCALAGENT_API_KEY", "OPENAI_API_KEY")
JSON_IN_PROMPT = "Answer with one JSON object only, no other text, matching this JSON schema:\n"
# Where servers say their context size in /models: vLLM, LM Studio, llama.cpp (trained).
CONTEXT_KEYS = ("max_model_len", "context_length", "max_context_length")


def api_key() -> str:
    return next((os.environ[name] for name in KEY_VARIABLES if os.environ.get(name)), "")


def normalize_base_url(url: str) -> str:
    url = url.strip().rstrip("/")
    return url if "://" in url else "http://" + url


def _arguments(arguments: dict[str, Any]) -> str:
    raw = arguments.get(UNPARSED)
    if isinstance(raw, str):  # what the model sent, sent back as it was
        return raw
    return json.dumps(arguments, ensure_ascii=False)


def encode(messages: list[Message]) -> list[dict[str, Any]]:
    """Our messages as OpenAI-compatible servers read them: every call with its id, every
    result naming the call it answers, arguments as JSON text."""
    wire = []
    for m in messages:
        if m["role"] == "tool":
            wire.append({"role": "tool", "tool_call_id": m["call"], "content": m["content"]})
        elif m.get("tool_calls"):
            calls = [
                {
                    "id": c["id"],
                    "type": "function",
                    "function": {"name": c["name"], "arguments": _arguments(c["arguments"])},
                }
                for c in m["tool_calls"]
            ]
            wire.append({"role": "assistant", "content": m["content"], "tool_calls": calls})
        else:
            wire.append({"role": m["role"], "content": m["content"]})
    return wire


def _with_schema_in_prompt(wire: list[dict[str, Any]], schema: dict[str, Any]) -> None:
    text = JSON_IN_PROMPT + json.dumps(schema)
    if wire and wire[0]["role"] == "system":
        wire[0] = {**wire[0], "content": f"{wire[0]['content']}\n\n{text}"}
    else:
        wire.insert(0, {"role": "system", "content": text})


def _mentions(error: str, *words: str) -> bool:
    return any(word in error.lower() for word in words)


class _Calls:
    """Tool calls as a stream sends them: pieces by index, arguments in fragments."""

    def __init__(self) -> None:
        self.parts: dict[int, dict[str, Any]] = {}

    def add(self, deltas: list[Any]) -> None:
        for position, delta in enumerate(deltas):
            if not isinstance(delta, dict):
                continue
            index = delta.get("index", position)
            part = self.parts.setdefault(index, {"id": "", "name": "", "arguments": ""})
            function = delta.get("function") or {}
            part["id"] = part["id"] or str(delta.get("id") or "")
            part["name"] += str(function.get("name") or "")
            args = function.get("arguments")
            if isinstance(args, str) and isinstance(part["arguments"], str):
                part["arguments"] += args
            elif args is not None:  # an object, as some servers send
                part["arguments"] = args

    def read(self, known: set[str]) -> list[ToolCall]:
        calls = []
        for part in (self.parts[i] for i in sorted(self.parts)):
            call = read_call(part["name"], part["arguments"] or "{}", known)
            calls.append(dataclasses.replace(call, server_id=valid_unicode(part["id"])))
        return calls


class OpenAIModel(HttpModel):
    backend = "openai"
    start_hint = "start the server (or set LOCALAGENT_BASE_URL to where it runs)"
    tools_fix = (
        "llama.cpp: start llama-server with --jinja; other servers: use a model whose "
        "chat template has tool calling"
    )

    def __init__(
        self,
        settings: Settings,
        wait: Callable[[float], None] = time.sleep,
        stop: StopSignal | None = None,
    ) -> None:
        key = api_key()
        headers = {"Authorization": f"Bearer {key}"} if key else None
        super().__init__(settings, normalize_base_url(settings.base_url), wait, stop, headers)
        self.structured = True  # response_format json_schema, until the server refuses it
        self.llama_cpp = False  # it answered /props: send cache_prompt
        self.tools_note = ""
        self.info: ModelInfo | None = None

    @property
    def missing_fix(self) -> str:
        return (
            f"load {self.settings.model} on the server at {self.host}, or set OLLAMA_MODEL "
            "(or --model) to a model it lists at /models"
        )

    def _get(self, path: str, timeout: float | None = None) -> Any:
        response = self.http.get(path, timeout=timeout or self.timeout)
        if response.status_code != 200:
            raise Refused(response.status_code, error_text(response))
        return response.json()

    def _models(self, timeout: float | None = None) -> list[dict[str, Any]]:
        try:
            listing = self._get("models", timeout)
        except Refused as exc:
            if exc.status not in (404, 405):
                raise
            raise ModelUnavailable(
                f"no OpenAI-compatible API at {self.host}/models (HTTP {exc.status}); "
                "check LOCALAGENT_BASE_URL (it usually ends in /v1)"
            ) from None
        data = listing.get("data") if isinstance(listing, dict) else None
        if not isinstance(data, list):
            raise ValueError("a model list that is not OpenAI's")
        return [m for m in data if isinstance(m, dict)]

    def health(self) -> Health:
        try:
            names = [str(m.get("id")) for m in self._models(timeout=5.0)]
        except (httpx.HTTPError, ValueError, Refused, ModelUnavailable) as exc:
            fix = "start it, or set LOCALAGENT_BASE_URL to where it runs (e.g. .../v1)"
            return Health(False, f"{self.host} did not answer /models: {exc}", fix)
        shown = ", ".join(names[:5]) + (" …" if len(names) > 5 else "")
        return Health(True, f"OpenAI-compatible server at {self.host} ({shown or 'no models'})")

    def wait_for_server(self) -> str:
        return f"{len(self._with_retry('server check', self._models))} models"

    def _props(self) -> dict[str, Any]:
        """llama.cpp's server properties (at the server's root), or {} elsewhere."""
        root = self.host[: -len("/v1")] if self.host.endswith("/v1") else self.host
        try:
            props = self._get(root + "/props", timeout=5.0)
        except (httpx.HTTPError, ValueError, Refused):
            return {}
        return props if isinstance(props, dict) else {}

    def _lm_studio_context(self) -> int | None:
        """LM Studio's own REST API (`/api/v0/models/ID`, at the server's root) names the
        context its model is loaded with (`loaded_context_length`) and the most it takes
        (`max_context_length`); its /v1/models names neither. None elsewhere."""
        root = self.host[: -len("/v1")] if self.host.endswith("/v1") else self.host
        url = f"{root}/api/v0/models/{quote(self.settings.model, safe='')}"
        try:
            shown = self._get(url, timeout=5.0)
        except (httpx.HTTPError, ValueError, Refused):
            return None
        if not isinstance(shown, dict):
            return None
        sizes = [shown.get("loaded_context_length"), shown.get("max_context_length")]
        return next((count(size) for size in sizes if count(size)), None)

    def preflight(self, within: float | None = None) -> ModelInfo:
        """Check the server serves the model; learn its context size; fix `num_ctx`."""
        models = self._abandonably(lambda: self._with_retry("model check", self._models, within))
        props = self._props()
        self.llama_cpp = bool(props)
        entry = next((m for m in models if m.get("id") == self.settings.model), None)
        if entry is None and not self.llama_cpp:  # llama.cpp serves its one model by any name
            names = ", ".join(str(m.get("id")) for m in models[:10]) or "none"
            raise ModelUnavailable(
                f"the model {self.settings.model!r} is not served at {self.host} "
                f"(it serves: {names}); {self.missing_fix}"
            )
        settings = props.get("default_generation_settings")
        sizes = [settings.get("n_ctx") if isinstance(settings, dict) else None, props.get("n_ctx")]
        sizes += [(entry or {}).get(key) for key in CONTEXT_KEYS]
        context = next((count(size) for size in sizes if count(size)), None)
        if context is None and not self.llama_cpp:
            context = self._lm_studio_context()
        if context:
            self.num_ctx = min(self.settings.num_ctx, context)
        self.info = ModelInfo([], context)
        return self.info

    def probe_tools(self) -> str:
        """A one-token call with one tool: llama.cpp without --jinja refuses it at once."""
        tool = {
            "type": "function",
            "function": {"name": "ping", "description": "ping", "parameters": {"type": "object"}},
        }
        request = {**self._request([{"role": "user", "content": "ping"}], [tool], None, 0.0)}
        request.update(stream=False, max_tokens=1)
        request.pop("stream_options")
        try:
            response = self.http.post("chat/completions", json=request, timeout=30.0)
        except httpx.HTTPError:
            return ""
        if response.status_code != 200:
            self._refused(response.status_code, error_text(response), True, False)
        return self.tools_note

    def _request(
        self,
        messages: list[Message],
        tools: list[dict[str, Any]] | None,
        schema: dict[str, Any] | None,
        temperature: float | None,
    ) -> dict[str, Any]:
        wire = encode(messages)
        request: dict[str, Any] = {
            "model": self.settings.model,
            "messages": wire,
            "temperature": self.settings.temperature if temperature is None else temperature,
            "max_tokens": self.settings.num_predict,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if tools:
            request["tools"] = tools
        if schema is not None and self.structured:
            request["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "answer", "schema": schema},
            }
        elif schema is not None:
            _with_schema_in_prompt(wire, schema)
        if self.llama_cpp:
            request["cache_prompt"] = True  # reuse the KV cache for the unchanged prefix
        return request

    def _refused(self, status: int, error: str, tools: bool, schema: bool) -> Exception:
        """A Downgrade when the server refused a capability it can do without."""
        if tools and status in (400, 422, 500, 501) and _mentions(error, "tool", "jinja"):
            self.native_tools = False
            self.tools_note = f"the server refuses tool calls ({error[:120]})"
            return Downgrade(f"{self.tools_note}; using the text protocol. {self.tools_fix}")
        wording = _mentions(error, "response_format", "json_schema", "schema", "grammar")
        if schema and self.structured and status in (400, 422, 500, 501) and wording:
            self.structured = False
            return Downgrade(
                f"the server refuses response_format ({error[:120]}); asking for JSON in the prompt"
            )
        return Refused(status, error)

    def _embed(self, texts: list[str]) -> list[list[float]]:
        request = {"model": self.settings.embed_model, "input": texts}
        r = self.http.post("embeddings", json=request)
        if r.status_code != 200:
            raise self._embed_refused(Refused(r.status_code, error_text(r)))
        items = sorted(r.json()["data"], key=lambda item: item["index"])
        return [[float(x) for x in item["embedding"]] for item in items]

    def _stream(
        self,
        messages: list[Message],
        tools: list[dict[str, Any]] | None,
        schema: dict[str, Any] | None,
        abandon: threading.Event,
        temperature: float | None,
    ) -> Reply:
        tools = tools if self.native_tools else None
        request = self._request(messages, tools, schema, temperature)
        structured = "response_format" in request
        with self.http.stream("POST", "chat/completions", json=request) as r:
            if r.status_code != 200:
                raise self._refused(r.status_code, error_text(r), bool(tools), structured)
            known = {t["function"]["name"] for t in tools or []}
            if r.headers.get("content-type", "").startswith("application/json"):
                return self._whole(json.loads(r.read()), known)  # a server that does not stream
            return self._events(r, known, abandon)

    def _events(self, r: httpx.Response, known: set[str], abandon: threading.Event) -> Reply:
        reply, calls, content = Reply(), _Calls(), []
        deadline = time.monotonic() + self.settings.call_deadline
        finish = None
        for line in r.iter_lines():
            if not line.startswith("data:"):
                continue  # blank lines, comments, event names
            data = line[len("data:") :].strip()
            if data == "[DONE]":
                break
            part = json.loads(data)
            if not isinstance(part, dict):
                raise ValueError("an event that is not an object")
            if part.get("error"):
                raise Retry(f"server error mid-stream: {str(part['error'])[:200]}")
            self._usage(reply, part.get("usage"))
            for choice in (part.get("choices") or [])[:1]:
                delta = choice.get("delta") or {}
                content.append(str(delta.get("content") or ""))
                calls.add(delta.get("tool_calls") or [])
                finish = choice.get("finish_reason") or finish
            if time.monotonic() > deadline:
                reply.cut_off = "deadline"
                break
            if abandon.is_set():
                break
        else:
            if finish is None:
                raise Retry("the stream ended before the reply was done")
        reply.cut_off = reply.cut_off or ("length" if finish == "length" else "")
        reply.content = valid_unicode("".join(content))
        reply.tool_calls = calls.read(known)
        return reply

    def _whole(self, body: Any, known: set[str]) -> Reply:
        choice = body["choices"][0]
        message = choice.get("message") or {}
        calls = _Calls()
        calls.add(message.get("tool_calls") or [])
        reply = Reply(content=valid_unicode(str(message.get("content") or "")))
        reply.tool_calls = calls.read(known)
        reply.cut_off = "length" if choice.get("finish_reason") == "length" else ""
        self._usage(reply, body.get("usage"))
        return reply

    @staticmethod
    def _usage(reply: Reply, usage: Any) -> None:
        if isinstance(usage, dict):
            reply.prompt_tokens = count(usage.get("prompt_tokens"))
            reply.completion_tokens = count(usage.get("completion_tokens"))
