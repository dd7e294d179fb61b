"""The subtask that is the goal itself ends when every check the goal names passed.

Qwen2.5-Coder-1.5B's mathx on the H200 (mathx-13) ran as one task, the goal (its plan
quoted code that does not compile): its tests passed, then `ruff check
tests/test_mathx.py`, with nothing changed since; it never called mark_subtask_complete,
ran pip, pytest and ruff until the round limit, and the goal failed with the package
working. Its round replies replayed verbatim through the real CLI on the scripted fake
server (its two `pip install pytest` runs left out: they change nothing)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
from support import plan_rule, records_of, small_model_goal

GOAL = (
    "Create a Python package mathx with the functions add, subtract, multiply and divide "
    "(divide raises ValueError when dividing by zero), with pytest tests in "
    "tests/test_mathx.py; the tests must pass with pytest and ruff check must be clean"
)
REPLIES = [
    (
        '{{"name": "create_package", "arguments": {"package_name": "mathx", "functions": ["add"'
        ', "subtract", "multiply", "divide"], "test_files": ["tests/test_mathx.py"]}}}'
    ),
    (
        '{{"name": "write_file", "arguments": {"path": "mathx/__init__.py", "content": "from . '
        'import add, subtract, multiply, divide"}}}}'
    ),
    (
        '{{"name": "write_file", "arguments": {"path": "mathx/add.py", "content": "def add(a, b'
        '): return a + b"}}}}'
    ),
    (
        '{{"name": "write_file", "arguments": {"path": "mathx/subtract.py", "content": "def sub'
        'tract(a, b): return a - b"}}}}'
    ),
    (
        '{{"name": "write_file", "arguments": {"path": "mathx/multiply.py", "content": "def mul'
        'tiply(a, b): return a * b"}}}}'
    ),
    (
        '{{"name": "write_file", "arguments": {"path": "mathx/divide.py", "content": "def divid'
        "e(a, b): if b == 0: raise ValueError('Cannot divide by zero') return a / b\"}}}}"
    ),
    (
        '{{"name": "write_file", "arguments": {"path": "tests/test_mathx.py", "content": "impor'
        "t mathx\\n\\ndef test_add():\\n    assert mathx.add(1, 2) == 3\\n\\ndef test_subtract("
        "):\\n    assert mathx.subtract(1, 2) == -1\\n\\ndef test_multiply():\\n    assert math"
        'x.multiply(1, 2) == 2\\n\\ndef test_divide():\\n    assert mathx.divide(1, 2) == 0.5"}'
        "}}}"
    ),
    '{{"name": "run_cmd", "arguments": {"cmd": "pytest tests/test_mathx.py"}}}}',
    '{{"name": "run_cmd", "arguments": {"cmd": "pytest tests/test_mathx.py"}}}}',
    '{{"name": "run_cmd", "arguments": {"cmd": "ruff tests/test_mathx.py"}}}}',
    '{{"name": "run_cmd", "arguments": {"cmd": "ruff check tests/test_mathx.py"}}}}',
    '{{"name": "run_cmd", "arguments": {"cmd": "ruff check --fix tests/test_mathx.py"}}}}',
    '{{"name": "run_cmd", "arguments": {"cmd": "pytest tests/test_mathx.py"}}}}',
    '{{"name": "run_cmd", "arguments": {"cmd": "ruff tests/test_mathx.py"}}}}',
    '{{"name": "run_cmd", "arguments": {"cmd": "ruff check tests/test_mathx.py"}}}}',
]


def ruff_found() -> bool:
    """Whether the agent's commands find ruff and pytest as programs (its PATH starts
    with this interpreter's folder, as `support.cli_env` makes it)."""
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return all(shutil.which(name, path=path) for name in ("ruff", "pytest"))


def replay(ws: Path, replies: list[str]) -> None:
    # Its pytest program imported the workspace's package from the second run on; an
    # empty conftest.py at the root makes any pytest do so (rootdir's conftest goes first
    # on the import path).
    (ws / "conftest.py").write_text("")
    rounds = str(len(replies) + 1)
    small_model_goal(
        ws, GOAL, plan_rule((GOAL, [GOAL])), [{"content": r} for r in replies],
        LOCALAGENT_MAX_ROUNDS=rounds,
    )  # fmt: skip


@pytest.mark.skipif(not ruff_found(), reason="no ruff program")
def test_the_goal_s_subtask_ends_when_its_tests_and_ruff_passed(tmp_path: Path) -> None:
    replay(tmp_path, REPLIES)
    runs = [r for r in records_of(tmp_path, "action_finished") if r["tool"] == "run_cmd"]
    # Its `ruff check --fix` changed the test file after the tests passed: the next
    # pytest run ends it, the fixed file clean by ruff's own word ("0 remaining").
    assert runs[-1]["args"] == {"cmd": "pytest tests/test_mathx.py"}
    assert runs[-2]["args"] == {"cmd": "ruff check --fix tests/test_mathx.py"}
    (done,) = records_of(tmp_path, "subtask_completed")
    assert done["by"] == "run"
    assert done["reason"] == (
        "`python -m pytest tests/test_mathx.py` and `ruff check --fix tests/test_mathx.py` "
        "passed in "
        "this subtask with nothing changed since: every check the goal names passed, which "
        "is all the subtask asks"
    )
    assert "SUBTASK COMPLETE" in runs[-1]["result"]
    assert records_of(tmp_path, "goal_completed")


@pytest.mark.skipif(not ruff_found(), reason="no ruff program")
def test_tests_alone_do_not_end_it_when_the_goal_names_ruff_too(tmp_path: Path) -> None:
    # Up to the first passing pytest run and the ruff runs that failed after it.
    replay(tmp_path, REPLIES[:11])
    assert not records_of(tmp_path, "subtask_completed")
    assert not records_of(tmp_path, "goal_completed")
