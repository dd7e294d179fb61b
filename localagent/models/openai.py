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

import json
import os
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx

from localagent.models import numbers, openai_info, openai_reply
from localagent.models.base import Downgrade, HttpModel, Refused
from localagent.models.calls import function_tools
from localagent.models.config import ModelConfig
from localagent.models.protocol import Health, Message, ModelInfo, Reply, ToolSpec
from localagent.models.wire import (
    ERROR_BYTES,
    Overflow,
    Overtime,
    embed_bytes,
    error_text,
    reply_bytes,
)
from localagent.system.errors import ModelUnavailable
from localagent.system.stopping import StopSignal
from localagent.textcalls import UNPARSED

KEY_VARIABLES = ("LOCALAGENT_API_KEY", "OPENAI_API_KEY")
JSON_IN_PROMPT = "Answer with one JSON object only, no other text, matching this JSON schema:\n"


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
    """The schema after the last message: the front of the prompt (the system prompt every
    call shares) stays as it is, so the server's prompt cache still serves it."""
    text = JSON_IN_PROMPT + json.dumps(schema)
    if wire and wire[-1]["role"] == "user":
        wire[-1] = {**wire[-1], "content": f"{wire[-1]['content']}\n\n{text}"}
    else:
        wire.append({"role": "user", "content": text})


def _mentions(error: str, *words: str) -> bool:
    return any(word in error.lower() for word in words)


class OpenAIModel(HttpModel):
    backend = "openai"
    start_hint = "start the server (or set LOCALAGENT_BASE_URL to where it runs)"
    tools_fix = (
        "llama.cpp: start llama-server with --jinja; other servers: use a model whose "
        "chat template has tool calling"
    )

    def __init__(
        self,
        config: ModelConfig,
        wait: Callable[[float], None] = time.sleep,
        stop: StopSignal | None = None,
    ) -> None:
        key = api_key()
        headers = {"Authorization": f"Bearer {key}"} if key else None
        super().__init__(config, normalize_base_url(config.url), wait, stop, headers)
        self.structured = True  # response_format json_schema, until the server refuses it
        self.llama_cpp = False  # it answered /props: send cache_prompt
        self.tools_note = ""
        self.info: ModelInfo | None = None

    @property
    def missing_fix(self) -> str:
        return (
            f"load {self.config.model} on the server at {self.host}, or set OLLAMA_MODEL "
            "(or --model) to a model it lists at /models"
        )

    def _get(self, path: str, timeout: float | None = None) -> Any:
        response = self._fetch("GET", path, within=timeout)
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
        except (httpx.HTTPError, ValueError, Refused, ModelUnavailable, Overflow, Overtime) as exc:
            fix = "start it, or set LOCALAGENT_BASE_URL to where it runs (e.g. .../v1)"
            return Health(False, f"{self.host} did not answer /models: {exc}", fix)
        shown = ", ".join(names[:5]) + (" …" if len(names) > 5 else "")
        return Health(True, f"OpenAI-compatible server at {self.host} ({shown or 'no models'})")

    def wait_for_server(self) -> str:
        return f"{len(self._with_retry('server check', self._models))} models"

    def _json(self, url: str) -> Any:
        """What a GET of this side URL answers; None when it fails (it is optional)."""
        try:
            return self._get(url, timeout=5.0)
        except (httpx.HTTPError, ValueError, Refused, Overflow, Overtime):
            return None

    def preflight(self, within: float | None = None, patient: bool = False) -> ModelInfo:
        """Check the server serves the model; learn its context size and its size in
        parameters; fix `num_ctx`."""
        models = self._abandonably(
            lambda: self._with_retry("model check", self._models, within, not patient)
        )
        props = self._json(openai_info.root(self.host) + "/props")
        props = props if isinstance(props, dict) else {}
        self.llama_cpp = bool(props)
        entry = next((m for m in models if m.get("id") == self.config.model), None)
        if entry is None and not self.llama_cpp:  # llama.cpp serves its one model by any name
            names = ", ".join(str(m.get("id")) for m in models[:10]) or "none"
            raise ModelUnavailable(
                f"the model {self.config.model!r} is not served at {self.host} "
                f"(it serves: {names}); {self.missing_fix}"
            )
        served = entry or (models[0] if models else {})
        context = openai_info.context(served, props)
        if context is None and not self.llama_cpp:
            context = openai_info.lm_studio_context(self._json, self.host, self.config.model)
        if context:
            self.num_ctx = min(self.config.num_ctx, context)
        slots = props.get("total_slots")
        slots = slots if isinstance(slots, int) and not isinstance(slots, bool) else None
        self.info = ModelInfo([], context, self._parameters(served), slots)
        return self.info

    def _parameters(self, served: dict[str, Any]) -> float | None:
        """The model's size: as the server says it, else as its name says it."""
        said = openai_info.parameters(served)
        if said is None and not self.llama_cpp:
            said = openai_info.lm_studio_parameters(self._json, self.host, self.config.model)
        names = (served.get("root"), self.config.model, served.get("id"))
        return said or openai_info.named_parameters(*names)

    def probe_tools(self) -> str:
        """A one-token call with one tool: llama.cpp without --jinja refuses it at once."""
        tool = ToolSpec("ping", "ping", {"type": "object"})
        request = {**self._request([{"role": "user", "content": "ping"}], [tool], None, 0.0)}
        request.update(stream=False, max_tokens=1)
        request.pop("stream_options")
        try:
            response = self._fetch("POST", "chat/completions", json=request, within=30.0)
        except (httpx.HTTPError, Overflow, Overtime):
            return ""
        if response.status_code != 200:
            self._refused(response.status_code, error_text(response), True, False)
        return self.tools_note

    def _request(
        self,
        messages: list[Message],
        tools: list[ToolSpec] | None,
        schema: dict[str, Any] | None,
        temperature: float | None,
        limit: int | None = None,
    ) -> dict[str, Any]:
        wire = encode(messages)
        request: dict[str, Any] = {
            "model": self.config.model,
            "messages": wire,
            "temperature": self.config.temperature if temperature is None else temperature,
            "max_tokens": self.num_predict if limit is None else limit,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if tools:
            request["tools"] = function_tools(tools)
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
        request = {"model": self.config.embed_model, "input": texts}
        r = self._fetch("POST", "embeddings", json=request, limit=embed_bytes(len(texts)))
        if r.status_code != 200:
            raise self._embed_refused(Refused(r.status_code, error_text(r)))
        items = sorted(r.json()["data"], key=lambda item: item["index"])
        return [numbers.vector(item["embedding"]) for item in items]

    def _stream(
        self,
        messages: list[Message],
        tools: list[ToolSpec] | None,
        schema: dict[str, Any] | None,
        abandon: threading.Event,
        temperature: float | None,
        limit: int,
    ) -> Reply:
        tools = tools if self.native_tools else None
        request = self._request(messages, tools, schema, temperature, limit)
        structured = "response_format" in request
        exchange = self._exchange(reply_bytes(self.num_predict), abandon=abandon)
        idle = self.config.request_timeout
        with exchange.open(self.http, "POST", "chat/completions", idle, json=request) as r:
            if r.status_code != 200:
                error = error_text(exchange.whole(r, ERROR_BYTES))
                raise self._refused(r.status_code, error, bool(tools), structured)
            known = {t.name for t in tools or []}
            if r.headers.get("content-type", "").startswith("application/json"):
                # a server that does not stream
                return openai_reply.whole(json.loads(exchange.whole(r).content), known)
            return openai_reply.events(exchange.lines(r), known)
