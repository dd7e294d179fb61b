"""The names a Python file uses that nothing binds: a NameError waiting to happen.

Small models split a program across writes and lose a part: Qwen2.5-Coder-1.5B wrote
greet.py as `def greet(NAME): ...`, then, told to call its code, as the `__main__` block
alone, `greet(sys.argv[1])` with no `def greet` (the CPU); another wrote
`if __name__ == '__main__': greet(NAME)` (the H200). Each write was "done", the run
after it raised NameError, and the rounds went to finding out why.

Only what is certain counts: a name read in a scope where no enclosing scope, the
module, an import or the builtins bind it. A file with `from x import *`, or that
reaches for `globals()`, `locals()`, `vars()` or `exec`, binds names no reading can
see: it gets no finding.
"""

from __future__ import annotations

import ast
import builtins

# The module's own names, and what only Windows' builtins have.
_KNOWN = frozenset(dir(builtins)) | {"__file__", "__builtins__", "__spec__", "__loader__"}
_KNOWN |= {"__path__", "WindowsError"}
_DYNAMIC = frozenset({"globals", "locals", "vars", "exec", "eval", "__import__"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
MOST = 5


def note(source: str | bytes, name: str) -> str:
    """What a write of a Python file that reads names nothing binds ends with, or ""."""
    if not name.lower().endswith((".py", ".pyw")) or not (found := names(source)):
        return ""
    listed = ", ".join(f"`{n}`" for n in found)
    return (
        f"; but it uses {listed}, which it neither defines nor imports: running it raises "
        "NameError. Write the whole file again with what it uses"
    )


def names(source: str | bytes) -> list[str]:
    """The names the source reads that nothing binds, in the order they first appear (at
    most `MOST`); [] when it does not parse or binds names dynamically."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            return []
        if isinstance(node, ast.Name) and node.id in _DYNAMIC:
            return []
    found: dict[str, None] = {}
    declared = {n for node in ast.walk(tree) if isinstance(node, ast.Global) for n in node.names}
    _check(tree.body, _bound(tree.body) | declared | _KNOWN, found)
    return list(found)[:MOST]


def _check(body: list[ast.stmt] | list[ast.expr], visible: set[str], found: dict) -> None:
    """Record the names read in `body` (one scope) that `visible` lacks; nested scopes
    are checked with what they bind added."""
    for node in _own(body):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            if node.id not in visible:
                found.setdefault(node.id, None)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            params = {a.arg for a in _arguments(node.args)}
            inner = node.body if isinstance(node.body, list) else [node.body]
            _check(inner, visible | params | _bound(inner), found)
        elif isinstance(node, ast.ClassDef):
            # A class body sees its own names; its methods do not (they see `visible`).
            own = _bound(node.body)
            for item in node.body:
                if isinstance(item, _SCOPES):
                    _check([item], visible, found)
                else:
                    _check([item], visible | own, found)
        elif isinstance(node, _COMPREHENSIONS):
            targets = {n.id for g in node.generators for n in ast.walk(g.target)
                       if isinstance(n, ast.Name)}  # fmt: skip
            for part in _comprehension_parts(node):
                _check([part], visible | targets, found)


def _own(body: list) -> list[ast.AST]:
    """The nodes of one scope, each nested scope (function, lambda, class,
    comprehension) as a single node, not entered."""
    out: list[ast.AST] = []
    todo = list(reversed(body))
    while todo:
        node = todo.pop()
        out.append(node)
        if isinstance(node, (*_SCOPES, *_COMPREHENSIONS)):
            continue
        if isinstance(node, ast.AnnAssign):  # an annotation may never be evaluated
            todo.extend(n for n in (node.value, node.target) if n is not None)
            continue
        todo.extend(reversed(list(ast.iter_child_nodes(node))))
    return out


def _comprehension_parts(node: ast.AST) -> list[ast.AST]:
    parts: list[ast.AST] = []
    if isinstance(node, ast.DictComp):
        parts += [node.key, node.value]
    elif isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp):
        parts.append(node.elt)
    for generator in node.generators:  # type: ignore[attr-defined]
        parts += [generator.iter, *generator.ifs]
    return parts


def _arguments(args: ast.arguments) -> list[ast.arg]:
    found = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    return found + [a for a in (args.vararg, args.kwarg) if a is not None]


def bound(tree: ast.Module) -> set[str]:
    """The names a module binds at its top level (what `from it import name` finds)."""
    return _bound(tree.body)


def _bound(body: list) -> set[str]:
    """The names one scope binds: assignments, imports, definitions, loop and `with`
    targets, `except ... as`, match captures, walrus targets (not inside nested scopes)."""
    found: set[str] = set()
    for node in _own(body):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            found.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            found |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
            found.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            found.add(node.rest)
        elif isinstance(node, ast.Nonlocal | ast.Global):
            found |= set(node.names)
        elif isinstance(node, _COMPREHENSIONS):  # `(y := ...)` in one binds outside it
            found |= {
                n.target.id
                for n in ast.walk(node)
                if isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name)
            }
    return found
