"""HTTP with a model server, every exchange bounded in bytes and in time.

Every request an adapter makes is an `Exchange`: its answer is read in the pieces the
server sends, never more than `limit` bytes, never past the deadline, whatever the
framing: one line that never ends, a byte a second, keep-alive comments forever, or
silence. Checking the clock between pieces cannot end a read the server never answers,
so a timer shuts the connection's socket down at the deadline; each exchange opens a
connection of its own (`Connection: close`) so the timer holds its socket from the
connect on, headers included. Answers come uncompressed (`identity`): a small
compressed body cannot grow into a large one behind the byte count.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx

LOOPBACK = {"127.0.0.1", "localhost", "::1", "0.0.0.0", "::", "[::]", ""}
HEADERS = {"Connection": "close", "Accept-Encoding": "identity"}
BODY_BYTES = 8 << 20  # a JSON answer: a model list, a model's details
ERROR_BYTES = 64 << 10  # of an error answer: more than any message; the rest is left unread
REPLY_BYTES = 4 << 20  # of a streamed reply, plus REPLY_BYTES_PER_TOKEN for each token asked
REPLY_BYTES_PER_TOKEN = 1 << 10  # a streamed token costs 100-300 bytes of framing
EMBED_BYTES_PER_TEXT = 1 << 20  # one vector of up to about 50,000 dimensions, as JSON text
CONNECT = 10.0


class Overflow(Exception):
    """The answer passed the exchange's byte bound."""


class Overtime(Exception):
    """The exchange's deadline passed before its answer ended."""


class Abandoned(Exception):
    """The call was abandoned (a stop): the answer is not wanted and nothing is retried."""


def reply_bytes(num_predict: int) -> int:
    """The byte bound of one streamed reply of at most `num_predict` tokens."""
    return REPLY_BYTES + num_predict * REPLY_BYTES_PER_TOKEN


def embed_bytes(texts: int) -> int:
    return BODY_BYTES + texts * EMBED_BYTES_PER_TEXT


def mib(size: int) -> str:
    return f"{size / (1 << 20):.1f} MiB"


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


def error_text(response: httpx.Response) -> str:
    """The error a server sent: Ollama's {"error": "..."}, OpenAI's {"error": {"message"}}.
    `response` is one `Exchange.whole` read, so its body is bounded."""
    try:
        data = json.loads(response.read() or b"{}")
        error = data.get("error") if isinstance(data, dict) else None
        if isinstance(error, dict):
            error = error.get("message") or json.dumps(error)
        if error:
            return str(error)[:500]
    except (ValueError, httpx.HTTPError, RecursionError):
        pass
    return f"HTTP {response.status_code} {response.reason_phrase}"


class Exchange:
    """One request and its answer, within `within` seconds and `limit` bytes; a set
    `abandon` ends the reading at the next piece."""

    def __init__(self, within: float, limit: int, abandon: threading.Event | None = None) -> None:
        self.within, self.limit, self.abandon = within, limit, abandon
        self.deadline = time.monotonic() + within
        self.received = 0
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(within, self._expire)
        self._timer.daemon = True

    @contextlib.contextmanager
    def open(
        self, http: httpx.Client, method: str, url: str, idle: float, **kw: Any
    ) -> Iterator[httpx.Response]:
        """The server's response, its headers read; the body is read through `chunks`.
        `idle` bounds each wait for the server's next bytes, the deadline all of them."""
        wait = min(idle, self.within)
        timeout = httpx.Timeout(wait, connect=min(CONNECT, wait))
        trace = {"trace": self._trace}
        self._timer.start()
        try:
            with http.stream(
                method, url, headers=HEADERS, timeout=timeout, extensions=trace, **kw
            ) as response:
                yield response
        except httpx.TransportError:
            if self.expired:  # the timer cut the connection: the deadline, not the server
                raise self._overtime() from None
            raise
        finally:
            self._timer.cancel()
            with self._lock:
                for sock in self._sockets:
                    sock.close()
                self._sockets.clear()

    def _overtime(self) -> Overtime:
        return Overtime(f"no complete answer within {self.within:g} s")

    def _trace(self, event: str, info: dict[str, Any]) -> None:
        """httpcore's trace hook: the socket of the connection, as soon as it is open. A
        duplicate, so it can still be shut down once TLS has taken the original over."""
        if event != "connection.connect_tcp.complete":
            return
        stream = info.get("return_value")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if isinstance(sock, socket.socket):
            with self._lock:
                self._sockets.append(sock.dup())
            if self.expired:
                self._expire()

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            for sock in self._sockets:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)

    def chunks(self, response: httpx.Response) -> Iterator[bytes]:
        """The answer's bytes as they arrive, within the bounds (Overflow, Overtime)."""
        pieces = response.iter_bytes()
        while True:
            try:
                chunk = next(pieces, None)
            except httpx.TransportError:
                if self.expired:
                    raise self._overtime() from None
                raise
            if chunk is None:
                return
            self.received += len(chunk)
            if self.abandon is not None and self.abandon.is_set():
                raise Abandoned()
            if self.received > self.limit:
                raise Overflow(f"its answer passed {mib(self.limit)}")
            if time.monotonic() > self.deadline:
                raise self._overtime()
            yield chunk

    def lines(self, response: httpx.Response) -> Iterator[str]:
        """The answer's lines (a last one without its newline too), as UTF-8 text."""
        buffer = bytearray()
        for chunk in self.chunks(response):
            start = len(buffer)
            buffer += chunk
            end = buffer.find(b"\n", start)
            while end >= 0:
                yield buffer[:end].rstrip(b"\r").decode("utf-8", "replace")
                del buffer[: end + 1]
                end = buffer.find(b"\n")
        if buffer:
            yield buffer.decode("utf-8", "replace")

    def whole(self, response: httpx.Response, most: int | None = None) -> httpx.Response:
        """The response read to its end (Overflow past the limit), or to its first `most`
        bytes; the bytes already decoded, so the copy names no content encoding."""
        body = bytearray()
        for chunk in self.chunks(response):
            body += chunk
            if most is not None and len(body) >= most:
                break
        return httpx.Response(
            response.status_code,
            headers={"content-type": response.headers.get("content-type", "")},
            content=bytes(body if most is None else body[:most]),
            extensions={"reason_phrase": response.extensions.get("reason_phrase", b"")},
        )
