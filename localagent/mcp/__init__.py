"""MCP tools: the tools of the Model Context Protocol servers the user configured.

`config` reads the `[mcp.servers.NAME]` settings (without the SDK); `client` holds the
SDK's sessions on one background event-loop thread behind a synchronous facade;
`schema` makes each tool's schema into what a model backend keeps and validates the
arguments against the original; `results` turns results into observations; `servers`
starts a run's servers and makes their tools registry tools (`SERVER__tool`).
Nothing here imports the SDK until a server is started, nor the client (asyncio) when
no server is configured: a resumed run reaches its model sooner.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localagent.mcp.config import McpServer, McpSettings

__all__ = ["McpServer", "McpSettings", "open_servers"]


@dataclass(frozen=True)
class NoServers:
    """What a run without MCP servers has of them: nothing."""

    tools: list[Any] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


@contextlib.contextmanager
def open_servers(configs: Mapping[str, McpServer], root: Path) -> Iterator[Any]:
    """The configured servers (`servers.McpServers`), started, for the length of a run;
    all stopped after it."""
    if not configs:
        yield NoServers()
        return
    from localagent.mcp import servers

    with servers.open_servers(configs, root) as started:
        yield started
