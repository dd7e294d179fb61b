"""An import of names from one of Python's own modules that has none of them, where the
file itself defines them (or its classes do, as methods): the import left out.

Qwen2.5-Coder-1.5B's mathx on the CPU wrote `mathx/__init__.py` as `from math import add,
subtract, multiply, divide` above its own four functions: math has no add, so the package
never loaded, and told so ("Python's math has no add: define it in mathx/__init__.py")
it wrote that file the same way four times. The import can never work, and what it names
is the file's own: without it the file does what its code says.
"""

from __future__ import annotations

import ast
import importlib
import sys
from types import ModuleType

from localagent.system.textcap import listed

# Python's own modules this looks into by importing them, when this process has not yet:
# ones whose import does nothing else (some, `antigravity` or `this`, act when imported).
_SAFE = frozenset(
    {
        *("math", "cmath", "statistics", "random", "string", "operator", "itertools"),
        *("functools", "collections", "os", "sys", "re", "json", "datetime", "time"),
        *("decimal", "fractions", "typing", "pathlib", "textwrap"),
    }
)
_DEFINES = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def mended(content: str, name: str) -> tuple[str, str, str, list[str]] | None:
    """The content without the names of each `from M import ...` (M one of Python's own
    modules) that M lacks and the file defines, a line left with none gone; the first
    such import as written, its module and those names. None when there is none, or
    when M lacks a name the file does not define (that import is the model's to mend)."""
    if not name.endswith(".py"):
        return None
    try:
        tree = ast.parse(content)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    defined = {node.name for node in tree.body if isinstance(node, _DEFINES)}
    # and the methods of its classes: the 1.5B's mathx wrote `from math import add, ...`
    # above `class Mathx:` and its four methods, then that file again until blocked
    defined |= {
        method.name
        for node in tree.body
        if isinstance(node, ast.ClassDef)
        for method in node.body
        if isinstance(method, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    lines = content.splitlines(keepends=True)
    found: tuple[str, str, list[str]] | None = None
    for node in reversed(tree.body):  # from the bottom: the lines above keep their numbers
        gone = _foreign(node, defined)
        if not gone or not isinstance(node, ast.ImportFrom) or node.module is None:
            continue
        first, last = node.lineno - 1, node.end_lineno or node.lineno
        old = "".join(lines[first:last])
        if old.strip() != ast.get_source_segment(content, node):
            continue  # the line holds another statement too
        keep = [a.name for a in node.names if a.name not in gone]
        lines[first:last] = [f"from {node.module} import {', '.join(keep)}\n"] if keep else []
        found = (old.strip(), node.module, gone)
    if found is None:
        return None
    return "".join(lines).lstrip("\n"), *found


def _foreign(node: ast.stmt, defined: set[str]) -> list[str]:
    """The names a `from M import ...` of one of Python's own modules imports that M does
    not have, when the file defines each of them ([] otherwise)."""
    if not isinstance(node, ast.ImportFrom) or node.level or node.module is None:
        return []
    module = python_module(node.module)
    if module is None or any(a.asname or a.name == "*" for a in node.names):
        return []
    lacking = [a.name for a in node.names if not hasattr(module, a.name)]
    return lacking if lacking and all(n in defined for n in lacking) else []


def python_module(name: str) -> ModuleType | None:
    """One of Python's own modules by name, imported where that does nothing else; None
    for any other name."""
    if name not in sys.stdlib_module_names:
        return None
    if name in sys.modules:
        return sys.modules[name]
    if name not in _SAFE:
        return None
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def mended_note(old: str, module: str, names: list[str]) -> str:
    """What the write says of an import it left out."""
    shown = " ".join(old.split())
    return (
        f"; `{shown}` imports what Python's {module} does not have, and this file defines "
        f"{listed(names)}: that import was left out"
    )
