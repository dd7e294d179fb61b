"""The types every recogniser shares: a tool call, the error for a broken one, the result."""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

# Special tokens that leak into names: <|channel|>, <|constrain|>, <｜tool▁sep｜>, ...
_MARKUP = re.compile(r"<[|｜][^<>]{0,40}[|｜]>")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SEPARATORS = re.compile(r"[ _\-]+")  # any other character keeps a name apart
# The title a schema generator gives a tool's arguments: FastMCP's `{function}Arguments`,
# pydantic's `{Name}Args` / `{Name}Input`. A weak model reads it off the schema and calls
# it (boettiger-lab/mcp-data-server#326: qwen called `_register_hex_tiles_toolArguments`
# for `register_hex_tiles`, whose wrapper function was `_register_hex_tiles_tool`).
_TITLE = re.compile(r"(?:_tool)?_(?:arguments|args|input|params|parameters|schema)\Z")


# The tool name in the formats shown to a model; a reply that copies it named no tool.
PLACEHOLDER = "TOOL_NAME"

# Holds tool arguments that are not a JSON object, so the tool can say what is wrong.
UNPARSED = "__unparsed__"
# Holds the keys a call object had beside its name and arguments (a `}` too early in
# `{"arguments": {"path": ..., "old": ...}, "new": ...}`): the tool takes those that name
# one of its parameters missing from the arguments (`tools.arguments.prepared`).
BESIDE = "__beside__"


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    server_id: str = ""  # the id the server gave the call, sent back with its result


def given_arguments(arguments: dict[str, Any]) -> Any:
    """The arguments as the model gave them: the object, or what could not be read as one
    (for the tool to refuse with a clear message)."""
    return arguments.get(UNPARSED, arguments)


def arguments_object(arguments: Any) -> dict[str, Any]:
    """The arguments as the model gave them when they are an object; {} when they could
    not be read as one (a JSON string cut short, a list), which the tool refuses. For the
    loop's questions about a call (is it the read its step asks for, the run it ran
    before), which such arguments answer with no."""
    given = given_arguments(arguments) if isinstance(arguments, dict) else arguments
    return given if isinstance(given, dict) else {}


@dataclass(frozen=True)
class Parsed:
    """What a reply holds: its calls, the format they came in, and what went wrong if a
    format's marker was there but no call could be read (text meant for the model)."""

    calls: list[ToolCall]
    recogniser: str | None = None
    problem: str = ""


class TextCallError(ValueError):
    """The content looks like it meant to call a tool but could not be read."""


def valid_unicode(value: Any) -> Any:
    """`value` with lone surrogates replaced: JSON may escape them, but they are not
    Unicode, and the journal and the next request could not encode them."""
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, dict):
        return {valid_unicode(k): valid_unicode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [valid_unicode(item) for item in value]
    return value


def fold_name(name: str) -> str:
    """A tool name as it is compared: `WriteFile`, `write-file`, `Write File` and
    `WRITE_FILE` all fold to `write_file`."""
    return _SEPARATORS.sub("_", _CAMEL.sub("_", name.strip())).lower().strip("_")


def clean_tool_name(name: str, known: Collection[str]) -> str:
    """`name` reduced to a known tool name when leaked markup, a `functions.` prefix, a
    call index (`functions.read_file:0`), letter case or separators (`Mark_Subtask_Complete`,
    `Write File`, `readFile`), or the arguments' schema title a generator made of the name
    (`read_fileArguments`), are all that differs and exactly one known name is left;
    otherwise `name` stripped. Never a fuzzy match: aliases are the registry's to read."""
    stripped = name.strip()
    if stripped in known:
        return stripped
    pieces = {_bare(piece) for piece in _MARKUP.sub(" ", stripped).split()}
    candidates = pieces & set(known)
    if not candidates:
        folded = {fold_name(piece) for piece in pieces | {_bare(stripped)}}
        folded |= {_TITLE.sub("", piece) for piece in folded}
        candidates = {k for k in known if fold_name(k) in folded}
    return candidates.pop() if len(candidates) == 1 else stripped


def _bare(piece: str) -> str:
    piece = re.sub(r":\d+$", "", piece.strip("\"'`"))
    return piece.removeprefix("functions.")


def make_call(name: str, arguments: Any, known: Collection[str]) -> ToolCall:
    """A call from a name and an arguments object; raises when the arguments are not one."""
    name = clean_tool_name(name, known)
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise TextCallError(f"the arguments of {name!r} must be a JSON object")
    return ToolCall(valid_unicode(name), valid_unicode(arguments))


# What a recogniser returns: each call with the offset where it starts in the reply.
Found = list[tuple[int, ToolCall]]
