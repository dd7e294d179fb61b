"""A small MCP server for the tests, written with the official SDK, spoken to over stdio.

Tools: echo (read-only), add_note (a nested pydantic argument; writes notes.txt in its
working folder), fail (an error result), sleep, crash (the process exits), slow_write
(records each run in runs.txt with its pid, then sleeps on the first), picture (an
image), shared_tree (a schema whose shared definitions expand past any bound), pick
(an untyped parameter: `str | int`, a JSON schema property with anyOf and no type).
"""

from __future__ import annotations

import base64
import os
import sys
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, create_model

try:  # mcp 2.x
    from mcp.server.mcpserver import MCPServer as Server
    from mcp.server.mcpserver.exceptions import ToolError
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import FastMCP as Server
    from mcp.server.fastmcp.exceptions import ToolError
from mcp.types import ImageContent, ToolAnnotations


class Owner(BaseModel):
    name: str
    email: str | None = None


class Note(BaseModel):
    title: str
    tags: list[str] = Field(default_factory=list)
    priority: int | None = None
    owner: Owner | None = None


def _chain(levels: int, width: int) -> type[BaseModel]:
    """A model holding the one below it `width` times at every level: its JSON schema is a
    few hundred bytes of shared definitions, `width ** levels` places once expanded."""
    model: type[BaseModel] = create_model("L0", v=(str, ...))
    for level in range(1, levels + 1):
        fields: dict[str, Any] = {f"f{i}": (model, ...) for i in range(width)}
        model = create_model(f"L{level}", **fields)
    return model


Tree = _chain(8, 6)
server = Server("tests")


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def pick(value: str | int) -> str:
    """Pick a value."""
    return f"picked: {value!r}"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def echo(text: str) -> str:
    """Echo the text back."""
    return f"echo: {text}"


@server.tool()
def add_note(note: Note, repeat: int = 1) -> dict[str, object]:
    """Add a note to notes.txt."""
    with Path("notes.txt").open("a", encoding="utf-8") as fh:
        for _ in range(repeat):
            fh.write(f"{note.title} {','.join(note.tags)} {note.priority}\n")
    return {"added": note.title, "count": repeat}


@server.tool()
def fail(message: str) -> str:
    """Always fails with the message."""
    raise ToolError(message)


@server.tool()
def sleep(seconds: float) -> str:
    """Sleep for a while."""
    time.sleep(seconds)
    return "slept"


@server.tool()
def crash() -> str:
    """The server process exits at once."""
    sys.stderr.write("crashing on purpose\n")
    sys.stderr.flush()
    os._exit(3)


@server.tool()
def slow_write(text: str) -> str:
    """Record a run in runs.txt; the first run then hangs."""
    runs = Path("runs.txt")
    first = not runs.exists()
    with runs.open("a", encoding="utf-8") as fh:
        fh.write(f"{os.getpid()} {text}\n")
    if first:
        time.sleep(60)
    return "written"


@server.tool()
def shared_tree(tree: Tree) -> str:  # type: ignore[valid-type]
    """Take a tree no model could fill in."""
    return "never called"


@server.tool()
def picture() -> list[object]:
    """A small picture and a caption."""
    data = base64.b64encode(b"\x89PNG" + b"\x00" * 2044).decode()
    return ["a caption", ImageContent(type="image", data=data, mimeType="image/png")]


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:  # mcp 2.x: `mcp_server.py http PORT`
        server.run("streamable-http", port=int(sys.argv[2]))  # type: ignore[call-overload]
    else:
        server.run()
