"""Reading argument values safely: strict JSON first, then Python literals through `ast`
(literal values only, never eval). Nothing incomplete is ever accepted: a bracket the
model did not close means the model may not have finished, so it is never closed for it."""

from __future__ import annotations

import json
import re
from typing import Any

from localagent.textcalls.literals import MAX_DEPTH, NotLiteral, literal, once
from localagent.textcalls.smalljson import loose_json, stray_quotes, triple_quoted

_DECODER = json.JSONDecoder(object_pairs_hook=once)
_CLOSERS = {"{": "}", "[": "]", "(": ")"}
_SPECIAL = re.compile(r"[\"'\\{}\[\]()]")
_CALL_START = re.compile(r'\{\s*"name"\s*:')
_FENCE = re.compile(r"\A```[\w-]*[ \t]*\n?(.*?)\n?[ \t]*```\Z", re.S)


def json_at(text: str, pos: int) -> tuple[Any, int] | None:
    """The JSON value that starts at `pos` and the index just past it, or None."""
    try:
        return _DECODER.raw_decode(text, pos)
    except (json.JSONDecodeError, NotLiteral, RecursionError):  # nesting past the limit
        return None


def closing(text: str, pos: int) -> int | None:
    """The index just past the bracket that closes the one at `pos`, skipping quoted
    strings; None when it is never closed (or nests deeper than any literal can)."""
    stack: list[str] = []
    quote = ""
    escaped_until = -1
    for match in _SPECIAL.finditer(text, pos):
        char, at = match.group(0), match.start()
        if at < escaped_until:
            continue
        if quote:
            if char == "\\":
                escaped_until = at + 2
            elif char == quote[0] and text.startswith(quote, at):
                quote, escaped_until = "", at + len(quote)
        elif char in "\"'":
            # A Python string in three quotes: the 1.5B wrote a file's content so in its
            # JSON, `"content": """\nclass RockPaperScissors: ...\n    """`.
            quote = char * 3 if text.startswith(char * 3, at) else char
            escaped_until = at + len(quote)
        elif char in _CLOSERS:
            stack.append(_CLOSERS[char])
            if len(stack) > MAX_DEPTH:
                return None
        elif char in ")]}":
            if not stack or stack.pop() != char:
                return None
            if not stack:
                return at + 1
    return None


def value_at(text: str, pos: int) -> tuple[Any, int] | None:
    """A complete JSON value at `pos`, else a complete Python literal whose bracket opens
    at `pos` (single quotes, True/None, trailing commas), else JSON as small models write
    it (`loose_json`), with the index just past it."""
    found = json_at(text, pos)
    if found is not None:
        return found
    if pos >= len(text) or text[pos] not in "{[":
        return None
    end = closing(text, pos)
    if end is None:
        # A call's object whose strings hold a quote left open make the brackets unclosed
        # to a reader of quotes: Qwen2.5-Coder-1.5B wrote `print(f"Lines: {len(lines)},
        # ... {chars})` in a content, three replies running (the CPU). Read at most once
        # a call, so the scan stays as long as the reply.
        # (Not where strings in three quotes are: those have readers of their own.)
        if not _CALL_START.match(text, pos) or '"""' in text or "'''" in text:
            return None
        return stray_quotes(text, pos)
    # JSON as small models write it before Python's reading: `'It\\'s'` in a JSON string
    # is the file's own escape, which a Python literal would drop (the 1.5B's game then
    # held `'It's a tie!'` and failed to compile, 5 writes of 16 rps runs on an H100).
    for read in (loose_json, triple_quoted, literal):
        try:
            return read(text[pos:end]), end
        except NotLiteral:
            continue
    # Only where the brackets close (quotes paired, or their count even): a scan from
    # every `{` of a long reply to its end would take time by the square of its length.
    found = stray_quotes(text, pos, end)
    return found if found is not None and found[1] == end else None


def object_at(text: str, pos: int) -> tuple[dict[str, Any], int] | None:
    """Like `value_at`, for an object only; leading whitespace is skipped."""
    while pos < len(text) and text[pos].isspace():
        pos += 1
    found = value_at(text, pos)
    return found if found is not None and isinstance(found[0], dict) else None


def whole_object(text: str) -> dict[str, Any] | None:
    """`text` as one complete object (in a code fence or not) with nothing after it."""
    text = text.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    found = object_at(text, 0)
    if found is None or text[found[1] :].strip():
        return None
    return found[0]


def lenient_arguments(raw: str) -> dict[str, Any] | None:
    """A native call's `arguments` string that is not strict JSON, as an object when that is
    complete and unambiguous: an object followed by prose, a Python literal dict, an object
    in a code fence, a JSON string holding an object. None when it is anything else."""
    text = raw.strip()
    if not text:
        return {}
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    if text.startswith('"'):
        inner = json_at(text, 0)
        if inner is None or not isinstance(inner[0], str) or text[inner[1] :].strip():
            return None
        text = inner[0].strip()
    found = object_at(text, 0)
    if found is None:
        return None
    rest = text[found[1] :].lstrip()
    if rest[:1] in ("{", "["):  # a second object: which one was meant is not clear
        return None
    return found[0]
