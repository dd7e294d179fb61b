"""A function the goal says to use, not called where it says: the verdict finds it, and
(small profile) the replan is the hand-back's write that makes those functions call it.

Qwen2.5-Coder-1.5B's refactor on the CPU, verbatim: its plan's edit step "to move the
area formulas into one function area(kind, size)" put `def area` in place of shapes.py's
docstring, and the tests passed as before. The verdict found area unused; told only
that, the model planned "replace_in_file shapes.py to add the function area(kind,
size)" twice, for an area that was there, and the goal failed."""

from __future__ import annotations

import json
from pathlib import Path

from shapes_support import GOAL, SHAPES, TESTS
from support import VERIFIED, plan_rule, records_of, small_model_goal

from localagent.tools import pywrite
from localagent.verify.named import unused

# Without "in all three" the edit step is not held to it (as below): its edit ends it.
USE_IT = GOAL.replace("use it in all three", "use it")
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
UNCHANGED_THREE = (
    '{{"name": "write_file", "arguments": {"path": "shapes.py", "content": "def total_area('
    "shapes):\\n    total = 0.0\\n    for kind, size in shapes:\\n        if kind == 'circ"
    "le':\\n            total += 3.14159 * size * size\\n        elif kind == 'square':\\n"
    "            total += size * size\\n    return total\\n\\n\\ndef largest(shapes):\\n   "
    " best, best_area = None, -1.0\\n    for kind, size in shapes:\\n        if kind == 'c"
    "ircle':\\n            this = 3.14159 * size * size\\n        elif kind == 'square':"
    "\\n            this = size * size\\n        else:\\n            continue\\n        if "
    "this > best_area:\\n            best, best_area = (kind, size), this\\n    return best"
    "\\n\\n\\ndef report(shapes):\\n    lines = []\\n    for kind, size in shapes:\\n      "
    "  if kind == 'circle':\\n            lines.append(f'{kind} {size}: {3.14159 * size "
    "* size:.2f}')\\n        elif kind == 'square':\\n            lines.append(f'{kind}"
    " {size}: {size * size:.2f}')\\n    return '\\n'.join(lines)\"}}}}"
)
THREE_FOR_AREA = (
    '```json\n{\n  "name": "replace_in_file",\n  "arguments": {\n    "path": "shapes.py",\n'
    '    "old": """def total_area(shapes):\n    total = 0.0\n    for kind, size in shapes:\n'
    '        if kind == "circle":\n            total += 3.14159 * size * size\n        elif'
    ' kind == "square":\n            total += size * size\n    return total\n\n\ndef larges'
    "t(shapes):\n    best, best_area = None, -1.0\n    for kind, size in shapes:\n        i"
    'f kind == "circle":\n            this = 3.14159 * size * size\n        elif kind == "s'
    'quare":\n            this = size * size\n        else:\n            continue\n        '
    "if this > best_area:\n            best, best_area = (kind, size), this\n    return bes"
    "t\n\n\ndef report(shapes):\n    lines = []\n    for kind, size in shapes:\n        if "
    'kind == "circle":\n            lines.append(f"{kind} {size}: {3.14159 * size * size:.2'
    'f}")\n        elif kind == "square":\n            lines.append(f"{kind} {size}: {size '
    '* size:.2f}")\n    return "\\n".join(lines)""",\n    "new": """def area(kind, size):\n'
    '    if kind == "circle":\n        return 3.14159 * size * size\n    elif kind == "squa'
    're":\n        return size * size\n    else:\n        return None\n"""\n  }\n}\n```'
)

# refactor, the code of 8157965 (the CPU): total_area calling area, largest and report as
# they were; then sent again unchanged until blocked.
TOTAL_ONLY = (
    '```json\n{\n  "name": "write_file",\n  "arguments": {\n    "path": "shapes.py",\n    "'
    'content": """\ndef total_area(shapes):\n    total = 0.0\n    for kind, size in shapes:'
    "\n        total += area(kind, size)\n    return total\n\ndef largest(shapes):\n    bes"
    't, best_area = None, -1.0\n    for kind, size in shapes:\n        if kind == "circle":'
    '\n            this = 3.14159 * size * size\n        elif kind == "square":\n          '
    "  this = size * size\n        else:\n            continue\n        if this > best_area"
    ":\n            best, best_area = (kind, size), this\n    return best\n\ndef report(sha"
    'pes):\n    lines = []\n    for kind, size in shapes:\n        if kind == "circle":\n  '
    '          lines.append(f"{kind} {size}: {3.14159 * size * size:.2f}")\n        elif ki'
    'nd == "square":\n            lines.append(f"{kind} {size}: {size * size:.2f}")\n    re'
    'turn "\\n".join(lines)\n"""\n  }\n}\n```'
)

USE_EACH = (
    "write_file shapes.py with only `def total_area(shapes):` and its code changed to call "
    "area as the content (it takes the place of the one shapes.py has, and the rest of "
    "shapes.py stays); then largest and report the same way, one at a time"
)
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
        tmp_path, USE_IT, plan_rule((USE_IT, PLAN)), rounds, VERIFIED,
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


def test_a_write_of_the_other_functions_as_they_were_keeps_the_one_they_are_to_call(
    tmp_path: Path,
) -> None:
    """The hand-back's step after that verdict, and the 1.5B's reply to it (the CPU): the
    three functions as they were, written whole over shapes.py, area and the docstring
    lost; sent again unchanged, the write ended the step. Now they are written where
    they stand, area stays, and the step goes on until they call it."""
    (tmp_path / "shapes.py").write_text(SHAPES)
    (tmp_path / "test_shapes.py").write_text(TESTS)
    replies = (READ, AREA_FOR_DOCSTRING, TESTS_RUN, READ, UNCHANGED_THREE, UNCHANGED_THREE)
    small_model_goal(
        tmp_path, USE_IT, plan_rule((USE_IT, PLAN)), [{"content": c} for c in replies], VERIFIED,
        LOCALAGENT_MAX_ROUNDS="6", LOCALAGENT_VERIFY="1",
    )  # fmt: skip
    assert records_of(tmp_path, "plan")[-1]["tasks"][0]["subtasks"][1] == USE_EACH
    shapes = (tmp_path / "shapes.py").read_text()
    assert pywrite.defined(shapes) == ["area", "total_area", "largest", "report"], shapes
    writes = [r for r in records_of(tmp_path, "action_finished") if r["tool"] == "write_file"]
    said = "made as a change of total_area, largest and report where they stood"
    assert len(writes) == 2 and said in writes[0]["result"], writes
    assert "do not call area" in writes[1]["result"], writes[1]["result"]
    done = [r["reason"] for r in records_of(tmp_path, "subtask_completed")]
    assert not any("written again unchanged" in d for d in done), done


def test_an_edit_step_that_names_the_function_is_held_to_the_goal_s_use_of_it(
    tmp_path: Path,
) -> None:
    """The 1.5B's edit step, verbatim (the CPU): its edit of the three functions into
    area alone was made as an addition of area, and it ended the step, the three
    unchanged. The goal says to use area in all three: the step goes on, and the edit's
    result says which do not call it yet."""
    (tmp_path / "shapes.py").write_text(SHAPES)
    (tmp_path / "test_shapes.py").write_text(TESTS)
    small_model_goal(
        tmp_path, GOAL, plan_rule((GOAL, PLAN)),
        [{"content": c} for c in (READ, THREE_FOR_AREA)], LOCALAGENT_MAX_ROUNDS="2",
    )  # fmt: skip
    assert pywrite.defined((tmp_path / "shapes.py").read_text())[0] == "area"
    (edit,) = [r for r in records_of(tmp_path, "action_finished") if r["tool"] == "replace_in_file"]
    assert "NOTE: total_area, largest and report do not call area yet" in edit["result"], edit
    done = [r["reason"] for r in records_of(tmp_path, "subtask_completed")]
    assert done == ["shapes.py was read, which is all the subtask asks"], done


def test_a_use_step_that_failed_partway_goes_back_to_the_rest_alone(tmp_path: Path) -> None:
    """Its write made total_area call area (made where the three stood), then the model
    sent that same write until blocked, though the note asked for largest alone; the
    model's replan began again with area. Now the step goes back to a read and the
    write of largest, then report."""
    (tmp_path / "shapes.py").write_text(SHAPES)
    (tmp_path / "test_shapes.py").write_text(TESTS)
    replies = (READ, AREA_FOR_DOCSTRING, TESTS_RUN, READ, *[TOTAL_ONLY] * 6, READ)
    small_model_goal(
        tmp_path, USE_IT, plan_rule((USE_IT, PLAN)), [{"content": c} for c in replies], VERIFIED,
        LOCALAGENT_MAX_ROUNDS="11", LOCALAGENT_VERIFY="1",
    )  # fmt: skip
    shapes = (tmp_path / "shapes.py").read_text()
    assert "total += area(kind, size)" in shapes and "def area(kind, size):" in shapes, shapes
    (failed,) = records_of(tmp_path, "subtask_failed")
    assert failed["reason"].startswith("The model kept repeating blocked actions"), failed
    plan = records_of(tmp_path, "plan")[-1]
    assert plan.get("by") == "handback", plan
    assert plan["tasks"][0]["subtasks"][:2] == [
        "read_file shapes.py",
        "write_file shapes.py with only `def largest(shapes):` and its code changed to call "
        "area as the content (it takes the place of the one shapes.py has, and the rest of "
        "shapes.py stays); then report the same way, one at a time",
    ], plan


# The 1.5B's refactor on the CPU (the code of 7c96ad7), verbatim: its edit put area in
# place of the docstring (made an addition of it), then put total_area's old code in
# place of area. Area was gone, the tests passed as before any change, and the edit ended
# the step; only the verdict found area missing, and the replan went wrong from there.
READ_AGAIN = (
    '```json\n{\n  "name": "read_file",\n  "arguments": {\n    "path": "shapes.py"\n  }\n}\n```'
)

AREA_FIRST = (
    '```json\n{\n  "name": "replace_in_file",\n  "arguments": {\n    "path": "shapes.py",\n   '
    ' "old": """Areas of shapes given as (kind, size) pairs; unknown kinds are left out."'
    '""\n    "new": """def area(kind, size):\n    if kind == "circle":\n        return 3.141'
    '59 * size * size\n    elif kind == "square":\n        return size * size\n    else:\n   '
    '     return None\n"""\n  }\n}\n```'
)

AREA_LOST = (
    '```json\n{\n  "name": "replace_in_file",\n  "arguments": {\n    "path": "shapes.py",\n   '
    ' "old": """def area(kind, size):\n    if kind == "circle":\n        return 3.14159 * s'
    'ize * size\n    elif kind == "square":\n        return size * size\n    else:\n        r'
    'eturn None\n"""\n    "new": """def total_area(shapes):\n    total = 0.0\n    for kind, s'
    'ize in shapes:\n        if kind == "circle":\n            total += 3.14159 * size * si'
    'ze\n        elif kind == "square":\n            total += size * size\n    return total\n'
    '"""\n  }\n}\n```'
)


def test_an_edit_that_loses_the_function_the_step_adds_does_not_end_the_step(
    tmp_path: Path,
) -> None:
    """AREA_LOST is refused now, since total_area would be defined twice
    (tests/test_refactor_edits.py); an edit that deletes area (not the model's) loses it."""
    (tmp_path / "shapes.py").write_text(SHAPES)
    (tmp_path / "test_shapes.py").write_text(TESTS)
    move = "replace_in_file shapes.py to move the area formulas into a single function "
    move += "area(kind, size)"
    area = "def area(kind, size):\n    if kind == 'circle':\n        return 3.14159 * size * size\n"
    again = {"name": "write_file", "arguments": {"path": "shapes.py", "content": area}}
    added = (
        'def area(kind, size):\n    if kind == "circle":\n        return 3.14159 * size * size\n'
        '    elif kind == "square":\n        return size * size\n    else:\n        return None\n'
    )
    gone = {"name": "replace_in_file", "arguments": {"path": "shapes.py", "old": added, "new": ""}}
    replies = [READ_AGAIN, AREA_FIRST, AREA_LOST, json.dumps(gone), json.dumps(again)]
    small_model_goal(
        tmp_path, GOAL, plan_rule((GOAL, ["read_file shapes.py", move, "run python -m pytest"])),
        [{"content": c} for c in replies], LOCALAGENT_MAX_ROUNDS="5",
    )  # fmt: skip
    edits = [r for r in records_of(tmp_path, "action_finished") if r["tool"] != "read_file"]
    assert "NOTE: total_area, largest and report do not call area yet" in edits[0]["result"]
    assert "would define total_area (lines" in edits[1]["result"], edits[1]
    assert edits[2]["result"].startswith("replaced 1 occurrence"), edits[2]
    assert edits[2]["result"].endswith(
        "NOTE: shapes.py no longer defines area, and this step is done only when it does and "
        "total_area, largest and report call it. Next: write_file shapes.py with only "
        "`def area(kind, size):` and its code as the content; it goes above the other "
        "functions, and the rest of shapes.py stays"
    ), edits[2]["result"]
    done = [r["reason"] for r in records_of(tmp_path, "subtask_completed")]
    assert done == ["shapes.py was read, which is all the subtask asks"], done
    # The write it asks for brings area back, the rest kept; the step goes on to the callers.
    text = (tmp_path / "shapes.py").read_text()
    assert {"area", "total_area", "largest", "report"} <= set(pywrite.defined(text)), text
