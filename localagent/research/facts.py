"""What the call graph needs from one Python file, read from its `ast` once when the file
is indexed: its definitions, its imports and the calls each definition makes."""

from __future__ import annotations

import ast
from typing import Any

# {"defs": [[name, kind, start, end, bases]], "imports": {local: [module, name, level]},
#  "calls": [[caller, callee as written, line]]}
Facts = dict[str, Any]
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def file_facts(tree: ast.Module) -> Facts:
    facts: Facts = {"defs": [], "imports": {}, "calls": []}
    _scan(tree.body, [], facts)
    return facts


def dotted(node: ast.expr) -> str:
    """`a.b.c` for a name or attribute chain; `?.c` when the chain starts elsewhere
    (a call's result, a subscript)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    parts.append(node.id if isinstance(node, ast.Name) else "?")
    return ".".join(reversed(parts))


def _scan(nodes: list[ast.AST], scope: list[str], facts: Facts) -> None:
    """Calls and imports in `nodes`, credited to `scope`; definitions open a new scope.
    (A stack, not ast.NodeVisitor: this runs over every node of every file indexed.)"""
    stack = list(reversed(nodes))
    while stack:
        node = stack.pop()
        if isinstance(node, _DEFS):
            _define(node, scope, facts)
            stack.extend([*node.decorator_list, *getattr(node, "bases", [])])
            continue
        if isinstance(node, ast.Call):
            callee = dotted(node.func)
            if not callee.startswith("?") or "." in callee:
                facts["calls"].append([".".join(scope) or "<module>", callee, node.lineno])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                local = alias.asname or alias.name.split(".")[0]
                facts["imports"][local] = [alias.name if alias.asname else local, "", 0]
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name != "*":
                    entry = [node.module or "", alias.name, node.level]
                    facts["imports"][alias.asname or alias.name] = entry
        stack.extend(ast.iter_child_nodes(node))


def _define(
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, scope: list[str], facts: Facts
) -> None:
    kind = "class" if isinstance(node, ast.ClassDef) else "function"
    name = ".".join([*scope, node.name])
    bases = [dotted(base) for base in getattr(node, "bases", [])]
    facts["defs"].append([name, kind, node.lineno, node.end_lineno or node.lineno, bases])
    _scan(node.body, [*scope, node.name], facts)
