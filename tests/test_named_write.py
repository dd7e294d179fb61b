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
from localagent.loop.usestep import said

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
    assert "SUBTASK COMPLETE: 1.1 (area.py was already written" in again["result"]
    assert again["result"].endswith("Next: subtask 1.2.")  # by number: the status names it


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


# The 1.5B's refactor plan and its write for that step on the CPU, verbatim (the step's
# area written in an earlier one): ended by no write, it was sent until blocked.
UPDATE_STEP = (
    "write_file shapes.py to update the code to use the new area function, and "
    "replace_in_file shapes.py to replace the formulas with the new function"
)
AREA_ALONE = (
    '{"name": "write_file", "arguments": {"path": "shapes.py", "content": "def area(kind, '
    'size):\\n    if kind == \\"circle\\":\\n        return 3.14159 * size * size\\n    elif '
    'kind == \\"square\\":\\n        return size * size\\n    else:\\n        return 0\\n"}}'
)
USES_AREA = (
    '```json\n{\n  "name": "write_file",\n  "arguments": {\n    "path": "shapes.py",\n    "c'
    'ontent": """\ndef total_area(shapes):\n    total = 0.0\n    for kind, size in shapes:\n'
    "        total += area(kind, size)\n    return total\n\n\ndef largest(shapes):\n    be"
    'st, best_area = None, -1.0\n    for kind, size in shapes:\n        if kind == "circle'
    '":\n            this = area(kind, size)\n        elif kind == "square":\n            '
    "this = area(kind, size)\n        else:\n            continue\n        if this > best_a"
    "rea:\n            best, best_area = (kind, size), this\n    return best\n\n\ndef report"
    '(shapes):\n    lines = []\n    for kind, size in shapes:\n        if kind == "circle":'
    '\n            lines.append(f"{kind} {size}: {area(kind, size):.2f}")\n        elif ki'
    'nd == "square":\n            lines.append(f"{kind} {size}: {area(kind, size):.2f}")\n'
    '    return "\\\\n".join(lines)\n"""\n  }\n}\n```'
)


def test_a_step_that_opens_with_the_write_s_call_is_ended_by_that_write(tmp_path: Path) -> None:
    """Its words of changing ("to update the code") are what the write does."""
    (tmp_path / "shapes.py").write_text(SHAPES)
    (tmp_path / "test_shapes.py").write_text(TESTS)
    steps = ["write_file shapes.py with the area function", UPDATE_STEP, "run python -m pytest"]
    read = '{"name": "read_file", "arguments": {"path": "shapes.py"}}'  # a read comes first
    rounds = [{"content": r} for r in (read, AREA_ALONE, USES_AREA, USES_AREA)]
    small_model_goal(tmp_path, GOAL, plan_rule((GOAL, steps)), rounds, LOCALAGENT_MAX_ROUNDS="3")
    _, _, uses = records_of(tmp_path, "action_finished")
    assert "made as a change of total_area, largest and report" in uses["result"]
    assert "SUBTASK COMPLETE: 1.3 (shapes.py is written" in uses["result"]
    *_, done = records_of(tmp_path, "subtask_completed")
    assert done["by"] == "write" and done["evidence"] == [uses["seq"]]


@pytest.mark.parametrize(
    ("step", "written"),
    [
        (UPDATE_STEP, "shapes.py"),
        ("write_file app.py to fix the bug", "app.py"),
        ("write_file app.py to fix the bug and run it", ""),
        ("write_file app.py, then read_file b.py", ""),
        ("Write app.py and fix the bug in it", ""),  # not the write's call: two things to do
    ],
)
def test_what_a_step_that_opens_with_the_write_s_call_writes(step: str, written: str) -> None:
    assert written_file(step) == written


# The 1.5B's refactor plan on the CPU, verbatim, and its write for the step: area alone.
CALLS_STEP = (
    "write_file shapes.py to add the new function area(kind, size), and replace_in_file "
    "shapes.py to replace the repeated area formulas with calls to area(kind, size)"
)
AREA_NONE = (
    '{{"name": "write_file", "arguments": {"path": "shapes.py", "content": """\ndef area(kind,'
    ' size):\n    if kind == "circle":\n        return 3.14159 * size * size\n    elif kind =='
    ' "square":\n        return size * size\n    else:\n        return None\n"""}}}}'
)


def test_a_step_that_says_to_call_a_function_ends_when_the_functions_call_it(
    tmp_path: Path,
) -> None:
    """Its write of area alone ended the step, and the tests passed as before any change;
    the verdict's replan gave the same step back, and the same happened until the round
    limit. The functions the goal names must call it; the note asks for the first alone."""
    (tmp_path / "shapes.py").write_text(SHAPES)
    (tmp_path / "test_shapes.py").write_text(TESTS)
    steps = [CALLS_STEP, "run python -m pytest"]
    read = '{"name": "read_file", "arguments": {"path": "shapes.py"}}'
    rounds = [{"content": r} for r in (read, AREA_NONE, USES_AREA)]
    small_model_goal(tmp_path, GOAL, plan_rule((GOAL, steps)), rounds, LOCALAGENT_MAX_ROUNDS="3")
    _, alone, uses = records_of(tmp_path, "action_finished")
    assert "SUBTASK COMPLETE" not in alone["result"]
    assert (
        "NOTE: total_area, largest and report do not call area yet, and this step is done only "
        "when each of them calls it instead of repeating its code. Next: write_file shapes.py "
        "with only `def total_area(shapes):`"
    ) in alone["result"]
    assert "SUBTASK COMPLETE: 1.2 (shapes.py is written" in uses["result"]
    *_, done = records_of(tmp_path, "subtask_completed")
    assert done["by"] == "write" and done["evidence"] == [uses["seq"]]


@pytest.mark.parametrize(
    ("step", "goal", "asked"),
    [
        (CALLS_STEP, GOAL, ("shapes.py", "area", ["total_area", "largest", "report"])),
        (  # the 1.5B's refactor plan on the CPU, verbatim
            "write_file shapes.py to add the area function, and replace_in_file shapes.py to "
            "replace the area formulas with the area function",
            GOAL,
            ("shapes.py", "area", ["total_area", "largest", "report"]),
        ),
        (CALLS_STEP, "Refactor shapes.py", None),  # no function of the file named to call it
        ("write_file shapes.py to use the new helper function", GOAL, None),  # no such function
        ("write_file shapes.py", GOAL, None),  # nothing said of calls
        ("run python -m pytest to use area", GOAL, None),  # no write
    ],
)
def test_which_steps_say_to_call_a_function(
    tmp_path: Path, step: str, goal: str, asked: tuple[str, str, list[str]] | None
) -> None:
    (tmp_path / "shapes.py").write_text("def area(k, s):\n    return s\n\n\n" + SHAPES)
    assert said(step, goal, tmp_path) == asked
