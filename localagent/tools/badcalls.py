"""Calls a Python file's own text shows can never work: a function that calls itself
before anything else (no call of it ever returns), and a call of one of the file's own
functions with a number of arguments it cannot take (TypeError).

Qwen2.5-Coder-1.5B, asked to make shapes.py's total_area, largest and report call its
new area(kind, size), wrote `def total_area(shapes): return area(shapes)`, `def
largest(shapes): return largest(shapes)` and `def report(shapes): return report(shapes)`,
five times, the last three blocked (the CPU). Each write was made, and said nothing.

Only what is certain counts: a function defined once at the file's top level, called by
its name where nothing else binds that name, without `*`, `**` or keywords.
"""

from __future__ import annotations

import ast

MOST = 3  # findings a note names
_FUNCTIONS = ast.FunctionDef | ast.AsyncFunctionDef


def note(source: str | bytes, name: str) -> str:
    """What a write of a Python file with such calls ends with, or ""."""
    if not name.lower().endswith((".py", ".pyw")) or not (found := findings(source)):
        return ""
    return "; but " + "; and ".join(found[:MOST])


def findings(source: str | bytes) -> list[str]:
    """Each such call, said as the note says it ([] for a file that does not parse)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    defined = [n for n in tree.body if isinstance(n, _FUNCTIONS)]
    names = [n.name for n in defined]
    once = {n.name: n for n in defined if names.count(n.name) == 1 and not _rebound(tree, n.name)}
    found = [
        f"{f.name} calls itself before anything else, so no call of it ever returns "
        "(RecursionError)"
        for f in once.values()
        if _calls_itself_first(f)
    ]
    for caller in ast.walk(tree):
        if not isinstance(caller, _FUNCTIONS | ast.Module):
            continue
        local = _bound_in(caller) if isinstance(caller, _FUNCTIONS) else set()
        for call in _calls_in(caller):
            func = call.func
            if not isinstance(func, ast.Name) or func.id not in once or func.id in local:
                continue
            if (why := _arity(call, once[func.id])) and why not in found:
                found.append(why)
    return found


def _calls_itself_first(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    body = function.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # its docstring
    first = body[0] if body else None
    value = first.value if isinstance(first, ast.Return | ast.Expr) else None
    if isinstance(value, ast.Await):
        value = value.value
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == function.name
        and function.name not in _bound_in(function)
    )


def _arity(call: ast.Call, function: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """Why `call` cannot bind to `function`'s parameters by their count, or ""."""
    if call.keywords or any(isinstance(a, ast.Starred) for a in call.args):
        return ""
    spec = function.args
    positional = [*spec.posonlyargs, *spec.args]
    required = len(positional) - len(spec.defaults)
    required_kw = [a for a, d in zip(spec.kwonlyargs, spec.kw_defaults, strict=True) if d is None]
    given = len(call.args)
    if required_kw or (required <= given and (given <= len(positional) or spec.vararg)):
        return ""
    takes = ", ".join(a.arg for a in positional) or "no arguments"
    many = f"{given} argument{'s' * (given != 1)}"
    count = len(positional) if required == len(positional) else f"{required}-{len(positional)}"
    return (
        f"`{ast.unparse(call)[:60]}` gives {function.name} {many}, and it takes {count} "
        f"({takes}): the call raises TypeError"
    )


def _calls_in(scope: ast.AST) -> list[ast.Call]:
    """The calls in `scope` itself, not in the functions or classes inside it."""
    found: list[ast.Call] = []
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        if isinstance(node, _FUNCTIONS | ast.ClassDef | ast.Lambda):
            continue
        if isinstance(node, ast.Call):
            found.append(node)
        todo.extend(ast.iter_child_nodes(node))
    return found


def _bound_in(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The names a function binds itself: its parameters and what it assigns."""
    spec = function.args
    params = [*spec.posonlyargs, *spec.args, *spec.kwonlyargs, spec.vararg, spec.kwarg]
    bound = {a.arg for a in params if a is not None}
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            bound.add(node.id)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            bound.update(node.names)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
    return bound


def _rebound(tree: ast.Module, name: str) -> bool:
    """Whether the module binds `name` other than by its one `def` (an assignment, an
    import, a decorator that may replace it)."""
    for node in tree.body:
        if isinstance(node, _FUNCTIONS) and node.name == name and node.decorator_list:
            return True
        for inner in ast.walk(node) if not isinstance(node, _FUNCTIONS) else []:
            if (
                isinstance(inner, ast.Name)
                and inner.id == name
                and isinstance(inner.ctx, ast.Store)
            ):
                return True
            if isinstance(inner, ast.alias) and (inner.asname or inner.name) == name:
                return True
    return False
