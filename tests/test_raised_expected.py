"""A test that compares the value of a call that raises on purpose is the test to change:
the run's note says so and gives the edit, through the real CLI and the fake server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support import plan_rule, real_goal, records_of, small_model_goal

from localagent.prompts.promptset import DEFAULT
from localagent.tools.raisedtests import raise_expected_note, unraised_note

MATHX = real_goal("mathx").text
STEPS = [
    "write_file mathx/__init__.py with the package structure",
    *[f"write_file mathx/{n}.py with the {n} function" for n in ("add", "subtract", "multiply")],
    "write_file mathx/divide.py with the divide function and raise ValueError for division by zero",
    "write_file tests/test_mathx.py with the pytest tests",
    "run python -m pytest tests/test_mathx.py to ensure the tests pass",
]
# Qwen2.5-Coder-1.5B's mathx on the CPU (OpenAI API), verbatim: its test of divide by zero
# compares the ValueError's value with a string; it ran the tests again until blocked.
ROUNDS = [
    '{{"name": "write_file", "arguments": {"path": "mathx/__init__.py", "content": "from . '
    'import add, subtract, multiply, divide"}}}',
    '{{"name": "write_file", "arguments": {"path": "mathx/add.py", "content": "def add(a, b):'
    '\\n    return a + b"}}}',
    '{{"name": "write_file", "arguments": {"path": "mathx/subtract.py", "content": "def subtra'
    'ct(a, b):\\n    return a - b"}}}',
    '{{"name": "write_file", "arguments": {"path": "mathx/multiply.py", "content": "def multip'
    'ly(a, b):\\n    return a * b"}}}',
    '{{"name": "write_file", "arguments": {"path": "mathx/divide.py", "content": "def divide(a'
    ", b):\\n    if b == 0:\\n        raise ValueError('Cannot divide by zero')\\n    return a /"
    ' b"}}}',
    '{{"name": "write_file", "arguments": {"path": "tests/test_mathx.py", "content": "from mat'
    "hx import add, subtract, multiply, divide\\n\\n# Test cases\\nassert add(1, 2) == 3\\nasse"
    "rt subtract(3, 1) == 2\\nassert multiply(2, 3) == 6\\nassert divide(6, 2) == 3\\nassert d"
    "ivide(6, 0) == 'ValueError: division by zero'\\n\"}}",
    '{{"name": "run_cmd", "arguments": {"cmd": "python -m pytest tests/test_mathx.py"}}}',
]
OLD = "    assert divide(6, 0) == 'ValueError: division by zero'"
NEW = "    with pytest.raises(ValueError):\n        divide(6, 0)"
EDIT = {"name": "replace_in_file", "arguments": {"path": "tests/test_mathx.py", "old": OLD}}
EDIT["arguments"]["new"] = NEW


def _runs(ws: Path, rounds: list[str]) -> list[dict[str, Any]]:
    """The goal planned as STEPS, one round for each of `rounds`, run to its end (which
    must be completed): its run_cmd results."""
    replies = [{"content": r} for r in rounds]
    ran, _ = small_model_goal(
        ws, MATHX, plan_rule((MATHX, STEPS)), replies, LOCALAGENT_MAX_ROUNDS="9"
    )
    assert ran.returncode == 0, ran.stderr + ran.stdout
    return [r for r in records_of(ws, "action_finished") if r["tool"] == "run_cmd"]


def test_a_test_that_compares_a_raising_call_is_given_the_edit_that_expects_the_raise(
    tmp_path: Path,
) -> None:
    """The tests failed on the ValueError divide raises as the goal asks; the run's note
    names the test's line and the edit to `with pytest.raises(ValueError):`, and the
    edit sent as given (with the `import pytest` the test lacked) makes the tests pass."""
    runs = _runs(tmp_path, [*ROUNDS, json.dumps(EDIT), ROUNDS[-1]])
    assert "ValueError: Cannot divide by zero" in runs[0]["result"]
    assert runs[0]["result"].endswith(
        "NOTE: divide(6, 0) raises ValueError on purpose (mathx/divide.py:3: `raise "
        "ValueError('Cannot divide by zero')`), so tests/test_mathx.py has no value to "
        "compare in `assert divide(6, 0) == 'ValueError: division by zero'`. If raising is "
        "right, the test must expect it (and `import pytest` at its top), e.g. send: "
        + json.dumps(EDIT)
    )
    (edit,) = [r for r in records_of(tmp_path, "action_finished") if r["tool"] != "run_cmd"][6:]
    assert (
        "; it used pytest without importing it, so `import pytest` was written at its top"
        in (edit["result"])
    )
    assert "1 passed" in runs[-1]["result"], runs[-1]["result"]
    assert "import pytest\n" in (tmp_path / "tests" / "test_mathx.py").read_text()


def test_no_note_where_the_failure_is_no_comparison_of_a_deliberate_raise(
    tmp_path: Path,
) -> None:
    """A test's comparison of a call that failed on an error the code did not raise on
    purpose (a ZeroDivisionError of `a / b`), or a call raised in the test itself, gets
    no note."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "calc.py").write_text("def divide(a, b):\n    return a / b\n")
    (tmp_path / "tests" / "test_calc.py").write_text(
        "from calc import divide\n\n\ndef test_divide():\n    assert divide(6, 0) == 0\n"
    )
    section = (
        "___________________ test_divide ___________________\n\n"
        "    def test_divide():\n>       assert divide(6, 0) == 0\n\n"
        "tests/test_calc.py:5: \n_ _ _ _ _ _ _ _\n\n"
        "    def divide(a, b):\n>       return a / b\n"
        "E       ZeroDivisionError: division by zero\n\n"
        "calc.py:2: ZeroDivisionError\n"
    )
    assert raise_expected_note(tmp_path, section, DEFAULT) == ""
    (tmp_path / "calc.py").write_text("def divide(a, b):\n    raise ZeroDivisionError('no')\n")
    assert "on purpose" in raise_expected_note(tmp_path, section, DEFAULT)
    assert (
        raise_expected_note(tmp_path, section.replace("calc.py:2", "tests/x_test.py:2"), DEFAULT)
        == ""
    )
    # A file that is no text (a null byte) is no case, and no error.
    (tmp_path / "tests" / "test_calc.py").write_text(
        "from calc import divide\n\n\ndef test_divide():\n    assert divide(6, 0) == '\0'\n"
    )
    assert raise_expected_note(tmp_path, section, DEFAULT) == ""


# The 1.5B's mathx tests on the CPU (OpenAI API), verbatim; the multiply row (9, 10, 78)
# is written as its own later edit made it, (9, 10, 90). Then test_divide failed with
# "DID NOT RAISE ValueError", and sent to fix divide.py, it sent that message as old.
TABLES = (
    '{{"name": "write_file", "arguments": {"path": "tests/test_mathx.py", "content": '
    '"import pytest\\nfrom mathx import add, subtract, multiply, divide\\n\\n@pytest.mar'
    "k.parametrize('a, b, expected', [\\n    (1, 2, 3),\\n    (3, 4, 7),\\n    (5, 6, 11"
    "),\\n    (7, 8, 15),\\n    (9, 10, 19),\\n])\\ndef test_add(a, b, expected):\\n    as"
    "sert add(a, b) == expected\\n\\n@pytest.mark.parametrize('a, b, expected', [\\n    "
    "(1, 2, -1),\\n    (3, 4, -1),\\n    (5, 6, -1),\\n    (7, 8, -1),\\n    (9, 10, -1),"
    "\\n])\\ndef test_subtract(a, b, expected):\\n    assert subtract(a, b) == expected\\"
    "n\\n@pytest.mark.parametrize('a, b, expected', [\\n    (1, 2, 2),\\n    (3, 4, 12),"
    "\\n    (5, 6, 30),\\n    (7, 8, 56),\\n    (9, 10, 78),\\n])\\ndef test_multiply(a, b"
    ", expected):\\n    assert multiply(a, b) == expected\\n\\n@pytest.mark.parametrize("
    "'a, b, expected', [\\n    (1, 2, 0),\\n    (3, 4, 0),\\n    (5, 6, 0),\\n    (7, 8, "
    "0),\\n    (9, 10, 0),\\n])\\ndef test_divide(a, b, expected):\\n    with pytest.rais"
    'es(ValueError):\\n        divide(a, b)"}}}'
).replace("(9, 10, 78)", "(9, 10, 90)")
CALLED = {"name": "replace_in_file", "arguments": {"path": "tests/test_mathx.py"}}
CALLED["arguments"] |= {"old": "        divide(a, b)", "new": "        divide(a, 0)"}


def test_a_test_of_a_raise_whose_call_misses_its_condition_is_given_the_call_that_meets_it(
    tmp_path: Path,
) -> None:
    """The tests failed with "DID NOT RAISE ValueError" for divide(a, b) with b = 2, 4, ...;
    divide raises it only `if b == 0`: the note says so and gives the edit to
    `divide(a, 0)`, and that edit sent as given makes the tests pass."""
    runs = _runs(tmp_path, [*ROUNDS[:5], TABLES, ROUNDS[-1], json.dumps(CALLED), ROUNDS[-1]])
    assert "Failed: DID NOT RAISE" in runs[0]["result"]
    assert runs[0]["result"].endswith(
        "NOTE: divide(a, b) raised no ValueError: mathx/divide.py raises it only when b == 0 "
        "(line 2). For the test to check that raise, call it so, e.g. send: " + json.dumps(CALLED)
    ), runs[0]["result"][-600:]
    assert "20 passed" in runs[-1]["result"], runs[-1]["result"]


def test_no_note_where_the_call_meets_the_condition_or_the_raise_has_none(
    tmp_path: Path,
) -> None:
    """A call that passes the value already, or a function whose raise has no one `if
    PARAM == VALUE:`, gets no `raise_unmet` note."""
    (tmp_path / "tests").mkdir()
    test = "import pytest\nfrom calc import divide\n\n\ndef test_divide():\n"
    test += "    with pytest.raises(ValueError):\n        divide(1, 0)\n"
    (tmp_path / "tests" / "test_calc.py").write_text(test)
    (tmp_path / "calc.py").write_text(
        "def divide(a, b):\n    if b == 0:\n        raise ValueError('zero')\n    return a / b\n"
    )
    output = (
        "___________________ test_divide ___________________\n\n"
        "    def test_divide():\n>       with pytest.raises(ValueError):\n"
        "E       Failed: DID NOT RAISE <class 'ValueError'>\n\n"
        "tests/test_calc.py:6: Failed\n"
    )
    assert unraised_note(tmp_path, output, DEFAULT) == ""
    (tmp_path / "tests" / "test_calc.py").write_text(test.replace("(1, 0)", "(1, 2)"))
    assert "divide(1, 0)" in unraised_note(tmp_path, output, DEFAULT)
    (tmp_path / "calc.py").write_text(
        "def divide(a, b):\n    if b < 0:\n        raise ValueError('negative')\n    return a\n"
    )
    assert unraised_note(tmp_path, output, DEFAULT) == ""
