"""Reading tool calls that a model wrote as text instead of native tool calls.

`parse_reply` tries a table of recognisers, one per format local models use in practice
(see `localagent.textcalls.table`); `clean_tool_name` and `lenient_arguments` repair the
small defects of native calls."""

from __future__ import annotations

from localagent.textcalls.base import (
    UNPARSED,
    Parsed,
    TextCallError,
    ToolCall,
    arguments_object,
    clean_tool_name,
    given_arguments,
    valid_unicode,
)
from localagent.textcalls.table import RECOGNISERS, parse_reply
from localagent.textcalls.values import lenient_arguments

__all__ = [
    "RECOGNISERS",
    "UNPARSED",
    "Parsed",
    "TextCallError",
    "ToolCall",
    "arguments_object",
    "clean_tool_name",
    "given_arguments",
    "lenient_arguments",
    "parse_reply",
    "parse_text_calls",
    "valid_unicode",
]


def parse_text_calls(content: str, known: set[str]) -> list[ToolCall]:
    """Tool calls found in the content; [] when there is none; raises TextCallError with
    the problem when the reply tried a call that could not be read."""
    parsed = parse_reply(content, known)
    if parsed.problem:
        raise TextCallError(parsed.problem)
    return parsed.calls
