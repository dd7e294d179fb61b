"""MCP tools: the tools of the Model Context Protocol servers the user configured.

`config` reads the `[mcp.servers.NAME]` settings (without the SDK); `client` holds the
SDK's sessions on one background event-loop thread behind a synchronous facade;
`schema` makes each tool's schema into what a model backend keeps and validates the
arguments against the original; `results` turns results into observations; `servers`
starts a run's servers and makes their tools registry tools (`SERVER__tool`).
Nothing here imports the SDK until a server is started.
"""

from localagent.mcp.config import McpServer, McpSettings

__all__ = ["McpServer", "McpSettings"]
