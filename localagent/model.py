"""The Ollama adapter: the only code that knows the wire format and the client's errors.

Failures of the server (down, timing out, 5xx, a dropped stream) are retried with
exponential backoff until the retry deadline; a missing model is reported with the
command that fixes it; a model without native tool calling is switched to the text
tool protocol for the rest of the run.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import ollama
from pydantic import ValidationError

from localagent.errors import AgentError, ModelUnavailable
from localagent.settings import Settings
from localagent.textcalls import ToolCall, valid_unicode

log = logging.getLogger("localagent.model")

# Holds tool arguments that are not a JSON object, so the tool can say what is wrong.
UNPARSED = "__unparsed__"
LOOPBACK = {"127.0.0.1", "localhost", "::1", "0.0.0.0", "::", "[::]", ""}
BACKOFF_CAP = 30.0


def normalize_host(host: str) -> str:
    """A URL for OLLAMA_HOST as users write it; a server-side bind address means loopback."""
    host = host.strip() or "127.0.0.1"
    # As in Ollama itself: a bare host means port 11434, a URL its scheme's port.
    default_port = 11434
    if "://" not in host:
        host = "http://" + host
    else:
        default_port = {"http": 80, "https": 443}.get(host.split("://", 1)[0].lower(), 11434)
    parts = urlsplit(host)
    name = parts.hostname or ""
    if name in ("0.0.0.0", "::", ""):
        name = "127.0.0.1"
    netloc = f"[{name}]" if ":" in name else name
    netloc += f":{parts.port or default_port}"
    return urlunsplit((parts.scheme or "http", netloc, parts.path.rstrip("/"), "", ""))


def is_loopback(host: str) -> bool:
    return (urlsplit(host).hostname or "") in LOOPBACK


@dataclass
class Reply:
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    duration_ms: float = 0.0


@dataclass
class ModelInfo:
    capabilities: list[str]
    context_length: int | None


class _Retry(Exception):
    """A failure of the server that is worth waiting out."""


class OllamaModel:
    def __init__(self, settings: Settings, wait: Callable[[float], None] = time.sleep) -> None:
        self.settings = settings
        self.host = normalize_host(settings.ollama_host)
        self.client = ollama.Client(
            host=self.host,
            timeout=httpx.Timeout(settings.request_timeout, connect=10.0),
            trust_env=not is_loopback(self.host),
        )
        self.wait = wait
        self.native_tools = True
        self.num_ctx = settings.num_ctx
        self.info: ModelInfo | None = None

    # ---- calls with retries ------------------------------------------------------

    def _with_retry(self, what: str, call: Callable[[], Any]) -> Any:
        deadline = time.monotonic() + self.settings.retry_deadline
        delay = 1.0
        while True:
            try:
                return self._classify(call)
            except _Retry as exc:
                if time.monotonic() + delay > deadline:
                    raise ModelUnavailable(
                        f"the model server at {self.host} did not answer ({exc}) within "
                        f"{self.settings.retry_deadline:.0f} s; start it with `ollama serve` "
                        f"and run `localagent resume`"
                    ) from None
                log.warning("%s failed (%s); retrying in %.0f s", what, exc, delay)
                self.wait(delay)
                delay = min(delay * 2, BACKOFF_CAP)

    def _classify(self, call: Callable[[], Any]) -> Any:
        try:
            return call()
        except ConnectionError:
            raise _Retry("connection refused") from None
        except httpx.TimeoutException:
            raise _Retry("timed out") from None
        except httpx.TransportError as exc:
            raise _Retry(f"connection lost: {type(exc).__name__}") from None
        except ollama.ResponseError as exc:
            if exc.status_code == 404:
                raise ModelUnavailable(
                    f"the model {self.settings.model!r} is not available on {self.host}; "
                    f"fetch it with: ollama pull {self.settings.model}"
                ) from None
            if exc.status_code >= 500 or exc.status_code < 0:
                raise _Retry(f"server error {exc.status_code}: {exc.error}") from None
            raise

    def wait_for_server(self) -> str:
        """Wait (with backoff, up to the retry deadline) until the server answers."""
        listing = self._with_retry("server check", self.client.list)
        return f"{len(listing.models)} models"

    def preflight(self) -> ModelInfo:
        """Check the model exists and learn its capabilities; fix `num_ctx` for the run."""
        shown = self._with_retry("model check", lambda: self.client.show(self.settings.model))
        info = shown.modelinfo or {}
        context = next((int(v) for k, v in info.items() if k.endswith(".context_length")), None)
        caps = list(shown.capabilities or [])
        if caps and "tools" not in caps:
            self.native_tools = False
        if context:
            self.num_ctx = min(self.settings.num_ctx, context)
        self.info = ModelInfo(caps, context)
        return self.info

    def chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        schema: dict[str, Any] | None = None,
    ) -> Reply:
        """One model call; tools are dropped when the model has no native tool calling."""
        started = time.perf_counter()
        while True:
            use_tools = tools if self.native_tools else None
            try:
                reply = self._with_retry(
                    "model call", partial(self._stream, messages, use_tools, schema)
                )
            except ollama.ResponseError as exc:
                if exc.status_code == 400 and "does not support tools" in str(exc.error):
                    log.warning(
                        "%s has no native tool calling; using the text protocol",
                        self.settings.model,
                    )
                    self.native_tools = False
                    continue
                raise AgentError(f"the model server refused the request: {exc.error}") from None
            except ValidationError:
                # The client rejects tool arguments sent as a JSON string; ask again and
                # read that reply leniently instead of losing the round.
                reply = self._with_retry(
                    "model call", partial(self._raw, messages, use_tools, schema)
                )
            reply.duration_ms = (time.perf_counter() - started) * 1000
            return reply

    def _request(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        schema: dict[str, Any] | None,
    ) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": self.settings.model,
            "messages": messages,
            "options": {"num_ctx": self.num_ctx, "temperature": self.settings.temperature},
        }
        if tools:
            request["tools"] = tools
        if schema is not None:
            request["format"] = schema
        return request

    def _stream(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        schema: dict[str, Any] | None,
    ) -> Reply:
        reply = Reply()
        content: list[str] = []
        for part in self.client.chat(**self._request(messages, tools, schema), stream=True):
            content.append(part.message.content or "")
            for call in part.message.tool_calls or []:
                arguments = valid_unicode(dict(call.function.arguments or {}))
                reply.tool_calls.append(ToolCall(valid_unicode(call.function.name), arguments))
            if part.done:
                reply.prompt_tokens = part.prompt_eval_count or 0
                reply.completion_tokens = part.eval_count or 0
        reply.content = valid_unicode("".join(content))
        return reply

    def _raw(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        schema: dict[str, Any] | None,
    ) -> Reply:
        request = {**self._request(messages, tools, schema), "stream": False}
        with httpx.Client(
            base_url=self.host,
            timeout=self.settings.request_timeout,
            trust_env=not is_loopback(self.host),
        ) as raw:
            try:
                response = raw.post("/api/chat", json=request)
                response.raise_for_status()
            except httpx.HTTPStatusError as exc:
                raise ollama.ResponseError(exc.response.text, exc.response.status_code) from None
            except httpx.ConnectError:
                raise ConnectionError("connection refused") from None
        data = response.json()
        message = data.get("message") or {}
        calls = []
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            args = function.get("arguments") or {}
            if isinstance(args, str):
                try:
                    args = json.loads(args)
                except (json.JSONDecodeError, RecursionError):  # nesting past the limit too
                    args = {UNPARSED: args}
            calls.append(
                ToolCall(
                    valid_unicode(str(function.get("name", ""))),
                    valid_unicode(args if isinstance(args, dict) else {UNPARSED: args}),
                )
            )
        return Reply(
            content=valid_unicode(message.get("content") or ""),
            tool_calls=calls,
            prompt_tokens=data.get("prompt_eval_count") or 0,
            completion_tokens=data.get("eval_count") or 0,
        )
