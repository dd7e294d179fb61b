"""What both HTTP adapters share: retries with backoff, abandoning a call on stop, and
falling back when the server refuses a capability.

An adapter implements `_stream` (one request, read to its end) and says how to start
its server and fetch a missing model; failures of the server (down, timing out, busy,
5xx, a dropped or garbled stream, an answer past its byte bound or its deadline) are
retried here until the retry deadline. Every request goes through `wire.Exchange`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx

from localagent.models.config import ModelConfig
from localagent.models.protocol import Message, Reply, ToolSpec, prompt_size
from localagent.models.wire import (
    BODY_BYTES,
    ERROR_BYTES,
    Exchange,
    Overflow,
    Overtime,
    http_client,
)
from localagent.system.errors import AgentError, ModelRefused, ModelUnavailable
from localagent.system.stopping import StopSignal, call_abandonably

log = logging.getLogger("localagent.model")

BACKOFF_CAP = 30.0
# A refused first contact means no server, not a busy one; one that is just starting
# gets this long before the run says so.
FIRST_CONTACT_WAIT = 2.0
UNREACHABLE = (ConnectionError, httpx.ConnectError)


class Retry(Exception):
    """A failure of the server that is worth waiting out; `fix` replaces the adapter's
    advice on how to start its server, where that is not what would help."""

    def __init__(self, reason: str, fix: str = "", unreachable: bool = False) -> None:
        super().__init__(reason)
        self.fix = fix
        self.unreachable = unreachable  # nothing accepted the connection


class Refused(Exception):
    """The server answered a request with an error status."""

    def __init__(self, status: int, error: str) -> None:
        super().__init__(error)
        self.status, self.error = status, error


class Downgrade(Exception):
    """The server refused a capability (tools, structured output); the adapter has
    switched it off and the call is made again without it."""


def _unreachable(exc: Exception) -> str:
    """Why nothing took the connection, in the user's words."""
    text = str(exc).lower()
    if any(word in text for word in ("name or service", "getaddrinfo", "nodename", "resolve")):
        return "the host name could not be resolved"
    return "connection refused"


class HttpModel:
    backend = ""
    start_hint = ""  # how to start the server, for a message that says it is down

    def __init__(
        self,
        config: ModelConfig,
        host: str,
        wait: Callable[[float], None] = time.sleep,
        stop: StopSignal | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.config = config
        self.host = host
        self.timeout = httpx.Timeout(config.request_timeout, connect=10.0)
        self.http = http_client(host, self.timeout, headers)
        self.stop = stop or StopSignal()
        self.wait = stop.wait if stop is not None else wait
        self.native_tools = True
        self.num_ctx = config.num_ctx
        self.num_predict = config.num_predict
        self.on_wait: Callable[[str], None] | None = None
        self.waiting = ""  # why the current call is waiting for the server, once it is
        self.exchange: Exchange | None = None  # the latest, for `received`
        self.answered = False  # a server answered at this address in this run

    @property
    def missing_fix(self) -> str:
        raise NotImplementedError

    def _stream(
        self,
        messages: list[Message],
        tools: list[ToolSpec] | None,
        schema: dict[str, Any] | None,
        abandon: threading.Event,
        temperature: float | None,
        limit: int,
    ) -> Reply:
        raise NotImplementedError

    # ---- one exchange with the server ----------------------------------------------

    def _exchange(
        self, limit: int, within: float | None = None, abandon: threading.Event | None = None
    ) -> Exchange:
        """An exchange that ends by `within` seconds (default: the call deadline)."""
        within = self.config.call_deadline if within is None else within
        self.exchange = Exchange(within, limit, abandon)
        return self.exchange

    def received(self) -> int:
        """Bytes of the latest answer read so far: a slow reply is seen to arrive."""
        return self.exchange.received if self.exchange is not None else 0

    def _fetch(
        self,
        method: str,
        path: str,
        json: Any = None,
        within: float | None = None,
        limit: int = BODY_BYTES,
    ) -> httpx.Response:
        """One request read whole: at most `limit` bytes of a success (Overflow), the
        first bytes of an error, by `within` seconds (default: the request timeout)."""
        within = self.config.request_timeout if within is None else within
        exchange = self._exchange(limit, min(within, self.config.call_deadline))
        with exchange.open(self.http, method, path, self.config.request_timeout, json=json) as r:
            return exchange.whole(r, None if r.status_code == 200 else ERROR_BYTES)

    # ---- calls with retries ------------------------------------------------------

    def _with_retry(
        self, what: str, call: Callable[[], Any], within: float | None = None, first: bool = False
    ) -> Any:
        """`call` until it succeeds or `within` seconds pass. `first`: the first contact
        of a run, where a refused connection to a server that never answered ends in
        FIRST_CONTACT_WAIT seconds: nobody is serving there."""
        within = self.config.retry_deadline if within is None else within
        started = time.monotonic()
        delay = 1.0
        while True:
            try:
                return self._classify(call)
            except Retry as exc:
                waited = time.monotonic() - started
                if first and exc.unreachable and not self.answered:
                    within = min(within, FIRST_CONTACT_WAIT)
                if waited + delay > within:
                    raise self._gave_up(exc, within) from None
                log.warning("%s failed (%s); retrying in %.0f s", what, exc, delay)
                self.waiting = self.waiting or str(exc)
                self.wait(delay)
                delay = min(delay * 2, BACKOFF_CAP)

    def _gave_up(self, exc: Retry, within: float) -> ModelUnavailable:
        fix = exc.fix or self.start_hint
        if exc.unreachable and not self.answered:
            return ModelUnavailable(f"no model server is running at {self.host} ({exc}); {fix}")
        return ModelUnavailable(
            f"the model server at {self.host} did not answer ({exc}) within {within:.0f} s; {fix}"
        )

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

    def _reached(self, call: Callable[[], Any]) -> Any:
        """`call`, noting that a server is there unless nothing took the connection."""
        try:
            result = call()
        except (*UNREACHABLE, httpx.ConnectTimeout):
            raise
        except Exception:
            self.answered = True
            raise
        self.answered = True
        return result

    def _classify(self, call: Callable[[], Any]) -> Any:
        try:
            return self._reached(call)
        except UNREACHABLE as exc:
            raise Retry(_unreachable(exc), unreachable=True) from None
        except httpx.TimeoutException:
            raise Retry("timed out") from None
        except httpx.TransportError as exc:
            raise Retry(f"connection lost: {type(exc).__name__}") from None
        except Overflow as exc:
            fix = f"check what the server at {self.host} sends (does it honour num_predict?)"
            raise Retry(str(exc), fix) from None
        except Overtime as exc:
            fix = f"check the server at {self.host}, or give it more time (call_deadline)"
            raise Retry(str(exc), fix) from None
        except Refused as exc:
            if exc.status == 404:
                raise ModelUnavailable(
                    f"the model {self.config.model!r} is not available on {self.host} "
                    f"({exc.error}); fetch it with: {self.missing_fix}"
                ) from None
            if exc.status >= 500 or exc.status < 0 or exc.status in (408, 429):
                raise Retry(f"server error {exc.status}: {exc.error}") from None
            hint = "; check the API key (LOCALAGENT_API_KEY)" if exc.status in (401, 403) else ""
            raise ModelRefused(
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
        if not self.config.embed_model:
            raise AgentError("no embedding model is configured (embed_model)")
        vectors = self._abandonably(
            lambda: self._with_retry("embedding", lambda: self._embed(texts))
        )
        if len(vectors) != len(texts) or not all(isinstance(v, list) for v in vectors):
            raise AgentError(
                f"the embedding model {self.config.embed_model!r} sent {len(vectors)} "
                f"vectors for {len(texts)} texts"
            )
        return vectors

    def _embed_refused(self, exc: Refused) -> Exception:
        """A 404 names the embedding model, not the chat model."""
        if exc.status != 404:
            return exc
        name = self.config.embed_model
        return ModelUnavailable(
            f"the embedding model {name!r} is not available on {self.host} ({exc.error}); "
            f"fetch it with: {self.missing_fix.replace(self.config.model, name)}"
        )

    def chat(
        self,
        messages: list[Message],
        tools: list[ToolSpec] | None = None,
        schema: dict[str, Any] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> Reply:
        """One model call, abandoned at once when a stop is requested.

        Tools are dropped when the model has no native tool calling; `temperature`
        overrides the run's for this call (a verdict is asked at 0), and `max_tokens`
        lowers its reply's cap (`num_predict`), which no server reloads a model for.
        """
        started = time.perf_counter()
        # One flag per call: a stream this call abandons ends at its next chunk, and a
        # later call cannot revive it.
        abandon = threading.Event()
        try:
            reply = self._abandonably(
                lambda: self._chat(messages, tools, schema, abandon, temperature, max_tokens)
            )
        finally:
            abandon.set()
        reply.duration_ms = (time.perf_counter() - started) * 1000
        if reply.estimated:
            reply.prompt_tokens = prompt_size(messages)
        return reply

    def _chat(
        self,
        messages: list[Message],
        tools: list[ToolSpec] | None,
        schema: dict[str, Any] | None,
        abandon: threading.Event,
        temperature: float | None,
        max_tokens: int | None = None,
    ) -> Reply:
        limit = self.num_predict if max_tokens is None else min(max_tokens, self.num_predict)
        while True:
            try:
                return self._with_retry(
                    "model call",
                    lambda: self._stream(messages, tools, schema, abandon, temperature, limit),
                )
            except Downgrade as exc:
                log.warning("%s", exc)
