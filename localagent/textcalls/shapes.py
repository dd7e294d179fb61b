"""Tool calls as JSON objects (or Python-literal dicts) in the shapes models use:
`name`/`arguments`, `tool`/`args`, `name`/`parameters`, an OpenAI `{"function": {...}}`,
a list of those, or a `{"tool_calls": [...]}` wrapper; arguments as an object or a string."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from localagent.textcalls.base import (
    BESIDE,
    PLACEHOLDER,
    UNPARSED,
    Found,
    TextCallError,
    ToolCall,
    clean_tool_name,
    make_call,
    valid_unicode,
)
from localagent.textcalls.literals import NotLiteral
from localagent.textcalls.names import is_tool_name
from localagent.textcalls.smalljson import loose_json, three_quotes_closed
from localagent.textcalls.values import closing, json_at, lenient_arguments, value_at

NAME_KEYS = ("name", "tool", "tool_name", "function")
ARG_KEYS = ("arguments", "args", "parameters", "params", "input")
WRAPPER_KEYS = ("tool_calls", "function_call")
_CALL_KEYS = {*NAME_KEYS, *ARG_KEYS, "id", "type"}
MENTION = "it mentions a tool but holds no valid JSON tool call"
# Qwen2.5-Coder-1.5B's refactor on the CPU ended its strings in three quotes with four,
# `"old": """...join(lines)"""", "new": """...`, three replies in a row, told only the format.
FOUR_QUOTES = (
    ': a string in three quotes there ends with four (`""""`); end it with three, or send '
    "the text as one JSON string"
)
COPIED = f"it copies the example's placeholder {PLACEHOLDER} instead of naming a real tool"
_START = re.compile(r"\{\s*[\"'}]|\[\s*\{")  # where an object (or a list of them) can start
_OBJECT = re.compile(r"\{\s*[\"']")
# What may follow a call whose last `}` is missing: nothing, or the end of its code fence.
_END = re.compile(r"\s*(?:```\s*)?\Z")
# A failed decode costs up to a pass over the reply: past these many, give up (junk, not calls).
_LITERAL_TRIES = 50
_TRIES = 200


def calls_in(value: Any, known: set[str]) -> list[ToolCall]:
    """The calls a decoded value holds: one call object, a list of them, or a wrapper."""
    items = value if isinstance(value, list) else [value]
    calls = []
    for item in items:
        if not isinstance(item, dict):
            continue
        wrapped = next(
            (item[k] for k in WRAPPER_KEYS if isinstance(item.get(k), list | dict)), None
        )
        if wrapped is not None and not any(k in item for k in NAME_KEYS):
            calls += (
                calls_in(wrapped, known)
                if isinstance(wrapped, list)
                else calls_in([wrapped], known)
            )
            continue
        call = as_call(item, known)
        if call is not None:
            calls.append(call)
    return calls


def as_call(obj: dict[str, Any], known: set[str]) -> ToolCall | None:
    """`obj` as a call, or None when it is not one: no name, an unknown name and no
    arguments (`{"name": "Alice"}`), or a tool definition quoted back."""
    if isinstance(obj.get("function"), dict):
        obj = obj["function"]
    name = next((obj[k] for k in NAME_KEYS if isinstance(obj.get(k), str)), None)
    if name is None or name.strip() == PLACEHOLDER:
        return None
    has_arguments = any(k in obj for k in ARG_KEYS)
    name = clean_tool_name(name, known)
    if not has_arguments and not is_tool_name(name, known):
        return None
    arguments = next((obj[k] for k in ARG_KEYS if k in obj), {})
    if _is_schema(arguments):
        return None
    call = make_call(name, _decoded(name, arguments), known)
    beside = {k: v for k, v in obj.items() if k not in _CALL_KEYS and k not in call.arguments}
    if beside and UNPARSED not in call.arguments:
        call.arguments[BESIDE] = valid_unicode(beside)
    return call


def _is_schema(arguments: Any) -> bool:
    """A JSON schema (`{"type": "object", "properties": …}`): a tool's definition."""
    return (
        isinstance(arguments, dict)
        and arguments.get("type") == "object"
        and isinstance(arguments.get("properties"), dict)
    )


def _decoded(name: str, arguments: Any) -> Any:
    if not isinstance(arguments, str):
        return arguments
    if not arguments.strip():
        return {}
    try:
        return json.loads(arguments)
    except (json.JSONDecodeError, RecursionError) as exc:
        lenient = lenient_arguments(arguments)
        if lenient is None:
            raise TextCallError(f"the arguments of {name!r} are not valid JSON: {exc}") from None
        return lenient


def values(text: str) -> Iterator[tuple[int, Any]]:
    """Every complete top-level object (or list of objects) in `text`, with its offset."""
    tries = 0
    match = _START.search(text)
    while match:
        start = match.start()
        found = value_at(text, start) if tries < _LITERAL_TRIES else json_at(text, start)
        if found is None:
            tries += 1
            match = _START.search(text, start + 1) if tries < _TRIES else None
            continue
        yield start, found[0]
        match = _START.search(text, found[1])


def json_calls(text: str, known: set[str]) -> Found:
    """Family: any model prompted with the JSON text protocol, Hermes-style templates that
    drop the tags, Qwen 2.5 in Ollama. Real example (ollama/ollama#11185, qwen3:32b):
    `{"name": "LLM_Tool_RAG", "arguments": {"term": "accidents, tribunal de Versailles"}}`"""
    text = three_quotes_closed(text)
    found = [(start, call) for start, value in values(text) for call in calls_in(value, known)]
    last = unclosed_last_call(text, known) or unclosed_last_string(text, known)
    if last is not None and all(start < last[0] for start, _ in found):
        found.append(last)
    if not found and any(name in text for name in known):
        raise TextCallError(MENTION + (FOUR_QUOTES if '""""' in text else ""))
    if not found and PLACEHOLDER in text:
        raise TextCallError(COPIED)
    return found


def unclosed_last_call(text: str, known: set[str]) -> tuple[int, ToolCall] | None:
    """The call that ends the reply with only its final `}` missing (Qwen2.5-Coder-0.5B:
    `{"name": "write_file", "arguments": {"path": "hello.py", "content": "print('hi')"}`).
    The repair is unambiguous only there: its name and complete arguments are all written,
    nothing follows, and one `}` makes it whole. Anything else missing is never guessed."""
    end = _END.search(text).start()  # type: ignore[union-attr]  # \Z always matches
    tried = 0
    for match in _OBJECT.finditer(text, 0, end):
        tried += 1
        if tried > _TRIES:
            return None
        start = match.start()
        if closing(text, start) is not None:
            continue
        found = value_at(text[start:end] + "}", 0)
        if found is None or found[1] != end - start + 1 or not isinstance(found[0], dict):
            continue
        call = as_call(found[0], known) if _only_the_last_brace(found[0]) else None
        return None if call is None else (start, call)
    return None


def unclosed_last_string(text: str, known: set[str]) -> tuple[int, ToolCall] | None:
    """The call whose last string was never closed, the reply ending with at least the
    braces of every object still open (Qwen2.5-Coder-1.5B: `{"name": "write_file",
    "arguments": {"path": "rps.py", "content": "...return 'Player 2 wins!'}}}`). The
    quote goes where the string's own braces balance, and only where exactly one place
    does: a string that may end with a brace of its own, or a reply cut off inside one,
    is never guessed."""
    body = text[: _END.search(text).start()]  # type: ignore[union-attr]  # \Z matches
    braces = len(body) - len(body.rstrip("}"))
    head = body[: len(body) - braces]
    opened = _open_string(head)
    if opened is None or braces < opened[1] or head.endswith("\\"):
        return None
    string = head[opened[0] + 1 :]
    balanced = [
        extra
        for extra in range(braces - opened[1] + 1)
        if string.count("{") == string.count("}") + extra
    ]
    if len(balanced) != 1:
        return None
    whole = head + "}" * balanced[0] + '"' + "}" * (braces - balanced[0])
    for match in _OBJECT.finditer(whole, 0, opened[0]):
        found = json_at(whole, match.start()) or _loose_at(whole, match.start())
        if found is None or whole[found[1] :].strip("}") or not isinstance(found[0], dict):
            continue
        call = as_call(found[0], known) if set(found[0]) <= _CALL_KEYS else None
        return None if call is None else (match.start(), call)
    return None


def _loose_at(text: str, start: int) -> tuple[Any, int] | None:
    """The object at `start` read as `loose_json` reads it (`\\'` kept as written)."""
    end = closing(text, start)
    if end is None:
        return None
    try:
        return loose_json(text[start:end]), end
    except NotLiteral:
        return None


def _open_string(text: str) -> tuple[int, int] | None:
    """Where the JSON string still open at the end of `text` starts, and how many
    objects are open around it (all of them objects); None otherwise."""
    depth, start, escaped = 0, -1, False
    for at, char in enumerate(text):
        if start >= 0:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                start = -1
        elif char == '"':
            start = at
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif char in "[]":
            return None
    return (start, depth) if start >= 0 and depth > 0 else None


def _only_the_last_brace(obj: dict[str, Any]) -> bool:
    """Whether one `}` at the end is the only repair that reads as a call: the object
    holds a call's keys only (else a brace left out earlier would make other arguments),
    and its arguments do not end with an object (whose own brace may be the one missing:
    `{"a": {"b": 1, "c": 2}` may mean `{"a": {"b": 1}, "c": 2}`)."""
    arguments = next((obj[key] for key in ARG_KEYS if key in obj), None)
    if not isinstance(arguments, dict | str) or not set(obj) <= _CALL_KEYS:
        return False
    return not ends_with_object(arguments)


def ends_with_object(value: Any) -> bool:
    """Whether an object's last value is itself an object."""
    return isinstance(value, dict) and bool(value) and isinstance(list(value.values())[-1], dict)
