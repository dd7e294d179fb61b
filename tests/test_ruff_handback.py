"""A verdict that found only the goal's ruff check failing on what ruff fixes itself goes
back to that fix (small profile), not to the model's replan. Qwen2.5-Coder-1.5B's mathx
on the CPU: its tests passed and it ran `ruff check --fix tests/test_mathx.py`; the
verification's `ruff check .` then failed on mathx/__init__.py's import block, its note
naming `ruff check --fix .`, and the model's replan planned the test file anew (90 s of
parameters that held no call)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support import VERIFIED, plan_rule, records_of, small_model_goal
from test_goal_checks_done import GOAL, ruff_found

from localagent.loop.subtasks import ran_by

# The package and tests as that run had them when its verification began, verbatim.
INIT = (
    "from math import *\n\ndef add(x, y):\n    return x + y\n\ndef subtract(x, y):\n"
    "    return x - y\n\ndef multiply(x, y):\n    return x * y\n\ndef divide(x, y):\n"
    "    if y == 0:\n        raise ValueError('Cannot divide by zero')\n    return x / y"
)
TESTS = (
    "import mathx\n\n\ndef test_add():\n    assert mathx.add(1, 2) == 3\n\n"
    "def test_subtract():\n    assert mathx.subtract(1, 2) == -1\n"
)
STEP = "run python -m pytest tests/test_mathx.py"


def _run(cmd: str) -> dict[str, str]:
    return {"content": '{{"name": "run_cmd", "arguments": {"cmd": "' + cmd + '"}}}'}


@pytest.mark.skipif(not ruff_found(), reason="no ruff program")
def test_a_ruff_check_that_failed_on_what_ruff_fixes_goes_back_to_that_fix(
    tmp_path: Path,
) -> None:
    (tmp_path / "mathx").mkdir()
    (tmp_path / "mathx" / "__init__.py").write_text(INIT)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_mathx.py").write_text(TESTS)
    (tmp_path / "conftest.py").write_text("")
    # The import order checked whatever ruff's version checks by default.
    (tmp_path / "ruff.toml").write_text('[lint]\nselect = ["I"]\n')
    replies = [_run(STEP.removeprefix("run ")), _run("ruff check --fix ."), _run("ruff check .")]
    small_model_goal(
        tmp_path,
        GOAL,
        plan_rule((GOAL, [STEP])),
        replies,
        VERIFIED,
        LOCALAGENT_VERIFY="1",
        LOCALAGENT_MAX_ROUNDS="5",
    )
    (verdict, *_) = records_of(tmp_path, "verdict")
    # ruff's own last line, not the note after it (its words differ between versions)
    assert len(verdict["unmet"]) == 1, verdict
    assert re.fullmatch(
        r"goal check `ruff check \.` failed: exit code 1: \[\*\] 1 fixable with (the )?`--fix`.*",
        verdict["unmet"][0],
    ), verdict
    back = records_of(tmp_path, "plan")[-1]
    assert back["by"] == "handback" and back["tasks"] == [
        {
            "description": "run ruff check --fix .",
            "subtasks": ["run ruff check --fix .", "run ruff check ."],
        }
    ], back
    done = [d["reason"] for d in records_of(tmp_path, "subtask_completed")]
    assert len(done) == 3 and "`ruff check .` ran and succeeded" in done[-1], done
    assert records_of(tmp_path, "goal_completed")
    assert (tmp_path / "mathx" / "__init__.py").read_text().startswith("from math import *\n\n\n")


@pytest.mark.parametrize(
    ("step", "runs"),
    [
        ("run ruff check --fix .", "ruff"),
        ("run python wordcount.py --lines sample.txt", "wordcount.py"),
        ("run python x.py and fix it", ""),  # a fix is still more than a run
    ],
)
def test_an_option_is_no_word_of_what_a_run_step_does(step: str, runs: str) -> None:
    assert ran_by(step) == runs


# The 1.5B's mathx test file at its round 16 on the CPU (9d02f6f), and its ruff run.
SHORT_TESTS = (
    '{{"name": "write_file", "arguments": {"path": "tests/test_mathx.py", "content": "from m'
    "athx import add, subtract, multiply, divide\\ndef test_add():\\n    assert add(1, 2) == "
    '3"}}}}'
)
RUFF_RUN = '{{"name": "run_cmd", "arguments": {"cmd": "ruff tests/test_mathx.py"}}}}'


@pytest.mark.skipif(not ruff_found(), reason="no ruff program")
def test_a_ruff_step_failed_on_what_ruff_fixes_goes_back_to_that_fix(tmp_path: Path) -> None:
    """Told that ruff fixes its import block itself, and given the call to send, the
    1.5B ran `ruff tests/test_mathx.py` until blocked, twice, and the round limit came.
    The same run sent again with nothing changed fails the step at once (mathx-1 on the
    CPU sent `ruff check` twice more and was blocked three times first: five rounds)."""
    (tmp_path / "ruff.toml").write_text('[lint]\nselect = ["I"]\n')
    steps = ["write_file tests/test_mathx.py with its tests", "run ruff check tests/test_mathx.py"]
    rounds = [SHORT_TESTS, RUFF_RUN, RUFF_RUN]
    rounds += [_run("ruff check --fix tests/test_mathx.py")["content"], RUFF_RUN]
    small_model_goal(
        tmp_path,
        GOAL,
        plan_rule((GOAL, steps)),
        [{"content": r} for r in rounds],
        LOCALAGENT_MAX_ROUNDS="9",
    )
    failed = records_of(tmp_path, "subtask_failed")
    assert len(failed) == 1, failed
    # ruff's own last line, whose words differ between versions
    assert re.fullmatch(
        r"`ruff check tests/test_mathx\.py` found only what ruff fixes itself \(exit code 1: "
        r"\[\*\] 1 fixable with (the )?`--fix`.*\), and nothing changed since",
        failed[0]["reason"],
    ), failed
    runs = [r for r in records_of(tmp_path, "action_finished") if r["tool"] == "run_cmd"]
    assert len(runs) == 3, [r["args"] for r in runs]  # the first check, the fix, the check
    back = records_of(tmp_path, "plan")[-1]
    assert back["by"] == "handback" and back["tasks"][0]["subtasks"] == [
        "run ruff check --fix tests/test_mathx.py",
        "run ruff check tests/test_mathx.py",
    ], back
    assert records_of(tmp_path, "goal_completed"), records_of(tmp_path, "goal_failed")
    assert (
        (tmp_path / "tests" / "test_mathx.py")
        .read_text()
        .startswith("from mathx import add, divide, multiply, subtract\n\n\n")
    )
