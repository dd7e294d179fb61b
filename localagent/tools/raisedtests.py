"""Tests of a raise that test it wrong: a test that compares what a call returns when the
call raises on purpose, and a test that expects a raise of a call that does not meet the
one condition the function raises under.

Qwen2.5-Coder-1.5B's mathx tests on the CPU held `assert divide(6, 0) == 'ValueError:
division by zero'`, and mathx/divide.py did what the goal asks: `raise ValueError('Cannot
divide by zero')`. pytest failed on that ValueError, and the model ran the tests again
unchanged until it was blocked: nothing it was shown said that the test, not the code,
was what to change. The note says so, and gives the edit that makes the test expect the
exception, ready to copy.

Only what pytest's report and the files show counts: the failure's first frame is a line
of a test file that asserts a comparison of a call, its last frame a `raise` of that
exception in a workspace file that is no test's. A code that raises by mistake is the
model's to judge: the note says "if raising is right". The same for a test's `with
pytest.raises(E):` around a call whose argument misses the one `if PARAM == VALUE:` under
which the function raises E: the note gives the edit that calls it with that value.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from localagent.prompts.promptset import PromptSet
from localagent.tools import pyfiles
from localagent.tools.pkgimports import text_of
from localagent.tools.pyscript import TEST_FILE

__all__ = ["raise_expected_note", "test_edit", "unraised_note"]

_SECTION = re.compile(r"^_{3,} .+ _{3,}$", re.M)  # pytest's header of one test's failure
_LOCATION = re.compile(r"^([\w./\\-]+\.py):(\d+): (.*?)\s*$", re.M)
_ERROR = re.compile(r"^E\s+([A-Za-z_][\w.]*)(?::|$)", re.M)
_PYTEST_IMPORTED = re.compile(r"^(?:import pytest\b|from pytest import )", re.M)


def raise_expected_note(root: Path, output: str, prompts: PromptSet) -> str:
    """The `raise_expected` note for pytest's output, when its first failure is a test's
    comparison of a call that raised, on purpose, in the workspace's code; "" otherwise."""
    return _note(prompts, "raise_expected", _expected(root, output))


def test_edit(root: Path, output: str) -> dict[str, str] | None:
    """The edit of a test file (`path`, `old`, `new`) that a note of this module gives for
    pytest's output, or None: what a hand-back of the run sends the model to make."""
    found = _expected(root, output) or _unmet(root, output)
    return found[1] if found else None


def _expected(root: Path, output: str) -> tuple[dict[str, str], dict[str, str]] | None:
    """(the `raise_expected` note's words, its edit's arguments), or None (see the note)."""
    found = _first(root, output)
    if found is None:
        return None
    test, line, call, error, where, raised = found
    text = text_of(root, test) or ""
    indent = line[: len(line) - len(line.lstrip())]
    new = f"{indent}with pytest.raises({error}):\n{indent}    {call}"
    if text.count(line) != 1:
        return None  # no edit of that line alone to offer
    imported = "" if _PYTEST_IMPORTED.search(text) else " (and `import pytest` at its top)"
    said = {"call": call, "error": error, "where": where, "raised": raised, "test": test}
    said |= {"line": line.strip(), "imported": imported}
    return said, {"path": test, "old": line, "new": new}


def _first(root: Path, output: str) -> tuple[str, str, str, str, str, str] | None:
    """(test file, its line as written, the call it compares, the exception, where it
    was raised, the raising line) for the first failure pytest reports; None when that
    failure is no such case."""
    starts = [m.end() for m in _SECTION.finditer(output)]
    if not starts:
        return None
    ends = [*starts[1:], len(output)]
    section = output[starts[0] : ends[0]]
    frames = _LOCATION.findall(section)
    errors = _ERROR.findall(section)
    if len(frames) < 2 or not errors:
        return None
    (test, test_at, _), (code, code_at, said) = frames[0], frames[-1]
    test, code = test.replace("\\", "/"), code.replace("\\", "/")  # pytest's, on Windows
    error = errors[-1]
    named = said if said.isidentifier() else error
    if named != error or not TEST_FILE.search(test) or TEST_FILE.search(code):
        return None
    line = _line(root, test, int(test_at))
    raised = _line(root, code, int(code_at)).strip()
    call = _compared_call(line.strip())
    if not call or not _raises(raised, error.rsplit(".", 1)[-1]):
        return None
    return test, line, call, error, f"{code}:{code_at}", raised


def _line(root: Path, path: str, number: int) -> str:
    """Line `number` of the workspace file `path`, as written ("" when there is none)."""
    lines = (text_of(root, path.replace("\\", "/")) or "").splitlines()
    return lines[number - 1] if 0 < number <= len(lines) else ""


def _compared_call(line: str) -> str:
    """The call an `assert` line compares with `==`, `!=` or `is` (its source), or ""."""
    try:
        tree = ast.parse(line)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ""
    if len(tree.body) != 1 or not isinstance(node := tree.body[0], ast.Assert):
        return ""
    test = node.test
    if not isinstance(test, ast.Compare) or len(test.comparators) != 1:
        return ""
    if not isinstance(test.ops[0], ast.Eq | ast.NotEq | ast.Is | ast.IsNot):
        return ""
    sides = [s for s in (test.left, test.comparators[0]) if isinstance(s, ast.Call)]
    return ast.get_source_segment(line, sides[0]) or "" if len(sides) == 1 else ""


def _raises(line: str, error: str) -> bool:
    """Whether `line` is a `raise` of the exception named `error`."""
    try:
        tree = ast.parse(line)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    if len(tree.body) != 1 or not isinstance(node := tree.body[0], ast.Raise):
        return False
    raised = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
    name = raised.attr if isinstance(raised, ast.Attribute) else getattr(raised, "id", "")
    return name == error


_NOT_RAISED = re.compile(r"^E\s+Failed: DID NOT RAISE (?:<class '(?:\w+\.)*(\w+)'>|(\w+))", re.M)


def unraised_note(root: Path, output: str, prompts: PromptSet) -> str:
    """The `raise_unmet` note for pytest's output, when its first failure is a test's
    `with pytest.raises(E):` around a call whose arguments miss the one condition under
    which the workspace's function raises E; "" otherwise. The 1.5B's mathx tests on the
    CPU wrapped `divide(a, b)` in `pytest.raises(ValueError)` for a table of rows that
    divide by 2, 4, ..., and divide.py raised it only `if b == 0`: sent back to fix
    divide.py, it sent pytest's message as the text to replace until blocked."""
    return _note(prompts, "raise_unmet", _unmet(root, output))


def _note(
    prompts: PromptSet, name: str, found: tuple[dict[str, str], dict[str, str]] | None
) -> str:
    """The note `name` with its words and its edit as the call to send, or ""."""
    if found is None:
        return ""
    edit = json.dumps({"name": "replace_in_file", "arguments": found[1]})
    return prompts.render(name, **found[0], edit=edit)


def _unmet(root: Path, output: str) -> tuple[dict[str, str], dict[str, str]] | None:
    """(the `raise_unmet` note's words, its edit's arguments), or None (see the note)."""
    starts = [m.end() for m in _SECTION.finditer(output)]
    section = output[starts[0] : (starts[1:] or [len(output)])[0]] if starts else ""
    missed = _NOT_RAISED.search(section)
    frames = [f for f in _LOCATION.findall(section) if TEST_FILE.search(f[0])]
    if missed is None or not frames:
        return None
    error = missed[1] or missed[2]
    test, at = frames[-1][0].replace("\\", "/"), int(frames[-1][1])
    source = text_of(root, test) or ""
    call = _raising_call(source, at, error)
    name = _called_name(call) if call is not None else ""
    code = pyfiles.owner(root, name) if name else ""
    if call is None or not code or TEST_FILE.search(code):
        return None
    condition = _condition(root, code, name, error)
    if condition is None:
        return None
    param, position, value, test_node = condition
    given = call.args[position] if position < len(call.args) else None
    given = given or next((k.value for k in call.keywords if k.arg == param), None)
    line = source.splitlines()[call.lineno - 1] if call.lineno == call.end_lineno else ""
    if given is None or given.lineno != call.lineno or not line.isascii():
        return None
    if source.count(line) != 1:
        return None
    if isinstance(given, ast.Constant) and given.value == value:
        return None  # it is called so already: something else is wrong
    new = line[: given.col_offset] + repr(value) + line[given.end_col_offset :]
    said = {"call": ast.get_source_segment(source, call) or name, "error": error, "code": code}
    said |= {"condition": ast.unparse(test_node), "line": str(test_node.lineno)}
    return said, {"path": test, "old": line, "new": new}


def _raising_call(source: str, at: int, error: str) -> ast.Call | None:
    """The one call in the body of the `with pytest.raises(error):` at line `at`."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    for node in ast.walk(tree):
        if not isinstance(node, ast.With) or node.lineno != at or len(node.body) != 1:
            continue
        expected = node.items[0].context_expr
        if not (
            isinstance(expected, ast.Call)
            and isinstance(expected.func, ast.Attribute)
            and expected.func.attr == "raises"
            and [getattr(a, "id", getattr(a, "attr", "")) for a in expected.args] == [error]
        ):
            return None
        body = node.body[0]
        value = body.value if isinstance(body, ast.Expr | ast.Assign) else None
        return value if isinstance(value, ast.Call) else None
    return None


def _called_name(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")


def _condition(
    root: Path, path: str, name: str, error: str
) -> tuple[str, int, object, ast.expr] | None:
    """(the parameter, its position, the value, the test) of the one `if PARAM == VALUE:`
    in the function `name` of `path` whose body raises `error`; None when not one."""
    tree = _tree(text_of(root, path) or "")
    function = next(
        (n for n in (tree.body if tree else []) if isinstance(n, ast.FunctionDef)
         and n.name == name), None,
    )  # fmt: skip
    if function is None:
        return None
    params = [a.arg for a in function.args.args]
    found = []
    for node in ast.walk(function):
        if not isinstance(node, ast.If) or not _raises_in(node.body, error):
            continue
        test = node.test
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
            continue
        if not isinstance(test.ops[0], ast.Eq):
            continue
        sides = (test.left, test.comparators[0])
        for param, value in (sides, sides[::-1]):
            if (
                isinstance(param, ast.Name)
                and param.id in params
                and isinstance(value, ast.Constant)
            ):
                found.append((param.id, params.index(param.id), value.value, test))
    return found[0] if len(found) == 1 else None


def _raises_in(body: list[ast.stmt], error: str) -> bool:
    for stmt in body:
        if isinstance(stmt, ast.Raise) and stmt.exc is not None:
            raised = stmt.exc.func if isinstance(stmt.exc, ast.Call) else stmt.exc
            if getattr(raised, "id", getattr(raised, "attr", "")) == error:
                return True
    return False


def _tree(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
