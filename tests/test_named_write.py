"""A write step that names two files writes the one it calls "named" (or "called").
Qwen2.5-Coder-1.5B's refactor plan on the CPU, verbatim through the real CLI on the
scripted fake server: "Write a named file named 'area.py' in the same folder as
shapes.py." Its write of area.py did not end the step (two files named, so no file was
the step's), nor did the same write sent again unchanged, twice, and the third was
blocked: the step failed."""

from __future__ import annotations

from pathlib import Path

import pytest
from shapes_support import GOAL, SHAPES, TESTS
from support import plan_rule, records_of, small_model_goal

from localagent.loop.subtasks import written_file

STEP = "Write a named file named 'area.py' in the same folder as shapes.py."
# Rounds 1 and 2 of refactor-1 (code of 2d8b7ab), the same reply twice, verbatim.
AREA = (
    '{{"name": "write_file", "arguments": {"path": "area.py", "content": "def area(kind, size)'
    ":\\n    if kind == 'circle':\\n        return 3.14 * size ** 2\\n    elif kind == 'rectan"
    "gle':\\n        return size * size\\n    elif kind == 'triangle':\\n        return 0.5 * "
    'size * size\\n"}}}'
)


def test_the_write_of_the_file_a_step_calls_named_ends_it(tmp_path: Path) -> None:
    (tmp_path / "shapes.py").write_text(SHAPES)
    (tmp_path / "test_shapes.py").write_text(TESTS)
    steps = [STEP, "run python -m pytest"]
    rounds = [{"content": AREA}, {"content": AREA}]
    small_model_goal(tmp_path, GOAL, plan_rule((GOAL, steps)), rounds, LOCALAGENT_MAX_ROUNDS="2")
    first, again = records_of(tmp_path, "action_finished")
    assert again["result"].startswith("'area.py' already has this content"), again["result"]
    (done, *_) = records_of(tmp_path, "subtask_completed")
    assert done["by"] == "write" and done["evidence"] == [first["seq"]], done
    assert "SUBTASK COMPLETE: 'Write a named file named 'area.py'" in again["result"]


@pytest.mark.parametrize(
    ("step", "written"),
    [
        (STEP, "area.py"),
        ("Write a file called tests/test_x.py for x.py", "tests/test_x.py"),
        ("Write a file named c.py beside a.py and b.py", "c.py"),
        ("write_file a.py and b.py", ""),
        ("Write a.py named after b.py", ""),  # "named" names no file here
    ],
)
def test_the_file_a_write_step_writes(step: str, written: str) -> None:
    assert written_file(step) == written
