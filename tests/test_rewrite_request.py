"""The function the tests show wrong is asked for on its own (small profile): the
request, and its reply made the round's one call.

Qwen2.5-Coder-1.5B's fixtest on the H200 (six runs of six failed): the model ran the
tests, read stats.py, then sent `{"old": "median([4, 1, 3, 2])", "new": "median([4, 1, 3,
2])"}` until it was blocked, in every run. The first two rounds below are fixtest-2's,
verbatim; the third is the reply of the same model (the CPU, llama-server) to the request
this round makes now, verbatim, four times of four the same."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support import (
    VERIFIED,
    plan_rule,
    pytest_in,
    real_goal,
    records_of,
    round_calls,
    small_model_goal,
)

from localagent.loop.rewrite import Rewrite, call, function_lines
from localagent.loop.rundone import fixed_by_tests

FIXTEST = real_goal("fixtest")
GOAL, STATS, TESTS = FIXTEST.text, FIXTEST.seed["stats.py"], FIXTEST.seed["test_stats.py"]
PYTEST = '{{"name": "run_cmd", "arguments": {"cmd": "python -m pytest"}}}}'
READ = '{{"name": "read_file", "arguments": {"path": "stats.py"}}}}'
FIXED = (
    "```python\ndef median(values):\n    ordered = sorted(values)\n    middle = len(ordered) "
    "// 2\n    if len(ordered) % 2 == 0:\n        return (ordered[middle - 1] + ordered[middle"
    "]) / 2\n    else:\n        return ordered[middle]\n```"
)
STEPS = [
    "run python -m pytest to see what fails",
    "read_file stats.py",
    "replace_in_file stats.py to fix the bug",
    "run python -m pytest",
]


def test_the_function_the_tests_show_wrong_is_asked_for_whole(tmp_path: Path) -> None:
    (tmp_path / "stats.py").write_text(STATS)
    (tmp_path / "test_stats.py").write_text(TESTS)
    rounds = [{"content": r} for r in (PYTEST, READ, FIXED, PYTEST)]
    ran, requests = small_model_goal(
        tmp_path, GOAL, plan_rule((GOAL, STEPS)), rounds, VERIFIED,
        LOCALAGENT_MAX_ROUNDS="6", LOCALAGENT_VERIFY="1",
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    asked = [r for r in requests if "again, whole, fixed" in str(r["messages"])]
    assert len(asked) == 1 and not asked[0].get("tools")
    said = asked[0]["messages"][-1]["content"]
    assert "The tests fail: median([4, 1, 3, 2]) must return 2.5 (it returned 3)." in said
    assert "def test_median_even():\n    assert median([4, 1, 3, 2]) == 2.5" in said
    third = round_calls(tmp_path)[2]
    assert third["recogniser"] == "rewrite" and third["reply"] == FIXED
    assert [c["name"] for c in third["tool_calls"]] == ["replace_in_file"]
    # Later rounds show it as the call it made, not as a code block: shown the code block,
    # the 1.5B answered `run python -m pytest` with a code block too (the CPU).
    fourth = requests[requests.index(asked[0]) + 1]["messages"]
    shown = [m["content"] for m in fourth if m["role"] == "assistant"]
    assert shown[-1] == third["content"] and shown[-1].startswith('{"name": "replace_in_file"')
    assert "```" not in json.dumps(shown)
    assert (tmp_path / "test_stats.py").read_text() == TESTS
    tests = pytest_in(tmp_path)
    assert tests.returncode == 0, tests.stdout
    (done,) = records_of(tmp_path, "goal_completed")
    assert done["verification"] == "verified"


def _rewrite(lines: str = "") -> Rewrite:
    lines = lines or function_lines(STATS, "median")
    return Rewrite("stats.py", "median", STATS, lines, "median(...) must return 2.5", "")


def test_the_reply_s_function_replaces_the_function_s_lines() -> None:
    found = call(_rewrite(), FIXED)
    assert found is not None and found.name == "replace_in_file"
    assert found.arguments["old"] == function_lines(STATS, "median")
    assert found.arguments["new"].startswith("def median(values):\n    ordered = sorted(values)")
    # a whole file in the reply: its function alone
    assert call(_rewrite(), f"```python\n{STATS.replace('[middle]', '[middle - 1]')}```")
    assert call(_rewrite(), f"```python\n{STATS}```") is None  # the same lines
    assert call(_rewrite(), "```python\ndef median(values:\n```") is None  # no function
    assert call(_rewrite(), "I would sort the values first.") is None


# The CPU run of this code (1.5B): its plan had "replace_in_file stats.py to fix the bug"
# twice. The first was the request above (its reply, verbatim); for the second the model
# sent the fix's new text as both old and new (verbatim), "the same text; nothing would
# change", until it was blocked.
FIXED_CPU = (
    "```python\ndef median(values):\n    ordered = sorted(values)\n    middle = len(ordered) "
    "// 2\n    if len(ordered) % 2 == 1:\n        return ordered[middle]\n    else:\n        "
    "return (ordered[middle - 1] + ordered[middle]) / 2\n```"
)
SAME = (
    '{{"name": "replace_in_file", "arguments": {"path": "stats.py", "old": "def median(valu'
    "es):\\n    ordered = sorted(values)\\n    middle = len(ordered) // 2\\n    if len(order"
    "ed) % 2 == 1:\\n        return ordered[middle]\\n    else:\\n        return (ordered[mid"
    'dle - 1] + ordered[middle]) / 2", "new": "def median(values):\\n    ordered = sorted(va'
    "lues)\\n    middle = len(ordered) // 2\\n    if len(ordered) % 2 == 1:\\n        return "
    "ordered[middle]\\n    else:\\n        return (ordered[middle - 1] + ordered[middle]) / 2"
    '"}}}}'
)


def fixed_in_two_steps(ws: Path, steps: list[str], replies: tuple[str, ...]) -> list[Any]:
    """The goal planned as `steps` and then a run of the tests, the model sending
    `replies`, its end verified: the `subtask_completed` records."""
    (ws / "stats.py").write_text(STATS)
    (ws / "test_stats.py").write_text(TESTS)
    plan = plan_rule(
        (GOAL, steps), ("Run python -m pytest to check if the tests pass", ["run python -m pytest"])
    )
    ran, _ = small_model_goal(
        ws, GOAL, plan, [{"content": r} for r in replies], VERIFIED,
        LOCALAGENT_MAX_ROUNDS="6", LOCALAGENT_VERIFY="1",
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    return records_of(ws, "subtask_completed")


def test_an_edit_the_file_has_already_ends_a_second_edit_step(tmp_path: Path) -> None:
    steps = [*STEPS[:3], "replace_in_file stats.py to fix the bug"]
    done = fixed_in_two_steps(tmp_path, steps, (PYTEST, READ, FIXED_CPU, SAME, PYTEST))
    assert [d["by"] for d in done] == ["run", "read", "write", "write", "run"]
    assert (
        done[3]["reason"]
        == "stats.py was already written by this run and is written again unchanged"
    )
    assert not records_of(tmp_path, "action_blocked") and not records_of(tmp_path, "subtask_failed")


def test_a_fix_step_after_the_tests_pass_has_nothing_to_fix(tmp_path: Path) -> None:
    """fixtest-6 on the H200: after the fix, the tests passed, and the plan's second "fix
    the bug" step rewrote the odd case wrong; the tests still passed. That step is done
    by the passing run now, and the model is not asked."""
    steps = [*STEPS, "replace_in_file stats.py to fix the bug"]
    done = fixed_in_two_steps(tmp_path, steps, (PYTEST, READ, FIXED_CPU, PYTEST, PYTEST))
    assert [d["by"] for d in done] == ["run", "read", "write", "run", "run", "run"]
    assert done[4]["reason"].startswith("`python -m pytest` passed (3 passed")
    assert done[4]["reason"].endswith(
        "with nothing changed since: the step has nothing left to fix"
    )
    # nor for the run after it: it passed with nothing changed since (`rundone.ran_already`)
    assert done[5]["reason"].startswith("`python -m pytest` already succeeded in this run")
    assert len(round_calls(tmp_path)) == 4


def test_which_fix_steps_the_passing_tests_end() -> None:
    """Only a step the tests show done: not a linter's findings, nor a step that is no
    edit of one file."""
    assert fixed_by_tests("replace_in_file stats.py to fix the bug")
    assert fixed_by_tests("replace_in_file mathx/divide.py to fix the failing test: divide(1, 0)")
    assert not fixed_by_tests("replace_in_file tests/test_mathx.py to fix the ruff errors")
    assert not fixed_by_tests("replace_in_file mathx/__init__.py to fix its unused imports")
    assert not fixed_by_tests("replace_in_file shapes.py so that report uses area")
