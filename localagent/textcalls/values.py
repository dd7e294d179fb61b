"""Reading argument values safely: strict JSON first, then Python literals through `ast`
(literal values only, never eval). Nothing incomplete is ever accepted: a bracket the
model did not close means the model may not have finished, so it is never closed for it."""

from __future__ import annotations

import ast
import json
import math
import re
import warnings
from typing import Any


class NotLiteral(ValueError):
    """The text is not a complete literal value."""


def _once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object whose keys are each given once. Qwen2.5-Coder-1.5B put two edits in one
    call's arguments, `"old"` and `"new"` twice; JSON keeps the last of each, and one edit
    ran as if it were the call (the CPU). A wrong call must never run."""
    found = dict(pairs)
    if len(found) != len(pairs):
        raise NotLiteral("a key given twice")
    return found


_DECODER = json.JSONDecoder(object_pairs_hook=_once)
_LOOSE = json.JSONDecoder(strict=False, object_pairs_hook=_once)  # line breaks, tabs in strings
# A backslash before a character JSON defines no escape for (`\'`, `\d`), after an even
# number of backslashes.
_UNDEFINED_ESCAPE = re.compile(r'(?<!\\)((?:\\\\)*)\\(?=[^"\\/bfnrtu])')
_CLOSERS = {"{": "}", "[": "]", "(": ")"}
_NAMED = {"true": True, "false": False, "null": None, "True": True, "False": False, "None": None}
_SPECIAL = re.compile(r"[\"'\\{}\[\]()]")
_MAX_DEPTH = 100  # Python's own parser refuses literals nested much deeper
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
            if len(stack) > _MAX_DEPTH:
                return None
        elif char in ")]}":
            if not stack or stack.pop() != char:
                return None
            if not stack:
                return at + 1
    return None


def literal(source: str) -> Any:
    """The value of a Python or JSON literal (dicts, lists, strings, numbers, true/True,
    null/None); raises NotLiteral for anything else, code included."""
    try:
        with warnings.catch_warnings():  # invalid escapes such as "\/" warn on 3.12
            warnings.simplefilter("ignore")
            tree = ast.parse(source.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise NotLiteral("not a literal") from None
    return literal_node(tree.body)


def literal_node(node: ast.AST) -> Any:
    """The value of one `ast` node made only of literals."""
    if isinstance(node, ast.Constant):
        return _constant(node.value)
    if isinstance(node, ast.Name) and node.id in _NAMED:
        return _NAMED[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = literal_node(node.operand)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise NotLiteral("a sign before something that is not a number")
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.Dict):
        if any(key is None for key in node.keys):  # {**other}
            raise NotLiteral("dictionary unpacking")
        return _once(
            [
                (_key(key), literal_node(value))
                for key, value in zip(node.keys, node.values, strict=True)
            ]
        )
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return [literal_node(element) for element in node.elts]
    raise NotLiteral(f"{type(node).__name__} is not a literal")


def _constant(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        raise NotLiteral("a number JSON cannot hold")
    if value is None or isinstance(value, str | int | float):
        return value
    raise NotLiteral(f"{type(value).__name__} is not a JSON value")


def _key(node: ast.AST | None) -> str:
    key = literal_node(node) if node is not None else None
    if isinstance(key, bool) or not isinstance(key, str | int):
        raise NotLiteral("a dictionary key that is not a string")
    return str(key)


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
                if depth > _MAX_DEPTH:
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
