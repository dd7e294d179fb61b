"""Reads of a file object that come to nothing (`rereads`), made reads that do not: the
small profile's mend of a write (`mends`)."""

from __future__ import annotations

import ast

from localagent.tools.rereads import kept_in, rereads, twice, whole_read

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
        if read != one.second.split("`")[1]:
            break  # not where the parser said: nothing is mended by guess
        # `''.join(lines)` inside an f-string in single quotes does not parse before 3.12
        for instead in dict.fromkeys([one.instead, one.instead.replace("''", '""')]):
            lines[line - 1] = (data[:start] + instead.encode("utf-8") + data[end:]).decode()
            if _compiles("".join(lines), name):
                break
        else:
            return None
        source = "".join(lines)
        made.append(f"`{read}` as `{instead}`")
    if not made or not _compiles(source, name):
        return None
    return source, made


def _compiles(source: str, name: str) -> bool:
    try:
        compile(source, name, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


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
            two = twice(node.body, handle.id)
            first = two[2][0] if two is not None else None
            for statement in node.body if first is not None else []:
                call = next(
                    (
                        n
                        for n in ast.walk(statement)
                        if isinstance(n, ast.Call)
                        and (n.lineno, n.col_offset) == first
                        and whole_read(n, handle.id)
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
    two = twice(body, handle)
    return two is None or bool(kept_in(body, handle, two[2])[0])
