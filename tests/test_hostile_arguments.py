"""Arguments that are no object (a JSON string cut short, a list), sent three times so
that the loop guard blocks the third: each is refused with the tool's word, and the run
goes on (the checks made of a blocked call asked `.get` of them: an internal error)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import plan_rule, records_of, small_model_goal

TOOLS = [
    *("run_cmd", "read_file", "write_file", "replace_in_file", "search_files", "list_dir"),
    *("read_output", "mark_subtask_complete"),
]
STEPS = {
    "run_cmd": "run python -m pytest",
    "read_file": "read_file stats.py",
    "write_file": "write_file stats.py with its code",
    "replace_in_file": "replace_in_file stats.py to fix the bug",
    "search_files": "search_files stats.py for median",
    "list_dir": "list_dir .",
    "read_output": "read_output 1",
    "mark_subtask_complete": "write_file stats.py with its code",
}


CUT, LIST = '{"cmd": ', '["stats.py", 1]'


@pytest.mark.parametrize(
    ("tool", "shape"), [*((tool, CUT) for tool in TOOLS), ("run_cmd", LIST), ("read_file", LIST)]
)
def test_arguments_that_are_no_object_never_stop_the_run(
    tmp_path: Path, tool: str, shape: str
) -> None:
    (tmp_path / "stats.py").write_text("def median(values):\n    return values[0]\n")
    plan = plan_rule(("Fix stats.py", [STEPS[tool]]))
    bad = {"tool_calls": [{"name": tool, "arguments": shape}]}
    goal = "Fix the bug in stats.py: median is wrong"
    ran, _ = small_model_goal(tmp_path, goal, plan, [bad] * 3, LOCALAGENT_MAX_ROUNDS="3")
    assert "internal error" not in ran.stderr + ran.stdout, ran.stderr
    if tool == "mark_subtask_complete":  # a claim, not an action: refused each time
        assert len(records_of(tmp_path, "feedback")) >= 3
    else:
        assert records_of(tmp_path, "action_blocked"), "the third call is blocked"
