"""Python literals read through `ast` (literal values only, never eval): dicts, lists,
strings, numbers, true/True, null/None, each key given once."""

from __future__ import annotations

import ast
import math
import warnings
from typing import Any

MAX_DEPTH = 100  # Python's own parser refuses literals nested much deeper
_NAMED = {"true": True, "false": False, "null": None, "True": True, "False": False, "None": None}


class NotLiteral(ValueError):
    """The text is not a complete literal value."""


def once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object whose keys are each given once. Qwen2.5-Coder-1.5B put two edits in one
    call's arguments, `"old"` and `"new"` twice; JSON keeps the last of each, and one edit
    ran as if it were the call (the CPU). A wrong call must never run."""
    found = dict(pairs)
    if len(found) != len(pairs):
        raise NotLiteral("a key given twice")
    return found


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
        return once(
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
