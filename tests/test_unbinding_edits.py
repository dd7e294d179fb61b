"""An edit that removes functions the file still calls is refused (small profile):
Qwen2.5-Coder-1.5B's refactor on the CPU, verbatim through the real CLI on the scripted
fake server. Made, area called area_circle and area_square, which were gone, and the tests
failed on NameError at the round limit."""

from __future__ import annotations

from pathlib import Path

from support import plan_rule, real_goal, records_of, small_model_goal

GOAL = real_goal("refactor")
# shapes.py as that run's edits had left it before this one: area calling its helpers.
AREA = (
    'def area(kind, size):\n    if kind == "circle":\n        return area_circle(kind, size)\n'
    '    elif kind == "square":\n        return area_square(kind, size)\n    else:\n'
    "        return None\n"
)
HELPERS = (
    "\ndef area_circle(kind, size):\n    return 3.14159 * size * size\n\n"
    "def area_square(kind, size):\n    return size * size\n"
)
HELPERS_DROPPED = (
    '{{"name": "replace_in_file", "arguments": {"path": "shapes.py", "old": "def '
    'area(kind, size):\\n    if kind == \\"circle\\":\\n        return area_circle(ki'
    'nd, size)\\n    elif kind == \\"square\\":\\n        return area_square(kind, si'
    "ze)\\n    else:\\n        return None\\n\\ndef area_circle(kind, size):\\n    ret"
    "urn 3.14159 * size * size\\n\\ndef area_square(kind, size):\\n    return size *"
    ' size", "new": "def area(kind, size):\\n    if kind == \\"circle\\":\\n        r'
    'eturn area_circle(kind, size)\\n    elif kind == \\"square\\":\\n        return '
    'area_square(kind, size)\\n    else:\\n        return None"}}}}'
)


def test_an_edit_that_removes_functions_the_file_calls_is_refused(tmp_path: Path) -> None:
    shapes = GOAL.seed["shapes.py"]
    start = shapes.index("def total_area(")
    before = shapes[:start] + AREA + HELPERS + "\n\n" + shapes[start:]
    (tmp_path / "shapes.py").write_text(before)
    (tmp_path / "test_shapes.py").write_text(GOAL.seed["test_shapes.py"])
    steps = [
        "replace_in_file shapes.py to move the area formulas into a single function "
        "area(kind, size)",
        "run python -m pytest",
    ]
    rounds = [{"content": HELPERS_DROPPED}]
    small_model_goal(
        tmp_path, GOAL.text, plan_rule((GOAL.text, steps)), rounds, LOCALAGENT_MAX_ROUNDS="1"
    )
    (edit,) = records_of(tmp_path, "action_finished")
    assert edit["ok"] is False, edit
    assert edit["result"].startswith(
        "not changed: this edit removes area_circle, area_square from 'shapes.py', which its "
        "code still calls: made, running it would raise NameError."
    ), edit["result"]
    assert (tmp_path / "shapes.py").read_text() == before
