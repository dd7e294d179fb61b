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
exclude each other, are left alone.
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


MAX_MENDS = 4  # reads one write mends: the first read made a name, and the reads after it


def mended(source: str, name: str) -> tuple[str, list[str]] | None:
    """The source with each second read of a file whose first read a name holds made
    that name (`f.read()` after `lines = f.readlines()`: `''.join(lines)`), and what each
    mend did, as the write says it; None when there is none, or the result does not
    compile. Told "line 11 already put it in `lines`: use `''.join(lines)`", Qwen2.5-
    Coder-1.5B wrote wordcount.py back with `f.read()` there, three times, then again
    after its replan (the CPU); such a read can only ever give an empty result.

    A first read kept in no name, in a statement of one line of the `with` block
    (`print(f.read().count('\\n') + 1 + len(f.read().split()))`, written back three
    times on the CPU after the note), is first made a name of its own on the line above
    (`text = f.read()`), and the reads after it then use that name."""
    if not name.lower().endswith((".py", ".pyw")):
        return None
    made: list[str] = []
    for _ in range(MAX_MENDS):
        one = next((r for r in rereads(source) if r.kept and r.at), None)
        if one is None or one.at is None:
            if (hoist := _hoisted(source)) is None:
                break
            source, said = hoist
            made.append(said)
            continue
        lines = source.splitlines(keepends=True)
        line, start, end = one.at
        data = lines[line - 1].encode("utf-8")
        read = data[start:end].decode("utf-8", "replace")
        lines[line - 1] = (data[:start] + one.instead.encode("utf-8") + data[end:]).decode()
        source = "".join(lines)
        made.append(f"`{read}` as `{one.instead}`")
    if not made:
        return None
    try:
        compile(source, name, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return source, made


def mended_note(made: list[str]) -> str:
    """What a write says of the reads `mended` made names."""
    return (
        "; the file it opens was read to its end already, so a read after that would get "
        f"nothing: it was written with {', '.join(dict.fromkeys(made))}"
    )


# The name a first read kept nowhere is given, by what it reads: the first not taken.
_NAMES = {"read": ("text", "content", "data"), "readlines": ("lines", "all_lines")}
# In these, what runs first is not what comes first in the line.
_OUT_OF_ORDER = (ast.IfExp, ast.BoolOp, ast.Lambda, ast.comprehension, ast.NamedExpr)
_SIMPLE = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return)


def _hoisted(source: str) -> tuple[str, str] | None:
    """The source with the first of two reads of a file kept in no name made a name of
    its own on the line above its statement, and what the write says of it; None when
    there is no such read, or it is not in a simple statement of one line."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    taken = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    taken |= {n.arg for n in ast.walk(tree) if isinstance(n, ast.arg)}
    for node in ast.walk(tree):
        if not isinstance(node, ast.With):
            continue
        for item in node.items:
            handle = item.optional_vars
            if not isinstance(handle, ast.Name) or _kept_or_none(node.body, handle.id):
                continue
            two = _twice(node.body, handle.id)
            first = two[2][0] if two is not None else None
            for statement in node.body if first is not None else []:
                call = next(
                    (
                        n
                        for n in ast.walk(statement)
                        if isinstance(n, ast.Call)
                        and (n.lineno, n.col_offset) == first
                        and _whole_read(n, handle.id)
                    ),
                    None,
                )
                if call is None:
                    continue
                one_line = statement.lineno == statement.end_lineno == call.end_lineno
                plain = isinstance(statement, _SIMPLE) and not any(
                    isinstance(n, _OUT_OF_ORDER) for n in ast.walk(statement)
                )
                assert isinstance(call.func, ast.Attribute)
                method = call.func.attr
                free = next((n for n in _NAMES[method] if n not in taken), None)
                if not one_line or not plain or free is None or call.end_col_offset is None:
                    return None
                lines = source.splitlines(keepends=True)
                data = lines[call.lineno - 1].encode("utf-8")
                indent = data[: statement.col_offset].decode("utf-8", "replace")
                read = f"{handle.id}.{method}()"
                lines[call.lineno - 1] = (
                    f"{indent}{free} = {read}\n"
                    + (
                        data[: call.col_offset] + free.encode() + data[call.end_col_offset :]
                    ).decode()
                )
                said = f"`{free} = {read}` on a line of its own above line {call.lineno}"
                return "".join(lines), said
    return None


def _kept_or_none(body: list[ast.stmt], handle: str) -> bool:
    """Whether the first read of `handle` in `body` is kept in a name, or there are not
    two reads."""
    two = _twice(body, handle)
    return two is None or bool(_kept(body, handle, two[2])[0])


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
                and (two := _twice(node.body, target.id)) is not None
            ):
                found.append(Reread(target.id, *two[:2], *_kept(node.body, target.id, two[2])))
    return found


def _twice(body: list[ast.stmt], handle: str) -> tuple[str, str, list[tuple[int, int]]] | None:
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
                return _first_two(reads)
            continue
        for node in ast.walk(statement):
            if _rebinds(node, handle) or _seeks(node, handle):
                return _first_two(reads)
            if (what := _whole_read(node, handle)) is not None:
                reads.append(((node.lineno, node.col_offset), what))
        if len(reads) >= 2:
            break
    return _first_two(reads)


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


def _kept(
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
        and _whole_read(node, handle) is not None),
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
        and _whole_read(statement.value, handle) is not None
    ):
        return "", "", None
    name = statement.targets[0].id
    one_line = second.end_lineno == second.lineno and second.end_col_offset is not None
    where = (second.lineno, second.col_offset, second.end_col_offset) if one_line else None
    return name, _INSTEAD[(method, again)].format(name), where


def _whole_read(node: ast.AST, handle: str) -> str | None:
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
