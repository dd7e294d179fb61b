"""JSON as small models write it: line breaks and Python's escapes inside strings,
strings in three quotes, quotes left unescaped. Each reading is exact or raises
NotLiteral (None where it returns a position): nothing is guessed."""

from __future__ import annotations

import json
import re
from typing import Any

from localagent.textcalls.literals import MAX_DEPTH, NotLiteral, literal, once

_LOOSE = json.JSONDecoder(strict=False, object_pairs_hook=once)  # line breaks, tabs in strings
# A backslash before a character JSON defines no escape for (`\'`, `\d`), after an even
# number of backslashes.
_UNDEFINED_ESCAPE = re.compile(r'(?<!\\)((?:\\\\)*)\\(?=[^"\\/bfnrtu])')


# What may follow the quote that ends a JSON string: the end of an object or list, the
# colon after a key, or a comma and the next key.
_STRING_END = re.compile(r'\s*(?:[}\]:]|,\s*"[^"\\\n]{1,64}"\s*:)')


def stray_quotes(text: str, pos: int, end: int | None = None) -> tuple[Any, int] | None:
    """The object at `pos` when its strings hold double quotes the model did not escape,
    with the index just past it: Qwen2.5-Coder-1.5B wrote `"content": "def divide(a, b):
    ... raise ValueError("Cannot divide by zero")"` three times. A quote ends a string only
    where JSON goes on after one (`}`, `]`, `:`, or a comma and a key); every other quote is
    the string's own. Whatever does not then read as JSON is None: nothing is guessed."""
    out: list[str] = []
    depth, inside, at = 0, False, pos
    stop = len(text) if end is None else end
    while at < stop:
        char = text[at]
        if inside and char == "\\":
            out.append(text[at : at + 2])
            at += 2
            continue
        if inside and char == '"' and not _STRING_END.match(text, at + 1):
            out.append('\\"')
        else:
            out.append(char)
            if char == '"':
                inside = not inside
            elif not inside and char in "{[":
                depth += 1
                if depth > MAX_DEPTH:
                    return None
            elif not inside and char in "}]":
                depth -= 1
                if depth == 0:
                    break
        at += 1
    if depth != 0:
        return None
    try:
        return loose_json("".join(out)), at + 1
    except NotLiteral:
        return None


_TRIPLE = re.compile(r'"""(.*?)"""|\'\'\'(.*?)\'\'\'', re.S)
# Four quotes that end a value (a comma, a brace or a bracket next): Python's three that
# close the string, and JSON's one after them. Valid JSON never holds four in a row.
_FOUR = re.compile(r'(?<=[^"\\])""""(?=\s*[,}\]])')


def three_quotes_closed(text: str) -> str:
    """The text with each string in three quotes that ends with four before the next key
    or the end of its object ended with three, as Python reads it (the fourth is JSON's):
    told that its strings ended with four, Qwen2.5-Coder-1.5B sent such an edit three
    replies in a row, twice (refactor on the CPU)."""
    return _FOUR.sub('"""', text) if '""""' in text else text


# A closing quote, then a line break and the next key with no comma between them; or a
# `;` in the comma's place (the 1.5B's refactor edit, `"""...left out."""; "new": """...`).
_NO_COMMA = re.compile(r'(?<=["\'])([ \t]*\n\s*|[ \t]*;(?=\s))(?=\s*"[A-Za-z_]\w*"\s*:)')


def triple_quoted(source: str) -> Any:
    """JSON whose strings Qwen2.5-Coder-1.5B wrote in Python's three double quotes, the
    file's text as it is, line breaks included (an edit's `"old"`: `def report(shapes):`,
    its lines, then `return "\\n".join(lines)`). In such a string a `\\n` inside quotes on
    its line is the file's own escape (Python would make it a line break, and the text
    would not be found in the file: 6 runs of 6 on the H200 sent such edits); one outside
    quotes is a line break. A comma left out before the next key on a new line is put in,
    and so is one written as `;`. Anything that then does not read as JSON raises
    NotLiteral."""
    if '"""' not in source and "'''" not in source:
        raise NotLiteral("no string in three quotes")

    def as_json(found: re.Match[str]) -> str:
        body = found[1] if found[1] is not None else found[2]
        if "\n" not in body or not _own_escapes(body):
            body = literal(found[0])
        elif body.startswith(("\\\n", "\\\r\n")):
            # `"""\` and a line break: Python's way to start the text on the next line
            # (the 1.5B's mathx docstring, the CPU), not a backslash of the file's own.
            body = body.split("\n", 1)[1]
        return json.dumps(body)

    text = _TRIPLE.sub(as_json, source)
    try:
        return loose_json(text)
    except NotLiteral:
        return loose_json(_NO_COMMA.sub(lambda m: "," + m[1].lstrip(" \t;"), text))


def _own_escapes(body: str) -> bool:
    """Whether every `\\n` in a string of several lines lies inside quotes on its line."""
    for line in body.split("\n"):
        at = line.find("\\n")
        while at >= 0:
            before = line[:at]
            if before.count('"') % 2 == 0 and before.count("'") % 2 == 0:
                return False
            at = line.find("\\n", at + 2)
    return True


def loose_json(source: str) -> Any:
    """JSON as Qwen2.5-Coder-1.5B writes a file's content in it: line breaks inside
    strings, and a backslash JSON defines no escape for, kept as written. Its game's line
    `print('It\\'s a tie!')` came with that very `\\'` in the JSON, which strict JSON
    refuses, and the model sent the same call three times; the Python escape it wrote is
    what the file must hold. Anything else invalid raises NotLiteral, as does a value that
    ends early."""
    text = _UNDEFINED_ESCAPE.sub(lambda found: found.group(1) + "\\\\", source.strip())
    try:
        value, used = _LOOSE.raw_decode(text)
    except NotLiteral:
        raise
    except (json.JSONDecodeError, RecursionError):
        raise NotLiteral("not JSON") from None
    if text[used:].strip():
        raise NotLiteral("more after the value")
    return value
