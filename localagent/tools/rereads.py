"""A file object read to its end, then read again without `seek`: the second read gets
nothing.

Qwen2.5-Coder-1.5B's wordcount.py on the H200, two runs of six: `words =
file.read().split()`, then `print(len(file.read()))` in the same `with open(...) as
file:` block, which printed 0 characters; and `print(len(f.readlines()),
len(f.read().split()), len(f.read()))`, which printed "3 0 0". Each ran without an
error, and one ended "completed (unverified)" with its counts wrong.

Only what is certain counts: two calls of `read()` (no size) or `readlines()` (no
hint), or a `for` over the object (whose body leaves it alone), on the name a `with
open(...) as NAME:` binds, in its block, in the order they run, with no `seek` on it and
no other binding of the name in between. Reads inside a loop, or in branches that
exclude each other, are left alone, but for one after a read to the end at the block's
own level: that one gets nothing wherever it runs (unless its branch or loop resets or
rebinds the name).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

_WHOLE = {"read", "readlines"}


@dataclass(frozen=True)
class Reread:
    handle: str
    first: str  # "line 6 `file.read()`"
    second: str
    # What holds the first read's result and what to use instead of the second read
    # (`lines`, `''.join(lines)`), when the first read is a plain `NAME = f.read()`.
    kept: str = ""
    instead: str = ""
    # Where the second read is, when it is a call on one line: (line, start, end), the
    # columns in UTF-8 bytes as `ast` counts them.
    at: tuple[int, int, int] | None = None


def note(source: str | bytes, name: str) -> str:
    """What a write of a Python file that reads a file object twice ends with, or ""."""
    if not name.lower().endswith((".py", ".pyw")) or not (found := rereads(source)):
        return ""
    one = found[0]
    said = (
        f"; but it reads `{one.handle}` to its end at {one.first} and again at {one.second}, "
        "where nothing is left to read: that read gets an empty result. "
    )
    if one.kept:
        # Told only the above, the 1.5B wrote the same file back; told which variable
        # to use, it fixed it (wordcount on the CPU).
        first, second = one.first.split(" `")[0], one.second.split(" `")[0]
        return said + (
            f"{first.capitalize()} already put it in `{one.kept}`: use `{one.instead}` at "
            f"{second}, not a read"
        )
    return said + "Read the file once into a variable and use that"


def rereads(source: str | bytes) -> list[Reread]:
    """Each file object the source reads to its end twice in one `with` block."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.With):
            continue
        for item in node.items:
            opened = item.context_expr
            target = item.optional_vars
            if (
                isinstance(opened, ast.Call)
                and isinstance(opened.func, ast.Name)
                and opened.func.id == "open"
                and isinstance(target, ast.Name)
                and (two := twice(node.body, target.id)) is not None
            ):
                found.append(Reread(target.id, *two[:2], *kept_in(node.body, target.id, two[2])))
    return found


def twice(body: list[ast.stmt], handle: str) -> tuple[str, str, list[tuple[int, int]]] | None:
    """Where the first two whole reads of `handle` in `body` run, in order, when nothing
    between them resets or rebinds it; None otherwise (also when a read is in a loop or a
    branch)."""
    reads: list[tuple[tuple[int, int], str]] = []
    for statement in body:
        if isinstance(statement, ast.For) and _uses(statement.iter, handle):
            # `for line in f:` reads it to its end, when its body leaves it alone
            if any(
                _uses(n, handle) for s in statement.body + statement.orelse for n in ast.walk(s)
            ):
                return _first_two(reads)
            reads.append(((statement.lineno, statement.col_offset), f"for ... in {handle}"))
        elif isinstance(statement, ast.For | ast.While | ast.If | ast.Try | ast.With):
            if any(_uses(node, handle) for node in ast.walk(statement)):
                if reads and (later := _read_within(statement, handle)) is not None:
                    reads.append(later)  # after a read to the end, wherever it runs
                return _first_two(reads)
            continue
        for node in ast.walk(statement):
            if _rebinds(node, handle) or _seeks(node, handle):
                return _first_two(reads)
            if (what := whole_read(node, handle)) is not None:
                reads.append(((node.lineno, node.col_offset), what))
        if len(reads) >= 2:
            break
    return _first_two(reads)


def _read_within(statement: ast.stmt, handle: str) -> tuple[tuple[int, int], str] | None:
    """The first whole read of `handle` in a compound statement (a branch, a loop), when
    nothing in it resets or rebinds the handle: after a read to the end before it, that
    read gets nothing wherever it runs. The 1.5B's wordcount.py read `lines =
    f.readlines()`, then `len(f.read())` in the `else:` of an `if args.lines:`, and
    printed "Characters: 0" (the CPU)."""
    nodes = list(ast.walk(statement))
    if any(_rebinds(node, handle) or _seeks(node, handle) for node in nodes):
        return None
    found = [
        ((node.lineno, node.col_offset), what)
        for node in nodes
        if (what := whole_read(node, handle)) is not None
    ]
    return min(found) if found else None


def _first_two(
    reads: list[tuple[tuple[int, int], str]],
) -> tuple[str, str, list[tuple[int, int]]] | None:
    """The two reads as the note names them, and where they are."""
    if len(reads) < 2:
        return None
    ordered = sorted(reads)
    return (
        f"line {ordered[0][0][0]} `{ordered[0][1]}`",
        f"line {ordered[1][0][0]} `{ordered[1][1]}`",
        [ordered[0][0], ordered[1][0]],
    )


# What to use instead of a second read, by the first read and the second one.
_INSTEAD = {
    ("read", "read"): "{}",
    ("readlines", "readlines"): "{}",
    ("readlines", "read"): "''.join({})",
    ("read", "readlines"): "{}.splitlines(keepends=True)",
}


def kept_in(
    body: list[ast.stmt], handle: str, at: list[tuple[int, int]]
) -> tuple[str, str, tuple[int, int, int] | None]:
    """The name the first read is assigned to, as a statement of `body` of its own (`lines
    = f.readlines()`), what to use instead of the second read (the reads are `at` these
    places) and where that read is (see `Reread.at`); ("", "", None) when it is kept
    nowhere, or the second is a `for` over it."""
    reads = sorted(
        (((node.lineno, node.col_offset), node.func.attr, statement, node)
        for statement in body
        for node in ast.walk(statement)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
        and whole_read(node, handle) is not None),
        key=lambda read: read[0],
    )  # fmt: skip
    reads = [r for r in reads if r[0] in at]
    if len(reads) < 2:
        return "", "", None
    (_, method, statement), (_, again, _, second) = reads[0][:3], reads[1]
    if not (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
        and whole_read(statement.value, handle) is not None
    ):
        return "", "", None
    name = statement.targets[0].id
    one_line = second.end_lineno == second.lineno and second.end_col_offset is not None
    where = (second.lineno, second.col_offset, second.end_col_offset) if one_line else None
    return name, _INSTEAD[(method, again)].format(name), where


def whole_read(node: ast.AST, handle: str) -> str | None:
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == handle
        and node.func.attr in _WHOLE
        and not node.args
        and not node.keywords
    ):
        return f"{handle}.{node.func.attr}()"
    return None


def _seeks(node: ast.AST, handle: str) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "seek"
        and isinstance(node.value, ast.Name)
        and node.value.id == handle
    )


def _rebinds(node: ast.AST, handle: str) -> bool:
    return isinstance(node, ast.Name) and node.id == handle and isinstance(node.ctx, ast.Store)


def _uses(node: ast.AST, handle: str) -> bool:
    return isinstance(node, ast.Name) and node.id == handle
