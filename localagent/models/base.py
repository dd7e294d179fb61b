"""What both HTTP adapters share: retries with backoff, abandoning a call on stop,
falling back when the server refuses a capability, and reading native calls leniently.

An adapter implements `_stream` (one request, read to its end) and says how to start
its server and fetch a missing model; failures of the server (down, timing out, busy,
5xx, a dropped or garbled stream) are retried here until the retry deadline.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import httpx

from localagent.errors import AgentError, ModelUnavailable
from localagent.models.protocol import Message, Reply
from localagent.settings import Settings
from localagent.stopping import StopSignal, call_abandonably
from localagent.textcalls import (
    UNPARSED,
    ToolCall,
    clean_tool_name,
    lenient_arguments,
    valid_unicode,
)

log = logging.getLogger("localagent.model")

LOOPBACK = {"127.0.0.1", "localhost", "::1", "0.0.0.0", "::", "[::]", ""}
BACKOFF_CAP = 30.0


def is_loopback(url: str) -> bool:
    return (urlsplit(url).hostname or "") in LOOPBACK


def http_client(host: str, timeout: Any, headers: dict[str, str] | None = None) -> httpx.Client:
    """A client for one server. A loopback server is reached directly (no proxy from the
    environment); over plain http there is no TLS at all then, so the CA bundle is not
    loaded (about 30 ms at every start of a run)."""
    loopback = is_loopback(host)
    plain = loopback and urlsplit(host).scheme == "http"
    return httpx.Client(
        base_url=host, timeout=timeout, trust_env=not loopback, headers=headers, verify=not plain
    )


class Retry(Exception):
    """A failure of the server that is worth waiting out."""


class Refused(Exception):
    """The server answered a request with an error status."""

    def __init__(self, status: int, error: str) -> None:
        super().__init__(error)
        self.status, self.error = status, error


class Downgrade(Exception):
    """The server refused a capability (tools, structured output); the adapter has
    switched it off and the call is made again without it."""


def error_text(response: httpx.Response) -> str:
    """The error a server sent: Ollama's {"error": "..."}, OpenAI's {"error": {"message"}}."""
    try:
        data = json.loads(response.read() or b"{}")
        error = data.get("error") if isinstance(data, dict) else None
        if isinstance(error, dict):
            error = error.get("message") or json.dumps(error)
        if error:
            return str(error)[:500]
    except (ValueError, httpx.HTTPError):
        pass
    return f"HTTP {response.status_code} {response.reason_phrase}"


def read_call(name: Any, arguments: Any, known: set[str]) -> ToolCall:
    """One native tool call as sent, read leniently: arguments as a JSON string (or an
    object followed by prose), a `functions.` prefix or leaked markup on the name.
    Anything still malformed is kept for the tool to refuse with a clear observation."""
    args = arguments
    if isinstance(args, str):
        try:
            args = lenient_arguments(args)
        except RecursionError:  # nesting past the parser's limit
            args = None
        if args is None:
            args = {UNPARSED: arguments}
    if args is None:
        args = {}
    if not isinstance(args, dict):
        args = {UNPARSED: args}
    return ToolCall(valid_unicode(clean_tool_name(str(name or ""), known)), valid_unicode(args))


def unreadable_call(raw: Any) -> ToolCall:
    return ToolCall(valid_unicode(str(raw)[:100]), {UNPARSED: valid_unicode(str(raw)[:2000])})


def count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


class HttpModel:
    backend = ""
    start_hint = ""  # how to start the server, for a message that says it is down

    def __init__(
        self,
        settings: Settings,
        host: str,
        wait: Callable[[float], None] = time.sleep,
        stop: StopSignal | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.settings = settings
        self.host = host
        self.timeout = httpx.Timeout(settings.request_timeout, connect=10.0)
        self.http = http_client(host, self.timeout, headers)
        self.stop = stop or StopSignal()
        self.wait = stop.wait if stop is not None else wait
        self.native_tools = True
        self.num_ctx = settings.num_ctx
        self.on_wait: Callable[[str], None] | None = None
        self.waiting = ""  # why the current call is waiting for the server, once it is

    @property
    def missing_fix(self) -> str:
        raise NotImplementedError

    def _stream(
        self,
        messages: list[Message],
        tools: list[dict[str, Any]] | None,
        schema: dict[str, Any] | None,
        abandon: threading.Event,
        temperature: float | None,
    ) -> Reply:
        raise NotImplementedError

    # ---- calls with retries ------------------------------------------------------

    def _with_retry(self, what: str, call: Callable[[], Any], within: float | None = None) -> Any:
        within = self.settings.retry_deadline if within is None else within
        deadline = time.monotonic() + within
        delay = 1.0
        while True:
            try:
                return self._classify(call)
            except Retry as exc:
                if time.monotonic() + delay > deadline:
                    raise ModelUnavailable(
                        f"the model server at {self.host} did not answer ({exc}) within "
                        f"{within:.0f} s; {self.start_hint} and run `localagent resume`"
                    ) from None
                log.warning("%s failed (%s); retrying in %.0f s", what, exc, delay)
                self.waiting = self.waiting or str(exc)
                self.wait(delay)
                delay = min(delay * 2, BACKOFF_CAP)

    def _abandonably(self, work: Callable[[], Any]) -> Any:
        """`work` on a worker thread, abandoned at a stop. When it starts waiting for
        the server, `on_wait` is told once, from this thread (it journals)."""
        self.waiting = ""
        told = False

        def tick() -> None:
            nonlocal told
            if self.waiting and not told and self.on_wait is not None:
                told = True
                self.on_wait(self.waiting)

        return call_abandonably(self.stop, work, tick)

    def _classify(self, call: Callable[[], Any]) -> Any:
        try:
            return call()
        except (ConnectionError, httpx.ConnectError):
            raise Retry("connection refused") from None
        except httpx.TimeoutException:
            raise Retry("timed out") from None
        except httpx.TransportError as exc:
            raise Retry(f"connection lost: {type(exc).__name__}") from None
        except Refused as exc:
            if exc.status == 404:
                raise ModelUnavailable(
                    f"the model {self.settings.model!r} is not available on {self.host} "
                    f"({exc.error}); fetch it with: {self.missing_fix}"
                ) from None
            if exc.status >= 500 or exc.status < 0 or exc.status in (408, 429):
                raise Retry(f"server error {exc.status}: {exc.error}") from None
            hint = "; check the API key (LOCALAGENT_API_KEY)" if exc.status in (401, 403) else ""
            raise AgentError(
                f"the model server at {self.host} refused the request "
                f"(HTTP {exc.status}): {exc.error}{hint}"
            ) from None
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            # The answer could not be read: a proxy's HTML page, garbage, a shape that is
            # not the server's. A server problem, worth waiting out.
            raise Retry(f"the server's answer could not be read ({type(exc).__name__})") from None

    def _embed(self, texts: list[str]) -> list[list[float]]:
        raise NotImplementedError

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Vectors for `texts` from the embedding model, retried as a chat call is."""
        if not self.settings.embed_model:
            raise AgentError("no embedding model is configured (embed_model)")
        vectors = self._abandonably(
            lambda: self._with_retry("embedding", lambda: self._embed(texts))
        )
        if len(vectors) != len(texts) or not all(isinstance(v, list) for v in vectors):
            raise AgentError(
                f"the embedding model {self.settings.embed_model!r} sent {len(vectors)} "
                f"vectors for {len(texts)} texts"
            )
        return vectors

    def _embed_refused(self, exc: Refused) -> Exception:
        """A 404 names the embedding model, not the chat model."""
        if exc.status != 404:
            return exc
        name = self.settings.embed_model
        return ModelUnavailable(
            f"the embedding model {name!r} is not available on {self.host} ({exc.error}); "
            f"fetch it with: {self.missing_fix.replace(self.settings.model, name)}"
        )

    def chat(
        self,
        messages: list[Message],
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
            reply = self._abandonably(
                lambda: self._chat(messages, tools, schema, abandon, temperature)
            )
        finally:
            abandon.set()
        reply.duration_ms = (time.perf_counter() - started) * 1000
        return reply

    def _chat(
        self,
        messages: list[Message],
        tools: list[dict[str, Any]] | None,
        schema: dict[str, Any] | None,
        abandon: threading.Event,
        temperature: float | None,
    ) -> Reply:
        while True:
            try:
                return self._with_retry(
                    "model call",
                    lambda: self._stream(messages, tools, schema, abandon, temperature),
                )
            except Downgrade as exc:
                log.warning("%s", exc)
