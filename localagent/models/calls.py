"""The function-calling wire shape both APIs share (both adapters use this): tools as
they are sent, and native tool calls as servers send them, read leniently."""

from __future__ import annotations

from typing import Any

import orjson

from localagent.models.protocol import ToolSpec
from localagent.textcalls import (
    UNPARSED,
    ToolCall,
    clean_tool_name,
    lenient_arguments,
    valid_unicode,
)


def function_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    """`tools` as both APIs read them: `{"type": "function", "function": {...}}`, their
    parameters flat; a fresh copy each call, so nothing the request holds is shared with
    the tools."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": orjson.loads(orjson.dumps(tool.flat)),
            },
        }
        for tool in tools
    ]


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
