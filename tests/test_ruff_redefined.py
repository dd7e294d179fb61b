"""A test function defined twice: ruff reports it (F811) and cannot fix it itself, so its
run says which edit renames the second. Qwen2.5-Coder-1.5B's mathx on the CPU wrote
`test_divide` twice; `ruff check --fix` failed on it, and the model sent that command
again until it was blocked, through a replan, until the round limit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import plan_rule, records_of, small_model_goal
from test_goal_checks_done import GOAL, ruff_found

# The test file as that run had it, after its `ruff check --fix`, verbatim.
TESTS = """\
import pytest

from mathx import add, divide, multiply, subtract


@pytest.mark.parametrize('a, b, expected', [(1, 2, 3), (3, 4, 7), (5, 6, 11)])
def test_add(a, b, expected):
    assert add(a, b) == expected

@pytest.mark.parametrize('a, b, expected', [(1, 2, -1), (3, 4, -1), (5, 6, -1)])
def test_subtract(a, b, expected):
    assert subtract(a, b) == expected

@pytest.mark.parametrize('a, b, expected', [(1, 2, 2), (3, 4, 12), (5, 6, 30)])
def test_multiply(a, b, expected):
    assert multiply(a, b) == expected

@pytest.mark.parametrize('a, b, expected', [(1, 2, 0), (3, 4, 0), (5, 6, 0)])
def test_divide(a, b, expected):
    with pytest.raises(ValueError):
        divide(a, b)

@pytest.mark.parametrize('a, b, expected', [(1, 2, 0.5), (3, 4, 0.75), (5, 6, 0.8333333333333334)])
def test_divide(a, b, expected):
    assert divide(a, b) == expected"""
SECOND = (
    "@pytest.mark.parametrize('a, b, expected', [(1, 2, 0.5), (3, 4, 0.75), "
    "(5, 6, 0.8333333333333334)])\ndef test_divide(a, b, expected):"
)
RENAMED = SECOND.replace("def test_divide(", "def test_divide_2(")
RUFF_FIX = '{{"name": "run_cmd", "arguments": {"cmd": "ruff check --fix"}}}}'  # verbatim


@pytest.mark.skipif(not ruff_found(), reason="no ruff program")
def test_a_test_defined_twice_gets_the_edit_that_renames_the_second(tmp_path: Path) -> None:
    (tmp_path / "mathx").mkdir()
    (tmp_path / "mathx" / "__init__.py").write_text(
        "def add(a, b):\n    return a + b\n\n\ndef subtract(a, b):\n    return a - b\n\n\n"
        "def multiply(a, b):\n    return a * b\n\n\ndef divide(a, b):\n    return a / b\n"
    )
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_mathx.py").write_text(TESTS)
    (tmp_path / "ruff.toml").write_text('[lint]\nselect = ["F"]\n')
    edit = {"path": "tests/test_mathx.py", "old": SECOND, "new": RENAMED}
    replies = [
        {"content": RUFF_FIX},
        {"content": json.dumps({"name": "replace_in_file", "arguments": edit})},
        {"content": '{"name": "run_cmd", "arguments": {"cmd": "ruff check"}}'},
    ]
    small_model_goal(
        tmp_path, GOAL, plan_rule((GOAL, ["run ruff check"])), replies, LOCALAGENT_MAX_ROUNDS="3"
    )
    first, *rest = [r for r in records_of(tmp_path, "action_finished") if r["tool"] == "run_cmd"]
    assert "F811" in first["result"]
    call = json.dumps({"name": "replace_in_file", "arguments": edit})
    assert (
        "NOTE: tests/test_mathx.py defines test_divide twice (lines 19 and 24): the first never "
        f"runs, and ruff does not fix that itself. To rename the second, send: {call}"
    ) in first["result"]
    assert "def test_divide_2(a, b, expected):" in (tmp_path / "tests/test_mathx.py").read_text()
    assert rest and rest[-1]["ok"] is True, rest
    assert records_of(tmp_path, "subtask_completed")
