"""A test file that defines no test is not written yet. Qwen2.5-Coder-1.5B's mathx run on
the CPU, replayed verbatim on the scripted fake server through the real CLI: its plan said
"write_file tests/test_mathx.py with the following content: from mathx import add,
subtract, multiply, divide", it wrote that one line, the write ended the step, and pytest
ran nothing (exit code 5) twice before its repeat was blocked; its replan then planned
docstrings and never wrote a test."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import plan_rule, records_of, small_model_goal

from localagent.state.checkruns import outcome
from localagent.tools import notests

MATHX = (
    "Create a Python package mathx with the functions add, subtract, multiply and divide "
    "(divide raises ValueError when dividing by zero), with pytest tests in "
    "tests/test_mathx.py; the tests must pass with pytest and ruff check must be clean"
)
# The model's plan steps and replies, verbatim.
TESTS_STEP = (
    "write_file tests/test_mathx.py with the following content: from mathx import add, "
    "subtract, multiply, divide"
)
RUN_STEP = "run python -m pytest tests/test_mathx.py to ensure the tests pass"
IMPORTS_ONLY = (
    '{{"name": "write_file", "arguments": {"path": "tests/test_mathx.py", "content": "from '
    'mathx import add, subtract, multiply, divide"}}}'
)
RUN = '{{"name": "run_cmd", "arguments": {"cmd": "python -m pytest tests/test_mathx.py"}}}'
# What a write with a test looks like (not a verbatim reply).
WITH_TEST = (
    '{"name": "write_file", "arguments": {"path": "tests/test_mathx.py", "content": "from '
    'mathx.add import add\\n\\n\\ndef test_add():\\n    assert add(2, 3) == 5\\n"}}'
)


def _package(ws: Path) -> None:
    (ws / "mathx").mkdir()
    (ws / "mathx" / "__init__.py").write_text(
        "from mathx.add import add\n\n\ndef subtract(a, b):\n    return a - b\n\n\n"
        "def multiply(a, b):\n    return a * b\n\n\ndef divide(a, b):\n    return a / b\n"
    )
    (ws / "mathx" / "add.py").write_text("def add(a, b):\n    return a + b\n")


def test_a_test_file_without_a_test_does_not_end_its_write_step(tmp_path: Path) -> None:
    _package(tmp_path)
    replies = [{"content": r} for r in (IMPORTS_ONLY, WITH_TEST, RUN)]
    ran, _ = small_model_goal(tmp_path, MATHX, plan_rule((MATHX, [TESTS_STEP, RUN_STEP])), replies)
    assert ran.returncode == 0, ran.stderr + ran.stdout
    writes = [r for r in records_of(tmp_path, "action_finished") if r["tool"] == "write_file"]
    assert (
        "but it defines no test function: pytest runs only functions named test_..., e.g. "
        "`def test_add():` with an assert on what add(...) returns"
    ) in writes[0]["result"]
    assert "SUBTASK COMPLETE" not in writes[0]["result"]
    # The step ends with the write that has a test, and the run after it passes.
    done = records_of(tmp_path, "subtask_completed")
    assert [d["by"] for d in done][:1] == ["write"]
    assert done[0]["evidence"] == [writes[1]["seq"]]
    runs = [r for r in records_of(tmp_path, "action_finished") if r["tool"] == "run_cmd"]
    assert "1 passed" in runs[0]["result"]


def test_a_test_run_that_ran_nothing_goes_back_to_a_write_of_its_test_file(
    tmp_path: Path,
) -> None:
    _package(tmp_path)
    goal = "Write pytest tests for mathx.add in tests/test_mathx.py; the tests must pass"
    replies = [{"content": r} for r in (IMPORTS_ONLY, RUN, RUN, WITH_TEST, RUN)]
    ran, _ = small_model_goal(
        tmp_path, goal, plan_rule((goal, [RUN_STEP])), replies, LOCALAGENT_MAX_ROUNDS="8"
    )
    assert ran.returncode == 0, ran.stderr + ran.stdout
    runs = [r for r in records_of(tmp_path, "action_finished") if r["tool"] == "run_cmd"]
    first = runs[0]
    assert "NOTE: no test ran: tests/test_mathx.py defines no test function." in first["result"]
    assert first["facts"]["empty"] == ["tests/test_mathx.py"]
    # The same run sent again, nothing changed, fails the step without running ...
    (failed,) = records_of(tmp_path, "subtask_failed")
    assert failed["reason"] == "no test ran: tests/test_mathx.py defines no test function"
    assert runs[1]["seq"] > failed["seq"]
    # ... and the plan made without the model goes back to a write of the test file.
    (handback,) = [p for p in records_of(tmp_path, "plan") if p.get("replace_from")]
    assert handback["by"] == "handback"
    assert handback["tasks"][0]["subtasks"][0] == (
        "write_file tests/test_mathx.py again with test functions (def test_...) that assert "
        "what the code returns"
    )
    assert "1 passed" in runs[-1]["result"]


@pytest.mark.parametrize(
    ("source", "empty"),
    [
        ("from mathx import add, subtract, multiply, divide", True),
        ("import mathx\n\ndef helper():\n    return 1\n", True),
        ("def test_add():\n    assert 1 + 1 == 2\n", False),
        ("import unittest\n\nclass Maths(unittest.TestCase):\n    def test_add(self):\n"
         "        self.assertEqual(1 + 1, 2)\n", False),
        ("async def test_later():\n    pass\n", False),
    ],
)  # fmt: skip
def test_what_counts_as_a_test(source: str, empty: bool) -> None:
    assert notests.lacks_tests(source, "tests/test_mathx.py") is empty
    assert notests.lacks_tests(source, "mathx/helpers.py") is False  # not a test file


def test_the_test_files_a_run_covers(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text("import os\n")
    (tmp_path / "tests" / "test_b.py").write_text("def test_b():\n    pass\n")
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "test_x.py").write_text("import os\n")
    out = "no tests ran in 0.01s"
    assert notests.empty_files(tmp_path, "python -m pytest", 5, out) == ["tests/test_a.py"]
    assert notests.empty_files(tmp_path, "pytest tests", 5, out) == ["tests/test_a.py"]
    assert notests.empty_files(tmp_path, "pytest tests/test_b.py", 5, out) == []
    assert notests.empty_files(tmp_path, "python -m pytest", 1, "1 failed") == []
    assert notests.empty_files(tmp_path, "python tests/test_a.py", 5, out) == []


def test_a_test_run_that_ran_nothing_fails_only_for_a_test_file_without_tests() -> None:
    result = "exit code 5\ncollected 0 items\n\nno tests ran in 0.01s"
    cmd = "python -m pytest tests/test_mathx.py"
    assert outcome(cmd, result) == (None, "inconclusive: no tests ran")
    assert outcome(cmd, result, empty="tests/test_mathx.py") == (
        False,
        "no tests ran: tests/test_mathx.py defines no test function",
    )


# The CPU's mathx run (the 1.5B), round 2 verbatim: `import mathx` and four asserts, written
# four times in all, told each time that pytest runs only functions named test_...
BARE_ASSERTS = (
    '{{"name": "write_file", "arguments": {"path": "tests/test_mathx.py", "content": "import '
    "mathx\\n\\nassert mathx.add(1, 2) == 3\\nassert mathx.subtract(3, 1) == 2\\nassert mathx."
    'multiply(2, 3) == 6\\nassert mathx.divide(6, 2) == 3"}}}'
)


def test_asserts_written_outside_a_test_are_written_as_one(tmp_path: Path) -> None:
    _package(tmp_path)
    replies = [{"content": r} for r in (BARE_ASSERTS, RUN)]
    ran, _ = small_model_goal(tmp_path, MATHX, plan_rule((MATHX, [TESTS_STEP, RUN_STEP])), replies)
    writes = [r for r in records_of(tmp_path, "action_finished") if r["tool"] == "write_file"]
    assert (
        "; it defined no test function, and pytest runs only those: its code below the "
        "imports was written as the test `def test_mathx():`"
    ) in writes[0]["result"], writes[0]["result"]
    assert "SUBTASK COMPLETE" in writes[0]["result"]
    assert (tmp_path / "tests" / "test_mathx.py").read_text() == (
        "import mathx\n\n\ndef test_mathx():\n    assert mathx.add(1, 2) == 3\n"
        "    assert mathx.subtract(3, 1) == 2\n    assert mathx.multiply(2, 3) == 6\n"
        "    assert mathx.divide(6, 2) == 3\n"
    )
    run = records_of(tmp_path, "action_finished")[-1]
    assert "1 passed" in run["result"], run["result"]
    assert ran.returncode == 0, ran.stderr + ran.stdout


TRY_CHECKED = (
    "import mathx\n\n# Test divide\nassert mathx.divide(10, 2) == 5\nassert mathx.divide(15, 3) =="
    " 5\nassert mathx.divide(20, 4) == 5\n\n# Test divide by zero\ntry:\n    mathx.divide(10, 0)"
    "\nexcept ValueError as e:\n    assert str(e) == 'Cannot divide by zero'\nelse:\n    assert"
    " False, 'Expected ValueError to be raised'\n"
)


@pytest.mark.parametrize(
    ("source", "wrapped"),
    [
        ("import mathx\n", False),  # nothing to put in a test
        ("import m\n\n\ndef helper():\n    return 1\n\n\nassert helper()\n", False),
        ("import m\nfor x in m.xs:\n    assert x\n", False),  # a loop: not only checks
        ('import m\nassert m.f() == """a\nb"""\n', False),  # indented, the string would change
        ("import m\nimport pytest\nwith pytest.raises(ValueError):\n    m.f(0)\n", True),
        ('"""Tests."""\nimport m\n\n# one\nassert m.f()\n', True),
        # A raise checked by try/except/else (mathx-1 on the CPU, its end verbatim): the
        # 1.5B wrote the file so three times, then through a replan, until the round limit.
        (TRY_CHECKED, True),
        ("import m\ntry:\n    m.f()\nexcept ValueError:\n    for x in m.x:\n        x()\n", False),
    ],
)
def test_which_test_files_get_their_asserts_in_a_test(source: str, wrapped: bool) -> None:
    made = notests.wrapped(source, "tests/test_m.py")
    assert (made is not None) is wrapped
    assert notests.wrapped(source, "m.py") is None  # not a test file
