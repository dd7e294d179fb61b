"""Reading tool calls that a model wrote as text instead of native tool calls.

Accepts a JSON object in a code fence or bare in the content, with the keys models use
in practice: `name`/`arguments`, `tool`/`args`, `name`/`parameters`, or an OpenAI-style
`{"function": {"name", "arguments"}}`; arguments as an object or as a JSON string.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

_FENCE = re.compile(r"```(?:json|tool_call|tool)?\s*\n?(.*?)```", re.S)
_NAME_KEYS = ("name", "tool", "tool_name", "function")
_ARG_KEYS = ("arguments", "args", "parameters", "params", "input")


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


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


def _objects(text: str) -> list[Any]:
    decoder = json.JSONDecoder()
    found: list[Any] = []
    pos = text.find("{")
    while pos != -1:
        try:
            obj, end = decoder.raw_decode(text, pos)
        except (json.JSONDecodeError, RecursionError):  # nesting past the parser's limit
            pos = text.find("{", pos + 1)
            continue
        found.append(obj)
        pos = text.find("{", end)
    return found


def _as_call(obj: Any, known: set[str]) -> ToolCall | None:
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("function"), dict):
        obj = obj["function"]
    name = next((obj[k] for k in _NAME_KEYS if isinstance(obj.get(k), str)), None)
    if name is None:
        return None
    args: Any = next((obj[k] for k in _ARG_KEYS if k in obj), {})
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except (json.JSONDecodeError, RecursionError) as exc:
            raise TextCallError(f"the arguments of {name!r} are not valid JSON: {exc}") from None
    if not isinstance(args, dict):
        raise TextCallError(f"the arguments of {name!r} must be a JSON object")
    if name not in known and not any(k in obj for k in _ARG_KEYS):
        return None
    return ToolCall(valid_unicode(name), valid_unicode(args))


def parse_text_calls(content: str, known: set[str]) -> list[ToolCall]:
    """Tool calls found in the content; [] when there is none; raises if one is broken."""
    if "{" not in content:
        return []
    chunks = _FENCE.findall(content) or [content]
    calls: list[ToolCall] = []
    for chunk in chunks:
        for obj in _objects(chunk):
            items = obj if isinstance(obj, list) else [obj]
            calls += [c for c in (_as_call(item, known) for item in items) if c is not None]
    if not calls and any(name in content for name in known):
        raise TextCallError("it mentions a tool but holds no valid JSON tool call")
    return calls
