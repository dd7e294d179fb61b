"""The Ollama adapter: the only code that knows Ollama's wire format and errors.

Every request is made by this module, not the official client: that keeps the run from
importing the client and its models (about 0.1 s at every resume), bounds every answer
(`wire.Exchange`), and reads chat streams leniently: tool arguments sent as a JSON
string are kept.
A missing model is reported with `ollama pull`; a model without native tool calling
("does not support tools") is switched to the text tool protocol for the rest of the
run. Every call has an end: `num_predict` caps the reply, `call_deadline` the call.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from localagent.models import numbers
from localagent.models.base import (
    Downgrade,
    HttpModel,
    Refused,
    Retry,
)
from localagent.models.calls import function_tools, read_call, unreadable_call
from localagent.models.config import ModelConfig
from localagent.models.loops import LoopCut
from localagent.models.protocol import Health, Message, ModelInfo, Reply, ToolSpec, prompt_size
from localagent.models.wire import (
    ERROR_BYTES,
    Overflow,
    Overtime,
    embed_bytes,
    error_text,
    reply_bytes,
)
from localagent.system.stopping import StopSignal
from localagent.textcalls import ToolCall, valid_unicode

DEFAULT_PORT = 11434


def normalize_host(host: str) -> str:
    """A URL for OLLAMA_HOST as users write it; a server-side bind address means loopback."""
    host = host.strip() or "127.0.0.1"
    # As in Ollama itself: a bare host means port 11434, a URL its scheme's port.
    default_port = DEFAULT_PORT
    if "://" not in host:
        host = "http://" + host
    else:
        scheme = host.split("://", 1)[0].lower()
        default_port = {"http": 80, "https": 443}.get(scheme, DEFAULT_PORT)
    parts = urlsplit(host)
    name = parts.hostname or ""
    if name in ("0.0.0.0", "::", ""):
        name = "127.0.0.1"
    netloc = f"[{name}]" if ":" in name else name
    netloc += f":{parts.port or default_port}"
    return urlunsplit((parts.scheme or "http", netloc, parts.path.rstrip("/"), "", ""))


def encode(messages: list[Message]) -> list[dict[str, Any]]:
    """Our messages as Ollama reads them: calls without ids, results by tool name."""
    wire = []
    for m in messages:
        if m["role"] == "tool":
            wire.append({"role": "tool", "content": m["content"], "tool_name": m["tool"]})
        elif m.get("tool_calls"):
            calls = [
                {"function": {"name": c["name"], "arguments": c["arguments"]}}
                for c in m["tool_calls"]
            ]
            wire.append({"role": "assistant", "content": m["content"], "tool_calls": calls})
        else:
            wire.append({"role": m["role"], "content": m["content"]})
    return wire


def _tool_call(raw: Any, known: set[str]) -> ToolCall:
    function = raw.get("function") if isinstance(raw, dict) else None
    if not isinstance(function, dict):
        return unreadable_call(raw)
    return read_call(function.get("name", ""), function.get("arguments"), known)


class OllamaModel(HttpModel):
    backend = "ollama"
    start_hint = "start it with `ollama serve`"
    tools_fix = (
        "for best results use a model with tool calling, e.g. `ollama pull qwen2.5-coder:7b`"
    )

    def __init__(
        self,
        config: ModelConfig,
        wait: Callable[[float], None] = time.sleep,
        stop: StopSignal | None = None,
    ) -> None:
        super().__init__(config, normalize_host(config.url), wait, stop)
        self.info: ModelInfo | None = None

    @property
    def missing_fix(self) -> str:
        return f"ollama pull {self.config.model}"

    def _show(self) -> dict[str, Any]:
        r = self._fetch("POST", "/api/show", json={"model": self.config.model})
        if r.status_code != 200:
            raise Refused(r.status_code, error_text(r))
        shown = r.json()
        if not isinstance(shown, dict):
            raise ValueError("the model check's answer is not an object")
        return shown

    def health(self) -> Health:
        try:
            version = self._fetch("GET", "/api/version", within=5.0).json().get("version", "?")
        except (httpx.HTTPError, ValueError, AttributeError, Overflow, Overtime) as exc:
            fix = "start it with `ollama serve` (or set OLLAMA_HOST to where it runs)"
            return Health(False, f"{self.host} did not answer: {exc}", fix)
        return Health(True, f"Ollama {str(version)[:40]} at {self.host}")

    def wait_for_server(self) -> str:
        def listing() -> list[Any]:
            r = self._fetch("GET", "/api/tags")
            if r.status_code != 200:
                raise Refused(r.status_code, error_text(r))
            return r.json()["models"]

        return f"{len(self._with_retry('server check', listing))} models"

    def preflight(self, within: float | None = None, patient: bool = False) -> ModelInfo:
        """Check the model exists and learn its capabilities; fix `num_ctx` for the run.

        `within` bounds the wait for the server (default: the retry deadline).
        """
        shown = self._abandonably(
            lambda: self._with_retry("model check", self._show, within, not patient)
        )
        info = shown.get("model_info") or {}
        details = shown.get("details") or {}
        if not isinstance(info, dict) or not isinstance(details, dict):
            info, details = {}, {}
        sizes = (numbers.context(v) for k, v in info.items() if k.endswith(".context_length"))
        context = next((size for size in sizes if size), None)
        caps = numbers.names(shown.get("capabilities"))
        if caps and "tools" not in caps:
            self.native_tools = False
        if context:
            self.num_ctx = min(self.config.num_ctx, context)
        size = numbers.billions(info.get("general.parameter_count"), details.get("parameter_size"))
        self.info = ModelInfo(caps, context, size)
        return self.info

    def probe_tools(self) -> str:
        return "" if self.native_tools else f"{self.config.model} has no native tool calling"

    def _request(
        self,
        messages: list[Message],
        tools: list[ToolSpec] | None,
        schema: dict[str, Any] | None,
        temperature: float | None,
        limit: int | None = None,
    ) -> dict[str, Any]:
        options = {
            "num_ctx": self.num_ctx,
            "temperature": self.config.temperature if temperature is None else temperature,
            "num_predict": self.num_predict if limit is None else limit,
        }
        request: dict[str, Any] = {
            "model": self.config.model,
            "messages": encode(messages),
            "options": options,
            "stream": True,
        }
        if tools:
            request["tools"] = function_tools(tools)
        if schema is not None:
            request["format"] = schema
        return request

    def _embed(self, texts: list[str]) -> list[list[float]]:
        request = {"model": self.config.embed_model, "input": texts}
        r = self._fetch("POST", "/api/embed", json=request, limit=embed_bytes(len(texts)))
        if r.status_code != 200:
            raise self._embed_refused(Refused(r.status_code, error_text(r)))
        return [numbers.vector(vector) for vector in r.json()["embeddings"]]

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
        known = {t.name for t in tools or []}
        request = self._request(messages, tools, schema, temperature, limit)
        exchange = self._exchange(reply_bytes(self.num_predict), abandon=abandon)
        idle = self.config.request_timeout
        with exchange.open(self.http, "POST", "/api/chat", idle, json=request) as r:
            if r.status_code != 200:
                error = error_text(exchange.whole(r, ERROR_BYTES))
                if r.status_code == 400 and "does not support tools" in error and tools:
                    self.native_tools = False
                    raise Downgrade(
                        f"{self.config.model} has no native tool calling; using the text protocol"
                    )
                raise Refused(r.status_code, error)
            return _cache_estimate(_read(exchange.lines(r), known), messages)


def _cache_estimate(reply: Reply, messages: list[Message]) -> Reply:
    """What the prompt cache served, where the server does not say: Ollama's
    `prompt_eval_count` counts only the tokens it read anew in some versions (the whole
    prompt in others), so a count under half the prompt's size (characters / 4) means the
    rest came from its cache."""
    if reply.cached_tokens is not None:
        return reply
    size = prompt_size(messages)
    if 0 < reply.prompt_tokens < size // 2:
        reply.cached_tokens, reply.prompt_tokens = size - reply.prompt_tokens, size
    return reply


def _read(lines: Iterator[str], known: set[str]) -> Reply:
    """A streamed reply. Past its deadline or its byte bound, what came is the reply, cut
    off, and so is the text before a repetition once the text loops; when nothing came,
    only keep-alives or part of one line, the server failed."""
    reply, content, answered = Reply(), LoopCut(), False
    try:
        for line in lines:
            if not line.strip():
                continue
            part = json.loads(line)
            if not isinstance(part, dict):
                raise ValueError("a stream line that is not an object")
            if part.get("error"):
                raise Retry(f"server error mid-stream: {str(part['error'])[:200]}")
            answered = True
            message = part.get("message") or {}
            if content.add(str(message.get("content") or "")):
                reply.cut_off = "loop"
                break
            reply.tool_calls += [_tool_call(c, known) for c in message.get("tool_calls") or []]
            if part.get("done"):
                reply.prompt_tokens = numbers.tokens(part.get("prompt_eval_count"))
                found = numbers.cached(part.get("timings"))  # a llama.cpp server behind
                if found is not None:
                    reply.cached_tokens, reply.prompt_tokens = found
                reply.completion_tokens = numbers.tokens(part.get("eval_count"))
                reply.cut_off = "length" if part.get("done_reason") == "length" else ""
                break
        else:
            raise Retry("the stream ended before the reply was done")
    except (Overflow, Overtime) as exc:
        if not answered:
            raise
        reply.cut_off = "deadline" if isinstance(exc, Overtime) else "length"
    if reply.cut_off:
        reply.estimate(content.chunks)
    reply.content = valid_unicode(content.text())
    return reply
