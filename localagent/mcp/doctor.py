"""`doctor` for MCP servers: start each configured one, list its tools, say what fails
and how to fix it."""

from __future__ import annotations

import shlex
from pathlib import Path

from localagent.mcp.client import LoopThread, ServerDown
from localagent.mcp.config import McpServer
from localagent.mcp.servers import INSTALL, NO_SDK, Server, make_tools, sdk_missing

# (name, result "ok"/"warn"/"fail", detail, fix)
Finding = tuple[str, str, str, str]


def check_servers(
    configs: dict[str, McpServer], workspace: Path, config_file: Path
) -> list[Finding]:
    if not configs:
        return []
    if sdk_missing():
        return [(f"mcp {name}", "fail", NO_SDK, INSTALL) for name in sorted(configs)]
    loop = LoopThread()
    try:
        return [
            _check(name, configs[name], workspace, loop, config_file) for name in sorted(configs)
        ]
    finally:
        loop.close()


def _check(
    name: str, config: McpServer, workspace: Path, loop: LoopThread, config_file: Path
) -> Finding:
    server = Server(name, config, workspace, loop)
    label = f"mcp {name}"
    try:
        listing = server.start()
    except ServerDown as exc:
        return (label, "fail", f"failed to start: {exc}", _fix(name, config, str(exc), config_file))
    finally:
        server.stop()
    tools, missing, refused = make_tools(server, listing)
    shown = ", ".join(tool.name for tool in tools) or "none"
    detail = f"{len(tools)} tools: {shown}"
    if refused:
        why = "; ".join(f"{tool}: {reason}" for tool, reason in refused.items())
        fix = (
            "fix those tools' schemas in the server, or leave them out with tools = [...] "
            f"in [mcp.servers.{name}] of {config_file}"
        )
        return (label, "warn", f"{detail}; refused {why}", fix)
    if missing:
        fix = f"fix tools = [...] in [mcp.servers.{name}] of {config_file}"
        return (label, "warn", f"{detail}; it offers no {', '.join(missing)}", fix)
    return (label, "ok", detail, "")


def _fix(name: str, config: McpServer, why: str, config_file: Path) -> str:
    section = f"[mcp.servers.{name}] of {config_file}"
    if "environment variable" in why:
        return f"set that variable in the environment the agent runs in, or fix {section}"
    if config.url is not None:
        return f"check that the server at {config.url} is running, or fix url in {section}"
    if "was not found" in why:
        return f"install {config.command!r} (on PATH) or fix command in {section}"
    command = shlex.join([str(config.command), *config.args])
    return f"run `{command}` by hand to see its error, or fix {section}"
