"""What the call graph needs from one Python file, read from its `ast` once when the file
is indexed: its definitions, its imports and the calls each definition makes."""

from __future__ import annotations

import ast
from typing import Any

Facts = dict[str, Any]  # {"defs": [[name, kind, start, end]], "imports": {...}, "calls": [...]}


def file_facts(tree: ast.Module) -> Facts:
    visitor = _Visitor()
    visitor.visit(tree)
    return {"defs": visitor.defs, "imports": visitor.imports, "calls": visitor.calls}


def dotted(node: ast.expr) -> str:
    """`a.b.c` for a name or attribute chain; `?.c` when the chain starts elsewhere
    (a call's result, a subscript)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    parts.append(node.id if isinstance(node, ast.Name) else "?")
    return ".".join(reversed(parts))


class _Visitor(ast.NodeVisitor):
    def __init__(self) -> None:
        self.defs: list[list[Any]] = []
        self.imports: dict[str, list[Any]] = {}  # local name -> [module, name or "", level]
        self.calls: list[list[Any]] = []  # [caller, callee expression, line]
        self.scope: list[str] = []

    def _define(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, kind: str
    ) -> None:
        name = ".".join([*self.scope, node.name])
        self.defs.append([name, kind, node.lineno, node.end_lineno or node.lineno])
        for decorator in node.decorator_list:
            self.visit(decorator)
        self.scope.append(node.name)
        for child in node.body:
            self.visit(child)
        self.scope.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._define(node, "function")

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._define(node, "function")

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for base in node.bases:
            self.visit(base)
        self._define(node, "class")

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            local = alias.asname or alias.name.split(".")[0]
            self.imports[local] = [alias.name if alias.asname else local, "", 0]

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            if alias.name != "*":
                self.imports[alias.asname or alias.name] = [
                    node.module or "",
                    alias.name,
                    node.level,
                ]

    def visit_Call(self, node: ast.Call) -> None:
        callee = dotted(node.func)
        if not callee.startswith("?") or "." in callee:
            self.calls.append([".".join(self.scope) or "<module>", callee, node.lineno])
        self.generic_visit(node)
