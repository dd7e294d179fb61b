"""Which top-level functions of a Python module call a given function."""

from __future__ import annotations

import ast

__all__ = ["functions", "not_calling"]


def functions(tree: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """The module's top-level functions by name, in order."""
    return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}


def not_calling(tree: ast.Module, name: str, users: list[str]) -> list[str]:
    """Of the module's functions in `users` (all but `name` when empty), those whose code
    calls no `name` (nor hands it on); [] when it defines no `name`."""
    found = functions(tree)
    if name not in found:
        return []
    wanted = users or [n for n in found if n != name]
    return [u for u in wanted if u in found and not _calls(found[u], name)]


def _calls(function: ast.AST, name: str) -> bool:
    """Calls it, or hands it on (`map(area, shapes)`)."""
    return any(
        (isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load))
        or (isinstance(node, ast.Attribute) and node.attr == name)
        for node in ast.walk(function)
    )
