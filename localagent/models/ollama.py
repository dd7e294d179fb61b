"""The Ollama adapter: the only code that knows Ollama's wire format and errors.

Through the official client for listing models (`resume --all` waiting for the server);
a run's own calls (the model check and chat streams) are made by this module, which
keeps the run from importing the client and its models (about 0.1 s at every resume),
and reads chat streams leniently: tool arguments sent as a JSON string are kept.
A missing model is reported with `ollama pull`; a model without native tool calling
("does not support tools") is switched to the text tool protocol for the rest of the
run. Every call has an end: `num_predict` caps the reply, `call_deadline` the call.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from localagent.models.base import (
    Downgrade,
    HttpModel,
    Refused,
    Retry,
    count,
    error_text,
    http_client,
    is_loopback,
    read_call,
    unreadable_call,
)
from localagent.models.protocol import Health, Message, ModelInfo, Reply
from localagent.settings import Settings
from localagent.stopping import StopSignal
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


def _is_int(value: Any) -> bool:
    try:
        int(value)
    except (TypeError, ValueError):
        return False
    return True


class OllamaModel(HttpModel):
    backend = "ollama"
    start_hint = "start it with `ollama serve`"
    tools_fix = (
        "for best results use a model with tool calling, e.g. `ollama pull qwen2.5-coder:7b`"
    )

    def __init__(
        self,
        settings: Settings,
        wait: Callable[[float], None] = time.sleep,
        stop: StopSignal | None = None,
    ) -> None:
        super().__init__(settings, normalize_host(settings.ollama_host), wait, stop)
        self.info: ModelInfo | None = None

    @property
    def missing_fix(self) -> str:
        return f"ollama pull {self.settings.model}"

    def _show(self) -> dict[str, Any]:
        r = self.http.post("/api/show", json={"model": self.settings.model})
        if r.status_code != 200:
            raise Refused(r.status_code, error_text(r))
        shown = r.json()
        if not isinstance(shown, dict):
            raise ValueError("the model check's answer is not an object")
        return shown

    def health(self) -> Health:
        try:
            with http_client(self.host, 5.0) as http:
                version = http.get("/api/version").json().get("version", "?")
        except (httpx.HTTPError, ValueError, AttributeError) as exc:
            fix = "start it with `ollama serve` (or set OLLAMA_HOST to where it runs)"
            return Health(False, f"{self.host} did not answer: {exc}", fix)
        return Health(True, f"Ollama {version} at {self.host}")

    def wait_for_server(self) -> str:
        import ollama

        client = ollama.Client(
            host=self.host, timeout=self.timeout, trust_env=not is_loopback(self.host)
        )

        def listing() -> Any:
            try:
                return client.list()
            except ollama.ResponseError as exc:
                raise Refused(exc.status_code, str(exc.error)) from None

        return f"{len(self._with_retry('server check', listing).models)} models"

    def preflight(self, within: float | None = None) -> ModelInfo:
        """Check the model exists and learn its capabilities; fix `num_ctx` for the run.

        `within` bounds the wait for the server (default: the retry deadline).
        """
        shown = self._abandonably(lambda: self._with_retry("model check", self._show, within))
        info = shown.get("model_info") or {}
        details = shown.get("details") or {}
        if not isinstance(info, dict) or not isinstance(details, dict):
            info, details = {}, {}
        context = next(
            (int(v) for k, v in info.items() if k.endswith(".context_length") and _is_int(v)),
            None,
        )
        listed = shown.get("capabilities")
        caps = [str(c) for c in listed] if isinstance(listed, list) else []
        if caps and "tools" not in caps:
            self.native_tools = False
        if context:
            self.num_ctx = min(self.settings.num_ctx, context)
        count = info.get("general.parameter_count")
        size = _billions(details.get("parameter_size"))
        size = count / 1e9 if isinstance(count, int) and count > 0 and not size else size
        self.info = ModelInfo(caps, context, size)
        return self.info

    def probe_tools(self) -> str:
        return "" if self.native_tools else f"{self.settings.model} has no native tool calling"

    def _request(
        self,
        messages: list[Message],
        tools: list[dict[str, Any]] | None,
        schema: dict[str, Any] | None,
        temperature: float | None,
    ) -> dict[str, Any]:
        options = {
            "num_ctx": self.num_ctx,
            "temperature": self.settings.temperature if temperature is None else temperature,
            "num_predict": self.settings.num_predict,
        }
        request: dict[str, Any] = {
            "model": self.settings.model,
            "messages": encode(messages),
            "options": options,
            "stream": True,
        }
        if tools:
            request["tools"] = tools
        if schema is not None:
            request["format"] = schema
        return request

    def _embed(self, texts: list[str]) -> list[list[float]]:
        request = {"model": self.settings.embed_model, "input": texts}
        r = self.http.post("/api/embed", json=request)
        if r.status_code != 200:
            raise self._embed_refused(Refused(r.status_code, error_text(r)))
        return [[float(x) for x in vector] for vector in r.json()["embeddings"]]

    def _stream(
        self,
        messages: list[Message],
        tools: list[dict[str, Any]] | None,
        schema: dict[str, Any] | None,
        abandon: threading.Event,
        temperature: float | None,
    ) -> Reply:
        tools = tools if self.native_tools else None
        reply = Reply()
        known = {t["function"]["name"] for t in tools or []}
        content: list[str] = []
        deadline = time.monotonic() + self.settings.call_deadline
        request = self._request(messages, tools, schema, temperature)
        with self.http.stream("POST", "/api/chat", json=request) as r:
            if r.status_code != 200:
                error = error_text(r)
                if r.status_code == 400 and "does not support tools" in error and tools:
                    self.native_tools = False
                    raise Downgrade(
                        f"{self.settings.model} has no native tool calling; using the text protocol"
                    )
                raise Refused(r.status_code, error)
            for line in r.iter_lines():
                if not line.strip():
                    continue
                part = json.loads(line)
                if not isinstance(part, dict):
                    raise ValueError("a stream line that is not an object")
                if part.get("error"):
                    raise Retry(f"server error mid-stream: {str(part['error'])[:200]}")
                message = part.get("message") or {}
                content.append(str(message.get("content") or ""))
                reply.tool_calls += [_tool_call(c, known) for c in message.get("tool_calls") or []]
                if part.get("done"):
                    reply.prompt_tokens = count(part.get("prompt_eval_count"))
                    reply.completion_tokens = count(part.get("eval_count"))
                    reply.cut_off = "length" if part.get("done_reason") == "length" else ""
                    break
                if time.monotonic() > deadline:
                    reply.cut_off = "deadline"
                    break
                if abandon.is_set():
                    break
            else:
                raise Retry("the stream ended before the reply was done")
        reply.content = valid_unicode("".join(content))
        return reply


def _billions(size: object) -> float | None:
    """Ollama's `parameter_size` ("7.6B", "494.03M") in billions; None if unreadable."""
    found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMBT])\s*", str(size or ""), re.IGNORECASE)
    if not found:
        return None
    scale = {"K": 1e-6, "M": 1e-3, "B": 1.0, "T": 1e3}[found[2].upper()]
    return float(found[1]) * scale
