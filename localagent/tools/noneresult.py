"""Which function a failing test's None came from. Qwen2.5-Coder-1.5B's refactor gave its
new `area` no case for a triangle, so it fell through to None, and `total += area(kind,
size)` raised "unsupported operand type(s) for +=: 'float' and 'NoneType'". Sent back to
fix that line, it changed the callers, not area, in three runs of four (the CPU)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from localagent.tools.pkgimports import text_of, tree_of

_CODE = re.compile(r"\(`([^`]+)`\)\s*$")  # the line a failure names (`tools/asserted.py`)


def none_from(root: Path, path: str, failure: str) -> str:
    """The function of `path` that can return None and that the line of an error about
    None calls; "" when the failure is another one, or no such function is called."""
    found = _CODE.search(failure)
    if "'NoneType'" not in failure or found is None:
        return ""
    tree = tree_of(text_of(root, path))
    try:
        line = ast.parse(found[1].strip())
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ""
    if tree is None:
        return ""
    functions = {
        n.name: n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    for node in ast.walk(line):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            function = functions.get(node.func.id)
            if function is not None and _gives_none(function):
                return function.name
    return ""


def none_note(name: str) -> str:
    """What the failure then says of that function."""
    return (
        f"{name} returns None for the cases it does not handle, and this line uses what it "
        f"returns: make {name} return a number in every case"
    )


def _gives_none(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether a function that returns a value somewhere can return None: `return None`,
    a bare `return`, or a way to its end with no return."""
    returns = [n for n in ast.walk(function) if isinstance(n, ast.Return)]
    if not any(r.value is not None and not _none(r.value) for r in returns):
        return False  # it returns nothing at all: not a function of values
    return any(r.value is None or _none(r.value) for r in returns) or not _ends(function.body)


def _none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _ends(body: list[ast.stmt]) -> bool:
    """Whether every way through these statements ends in a return or a raise."""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, ast.Return | ast.Raise):
        return True
    if isinstance(last, ast.If):
        return _ends(last.body) and _ends(last.orelse)
    return False
