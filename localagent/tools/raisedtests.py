"""A test that compares what a call returns, when the call raises on purpose.

Qwen2.5-Coder-1.5B's mathx tests on the CPU held `assert divide(6, 0) == 'ValueError:
division by zero'`, and mathx/divide.py did what the goal asks: `raise ValueError('Cannot
divide by zero')`. pytest failed on that ValueError, and the model ran the tests again
unchanged until it was blocked: nothing it was shown said that the test, not the code,
was what to change. The note says so, and gives the edit that makes the test expect the
exception, ready to copy.

Only what pytest's report and the files show counts: the failure's first frame is a line
of a test file that asserts a comparison of a call, its last frame a `raise` of that
exception in a workspace file that is no test's. A code that raises by mistake is the
model's to judge: the note says "if raising is right".
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from localagent.prompts.promptset import PromptSet
from localagent.tools.pkgimports import text_of
from localagent.tools.pyscript import TEST_FILE

__all__ = ["raise_expected_note"]

_SECTION = re.compile(r"^_{3,} .+ _{3,}$", re.M)  # pytest's header of one test's failure
_LOCATION = re.compile(r"^([\w./\\-]+\.py):(\d+): (.*?)\s*$", re.M)
_ERROR = re.compile(r"^E\s+([A-Za-z_][\w.]*)(?::|$)", re.M)
_PYTEST_IMPORTED = re.compile(r"^(?:import pytest\b|from pytest import )", re.M)


def raise_expected_note(root: Path, output: str, prompts: PromptSet) -> str:
    """The `raise_expected` note for pytest's output, when its first failure is a test's
    comparison of a call that raised, on purpose, in the workspace's code; "" otherwise."""
    found = _first(root, output)
    if found is None:
        return ""
    test, line, call, error, where, raised = found
    text = text_of(root, test) or ""
    indent = line[: len(line) - len(line.lstrip())]
    new = f"{indent}with pytest.raises({error}):\n{indent}    {call}"
    if text.count(line) != 1:
        return ""  # no edit of that line alone to offer
    arguments = {"path": test, "old": line, "new": new}
    edit = json.dumps({"name": "replace_in_file", "arguments": arguments})
    imported = "" if _PYTEST_IMPORTED.search(text) else " (and `import pytest` at its top)"
    return prompts.render(
        "raise_expected",
        call=call,
        error=error,
        where=where,
        raised=raised,
        test=test,
        line=line.strip(),
        edit=edit,
        imported=imported,
    )


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
    error = errors[-1]
    named = said if said.isidentifier() else error
    if named != error or not TEST_FILE.search(test) or TEST_FILE.search(code):
        return None
    line = _line(root, test, int(test_at))
    raised = _line(root, code, int(code_at)).strip()
    call = _compared_call(line.strip())
    if not call or not _raises(raised, error.rsplit(".", 1)[-1]):
        return None
    return test.replace("\\", "/"), line, call, error, f"{code}:{code_at}", raised


def _line(root: Path, path: str, number: int) -> str:
    """Line `number` of the workspace file `path`, as written ("" when there is none)."""
    lines = (text_of(root, path.replace("\\", "/")) or "").splitlines()
    return lines[number - 1] if 0 < number <= len(lines) else ""


def _compared_call(line: str) -> str:
    """The call an `assert` line compares with `==`, `!=` or `is` (its source), or ""."""
    try:
        tree = ast.parse(line)
    except SyntaxError:
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
    except SyntaxError:
        return False
    if len(tree.body) != 1 or not isinstance(node := tree.body[0], ast.Raise):
        return False
    raised = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
    name = raised.attr if isinstance(raised, ast.Attribute) else getattr(raised, "id", "")
    return name == error
