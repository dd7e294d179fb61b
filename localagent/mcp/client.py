"""The MCP SDK behind a synchronous facade.

The SDK is async and the agent's loop is not: every session lives on one background
event-loop thread, each held open by a task of its own (anyio scopes must be left by
the task that entered them), and the loop's thread waits on futures, polling for a
stop. A stdio server is shut down by the SDK (stdin closed, a short wait, then its
process group killed); every process that inherited the server's marker variable is
killed after that, so a descendant that left the group does not outlive the run.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import inspect
import logging
import tempfile
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import psutil

from localagent.mcp.config import McpServer, expand
from localagent.system.proctree import MARKER_VARIABLE, kill_marked, marked

log = logging.getLogger("localagent.mcp")
POLL = 0.1
CLOSE_WAIT = 8.0  # the SDK's own shutdown: stdin, 2 s, SIGTERM, 2 s, SIGKILL
CONNECTION_CLOSED = -32000  # the SDK's error code for a connection that ended
STDERR_TAIL = 300


class ServerDown(Exception):
    """The server is not running: it failed to start, died, or was stopped."""


class CallTimedOut(Exception):
    pass


class CallCancelled(Exception):
    pass


class CallFailed(Exception):
    """The server answered the call with a JSON-RPC error."""


class LoopThread:
    """One asyncio loop on a daemon thread, shared by every server of a run."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="mcp", daemon=True)
        self.thread.start()

    def submit(self, coroutine: Any) -> concurrent.futures.Future[Any]:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(2.0)


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _code(exc: BaseException) -> int | None:
    code = getattr(getattr(exc, "error", None), "code", None)
    return code if isinstance(code, int) else None


def _message(exc: BaseException) -> str:
    message = getattr(getattr(exc, "error", None), "message", None)
    return str(message or exc or type(exc).__name__)


class Connection:
    """One running server and its session, held open by a task on the loop thread."""

    def __init__(self, name: str, config: McpServer, root: Path, loop: LoopThread) -> None:
        self.name, self.config, self.root, self.loop = name, config, root, loop
        self.marker = f"mcp-{uuid.uuid4().hex}"
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed by close()
        self.session: Any = None
        self.pid: int | None = None
        self._closing: asyncio.Event | None = None
        self._holder: concurrent.futures.Future[Any] | None = None

    # ---- starting ------------------------------------------------------------------

    def open(self, deadline: float) -> list[dict[str, Any]]:
        """Start the server and list its tools (in their wire form), or ServerDown."""
        try:
            transport = self._transport()
        except ValueError as exc:  # an environment variable that is not set
            raise ServerDown(str(exc)) from None
        ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._holder = self.loop.submit(self._hold(transport, ready))
        try:
            ready.result(deadline)
            self.pid = self._find_pid()
            return self._wait(self._list_tools(), deadline, lambda: False)
        except (concurrent.futures.TimeoutError, CallTimedOut):
            message = f"it did not answer within {deadline:g}s{self._stderr()}"
        except Exception as exc:
            message = self._explain(exc)
        self.close(kill=True)
        raise ServerDown(message)

    def _transport(self) -> Callable[[], Any]:
        config = self.config
        where = f"[mcp.servers.{self.name}]"
        if config.url is not None:
            headers = {k: expand(v, f"{where} headers.{k}") for k, v in config.headers.items()}
            return lambda: _http(str(config.url), headers)
        from mcp import StdioServerParameters, stdio_client

        env = {k: expand(v, f"{where} env.{k}") for k, v in config.env.items()}
        cwd = self.root / config.cwd if config.cwd else self.root
        params = StdioServerParameters(
            command=str(config.command),
            args=list(config.args),
            env={**env, MARKER_VARIABLE: self.marker},
            cwd=str(cwd),
        )
        return lambda: stdio_client(params, errlog=self.stderr)

    async def _hold(
        self, transport: Callable[[], Any], ready: concurrent.futures.Future[None]
    ) -> None:
        from mcp import ClientSession

        self._closing = asyncio.Event()
        try:
            async with contextlib.AsyncExitStack() as stack:
                streams = await stack.enter_async_context(transport())
                session = await stack.enter_async_context(
                    ClientSession(streams[0], streams[1], message_handler=self._on_message)
                )
                await session.initialize()
                self.session = session
                ready.set_result(None)
                await self._closing.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else RuntimeError(str(exc)))
            if not isinstance(exc, Exception):
                raise

    async def _on_message(self, message: Any) -> None:
        inner = getattr(message, "root", message)
        if getattr(inner, "method", None) == "notifications/tools/list_changed":
            log.info(
                "MCP server %s changed its tools; the new list is used at the next start "
                "or resume (the tool list is fixed for a run)",
                self.name,
            )

    async def _list_tools(self) -> list[dict[str, Any]]:
        tools: list[dict[str, Any]] = []
        cursor = None
        for _ in range(100):
            if cursor is None:
                page = await self.session.list_tools()
            elif "params" in inspect.signature(self.session.list_tools).parameters:
                from mcp.types import PaginatedRequestParams

                page = await self.session.list_tools(params=PaginatedRequestParams(cursor=cursor))
            else:
                page = await self.session.list_tools(cursor=cursor)
            data = page.model_dump(mode="json", by_alias=True, exclude_none=True)
            tools += [t for t in data.get("tools", []) if isinstance(t, dict)]
            cursor = data.get("nextCursor")
            if not cursor:
                break
        return tools

    def _find_pid(self) -> int | None:
        if self.config.url is not None:
            return None
        found = marked(self.marker)
        return next((p.pid for p in found if p.ppid() == psutil.Process().pid), None) or (
            found[0].pid if found else None
        )

    # ---- calling -------------------------------------------------------------------

    def alive(self) -> bool:
        if self._holder is None or self._holder.done() or self.session is None:
            return False
        if self.pid is None:
            return True
        try:
            return psutil.Process(self.pid).status() != psutil.STATUS_ZOMBIE
        except psutil.Error:
            return False

    def call(
        self, tool: str, args: dict[str, Any], timeout: float, cancelled: Callable[[], bool]
    ) -> dict[str, Any]:
        """The call's result in its wire form; CallTimedOut, CallCancelled, CallFailed
        (an error the server answered) or ServerDown (the connection ended)."""
        try:
            return self._wait(self._call(tool, args), timeout, cancelled)
        except (CallTimedOut, CallCancelled):
            raise
        except Exception as exc:
            leaf = _leaf(exc)
            if _code(leaf) is not None and _code(leaf) != CONNECTION_CLOSED:
                raise CallFailed(_message(leaf)) from None
            if _code(leaf) is None and self.alive():
                raise CallFailed(f"{type(leaf).__name__}: {_message(leaf)}") from None
            raise ServerDown(self._explain(leaf)) from None

    async def _call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        result = await self.session.call_tool(tool, args)
        data: dict[str, Any] = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        return data

    def _wait(self, coroutine: Any, timeout: float, cancelled: Callable[[], bool]) -> Any:
        future = self.loop.submit(coroutine)
        end = time.monotonic() + timeout
        try:
            while True:
                try:
                    return future.result(min(POLL, max(end - time.monotonic(), 0.0)))
                except concurrent.futures.TimeoutError:
                    if cancelled():
                        raise CallCancelled from None
                    if time.monotonic() >= end:
                        raise CallTimedOut from None
        finally:
            future.cancel()

    # ---- stopping ------------------------------------------------------------------

    def close(self, kill: bool = False) -> None:
        """Stop the server: killed at once when `kill` (it hangs or died), else by the
        SDK's shutdown; then every process that carries its marker."""
        if kill and self.config.url is None:
            kill_marked(self.marker)
        if self._holder is not None and not self._holder.done():
            closing = self._closing
            if closing is not None:
                self.loop.loop.call_soon_threadsafe(closing.set)
            try:
                self._holder.result(CLOSE_WAIT)
            except concurrent.futures.TimeoutError:
                self._holder.cancel()
            except BaseException as exc:  # the transport's own teardown failed
                log.debug("closing MCP server %s: %r", self.name, exc)
        if self.config.url is None:
            kill_marked(self.marker)
        self.session = None
        self.stderr.close()

    def reason(self) -> str:
        """Why a server that is no longer running stopped, as far as can be told."""
        return f"it exited{self._stderr()}"

    def _stderr(self) -> str:
        with contextlib.suppress(OSError, ValueError):
            self.stderr.seek(0)
            text = self.stderr.read().decode("utf-8", errors="replace").strip()
            if text:
                tail = text[-STDERR_TAIL:]
                return f"; its stderr ends: {' '.join(tail.split())}"
        return ""

    def _explain(self, exc: BaseException) -> str:
        leaf = _leaf(exc)
        program = self.config.command or ""
        if isinstance(leaf, FileNotFoundError):
            where = f" in {self.root / self.config.cwd}" if self.config.cwd else ""
            return f"program {program!r} was not found{where}"
        if isinstance(leaf, PermissionError):
            return f"program {program!r} cannot be run (permission denied)"
        if _code(leaf) == CONNECTION_CLOSED:
            return f"it closed the connection{self._stderr()}"
        return f"{type(leaf).__name__}: {_message(leaf)}{self._stderr()}"


@contextlib.asynccontextmanager
async def _http(url: str, headers: dict[str, str]) -> AsyncIterator[Any]:
    """The streamable HTTP transport, whichever spelling this SDK version has."""
    from mcp.client import streamable_http

    if hasattr(streamable_http, "streamable_http_client"):
        from mcp.shared._httpx_utils import create_mcp_http_client

        async with (
            create_mcp_http_client(headers=headers) as client,
            streamable_http.streamable_http_client(url, http_client=client) as streams,
        ):
            yield streams
    else:
        async with streamable_http.streamablehttp_client(url, headers=headers) as streams:
            yield streams
