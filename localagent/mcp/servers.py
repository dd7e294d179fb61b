"""The MCP servers of one run and the tools they offer, as registry tools.

Each server is started once at the start of a run, its tools listed, sorted and fixed
for the whole run (the tool list sits at the front of the prompt: a change mid-run
would cost the model server its KV cache). A server that dies or times out is
restarted at its next call, once per run.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from localagent.mcp import schema
from localagent.mcp.client import (
    CallCancelled,
    CallFailed,
    CallTimedOut,
    Connection,
    LoopThread,
    ServerDown,
)
from localagent.mcp.config import McpServer
from localagent.mcp.results import observation
from localagent.tools.base import ToolContext, ToolError, ToolResult
from localagent.tools.registry import schema_tool
from localagent.tools.tool import Policy, Tool

log = logging.getLogger("localagent.mcp")
START_SECONDS = 30.0  # at least this long for a server to start (npx may download it)
INSTALL = "pip install 'localagent-coder[mcp]'"
NO_SDK = f"the MCP SDK is not installed; install it with: {INSTALL}"


def sdk_missing() -> bool:
    try:
        import mcp  # noqa: F401
    except ImportError:
        return True
    return False


def tool_name(server: str, tool: str) -> str:
    """`SERVER__tool`, spelled as every model API accepts a tool name."""
    return (server + "__" + re.sub(r"[^A-Za-z0-9_-]", "_", tool))[:64]


class Server:
    """One configured server in a run: its connection, restarted at most once."""

    def __init__(self, name: str, config: McpServer, root: Path, loop: LoopThread) -> None:
        self.name, self.config, self.root, self.loop = name, config, root, loop
        self.connection: Connection | None = None
        self.restarts_left = 1
        self.down = ""  # why it is not running

    def start(self) -> list[dict[str, Any]]:
        """Start it and return its tools' listing; ServerDown says why it could not."""
        self.connection = Connection(self.name, self.config, self.root, self.loop)
        try:
            return self.connection.open(max(self.config.timeout_sec, START_SECONDS))
        except ServerDown as exc:
            self.connection, self.down = None, str(exc)
            raise

    def stop(self, kill: bool = False) -> None:
        if self.connection is not None:
            self.connection.close(kill)
            self.connection = None

    def call(self, ctx: ToolContext, full: str, tool: str, args: dict[str, Any]) -> ToolResult:
        connection = self._running()
        timeout = self.config.timeout_sec
        try:
            result = connection.call(tool, args, timeout, ctx.cancelled)
        except CallCancelled:
            return ToolResult(False, ctx.prompts.render("mcp_cancelled", tool=full))
        except CallFailed as exc:
            raise ToolError.of("mcp_call_failed", tool=full, problem=exc) from None
        except CallTimedOut:
            ended = "its processes killed" if self.config.url is None else "the connection closed"
            self._lost(f"a call to {tool} timed out after {timeout:g}s")
            raise ToolError.of(
                "mcp_timed_out",
                tool=full,
                seconds=f"{timeout:g}",
                server=self.name,
                ended=ended,
                next=self._next(),
            ) from None
        except ServerDown as exc:
            self._lost(f"it stopped during a call to {tool}: {exc}")
            raise ToolError.of(
                "mcp_server_stopped", tool=full, server=self.name, problem=exc, next=self._next()
            ) from None
        ok, text = observation(result)
        return ToolResult(
            ok, text if ok else ctx.prompts.render("mcp_call_failed", tool=full, problem=text)
        )

    def _lost(self, why: str) -> None:
        log.warning("MCP server %s: %s", self.name, why)
        self.down = why
        self.stop(kill=True)

    def _next(self) -> ToolError:
        if self.restarts_left:
            return ToolError.of("mcp_restarts")
        return ToolError.of("mcp_no_restart")

    def _running(self) -> Connection:
        if self.connection is not None and self.connection.alive():
            return self.connection
        if self.connection is not None:  # it died between calls
            self._lost(self.connection.reason())
        if not self.restarts_left:
            raise ToolError.of("mcp_not_running", server=self.name, problem=self.down)
        self.restarts_left -= 1
        log.warning("restarting MCP server %s (%s)", self.name, self.down)
        try:
            self.start()
        except ServerDown as exc:
            log.warning("MCP server %s could not be restarted: %s", self.name, exc)
            raise ToolError.of("mcp_restart_failed", server=self.name, problem=exc) from None
        assert self.connection is not None
        return self.connection


class McpCall:
    """The function of one MCP tool: checks the arguments against the server's own
    schema, then calls it."""

    def __init__(self, server: Server, name: str, tool: str, input_schema: Any) -> None:
        self.server, self.name, self.tool, self.input_schema = server, name, tool, input_schema
        self.signature = ""

    def __call__(self, ctx: ToolContext, /, **args: Any) -> ToolResult:
        args = schema.coerce(self.input_schema, args)
        found = schema.problems(self.input_schema, args)
        if found:
            said = ctx.prompts.render(
                "invalid_arguments",
                tool=self.name,
                problems="; ".join(found),
                signature=self.signature,
            )
            raise ToolError(said)
        return self.server.call(ctx, self.name, self.tool, args)


def make_tools(
    server: Server, listing: list[dict[str, Any]]
) -> tuple[list[Tool], list[str], dict[str, str]]:
    """The registry tools of one server's listing (its `tools` setting applied, sorted),
    the names that setting gives which the server does not offer, and the tools refused
    (by name, why): a schema too large to send."""
    wanted = server.config.tools
    offered = {str(item.get("name")): item for item in listing if isinstance(item.get("name"), str)}
    made: dict[str, Tool] = {}
    refused: dict[str, str] = {}
    for original in sorted(offered):
        if wanted is not None and original not in wanted:
            continue
        item = offered[original]
        name = tool_name(server.name, original)
        if name in made:
            log.warning(
                "MCP server %s: tool %r is skipped: it is also named %s",
                server.name,
                original,
                name,
            )
            continue
        function = McpCall(server, name, original, item.get("inputSchema"))
        try:
            spec, function.signature = schema.for_model(
                name, str(item.get("description") or ""), item.get("inputSchema")
            )
        except schema.SchemaTooLarge as exc:
            refused[name] = f"its input schema is refused: {exc}"
            log.warning("MCP server %s: tool %s: %s", server.name, name, refused[name])
            continue
        hints = item.get("annotations") if isinstance(item.get("annotations"), dict) else {}
        read_only = hints.get("readOnlyHint") is True
        if server.config.trusted and read_only:
            policy = Policy(resume="redo")
        else:
            policy = Policy(resume="never", changes=not read_only)
        made[name] = schema_tool(name, function, spec, function.signature, policy)
    missing = [name for name in wanted or () if name not in offered]
    return list(made.values()), missing, refused


class McpServers:
    """The servers of one run: their tools, what failed, and a record for the journal."""

    def __init__(self) -> None:
        self.servers: list[Server] = []
        self.tools: list[Tool] = []
        self.records: list[dict[str, Any]] = []
        self.problems: list[str] = []
        self.loop: LoopThread | None = None

    def start(self, configs: Mapping[str, McpServer], root: Path) -> None:
        if sdk_missing():
            for name, config in sorted(configs.items()):
                self._failed(name, config, NO_SDK)
            return
        self.loop = LoopThread()
        for name, config in sorted(configs.items()):
            server = Server(name, config, root, self.loop)
            try:
                listing = server.start()
            except ServerDown as exc:
                self._failed(name, config, f"it failed to start: {exc}")
                continue
            self.servers.append(server)
            tools, missing, refused = make_tools(server, listing)
            self.tools += tools
            record: dict[str, Any] = {"name": name, "transport": _transport(config)}
            record["tools"] = [tool.name for tool in tools]
            if refused:
                record["refused"] = refused
            self.problems += [
                f"NOTE: the MCP tool {tool} is not available in this run ({why}); "
                "it is not in your tool list."
                for tool, why in refused.items()
            ]
            if server.connection is not None and server.connection.pid is not None:
                record["pid"] = server.connection.pid
            if missing:
                record["missing"] = missing
                log.warning("MCP server %s offers no tool %s", name, ", ".join(missing))
            self.records.append(record)
            log.info("MCP server %s: %d tools: %s", name, len(tools), ", ".join(record["tools"]))

    def _failed(self, name: str, config: McpServer, why: str) -> None:
        log.warning("MCP server %s: %s", name, why)
        self.records.append({"name": name, "transport": _transport(config), "error": why})
        self.problems.append(
            f"NOTE: the MCP server {name} is not available in this run ({why}); "
            "its tools are not in your tool list."
        )

    def close(self) -> None:
        for server in self.servers:
            try:
                server.stop()
            except Exception as exc:  # one server's teardown must not keep the others
                log.warning("stopping MCP server %s: %r", server.name, exc)
        if self.loop is not None:
            self.loop.close()


def _transport(config: McpServer) -> str:
    return "http" if config.url is not None else "stdio"


@contextlib.contextmanager
def open_servers(configs: Mapping[str, McpServer], root: Path) -> Iterator[McpServers]:
    """The configured servers, started, for the length of a run; all stopped after it."""
    servers = McpServers()
    try:
        if configs:
            servers.start(configs, root)
        yield servers
    finally:
        servers.close()
