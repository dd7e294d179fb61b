"""Functions a small model wrote indented into the function above them, put back at the
top level. Asked for shapes.py whole, with `area` added and total_area, largest and
report changed to call it, Qwen2.5-Coder-1.5B wrote `def area(kind, size):` first and the
three functions below it one level deeper, inside area's body, three times (the CPU): the
write was refused each time for dropping what test_shapes.py imports, until its repeat
was blocked. The functions were meant for the top level: the file had them there."""

from __future__ import annotations

import ast
import copy
import symtable
from pathlib import Path

from localagent.tools import pyscript
from localagent.tools.pkgimports import tree_of

_FUNCTION = ast.FunctionDef | ast.AsyncFunctionDef


def lifted(root: Path, name: str, content: str) -> tuple[str, list[str], str] | None:
    """(the content with them at the top level, their names, the function they were
    in) for Python content whose top-level function ends with functions the file on disk
    defines at its top level and the content does not, each using none of that
    function's own names; None for any other content. What the lifted functions and the
    function they leave say is checked to be the same code, as the parser reads it."""
    tree = tree_of(content) if name.lower().endswith((".py", ".pyw")) else None
    if tree is None:
        return None
    tails = [(n, t) for n in tree.body if isinstance(n, _FUNCTION) and (t := _tail(n))]
    if not tails:
        return None  # most writes: the file is only read when a function ends with some
    had = set(pyscript.defines(root, name))
    top = {n.name for n in tree.body if isinstance(n, _FUNCTION | ast.ClassDef)}
    for outer, tail in tails:
        names = [n.name for n in tail]
        if not all(n in had and n not in top for n in names):
            continue
        try:
            table = symtable.symtable(content, name, "exec")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None  # what the parser takes and the compiler does not (`nonlocal x` at the top)
        if not _closed(table, outer, names):
            return None
        text = _dedented(content, outer, tail)
        if text is not None and _same(tree, outer, tail, text):
            return text, names, outer.name
        return None
    return None


def lifted_note(names: list[str], outer: str) -> str:
    """What the write says of the functions it put back at the top level."""
    shown = ", ".join(names)
    return (
        f"; {shown} {'was' if len(names) == 1 else 'were'} written indented inside {outer}, "
        f"so {'it was' if len(names) == 1 else 'they were'} written at the top level, as the "
        "file had them"
    )


def _tail(outer: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.stmt]:
    """The functions at the end of a function's body, when code comes before them."""
    tail: list[ast.stmt] = []
    for node in reversed(outer.body):
        if not isinstance(node, _FUNCTION):
            break
        tail.insert(0, node)
    return tail if len(tail) < len(outer.body) else []


def _closed(table: symtable.SymbolTable, outer: ast.stmt, names: list[str]) -> bool:
    """Whether the nested functions use none of the outer function's names but each
    other's (which, lifted, they still find at the top level)."""
    found = [
        t
        for t in table.get_children()
        if t.get_name() == getattr(outer, "name", None) and t.get_lineno() == outer.lineno
    ]
    if len(found) != 1:
        return False
    inner = [t for t in found[0].get_children() if t.get_name() in names]
    return all(isinstance(t, symtable.Function) and set(t.get_frees()) <= set(names) for t in inner)


def _dedented(content: str, outer: ast.stmt, tail: list[ast.stmt]) -> str | None:
    """The content with the tail's lines taken out of the outer function and written at
    the top level after it; None when a line of it is less indented than its first."""
    first = tail[0]
    start = min([first.lineno, *(d.lineno for d in getattr(first, "decorator_list", []))]) - 1
    end = outer.end_lineno or start
    lines = content.splitlines(keepends=True)
    indent = lines[start][: first.col_offset]
    if indent.strip():
        return None
    moved = []
    for line in lines[start:end]:
        if not line.strip():
            moved.append(line.lstrip(" \t"))
        elif line.startswith(indent):
            moved.append(line[len(indent) :])
        else:
            return None
    head = "".join(lines[:start]).rstrip() + "\n\n\n"
    block = "".join(moved).rstrip("\n") + "\n"
    rest = "".join(lines[end:])
    return head + block + (("\n\n" + rest.lstrip("\n")) if rest.strip() else "")


def _same(tree: ast.Module, outer: ast.stmt, tail: list[ast.stmt], text: str) -> bool:
    """Whether the new text holds the same code: the outer function without its tail,
    the tail's functions after it at the top level, and everything else unchanged."""
    after = tree_of(text)
    if after is None:
        return False
    body: list[ast.stmt] = []
    for node in tree.body:
        if node is outer:
            kept = copy.copy(outer)
            kept.body = outer.body[: len(outer.body) - len(tail)]  # type: ignore[attr-defined]
            body += [kept, *tail]
        else:
            body.append(node)
    return _dump(body) == _dump(after.body)


def _dump(body: list[ast.stmt]) -> str:
    return ast.dump(ast.Module(body=body, type_ignores=[]), include_attributes=False)
