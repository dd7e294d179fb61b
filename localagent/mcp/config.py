"""The `[mcp.servers.NAME]` sections of the config file: which MCP servers a run starts.

Importing this module does not import the MCP SDK: the settings are read whether or
not the `mcp` extra is installed.
"""

from __future__ import annotations

import os
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

SERVER_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_)){0,29}")
REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
EXAMPLE = (
    'e.g. [mcp.servers.fs] command = "npx", '
    'args = ["-y", "@modelcontextprotocol/server-filesystem", "."]'
)


class McpServer(BaseModel):
    """One server: a program spoken to over stdio, or a streamable HTTP `url`."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict)  # `${VAR}` is read from our environment
    cwd: str | None = None  # relative to the workspace; default: the workspace
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)  # values only as `${VAR}` references
    tools: tuple[str, ...] | None = None  # the server's tools to offer; None: all of them
    timeout_sec: float = Field(60.0, gt=0)
    trusted: bool = False  # its readOnlyHint tools are redone on resume

    @field_validator("command")
    @classmethod
    def _check_command(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError(f"command is empty, {EXAMPLE}")
        return value

    @field_validator("url")
    @classmethod
    def _check_url(cls, value: str | None) -> str | None:
        if value is not None and not re.match(r"https?://[^/\s]+", value.strip()):
            raise ValueError(f"url {value!r} must be an http:// or https:// address")
        return value

    @field_validator("headers")
    @classmethod
    def _check_headers(cls, value: dict[str, str]) -> dict[str, str]:
        for name, text in value.items():
            if not REFERENCE.search(text):
                raise ValueError(
                    f"header {name!r} must take its value from the environment, e.g. "
                    f'{name} = "Bearer ${{MY_TOKEN}}" (secrets never go in the config file)'
                )
        return value

    @model_validator(mode="after")
    def _one_transport(self) -> McpServer:
        if (self.command is None) == (self.url is None):
            raise ValueError(f"give either command (stdio) or url (streamable HTTP), {EXAMPLE}")
        if self.url is not None and (self.args or self.env or self.cwd):
            raise ValueError("args, env and cwd belong to a command; a url server takes headers")
        if self.command is not None and self.headers:
            raise ValueError("headers belong to a url server; a command takes env")
        return self


class McpSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    servers: dict[str, McpServer] = Field(default_factory=dict)

    @field_validator("servers", mode="before")
    @classmethod
    def _check_names(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            raise ValueError(f"servers is a table of [mcp.servers.NAME] sections, {EXAMPLE}")
        for name in value:
            if not SERVER_NAME.fullmatch(name):
                raise ValueError(
                    f"MCP server name {name!r} must be letters, digits, '-' or single '_' "
                    "(at most 30): its tools are named NAME__tool"
                )
        return value


def expand(text: str, where: str) -> str:
    """`text` with each `${VAR}` replaced from the environment; ValueError names a missing one."""

    def value(match: re.Match[str]) -> str:
        found = os.environ.get(match.group(1))
        if found is None:
            raise ValueError(f"environment variable {match.group(1)} is not set (used by {where})")
        return found

    return REFERENCE.sub(value, text)
