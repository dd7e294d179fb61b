"""A function the goal says to use, not called where it says: the verdict finds it, and
(small profile) the replan is the hand-back's write that makes those functions call it.

Qwen2.5-Coder-1.5B's refactor on the CPU, verbatim: its plan's edit step "to move the
area formulas into one function area(kind, size)" put `def area` in place of shapes.py's
docstring, and the tests passed as before. The verdict found area unused; told only
that, the model planned "replace_in_file shapes.py to add the function area(kind,
size)" twice, for an area that was there, and the goal failed."""

from __future__ import annotations

from pathlib import Path

from shapes_support import GOAL, SHAPES, TESTS
from support import VERIFIED, plan_rule, records_of, small_model_goal

from localagent.verify.named import unused

PLAN = [
    "read_file shapes.py",
    "replace_in_file shapes.py to move the area formulas into one function area(kind, size)",
    "run python -m pytest",
]
READ = '{{"name": "read_file", "arguments": {"path": "shapes.py"}}}'
AREA_FOR_DOCSTRING = (
    '{{"name": "replace_in_file", "arguments": {"path": "shapes.py", "old": """Areas of shape'
    's given as (kind, size) pairs; unknown kinds are left out."""}, "new": """def area(kind'
    ', size):\n    if kind == "circle":\n        return 3.14159 * size * size\n    elif kind'
    ' == "square":\n        return size * size\n    else:\n        return None  # or raise an'
    ' error, depending on your preference"""}}}'
)
TESTS_RUN = '{{"name": "run_cmd", "arguments": {"cmd": "python -m pytest"}}}'
AREA = (
    "def area(kind, size):\n    if kind == 'circle':\n        return 3.14159 * size * size\n"
    "    if kind == 'square':\n        return size * size\n    return 0.0\n\n\n"
)


def test_an_unused_function_the_goal_names_goes_back_to_the_write_that_calls_it(
    tmp_path: Path,
) -> None:
    (tmp_path / "shapes.py").write_text(SHAPES)
    (tmp_path / "test_shapes.py").write_text(TESTS)
    rounds = [{"content": c} for c in (READ, AREA_FOR_DOCSTRING, TESTS_RUN)]
    small_model_goal(
        tmp_path, GOAL, plan_rule((GOAL, PLAN)), rounds, VERIFIED,
        LOCALAGENT_MAX_ROUNDS="3", LOCALAGENT_VERIFY="1",
    )  # fmt: skip
    assert "def area(kind, size):" in (tmp_path / "shapes.py").read_text()
    verdict = records_of(tmp_path, "verdict")[0]
    assert verdict["unmet"] == ["the goal says to use the function area, and no code here calls it"]
    plan = records_of(tmp_path, "plan")[-1]
    assert plan.get("by") == "handback", plan
    steps = plan["tasks"][0]["subtasks"]
    assert steps[0] == "read_file shapes.py", steps
    assert steps[1].startswith("write_file shapes.py with only `def total_area(shapes):`"), steps
    assert "then largest and report the same way" in steps[1], steps


def test_the_goal_s_use_in_all_three_needs_a_call_in_each(tmp_path: Path) -> None:
    """total_area calls area and largest and report still repeat its code: "use it in
    all three" is not met until each calls it."""
    one = SHAPES.replace("total += 3.14159 * size * size", "total += area(kind, size)")
    (tmp_path / "shapes.py").write_text(AREA + one)
    assert unused(GOAL, tmp_path) == [
        "the goal says to use the function area in total_area, largest and report, and "
        "largest and report do not call it"
    ]
    every = one.replace("3.14159 * size * size", "area(kind, size)")
    (tmp_path / "shapes.py").write_text(AREA + every)
    assert unused(GOAL, tmp_path) == []
    # Without saying where, one call is use enough.
    (tmp_path / "shapes.py").write_text(AREA + one)
    assert unused(GOAL.replace("use it in all three", "use it"), tmp_path) == []
