"""The Ollama adapter: the only code that knows the wire format and the server's errors.

Failures of the server (down, timing out, busy, 5xx, a dropped or garbled stream) are
retried with exponential backoff until the retry deadline; a missing model is reported
with the command that fixes it; a model without native tool calling is switched to the
text tool protocol for the rest of the run. Chat replies are read from the stream by
this module, leniently: tool arguments sent as a JSON string are kept, not refused.
Every call has an end: `num_predict` caps the reply, `call_deadline` the whole call.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import ollama

from localagent.errors import AgentError, ModelUnavailable
from localagent.settings import Settings
from localagent.stopping import StopSignal, call_abandonably
from localagent.textcalls import ToolCall, clean_tool_name, lenient_arguments, valid_unicode

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
    cut_off: str = ""  # "length" (num_predict reached) or "deadline" (call_deadline passed)


@dataclass
class ModelInfo:
    capabilities: list[str]
    context_length: int | None


class _Retry(Exception):
    """A failure of the server that is worth waiting out."""


class _Refused(Exception):
    """The server answered a chat request with an error status."""

    def __init__(self, status: int, error: str) -> None:
        super().__init__(error)
        self.status, self.error = status, error


def _error_text(response: httpx.Response) -> str:
    try:
        data = json.loads(response.read() or b"{}")
        if isinstance(data, dict) and data.get("error"):
            return str(data["error"])[:500]
    except (ValueError, httpx.HTTPError):
        pass
    return f"HTTP {response.status_code} {response.reason_phrase}"


def _tool_call(raw: Any, known: set[str]) -> ToolCall:
    """One native tool call as sent, read leniently: arguments as a JSON string (or an
    object followed by prose), a `functions.` prefix or leaked markup on the name.
    Anything still malformed is kept for the tool to refuse with a clear observation."""
    function = raw.get("function") if isinstance(raw, dict) else None
    if not isinstance(function, dict):
        return ToolCall(valid_unicode(str(raw)[:100]), {UNPARSED: valid_unicode(str(raw)[:2000])})
    args = function.get("arguments")
    if isinstance(args, str):
        try:
            args = lenient_arguments(args)
        except RecursionError:  # nesting past the parser's limit
            args = None
        if args is None:
            args = {UNPARSED: function.get("arguments")}
    if args is None:
        args = {}
    if not isinstance(args, dict):
        args = {UNPARSED: args}
    name = clean_tool_name(str(function.get("name", "")), known)
    return ToolCall(valid_unicode(name), valid_unicode(args))


class OllamaModel:
    def __init__(
        self,
        settings: Settings,
        wait: Callable[[float], None] = time.sleep,
        stop: StopSignal | None = None,
    ) -> None:
        self.settings = settings
        self.host = normalize_host(settings.ollama_host)
        timeout = httpx.Timeout(settings.request_timeout, connect=10.0)
        self.client = ollama.Client(
            host=self.host, timeout=timeout, trust_env=not is_loopback(self.host)
        )
        self.http = httpx.Client(
            base_url=self.host, timeout=timeout, trust_env=not is_loopback(self.host)
        )
        self.stop = stop or StopSignal()
        self.wait = stop.wait if stop is not None else wait
        self.native_tools = True
        self.num_ctx = settings.num_ctx
        self.info: ModelInfo | None = None

    # ---- calls with retries ------------------------------------------------------

    def _with_retry(self, what: str, call: Callable[[], Any], within: float | None = None) -> Any:
        within = self.settings.retry_deadline if within is None else within
        deadline = time.monotonic() + within
        delay = 1.0
        while True:
            try:
                return self._classify(call)
            except _Retry as exc:
                if time.monotonic() + delay > deadline:
                    raise ModelUnavailable(
                        f"the model server at {self.host} did not answer ({exc}) within "
                        f"{within:.0f} s; start it with `ollama serve` "
                        f"and run `localagent resume`"
                    ) from None
                log.warning("%s failed (%s); retrying in %.0f s", what, exc, delay)
                self.wait(delay)
                delay = min(delay * 2, BACKOFF_CAP)

    def _classify(self, call: Callable[[], Any]) -> Any:
        try:
            return call()
        except (ConnectionError, httpx.ConnectError):
            raise _Retry("connection refused") from None
        except httpx.TimeoutException:
            raise _Retry("timed out") from None
        except httpx.TransportError as exc:
            raise _Retry(f"connection lost: {type(exc).__name__}") from None
        except (ollama.ResponseError, _Refused) as exc:
            status, error = (
                exc.status_code if isinstance(exc, ollama.ResponseError) else (exc.status),
                exc.error,
            )
            if status == 404:
                raise ModelUnavailable(
                    f"the model {self.settings.model!r} is not available on {self.host} "
                    f"({error}); fetch it with: ollama pull {self.settings.model}"
                ) from None
            if status >= 500 or status < 0 or status in (408, 429):
                raise _Retry(f"server error {status}: {error}") from None
            raise _Refused(status, str(error)) from None
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            # The client could not read what the server sent: a proxy's HTML page,
            # garbage, a shape that is not Ollama's. A server problem, worth waiting out.
            raise _Retry(f"the server's answer could not be read ({type(exc).__name__})") from None

    def wait_for_server(self) -> str:
        """Wait (with backoff, up to the retry deadline) until the server answers."""
        listing = self._with_retry("server check", self.client.list)
        return f"{len(listing.models)} models"

    def preflight(self, within: float | None = None) -> ModelInfo:
        """Check the model exists and learn its capabilities; fix `num_ctx` for the run.

        `within` bounds the wait for the server (default: the retry deadline).
        """
        shown = call_abandonably(
            self.stop,
            lambda: self._with_retry(
                "model check", lambda: self.client.show(self.settings.model), within
            ),
        )
        info = shown.modelinfo or {}
        context = next(
            (int(v) for k, v in info.items() if k.endswith(".context_length") and _is_int(v)),
            None,
        )
        caps = [str(c) for c in shown.capabilities or []]
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
        temperature: float | None = None,
    ) -> Reply:
        """One model call, abandoned at once when a stop is requested.

        Tools are dropped when the model has no native tool calling; `temperature`
        overrides the run's for this call (a verdict is asked at 0).
        """
        started = time.perf_counter()
        # One flag per call: a stream this call abandons ends at its next chunk, and a
        # later call cannot revive it.
        abandon = threading.Event()
        try:
            reply = call_abandonably(
                self.stop, lambda: self._chat(messages, tools, schema, abandon, temperature)
            )
        finally:
            abandon.set()
        reply.duration_ms = (time.perf_counter() - started) * 1000
        return reply

    def _chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        schema: dict[str, Any] | None,
        abandon: threading.Event,
        temperature: float | None = None,
    ) -> Reply:
        while True:
            use_tools = tools if self.native_tools else None
            try:
                return self._with_retry(
                    "model call",
                    lambda tools=use_tools: self._stream(
                        messages, tools, schema, abandon, temperature
                    ),
                )
            except _Refused as exc:
                if exc.status == 400 and "does not support tools" in exc.error and use_tools:
                    log.warning(
                        "%s has no native tool calling; using the text protocol",
                        self.settings.model,
                    )
                    self.native_tools = False
                    continue
                raise AgentError(
                    f"the model server at {self.host} refused the request "
                    f"(HTTP {exc.status}): {exc.error}"
                ) from None

    def _request(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        schema: dict[str, Any] | None,
        temperature: float | None = None,
    ) -> dict[str, Any]:
        options = {
            "num_ctx": self.num_ctx,
            "temperature": self.settings.temperature if temperature is None else temperature,
            "num_predict": self.settings.num_predict,
        }
        request: dict[str, Any] = {
            "model": self.settings.model,
            "messages": messages,
            "options": options,
            "stream": True,
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
        abandon: threading.Event,
        temperature: float | None = None,
    ) -> Reply:
        reply = Reply()
        known = {t["function"]["name"] for t in tools or []}
        content: list[str] = []
        deadline = time.monotonic() + self.settings.call_deadline
        request = self._request(messages, tools, schema, temperature)
        with self.http.stream("POST", "/api/chat", json=request) as r:
            if r.status_code != 200:
                raise _Refused(r.status_code, _error_text(r))
            for line in r.iter_lines():
                if not line.strip():
                    continue
                part = json.loads(line)
                if not isinstance(part, dict):
                    raise ValueError("a stream line that is not an object")
                if part.get("error"):
                    raise _Retry(f"server error mid-stream: {str(part['error'])[:200]}")
                message = part.get("message") or {}
                content.append(str(message.get("content") or ""))
                reply.tool_calls += [_tool_call(c, known) for c in message.get("tool_calls") or []]
                if part.get("done"):
                    reply.prompt_tokens = _count(part.get("prompt_eval_count"))
                    reply.completion_tokens = _count(part.get("eval_count"))
                    reply.cut_off = "length" if part.get("done_reason") == "length" else ""
                    break
                if time.monotonic() > deadline:
                    reply.cut_off = "deadline"
                    break
                if abandon.is_set():
                    break
            else:
                raise _Retry("the stream ended before the reply was done")
        reply.content = valid_unicode("".join(content))
        return reply


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _is_int(value: Any) -> bool:
    try:
        int(value)
    except (TypeError, ValueError):
        return False
    return True
