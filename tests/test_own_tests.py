"""The run's own test expects another value than the run's code returns: the model,
asked alone what the call returns, says which is wrong (small profile).

Qwen2.5-Coder-1.5B's mathx run on the CPU, verbatim: its package's functions were right,
its parametrize tables were not (`(1, 2, 1)` for subtract). The tests failed with
"subtract(1, 2) must return 1 (it returned -1)", the hand-back sent the model to fix
mathx/subtract.py, and with nothing to fix there it sent the function back unchanged
until the round limit. Asked alone, the same model answers "-1" (the CPU).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support import plan_rule, real_goal, records_of, small_model_goal

from localagent.loop import approxback
from localagent.loop.testrows import approx_edit, block_edit, row_edit, same
from localagent.tools import ToolContext, execute

MATHX = real_goal("mathx").text
PLAN = [
    "write_file mathx/__init__.py with the package structure and functions",
    "write_file tests/test_mathx.py with the pytest tests",
    "write_file mathx/add.py with the code of add",
    "write_file mathx/divide.py with the code of divide",
    "write_file mathx/multiply.py with the code of multiply",
    "write_file mathx/subtract.py with the code of subtract",
    "run python -m pytest to ensure the tests pass",
]
INIT = (
    '{{"name": "write_file", "arguments": {"path": "mathx/__init__.py", "content": "from math'
    'x import add, subtract, multiply, divide"}}}'
)
TABLES = (
    '{{"name": "write_file", "arguments": {"path": "tests/test_mathx.py", "content": "import '
    "pytest\\n\\n@pytest.mark.parametrize('a, b, expected', [(1, 2, 3), (3, 2, 5), (2, 2, 4"
    "), (0, 2, 2), (2, 0, 2)])\\ndef test_add(a, b, expected):\\n    assert add(a, b) == expe"
    "cted\\n\\n@pytest.mark.parametrize('a, b, expected', [(1, 2, 1), (3, 2, 1), (2, 2, 0),"
    " (0, 2, 0), (2, 0, 0)])\\ndef test_subtract(a, b, expected):\\n    assert subtract(a, b)"
    " == expected\\n\\n@pytest.mark.parametrize('a, b, expected', [(1, 2, 2), (3, 2, 1), (2"
    ", 2, 1), (0, 2, 0), (2, 0, 0)])\\ndef test_multiply(a, b, expected):\\n    assert multip"
    "ly(a, b) == expected\\n\\n@pytest.mark.parametrize('a, b, expected', [(1, 2, 0), (3, 2"
    ", 0), (2, 2, 0), (0, 2, 0), (2, 0, 0)])\\ndef test_divide(a, b, expected):\\n    assert "
    'divide(a, b) == expected"}}}'
)
ADD = (
    '{{"name": "write_file", "arguments": {"path": "mathx/add.py", "content": "def add(a, b):'
    '\\n    return a + b"}}}'
)
DIVIDE = (
    '{{"name": "write_file", "arguments": {"path": "mathx/divide.py", "content": "def divide('
    "a, b):\\n    if b == 0:\\n        raise ValueError('Cannot divide by zero')\\n    retu"
    'rn a / b"}}}'
)
MULTIPLY = (
    '{{"name": "write_file", "arguments": {"path": "mathx/multiply.py", "content": "def multi'
    'ply(a, b):\\n    return a * b"}}}'
)
SUBTRACT = (
    '{{"name": "write_file", "arguments": {"path": "mathx/subtract.py", "content": "def subtr'
    'act(a, b):\\n    return a - b"}}}'
)
TESTS_RUN = '{{"name": "run_cmd", "arguments": {"cmd": "python -m pytest"}}}'
READ_TESTS = '{{"name": "read_file", "arguments": {"path": "tests/test_mathx.py"}}}'


def _failed_tables(ws: Path, *answers: str, tables: str = TABLES) -> list[dict[str, Any]]:
    """The run up to the hand-back's plan, the model answering `answers` when asked what
    the first failed call (subtract(1, 2) in TABLES) returns, and then the other wrong
    values of its table's line; the plans made."""
    replies = [INIT, tables, ADD, DIVIDE, MULTIPLY, SUBTRACT, TESTS_RUN, TESTS_RUN]
    rounds = [{"content": c} for c in [*replies, *answers, READ_TESTS]]
    small_model_goal(ws, MATHX, plan_rule((MATHX, PLAN)), rounds, LOCALAGENT_MAX_ROUNDS="9")
    asked = [r for r in records_of(ws, "llm_call") if r["purpose"] == "replan"]
    assert len(asked) == len(answers), asked  # the questions, and no replan of the model's
    return records_of(ws, "plan")


def test_a_value_the_model_gives_as_the_code_s_sends_it_to_the_test(tmp_path: Path) -> None:
    # subtract(1, 2) and its table's other wrong rows, then multiply's and divide's
    answers = ("-1", "-2", "2", "6", "4", "0.5", "1.5", "1.0")
    plan = _failed_tables(tmp_path, *answers)[-1]
    assert plan.get("by") == "handback", plan
    steps = plan["tasks"][0]["subtasks"]
    table = "@pytest.mark.parametrize('a, b, expected', [{}, (3, 2, 1), (2, 2, 0), {}, {}])"
    old, new = (
        table.format("(1, 2, 1)", "(0, 2, 0)", "(2, 0, 0)"),
        table.format("(1, 2, -1)", "(0, 2, -2)", "(2, 0, 2)"),
    )
    multiply = (
        "@pytest.mark.parametrize('a, b, expected', [(1, 2, 2), {}, {}, (0, 2, 0), (2, 0, 0)])"
    )
    divide = "@pytest.mark.parametrize('a, b, expected', [{}, {}, {}, (0, 2, 0), (2, 0, 0)])"
    assert steps[:5] == [
        "read_file tests/test_mathx.py",
        "replace_in_file tests/test_mathx.py to fix the value its test expects: subtract(1, 2) "
        f"returns -1, not 1: replace `{old}` with `{new}` (and each other expected value in "
        "it that is wrong the same way)",
        # the other tables' wrong rows the model answers with the code's values: their edits
        "replace_in_file tests/test_mathx.py to fix the value its test expects: multiply(3, 2) "
        f"returns 6, not 1: replace `{multiply.format('(3, 2, 1)', '(2, 2, 1)')}` with "
        f"`{multiply.format('(3, 2, 6)', '(2, 2, 4)')}` (and each other expected value in it "
        "that is wrong the same way)",
        "replace_in_file tests/test_mathx.py to fix the value its test expects: divide(1, 2) "
        f"returns 0.5, not 0: replace `{divide.format('(1, 2, 0)', '(3, 2, 0)', '(2, 2, 0)')}` "
        f"with `{divide.format('(1, 2, 0.5)', '(3, 2, 1.5)', '(2, 2, 1.0)')}` (and each other "
        "expected value in it that is wrong the same way)",
        "run python -m pytest to ensure the tests pass",
    ], steps
    assert (
        tmp_path / "mathx" / "subtract.py"
    ).read_text() == "def subtract(a, b):\n    return a - b"


def test_a_value_the_model_gives_as_the_test_s_sends_it_to_the_code(tmp_path: Path) -> None:
    steps = _failed_tables(tmp_path, "1")[-1]["tasks"][0]["subtasks"]
    assert steps[:2] == [
        "read_file mathx/subtract.py",
        "replace_in_file mathx/subtract.py to fix the failing test: subtract(1, 2) must return "
        "1 (it returned -1)",
    ], steps


def test_a_third_value_asks_about_the_next_wrong_row(tmp_path: Path) -> None:
    """The 1.5B, asked alone what subtract(10, 0) returns, answered 0; for its table's next
    wrong row, multiply(0, 5), it answered 0, the code's value (mathx on the CPU at
    9d02f6f). Asked about the first wrong value only, the hand-back went to the code, which
    was right, and the run ended at its round limit."""
    # the rest stood by the tests' values: no edit of their tables
    plan = _failed_tables(tmp_path, "0", "-2", "2", "5", "1", "0", "0", "0")[-1]
    steps = plan["tasks"][0]["subtasks"]
    table = "@pytest.mark.parametrize('a, b, expected', [(1, 2, 1), (3, 2, 1), (2, 2, 0), {}, {}])"
    old, new = table.format("(0, 2, 0)", "(2, 0, 0)"), table.format("(0, 2, -2)", "(2, 0, 2)")
    assert steps[1] == (
        "replace_in_file tests/test_mathx.py to fix the value its test expects: subtract(0, 2) "
        f"returns -2, not 0: replace `{old}` with `{new}` (and each other expected value in "
        "it that is wrong the same way)"
    ), steps


# The tests of mathx-7 (0c8d102, the CPU), verbatim: add's table, its rows on lines of
# their own, above all four tests. Its hand-back named no text (no row or pair of lines is
# written once), and the model sent the step's sentence as the text to replace.
COPIED = (
    '```json\n{"name": "write_file", "arguments": {"path": "tests/test_mathx.py", "content'
    "\": \"import pytest\\n\\n@pytest.mark.parametrize('a, b, expected', [\\n    (1, 2, 3),\\n "
    "   (3, 4, 7),\\n    (5, 6, 11),\\n    (0, 0, 0),\\n    (10, 10, 20),\\n])\\ndef test_add("
    "a, b, expected):\\n    assert add(a, b) == expected\\n\\n@pytest.mark.parametrize('a, b"
    ", expected', [\\n    (1, 2, 3),\\n    (3, 4, 7),\\n    (5, 6, 11),\\n    (0, 0, 0),\\n   "
    " (10, 10, 20),\\n])\\ndef test_subtract(a, b, expected):\\n    assert subtract(a, b) =="
    " expected\\n\\n@pytest.mark.parametrize('a, b, expected', [\\n    (1, 2, 3),\\n    (3, 4"
    ", 7),\\n    (5, 6, 11),\\n    (0, 0, 0),\\n    (10, 10, 20),\\n])\\ndef test_multiply(a, "
    "b, expected):\\n    assert multiply(a, b) == expected\\n\\n@pytest.mark.parametrize('a,"
    " b, expected', [\\n    (1, 2, 3),\\n    (3, 4, 7),\\n    (5, 6, 11),\\n    (0, 0, 0),\\n "
    "   (10, 10, 20),\\n])\\ndef test_divide(a, b, expected):\\n    assert divide(a, b) == e"
    'xpected\\n"}}}'
)


def test_a_table_copied_from_another_test_is_named_through_its_def_line(tmp_path: Path) -> None:
    # subtract(1, 2), then the other wrong rows of its table: (3, 4), (5, 6), (10, 10);
    # the model stands by the values of multiply's and divide's tables
    kept = ("3", "7", "11", "20") * 2
    plan = _failed_tables(tmp_path, "-1", "-1", "-1", "0", *kept, tables=COPIED)[-1]
    steps = plan["tasks"][0]["subtasks"]
    old = (
        "(1, 2, 3),\\n    (3, 4, 7),\\n    (5, 6, 11),\\n    (0, 0, 0),\\n    (10, 10, 20),\\n])"
        "\\ndef test_subtract(a, b, expected):"
    )
    new = (
        "(1, 2, -1),\\n    (3, 4, -1),\\n    (5, 6, -1),\\n    (0, 0, 0),\\n    (10, 10, 0),"
        "\\n])\\ndef test_subtract(a, b, expected):"
    )
    assert steps[:3] == [
        "read_file tests/test_mathx.py",
        "replace_in_file tests/test_mathx.py to fix the value its test expects: subtract(1, 2) "
        f"returns -1, not 3: replace `{old}` with `{new}` (and each other expected value in it "
        "that is wrong the same way)",
        "run python -m pytest to ensure the tests pass",
    ], steps
    # The step as the model copies it is one edit of the file, and its tests then pass.
    ctx = ToolContext(root=tmp_path)
    args = {"path": "tests/test_mathx.py", "old": old, "new": new}
    result = execute(ctx, "replace_in_file", args)
    assert result.ok, result.output
    text = (tmp_path / "tests" / "test_mathx.py").read_text()
    assert "    (10, 10, 0),\n])\ndef test_subtract(" in text, text
    assert text.count("(10, 10, 20)") == 3


# mathx-5's tests (d1e6ddd, the CPU) as its run left them: a `pytest.raises(ValueError)`
# around `divide(a, b)` for rows that never divide by zero. The run's note gave the edit,
# `divide(a, 0)`; the hand-back sent the model to mathx/__init__.py with pytest's words,
# which it sent as the text to replace until the round limit.
UNRAISED = (
    '{{"name": "write_file", "arguments": {"path": "tests/test_mathx.py", "content": "import '
    "pytest\\n\\n@pytest.mark.parametrize('a, b, expected', [(1, 2, 3), (3, 4, 7), (5, 6, 11"
    "), (10, 20, 30)])\\ndef test_add(a, b, expected):\\n    assert add(a, b) == expected\\n"
    "\\n@pytest.mark.parametrize('a, b, expected', [(1, 2, -1), (3, 4, -1), (5, 6, -1), (10, "
    "20, -10)])\\ndef test_subtract(a, b, expected):\\n    assert subtract(a, b) == expected"
    "\\n\\n@pytest.mark.parametrize('a, b, expected', [(1, 2, 2), (3, 4, 12), (5, 6, 30), (1"
    "0, 20, 200)])\\ndef test_multiply(a, b, expected):\\n    assert multiply(a, b) == expec"
    "ted\\n\\n@pytest.mark.parametrize('a, b, expected', [(1, 2, 0), (3, 4, 0), (5, 6, 0), "
    "(10, 20, 0)])\\ndef test_divide(a, b, expected):\\n    with pytest.raises(ValueError):"
    '\\n        divide(a, b)"}}}'
)


def test_a_test_of_a_raise_the_code_makes_otherwise_is_the_edit(tmp_path: Path) -> None:
    plan = _failed_tables(tmp_path, tables=UNRAISED)[-1]
    steps = plan["tasks"][0]["subtasks"]
    assert steps[:3] == [
        "read_file tests/test_mathx.py",
        "replace_in_file tests/test_mathx.py so that its test checks the raise as the code "
        "makes it: replace `divide(a, b)` with `divide(a, 0)`",
        "run python -m pytest to ensure the tests pass",
    ], steps
    (run,) = [r for r in records_of(tmp_path, "action_finished") if r["tool"] == "run_cmd"][:1]
    assert run["facts"]["test_edit"] == [
        "tests/test_mathx.py", "        divide(a, b)", "        divide(a, 0)"
    ]  # fmt: skip


# mathx-15 (0c8d102, the CPU, two kill -9), verbatim: asserts at the top level (written as
# one test), one of them comparing divide(0, 0), which raises on purpose, with a string.
# The note gave the test's edit; pytest ran until blocked, three subtasks running.
RAISING_INIT = (
    '{{"name": "write_file", "arguments": {"path": "mathx/__init__.py", "content": "from '
    "mathx import add, subtract, multiply, divide\\n\\n# Add function\\ndef add(a, b):\\n   "
    " return a + b\\n\\n# Subtract function\\ndef subtract(a, b):\\n    return a - b\\n\\n# "
    "Multiply function\\ndef multiply(a, b):\\n    return a * b\\n\\n# Divide function\\nde"
    "f divide(a, b):\\n    if b == 0:\\n        raise ValueError('Cannot divide by zero')\\n"
    '    return a / b"}}}'
)
ASSERTS = (
    '{{"name": "write_file", "arguments": {"path": "tests/test_mathx.py", "content": "import '
    "mathx\\n\\n# Test add function\\nassert mathx.add(1, 2) == 3\\nassert mathx.add(-1, 1) "
    "== 0\\nassert mathx.add(0, 0) == 0\\n\\n# Test subtract function\\nassert mathx.subtra"
    "ct(1, 2) == -1\\nassert mathx.subtract(-1, 1) == -2\\nassert mathx.subtract(0, 0) == 0"
    "\\n\\n# Test multiply function\\nassert mathx.multiply(1, 2) == 2\\nassert mathx.multip"
    "ly(-1, 1) == -1\\nassert mathx.multiply(0, 0) == 0\\n\\n# Test divide function\\nasser"
    "t mathx.divide(1, 2) == 0.5\\nassert mathx.divide(-1, 1) == -1.0\\nassert mathx.divide"
    "(0, 0) == 'Cannot divide by zero'\\nassert mathx.divide(1, 0) == 'Cannot divide by zer"
    "o'\\nassert mathx.divide(0, 1) == 0\"}}}"
)


def test_a_comparison_of_a_call_that_raises_goes_back_to_the_note_s_edit(tmp_path: Path) -> None:
    plan = [
        "write_file mathx/__init__.py with the code of its functions",
        "write_file tests/test_mathx.py with its tests",
        "run python -m pytest",
    ]
    rounds = [{"content": c} for c in [RAISING_INIT, ASSERTS, *[TESTS_RUN] * 5, READ_TESTS]]
    small_model_goal(tmp_path, MATHX, plan_rule((MATHX, plan)), rounds, LOCALAGENT_MAX_ROUNDS="8")
    handback = records_of(tmp_path, "plan")[-1]
    assert handback.get("by") == "handback", handback
    assert handback["tasks"][0]["subtasks"][:3] == [
        "read_file tests/test_mathx.py",
        "replace_in_file tests/test_mathx.py so that its test checks the raise as the code "
        "makes it: replace `assert mathx.divide(0, 0) == 'Cannot divide by zero'` with `with "
        "pytest.raises(ValueError):\\n        mathx.divide(0, 0)`",
        "run python -m pytest",
    ], handback


@pytest.mark.parametrize(
    ("a", "b", "one"),
    [("-1", "-1", True), ("0.5", ".5", True), ("2", "2.0", True), ("-1", "1", False),
     ("'a'", '"a"', True), ("True", "1", False), ("", "", False), ("x", "x", True)],
)  # fmt: skip
def test_which_values_are_the_same(a: str, b: str, one: bool) -> None:
    assert same(a, b) is one


# The mathx tests of a CPU run (the code of 2a2c9a1), verbatim: told "multiply(3, 4) returns
# 12, not 6", the 1.5B sent that sentence as the edit's old text until blocked.
MULTIPLY_TABLE = (
    "@pytest.mark.parametrize('a, b, expected', [(1, 2, 2), (3, 4, 6), (5, 6, 10), (7, 8, 14), "
    "(9, 10, 18)])\ndef test_multiply(a, b, expected):\n    assert multiply(a, b) == expected\n"
)


ADD_TABLE = (
    "@pytest.mark.parametrize('a, b, expected', [(3, 4, 6)])\n"
    "def test_add(a, b, expected):\n    assert add(a, b) + 1 == expected\n"
)
MULTIPLY_LINE = MULTIPLY_TABLE.splitlines()[0]


@pytest.mark.parametrize(
    ("source", "call", "found"),
    [
        (MULTIPLY_TABLE, "multiply(3, 4)", ("(3, 4, 6)", "(3, 4, 12)")),
        ("def test_m():\n    assert multiply(3, 4) == 6\n", "multiply(3, 4)",
         ("multiply(3, 4) == 6", "multiply(3, 4) == 12")),
        ("def test_m():\n    assert 6 == mathx.multiply(3, 4)\n", "mathx.multiply(3, 4)",
         ("6 == mathx.multiply(3, 4)", "12 == mathx.multiply(3, 4)")),
        # another test's row, the same row twice, a row over two lines: no edit named
        (MULTIPLY_TABLE.replace("multiply(a, b)", "add(a, b)"), "multiply(3, 4)", None),
        (MULTIPLY_TABLE.replace("(5, 6, 10)", "(3, 4, 6)"), "multiply(3, 4)", None),
        (MULTIPLY_TABLE.replace("(3, 4, 6)", "(3, 4,\n 6)"), "multiply(3, 4)", None),
        # the row written in another test's table too: its line is named
        (ADD_TABLE + MULTIPLY_TABLE, "multiply(3, 4)", (MULTIPLY_LINE, MULTIPLY_LINE.replace(
            "(3, 4, 6)", "(3, 4, 12)"))),
    ],
)  # fmt: skip
def test_which_text_the_edit_of_an_expected_value_names(
    source: str, call: str, found: tuple[str, str] | None
) -> None:
    assert row_edit(source, call, "12", "6") == found


# That run's test file, verbatim: four wrong rows in one table, on one line.
TABLES_MULTIPLY = (
    '{{"name": "write_file", "arguments": {"path": "tests/test_mathx.py", "content": "imp'
    "ort pytest\\n\\n@pytest.mark.parametrize('a, b, expected', [(1, 2, 3), (3, 4, 7), (5, "
    "6, 11), (7, 8, 15), (9, 10, 19)])\\ndef test_add(a, b, expected):\\n    assert add(a, "
    "b) == expected\\n\\n@pytest.mark.parametrize('a, b, expected', [(1, 2, -1), (3, 4, -1)"
    ", (5, 6, -1), (7, 8, -1), (9, 10, -1)])\\ndef test_subtract(a, b, expected):\\n    ass"
    "ert subtract(a, b) == expected\\n\\n@pytest.mark.parametrize('a, b, expected', [(1, 2,"
    " 2), (3, 4, 6), (5, 6, 10), (7, 8, 14), (9, 10, 18)])\\ndef test_multiply(a, b, expec"
    "ted):\\n    assert multiply(a, b) == expected\\n\\n@pytest.mark.parametrize('a, b, expe"
    "cted', [(1, 2, 0), (3, 4, 0), (5, 6, 0), (7, 8, 0), (9, 10, 0)])\\ndef test_divide(a,"
    ' b, expected):\\n    with pytest.raises(ValueError):\\n        divide(a, b)"}}}'
)


def test_the_wrong_rows_the_model_confirms_are_fixed_by_one_edit_of_their_table(
    tmp_path: Path,
) -> None:
    """Each of the test run's first four wrong values is asked about (the first as
    before, then the rest); the rows it answers with the code's value are fixed in one
    edit of the line that holds the table. The 1.5B's table had four wrong rows, and one
    hand-back named one of them."""
    # the third answer is not the code's 56: that row stays
    plans = _failed_tables(tmp_path, "12", "30", "7", "90", tables=TABLES_MULTIPLY)
    steps = plans[-1]["tasks"][0]["subtasks"]
    table = "@pytest.mark.parametrize('a, b, expected', [(1, 2, 2), {}, {}, {}, {}])"
    old = table.format("(3, 4, 6)", "(5, 6, 10)", "(7, 8, 14)", "(9, 10, 18)")
    new = table.format("(3, 4, 12)", "(5, 6, 30)", "(7, 8, 14)", "(9, 10, 90)")
    assert steps[1] == (
        "replace_in_file tests/test_mathx.py to fix the value its test expects: multiply(3, 4) "
        f"returns 12, not 6: replace `{old}` with `{new}` (and each other expected value in "
        "it that is wrong the same way)"
    ), steps


# Another CPU run's test file (the code of 1f7649f), verbatim: its multiply rows (5, 6, 11)
# and (7, 8, 15) are add's rows too. The edit named (3, 4, 6), which the model copied
# exactly, and the next hand-back could name no row written twice: the round limit came.
TABLES_SUMS = (
    '{{"name": "write_file", "arguments": {"path": "tests/test_mathx.py", "content": "imp'
    "ort pytest\\n\\n@pytest.mark.parametrize('a, b, expected', [(1, 2, 3), (3, 4, 7), (5, "
    "6, 11), (7, 8, 15)])\\ndef test_add(a, b, expected):\\n    assert add(a, b) == expecte"
    "d\\n\\n@pytest.mark.parametrize('a, b, expected', [(1, 2, -1), (3, 4, -1), (5, 6, -1),"
    " (7, 8, -1)])\\ndef test_subtract(a, b, expected):\\n    assert subtract(a, b) == expe"
    "cted\\n\\n@pytest.mark.parametrize('a, b, expected', [(1, 2, 2), (3, 4, 6), (5, 6, 11)"
    ", (7, 8, 15)])\\ndef test_multiply(a, b, expected):\\n    assert multiply(a, b) == exp"
    "ected\\n\\n@pytest.mark.parametrize('a, b, expected', [(1, 2, 0), (3, 4, 0), (5, 6, 0)"
    ", (7, 8, 0)])\\ndef test_divide(a, b, expected):\\n    with pytest.raises(ValueError):"
    '\\n        divide(a, b)\\n"}}}'
)


def test_rows_written_in_another_table_too_are_fixed_in_their_own_line(tmp_path: Path) -> None:
    plans = _failed_tables(tmp_path, "12", "30", "56", tables=TABLES_SUMS)
    steps = plans[-1]["tasks"][0]["subtasks"]
    table = "@pytest.mark.parametrize('a, b, expected', [(1, 2, 2), {}, {}, {}])"
    old = table.format("(3, 4, 6)", "(5, 6, 11)", "(7, 8, 15)")
    new = table.format("(3, 4, 12)", "(5, 6, 30)", "(7, 8, 56)")
    assert f"replace `{old}` with `{new}`" in steps[1], steps


# A CPU run's tests (the code of ab0b434), verbatim: an assertion of the package's
# attribute, which pytest shows as `<function divide at 0x...>(0, 2)`. No value was read
# from it; the hand-back went to mathx/subtract.py, written last, and the model sent the
# assertion as old text there until blocked.
ATTRIBUTES = (
    '{{"name": "write_file", "arguments": {"path": "tests/test_mathx.py", "content": "import '
    "mathx\\n\\n# Test cases\\nassert mathx.add(1, 2) == 3\\nassert mathx.subtract(3, 1) == 2"
    "\\nassert mathx.multiply(2, 3) == 6\\nassert mathx.divide(6, 2) == 3\\nassert mathx.div"
    "ide(0, 2) == 'Error: division by zero'\"}}}"
)


def test_a_value_of_a_package_s_function_is_read_from_pytest_s_function_repr(
    tmp_path: Path,
) -> None:
    """pytest says `where 0.0 = <function divide at 0x7f...>(0, 2)` and then `where
    <function divide at 0x7f...> = mathx.divide`: the value is mathx.divide(0, 2)'s, the
    model asked alone says 0.0, and the hand-back goes to the test's expected value."""
    plan = _failed_tables(tmp_path, "0.0", tables=ATTRIBUTES)[-1]
    assert plan.get("by") == "handback", plan
    old = "mathx.divide(0, 2) == 'Error: division by zero'"
    assert plan["tasks"][0]["subtasks"][:2] == [
        "read_file tests/test_mathx.py",
        "replace_in_file tests/test_mathx.py to fix the value its test expects: "
        "mathx.divide(0, 2) returns 0.0, not 'Error: division by zero': replace "
        f"`{old}` with `{old.replace(repr('Error: division by zero'), '0.0')}` (and each "
        "other expected value in it that is wrong the same way)",
    ]


def test_the_code_a_wrong_value_came_from_is_the_file_the_hand_back_edits(
    tmp_path: Path,
) -> None:
    """The same run, the model answering the test's value: the hand-back goes to the file
    that defines divide, whose value was wrong, not to mathx/subtract.py, written last."""
    plan = _failed_tables(tmp_path, "'Error: division by zero'", tables=ATTRIBUTES)[-1]
    assert plan["tasks"][0]["subtasks"][:2] == [
        "read_file mathx/divide.py",
        "replace_in_file mathx/divide.py to fix the failing test: mathx.divide(0, 2) must "
        "return 'Error: division by zero' (it returned 0.0)",
    ]


# The 1.5B's test file at its second hand-back, verbatim (mathx on the CPU, 97fbfe1): its
# multiply row (-1, 1, -2) is on a line its subtract table has too.
TWICE = (
    "import pytest\n"
    "\n"
    "from mathx import add, subtract, multiply, divide\n"
    "\n"
    "\n"
    "@pytest.mark.parametrize('a, b, expected', [\n"
    "    (1, 2, 3),\n"
    "    (3, 5, 8),\n"
    "    (-1, 1, 0),\n"
    "    (0, 0, 0),\n"
    "    (10, 10, 20),\n"
    "])\n"
    "def test_add(a, b, expected):\n"
    "    assert add(a, b) == expected\n"
    "\n"
    "@pytest.mark.parametrize('a, b, expected', [\n"
    "    (1, 2, -1),\n"
    "    (3, 5, -2),\n"
    "    (-1, 1, -2),\n"
    "    (0, 0, 0),\n"
    "    (10, 10, 0),\n"
    "])\n"
    "def test_subtract(a, b, expected):\n"
    "    assert subtract(a, b) == expected\n"
    "\n"
    "@pytest.mark.parametrize('a, b, expected', [\n"
    "    (1, 2, 2),\n"
    "    (3, 5, 15),\n"
    "    (-1, 1, -2),\n"
    "    (0, 0, 0),\n"
    "    (10, 10, 20),\n"
    "])\n"
    "def test_multiply(a, b, expected):\n"
    "    assert multiply(a, b) == expected\n"
    "\n"
    "@pytest.mark.parametrize('a, b, expected', [\n"
    "    (1, 0, ValueError),\n"
    "    (0, 0, ValueError),\n"
    "    (10, 0, ValueError),\n"
    "])\n"
    "def test_divide(a, b, expected):\n"
    "    with pytest.raises(expected):\n"
    "        divide(a, b)"
)


def test_a_row_on_a_line_written_twice_is_named_with_the_line_before_it(tmp_path: Path) -> None:
    """The hand-back could name no text to replace, and the 1.5B sent its step's sentence
    as the edit's old text until blocked; the round limit came."""
    old, new = "(3, 5, 15),\n    (-1, 1, -2),", "(3, 5, 15),\n    (-1, 1, -1),"
    assert row_edit(TWICE, "multiply(-1, 1)", "-1", "-2") == (old, new)
    # The step shows the line break as `\n`; sent so, the edit reads it as the break.
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_mathx.py").write_text(TWICE)
    shown = {"old": old.replace("\n", "\\n"), "new": new.replace("\n", "\\n")}
    done = execute(
        ToolContext(tmp_path), "replace_in_file", {"path": "tests/test_mathx.py", **shown}
    )
    assert done.ok, done.text
    assert (tmp_path / "tests" / "test_mathx.py").read_text() == TWICE.replace(old, new)


def test_a_row_named_with_the_line_before_it_is_found_in_a_file_with_crlf(tmp_path: Path) -> None:
    """The same edit of a test file with Windows line ends (written there in text mode):
    the step's `\n` is the file's CRLF. Sent so, the edit was refused under Windows:
    old was not found."""
    old, new = "(3, 5, 15),\n    (-1, 1, -2),", "(3, 5, 15),\n    (-1, 1, -1),"
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_mathx.py").write_bytes(TWICE.replace("\n", "\r\n").encode())
    shown = {"old": old.replace("\n", "\\n"), "new": new.replace("\n", "\\n")}
    done = execute(
        ToolContext(tmp_path), "replace_in_file", {"path": "tests/test_mathx.py", **shown}
    )
    assert done.ok, done.text
    after = (tmp_path / "tests" / "test_mathx.py").read_bytes().decode()
    assert after == TWICE.replace(old, new).replace("\n", "\r\n")


# The tests of mathx-4 (1315a89, the CPU, two kill -9), verbatim: add's table on one line,
# above all four tests. Each wrong row had an edit step of its own, the line named with its
# test's `def` line; the model made each, and the round limit came at divide's table.
ONE_LINE_COPIES = (
    '{{"name": "write_file", "arguments": {"path": "tests/test_mathx.py", "content": "import '
    "pytest\\n\\n@pytest.mark.parametrize('a, b, expected', [(1, 2, 3), (3, 4, 7), (5, 6, 11"
    ")])\\ndef test_add(a, b, expected):\\n    assert add(a, b) == expected\\n\\n@pytest.mark"
    ".parametrize('a, b, expected', [(1, 2, 3), (3, 4, 7), (5, 6, 11)])\\ndef test_subtract(a,"
    " b, expected):\\n    assert subtract(a, b) == expected\\n\\n@pytest.mark.parametrize('a, "
    "b, expected', [(1, 2, 3), (3, 4, 7), (5, 6, 11)])\\ndef test_multiply(a, b, expected):\\n"
    "    assert multiply(a, b) == expected\\n\\n@pytest.mark.parametrize('a, b, expected', ["
    "(1, 2, 3), (3, 4, 7), (5, 6, 11)])\\ndef test_divide(a, b, expected):\\n    assert divid"
    'e(a, b) == expected"}}}'
)


def test_a_copied_table_on_one_line_is_fixed_in_one_edit(tmp_path: Path) -> None:
    # subtract(1, 2), its table's (3, 4) and (5, 6), then multiply's table and divide's
    answers = ("-1", "-1", "-1", "2", "12", "30", "0.5", "0.75", "0.8333333333333334")
    plan = _failed_tables(tmp_path, *answers, tables=ONE_LINE_COPIES)[-1]
    steps = plan["tasks"][0]["subtasks"]
    table = "@pytest.mark.parametrize('a, b, expected', [{}])\\ndef test_{}(a, b, expected):"
    wrong = "(1, 2, 3), (3, 4, 7), (5, 6, 11)"
    divided = "(1, 2, 0.5), (3, 4, 0.75), (5, 6, 0.8333333333333334)"
    assert steps[:5] == [
        "read_file tests/test_mathx.py",
        "replace_in_file tests/test_mathx.py to fix the value its test expects: subtract(1, 2) "
        f"returns -1, not 3: replace `{table.format(wrong, 'subtract')}` with "
        f"`{table.format('(1, 2, -1), (3, 4, -1), (5, 6, -1)', 'subtract')}` (and each other "
        "expected value in it that is wrong the same way)",
        "replace_in_file tests/test_mathx.py to fix the value its test expects: multiply(1, 2) "
        f"returns 2, not 3: replace `{table.format(wrong, 'multiply')}` with "
        f"`{table.format('(1, 2, 2), (3, 4, 12), (5, 6, 30)', 'multiply')}` (and each other "
        "expected value in it that is wrong the same way)",
        "replace_in_file tests/test_mathx.py to fix the value its test expects: divide(1, 2) "
        f"returns 0.5, not 3: replace `{table.format(wrong, 'divide')}` with "
        f"`{table.format(divided, 'divide')}` (and each other expected value in it that is "
        "wrong the same way)",
        "run python -m pytest to ensure the tests pass",
    ], steps


def test_a_copied_table_s_edit_keeps_the_rows_the_model_stands_by() -> None:
    table = "@pytest.mark.parametrize('a, b, expected', [\n    (1, 2, 3),\n    (3, 4, 7),\n])\n"
    source = (
        f"{table}def test_add(a, b, expected):\n    assert add(a, b) == expected\n\n"
        f"{table}def test_sub(a, b, expected):\n    assert sub(a, b) == expected\n"
    )
    first, other = ("sub(1, 2)", "-1", "3"), ("sub(3, 4)", "-1", "7")
    found = block_edit(source, first, [other], lambda row: False)
    assert found == (
        "(1, 2, 3),\n    (3, 4, 7),\n])\ndef test_sub(a, b, expected):",
        "(1, 2, -1),\n    (3, 4, 7),\n])\ndef test_sub(a, b, expected):",
        [first],
    )
    both = block_edit(source, first, [other], lambda row: True)
    assert both is not None and "(3, 4, -1)" in both[1] and both[2] == [first, other]
    # A table too long to name as one text: none.
    rows = "".join(f"    ({i}, 2, 0),\n" for i in range(12))
    long = source.replace("    (3, 4, 7),\n", rows)
    assert block_edit(long, first, [], lambda row: True) is None


# A CPU run's test file (the code of b11a98b), verbatim: add's table copied for subtract,
# and multiply's and divide's wrong too: twelve wrong rows in three tables.
TABLES_THREE = (
    '{{"name": "write_file", "arguments": {"path": "tests/test_mathx.py", "content": "imp'
    "ort pytest\\n\\n@pytest.mark.parametrize('a, b, expected', [(1, 2, 3), (3, 4, 7), (5, "
    "6, 11), (0, 0, 0), (1, 0, 1), (0, 1, 1)])\\ndef test_add(a, b, expected):\\n    asser"
    "t add(a, b) == expected\\n\\n@pytest.mark.parametrize('a, b, expected', [(1, 2, 3), ("
    "3, 4, 7), (5, 6, 11), (0, 0, 0), (1, 0, 1), (0, 1, 1)])\\ndef test_subtract(a, b, exp"
    "ected):\\n    assert subtract(a, b) == expected\\n\\n@pytest.mark.parametrize('a, b, e"
    "xpected', [(1, 2, 2), (3, 4, 1), (5, 6, 1), (0, 0, 0), (1, 0, 1), (0, 1, 1)])\\ndef t"
    "est_multiply(a, b, expected):\\n    assert multiply(a, b) == expected\\n\\n@pytest.mar"
    "k.parametrize('a, b, expected', [(1, 2, 0), (3, 4, 0), (5, 6, 0), (0, 0, 0), (1, 0, 0"
    "), (0, 1, 0)])\\ndef test_divide(a, b, expected):\\n    assert divide(a, b) == expect"
    'ed"}}}'
)


def test_the_wrong_tables_of_three_functions_are_fixed_in_one_hand_back(tmp_path: Path) -> None:
    """Its first hand-back fixed subtract's table, the next multiply's, and the round limit
    came before divide's: the run's facts kept its first four wrong values, all of them
    subtract's. Each table the model confirms is an edit of the one hand-back now."""
    answers = ["-1", "-1", "-1", "-1", "12", "30", "0", "0", "0.5", "0.75", "0.8333333333333334"]
    plans = _failed_tables(tmp_path, *answers, tables=TABLES_THREE)
    steps = plans[-1]["tasks"][0]["subtasks"]
    row = "@pytest.mark.parametrize('a, b, expected', [{}])"
    subtract = (row.format("(1, 2, {}), (3, 4, {}), (5, 6, {}), (0, 0, 0), (1, 0, 1), (0, 1, {})")
                + "\\ndef test_subtract(a, b, expected):")  # fmt: skip
    multiply = row.format("(1, 2, 2), (3, 4, {}), (5, 6, {}), (0, 0, 0), (1, 0, {}), (0, 1, {})")
    divide = row.format("(1, 2, {}), (3, 4, {}), (5, 6, {}), (0, 0, 0), (1, 0, 0), (0, 1, 0)")
    edits = [s for s in steps if s.startswith("replace_in_file tests/test_mathx.py")]
    assert len(edits) == 3 and steps[0] == "read_file tests/test_mathx.py", steps
    assert steps[len(edits) + 1].startswith("run python -m pytest"), steps
    wanted = [
        (subtract.format(3, 7, 11, 1), subtract.format(-1, -1, -1, -1)),
        (multiply.format(1, 1, 1, 1), multiply.format(12, 30, 0, 0)),
        (divide.format(0, 0, 0), divide.format(0.5, 0.75, 0.8333333333333334)),
    ]
    for edit, (old, new) in zip(edits, wanted, strict=True):
        assert f"replace `{old}` with `{new}`" in edit, edit


def _write(path: str, content: str) -> dict[str, str]:
    """The model's reply that writes `content` to `path`."""
    call = {"name": "write_file", "arguments": {"path": path, "content": content}}
    return {"content": json.dumps(call)}


def _handed_back(ws: Path, code: str, tests: str) -> list[str]:
    """The first steps of the plan a mathx run ends with (five rounds) whose model writes
    `code` into mathx/__init__.py and `tests` into tests/test_mathx.py, then runs pytest
    twice."""
    plan = [
        "write_file mathx/__init__.py with the code of its functions",
        "write_file tests/test_mathx.py with its tests",
        "run python -m pytest",
    ]
    replies = [_write("mathx/__init__.py", code), _write("tests/test_mathx.py", tests)]
    replies += [{"content": TESTS_RUN}] * 2 + [{"content": READ_TESTS}]
    small_model_goal(ws, MATHX, plan_rule((MATHX, plan)), replies, LOCALAGENT_MAX_ROUNDS="5")
    return records_of(ws, "plan")[-1]["tasks"][0]["subtasks"]


# The 1.5B's mathx code and the float assertions of its test, verbatim (the CPU, 1 of 8).
FLOAT_TESTS = (
    "import pytest\n\nimport mathx\n\n\ndef test_mathx():\n"
    "    assert mathx.add(1, 2) == 3\n\n"
    "    # Test divide function\n    assert mathx.divide(1, 2) == 0.5\n"
    "    with pytest.raises(ValueError):\n        mathx.divide(0, 0)\n\n"
    "    # Test add with float\n"
    "    assert mathx.add(1.1, 2.2) == 3.3\n    assert mathx.add(3.3, 4.4) == 7.7\n"
    "    assert mathx.add(-1.1, -2.2) == -3.3\n    assert mathx.add(0.0, 0.0) == 0.0\n"
)
FLOAT_CODE = (
    "def add(a, b):\n    return a + b\n\ndef divide(a, b):\n    if b == 0:\n"
    "        raise ValueError('Cannot divide by zero')\n    return a / b\n"
)


def test_a_float_compared_with_rounding_goes_back_to_pytest_approx(tmp_path: Path) -> None:
    """The 1.5B's test asserted `mathx.add(1.1, 2.2) == 3.3`; asked alone, the model said
    3.3, the hand-back went to add, which it gave back unchanged, and the replans went on
    until the round limit (mathx on the CPU). Neither value is wrong: the comparison of
    the assertion, and of those beside it that pytest stopped before, is."""
    steps = _handed_back(tmp_path, FLOAT_CODE, FLOAT_TESTS)
    assert not [r for r in records_of(tmp_path, "llm_call") if r["purpose"] == "replan"]
    block = (
        "assert mathx.add(1.1, 2.2) == {}\\n    assert mathx.add(3.3, 4.4) == {}\\n    "
        "assert mathx.add(-1.1, -2.2) == {}\\n    assert mathx.add(0.0, 0.0) == {}"
    )
    approx = ("pytest.approx(3.3)", "pytest.approx(7.7)", "pytest.approx(-3.3)")
    assert steps == [
        "read_file tests/test_mathx.py",
        "replace_in_file tests/test_mathx.py so that its test compares floats with "
        "pytest.approx: mathx.add(1.1, 2.2) returns 3.3000000000000003, which is 3.3 but for "
        f"float rounding: replace `{block.format('3.3', '7.7', '-3.3', '0.0')}` with "
        f"`{block.format(*approx, 'pytest.approx(0.0)')}`",
        "run python -m pytest",
    ], steps
    source = (tmp_path / "tests" / "test_mathx.py").read_text()
    old = block.format("3.3", "7.7", "-3.3", "0.0").replace("\\n", "\n")
    new = block.format(*approx, "pytest.approx(0.0)").replace("\\n", "\n")
    assert source.count(old) == 1
    fixed = tmp_path / "fixed"
    (fixed / "mathx").mkdir(parents=True)
    (fixed / "mathx" / "__init__.py").write_text(FLOAT_CODE)
    (fixed / "test_mathx.py").write_text(source.replace(old, new))
    ran = execute(
        ToolContext(root=fixed), "run_cmd", {"cmd": "python -m pytest -p no:cacheprovider"}
    )
    assert ran.ok, ran.text


@pytest.mark.parametrize(
    ("expected", "got", "rounding"),
    [
        ("3.3", "3.3000000000000003", True),
        ("0.3", "0.30000000000000004", True),
        ("7.7", "7.700000000000001", True),
        ("3.3", "3.4", False),
        ("3", "3.0000000001", False),  # past float rounding
        ("3.3", "3.3", False),
        ("True", "1.0", False),
        ("'3.3'", "3.3000000000000003", False),
    ],
)
def test_which_values_differ_by_float_rounding(expected: str, got: str, rounding: bool) -> None:
    assert approxback.rounded(expected, got) is rounding


def test_a_row_of_a_table_is_compared_with_pytest_approx_in_its_place() -> None:
    source = (
        "import pytest\n\n@pytest.mark.parametrize('a, b, expected', [(1, 2, 3), (1.1, 2.2, 3.3)])"
        "\ndef test_add(a, b, expected):\n    assert add(a, b) == expected\n"
    )
    edit = approx_edit(source, "add(1.1, 2.2)", "3.3000000000000003", "3.3")
    assert edit == ("(1.1, 2.2, 3.3)", "(1.1, 2.2, pytest.approx(3.3))")


# The 1.5B's mathx test file, verbatim (the CPU): its tests' `self` at the module's top.
SELF_TESTS = (
    "from mathx import add, subtract, multiply, divide\n\n\ndef test_add(self):\n"
    "    assert add(1, 2) == 3\n\n    def test_subtract(self):\n"
    "        assert subtract(1, 2) == -1\n"
)


OPERATORS = [("add", "+"), ("subtract", "-"), ("multiply", "*"), ("divide", "/")]


def test_a_test_that_asks_for_a_fixture_not_there_goes_back_to_its_file(tmp_path: Path) -> None:
    """pytest: "fixture 'self' not found". The 1.5B's hand-back went to mathx/__init__.py,
    whose code was right, and it sent it back unchanged until the round limit (the CPU,
    1 of 8 runs). The error is the test file's: the hand-back is a write of it."""
    code = "".join(f"def {f}(a, b):\n    return a {o} b\n\n\n" for f, o in OPERATORS)
    steps = _handed_back(tmp_path, code, SELF_TESTS)
    assert steps[0] == (
        "write_file tests/test_mathx.py again, changed so that it no longer raises fixture "
        "'self' not found (a test function's arguments are pytest's fixtures or its "
        "parametrize names)"
    ), steps
    failed = records_of(tmp_path, "subtask_failed")[0]["reason"]
    assert "tests/test_mathx.py: fixture 'self' not found" in failed, failed
