"""Where a test's source expects a value of a call: the parametrize row, `(3, 4, 6)` of a
test that calls `multiply`, or the assertion, `multiply(3, 4) == 6`, read through `ast`
(never run); the edit that compares it with `pytest.approx`; and whether two values as
Python writes them are one."""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Callable
from typing import Any

Row = tuple[str, str, str]  # a wrong value's call, what it returned, what its test expected


def row_edit(source: str, call: str, got: str, expected: str) -> tuple[str, str] | None:
    """The one place in a test's source that expects `expected` of `call`, as (its text,
    that text expecting `got`): a parametrize row of the call's arguments and the value,
    `(3, 4, 6)` of a test that calls it, or an assertion, `multiply(3, 4) == 6`; its whole
    line where the row's text is written elsewhere too (another test's table), and with
    the line before or after it where that line is written elsewhere too (`_window`);
    None unless there is exactly one, on one line. Sent to fix "multiply(3, 4) returns
    12, not 6", the 1.5B sent `{"old": "multiply(3, 4) returns 12, not 6", ...}` until
    blocked (mathx, the CPU): its tests were a parametrize table."""
    found = _place(source, call, got, expected)
    if found is None:
        return None
    at, line, text, fixed = found
    if source.count(text) == 1:
        return text, fixed
    if source.count(line) == 1:
        return line.strip(), line.strip().replace(text, fixed, 1)
    return _window(source.splitlines(), at, text, fixed)


def _window(lines: list[str], at: int, text: str, fixed: str) -> tuple[str, str] | None:
    """The row's line `at` with the line before it (or after it, or both), where no other
    place in the source holds those lines so: `(3, 5, 15),\n    (-1, 1, -2),` (the 1.5B's
    multiply table on the CPU held the row `(-1, 1, -2)` of its subtract table, on a line
    of its own, and the hand-back could name no text to replace: the round limit came)."""
    source = "\n".join(lines)
    for before, after in ((1, 0), (0, 1), (1, 1)):
        if at - before < 0 or at + after >= len(lines):
            continue
        old = "\n".join(lines[at - before : at + after + 1]).strip()
        if source.count(old) == 1 and old.isascii():
            row = lines[at].replace(text, fixed, 1)
            new = "\n".join([*lines[at - before : at], row, *lines[at + 1 : at + after + 1]])
            return old, new.strip()
    return None


MAX_BLOCK_LINES = 12  # of the text a table's edit names, through its test's `def` line


def block_edit(
    source: str, first: Row, others: list[Row], keep: Callable[[Row], bool]
) -> tuple[str, str, list[Row]] | None:
    """For a row `first` (call, got, expected) of a table written across lines whose text
    is written elsewhere too, as another test's table: the text from its line through
    its test's `def` line, which no other place holds so, and that text with it and each
    of `others` in the same table that `keep` keeps expecting its `got`; and the rows so
    fixed. None when that text is not unique or longer than MAX_BLOCK_LINES.

    The 1.5B's mathx on the CPU wrote its add table, `(1, 2, 3),` and four rows more on
    lines of their own, above all four tests: no row or pair of lines named one place,
    the hand-back named none, and the model sent the step's sentence as the text to
    replace until it was blocked."""
    found = _place(source, *first)
    lines = source.splitlines()
    test = _table_test(source, found[0]) if found else None
    if found is None or test is None:
        return None
    start, end = test
    fixed, rows = dict([(found[0], lines[found[0]].replace(found[2], found[3], 1))]), [first]
    for row in others:
        other = _place(source, *row)
        if other is None or not start <= other[0] < end or row in rows or not keep(row):
            continue
        line = fixed.get(other[0], lines[other[0]])
        if line.count(other[2]) == 1:
            fixed[other[0]], rows = line.replace(other[2], other[3], 1), [*rows, row]
    top = min(fixed)
    if end - top + 1 > MAX_BLOCK_LINES:
        return None
    old = "\n".join(lines[top : end + 1]).strip()
    new = "\n".join(fixed.get(at, lines[at]) for at in range(top, end + 1)).strip()
    return (old, new, rows) if source.count(old) == 1 and old.isascii() else None


def _table_test(source: str, at: int) -> tuple[int, int] | None:
    """(the index of the first line of its decorators, of its `def` line) for the test
    whose decorators hold line `at` (an index), or None."""
    try:
        tree = ast.parse(source)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.decorator_list:
            top = min(d.lineno for d in node.decorator_list) - 1
            if top <= at < node.lineno - 1:
                return top, node.lineno - 1
    return None


def row_of(source: str, call: str, got: str, expected: str) -> tuple[str, str, str] | None:
    """(the line, the row's text, that text expecting `got`) for the one row or assertion
    of the call that expects `expected`, on one line that holds it once and is written
    once; None otherwise."""
    found = _place(source, call, got, expected)
    if found is None or source.count(found[1]) != 1:
        return None
    return found[1:]


def approx_edit(source: str, call: str, got: str, expected: str) -> tuple[str, str] | None:
    """The edit that compares the one assertion of the call that expects `expected` with
    `pytest.approx` (or the row of its parametrize table), as (its text, the new text): with
    the lines around the assertion that compare other calls with floats the same way,
    which pytest stopped before; None where there is no one such place."""
    found = _place(source, call, got, expected, f"pytest.approx({expected.strip()})")
    if found is None:
        return None
    at, line, text, fixed = found
    if not _FLOAT_ASSERT.match(line):  # a parametrize row, where its text is there once
        return (text, fixed) if source.count(text) == 1 else None
    lines = source.splitlines()
    start, end = at, at + 1
    while start > 0 and _FLOAT_ASSERT.match(lines[start - 1]):
        start -= 1
    while end < len(lines) and _FLOAT_ASSERT.match(lines[end]):
        end += 1
    old = "\n".join(lines[start:end]).strip()
    new = "\n".join(_FLOAT_ASSERT.sub(r"\1pytest.approx(\2)", x) for x in lines[start:end])
    return (old, new.strip()) if source.count(old) == 1 else None


# `    assert mathx.add(3.3, 4.4) == 7.7`: a call compared with a float literal
_FLOAT_ASSERT = re.compile(r"^(\s*assert \S.* == )(-?\d+\.\d*(?:e-?\d+)?)\s*$")


def _place(
    source: str, call: str, got: str, expected: str, put: str = ""
) -> tuple[int, str, str, str] | None:
    """(the index of its line, the line, the row's text, that text expecting `got`, or
    holding `put` instead) for the one row or assertion of the call that expects
    `expected`, on one line that holds it once; None otherwise."""
    try:
        called = ast.parse(call.strip(), mode="eval").body
        args = [ast.literal_eval(a) for a in getattr(called, "args", [])]
        want, _ = ast.literal_eval(expected.strip()), ast.literal_eval(got.strip())
        tree = ast.parse(source)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if not isinstance(called, ast.Call) or called.keywords:
        return None
    found = [
        (node, value)
        for test in ast.walk(tree)
        if isinstance(test, ast.FunctionDef | ast.AsyncFunctionDef) and _calls(test, called)
        for node in ast.walk(test)
        for value in _expects(node, called, args, want)
    ]
    if len(found) != 1:
        return None
    node, value = found[0]
    text = ast.get_source_segment(source, node) or ""
    line = source.splitlines()[node.lineno - 1] if node.lineno == node.end_lineno else ""
    if not line or not line.isascii() or line.count(text) != 1:
        return None
    start, end = value.col_offset - node.col_offset, value.end_col_offset - node.col_offset
    fixed = text[:start] + (put or got.strip()) + text[end:]  # type: ignore[operator]
    return node.lineno - 1, line, text, fixed


def _calls(test: ast.FunctionDef | ast.AsyncFunctionDef, called: ast.Call) -> bool:
    """Whether the test calls what `called` calls: only its own rows are its table."""
    return any(
        isinstance(n, ast.Call) and ast.dump(n.func) == ast.dump(called.func)
        for n in ast.walk(test)
    )


def _expects(node: ast.AST, called: ast.Call, args: list[Any], want: Any) -> list[ast.expr]:
    """The value in `node` that a row or an assertion of the call expects, if it is one."""
    if isinstance(node, ast.Tuple) and len(node.elts) == len(args) + 1:
        values = [_literal(e) for e in node.elts]
        return [node.elts[-1]] if values[:-1] == args and values[-1] == want else []
    if not (
        isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq)
    ):
        return []
    pairs = ((node.left, node.comparators[0]), (node.comparators[0], node.left))
    return [
        value
        for used, value in pairs
        if isinstance(used, ast.Call)
        and ast.dump(used.func) == ast.dump(called.func)
        and not used.keywords
        and [_literal(a) for a in used.args] == args
        and _literal(value) == want
    ]


_NONE = object()  # no literal


def _literal(node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _NONE


def same(a: str, b: str) -> bool:
    """Whether two values as Python writes them are one: "0.5" and ".5", "2" and "2.0"."""
    try:
        x, y = ast.literal_eval(a.strip()), ast.literal_eval(b.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return a.strip() == b.strip() != ""
    if isinstance(x, int | float) and isinstance(y, int | float):
        return not isinstance(x, bool) and not isinstance(y, bool) and math.isclose(x, y)
    return bool(x == y)
