"""A read or edit of a file named after a function another file defines says where the
function is. Qwen2.5-Coder-1.5B's refactor on the CPU, verbatim through the real CLI on
the scripted fake server: it sent `replace_in_file largest.py` three times, told each
time only that the file does not exist, until the repeat was blocked; largest was a
function of shapes.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from shapes_support import GOAL, SHAPES, TESTS
from support import plan_rule, records_of, small_model_goal

from localagent.tools import pyfiles

# Round 5 of refactor-1 (code of f20f83e), verbatim.
EDIT = (
    '{{"name": "replace_in_file", "arguments": {"path": "largest.py", "old": "largest = max(sh'
    "apes, key=lambda shape: shape['size'])\", \"new\": \"largest = area('circle', 10) if 10 >"
    " 5 else area('rectangle', 5) if 5 > 3 else area('triangle', 3)\"}}}"
)
# Round 2 of the same run, verbatim: report, a function of shapes.py, as a new file.
NEW_FILE = (
    '{{"name": "write_file", "arguments": {"path": "report.py", "content": "def report(kind, '
    "size):\\n    area = area(kind, size)\\n    print(f'The area of a {kind} with size {size}"
    " is {area}')\"}}}"
)
STEP = (
    "replace_in_file largest.py to replace the repeated area formulas with calls to "
    "area(kind, size)"
)


def test_an_edit_of_a_file_named_after_a_function_says_which_file_has_it(tmp_path: Path) -> None:
    (tmp_path / "shapes.py").write_text(SHAPES)
    (tmp_path / "test_shapes.py").write_text(TESTS)
    rounds = [{"content": EDIT}]
    small_model_goal(tmp_path, GOAL, plan_rule((GOAL, [STEP])), rounds, LOCALAGENT_MAX_ROUNDS="1")
    (edit,) = records_of(tmp_path, "action_finished")
    assert not edit["ok"]
    assert edit["result"].startswith(
        "file 'largest.py' does not exist: largest is a function (or class) of 'shapes.py', "
        "not a file; read or change it in 'shapes.py'"
    ), edit["result"]


# Round 3 of refactor-1 (code of 83815f5), verbatim: after area.py was written into a new
# folder shapes/, the three functions as files in it, without .py; told only that they
# do not exist, it sent the same three edits until each was blocked.
IN_A_FOLDER = (
    '{{"name": "replace_in_file", "arguments": {"path": "shapes/total_area", "old": "circle_ar'
    'ea = 3.14 * radius ** 2", "new": "circle_area = area(\'circle\', radius)"}}}}\n{{"n'
    'ame": "replace_in_file", "arguments": {"path": "shapes/largest", "old": "largest_circle '
    '= max(circle_areas)", "new": "largest_circle = area(\'circle\', largest_circle)"}}'
    '}}\n{{"name": "replace_in_file", "arguments": {"path": "shapes/report", "old": "print(f'
    '\'Circle with radius {radius} has area {circle_area}\')", "new": "print(f\'Circle wi'
    "th radius {radius} has area {area('circle', radius)}')\"}}}"
)


def test_a_function_as_a_path_without_py_says_which_file_has_it(tmp_path: Path) -> None:
    (tmp_path / "shapes.py").write_text(SHAPES)
    (tmp_path / "test_shapes.py").write_text(TESTS)
    (tmp_path / "shapes").mkdir()
    (tmp_path / "shapes" / "area.py").write_text("def area(kind, size):\n    return 0\n")
    step = "Replace the repeated area formulas in total_area, largest and report with area"
    rounds = [{"content": IN_A_FOLDER}]
    small_model_goal(tmp_path, GOAL, plan_rule((GOAL, [step])), rounds, LOCALAGENT_MAX_ROUNDS="1")
    edits = records_of(tmp_path, "action_finished")
    assert [e["ok"] for e in edits] == [False] * 3, edits
    for edit, name in zip(edits, ["total_area", "largest", "report"], strict=True):
        assert edit["result"].startswith(
            f"file 'shapes/{name}' does not exist: {name} is a function (or class) of "
            "'shapes.py', not a file; read or change it in 'shapes.py'"
        ), edit["result"]


def test_a_new_file_named_after_a_function_says_which_file_has_it(tmp_path: Path) -> None:
    (tmp_path / "shapes.py").write_text(SHAPES)
    (tmp_path / "test_shapes.py").write_text(TESTS)
    step = "Write a new file named area.py with the area function."
    rounds = [{"content": NEW_FILE}, {"content": NEW_FILE.replace("report", "area_report")}]
    small_model_goal(tmp_path, GOAL, plan_rule((GOAL, [step])), rounds, LOCALAGENT_MAX_ROUNDS="2")
    named, other = records_of(tmp_path, "action_finished")
    assert named["ok"] and named["result"].startswith(
        "wrote 113 bytes to 'report.py' (created); but report is a function (or class) of "
        "'shapes.py', and this new file does not change it there: to change report, change it "
        "in 'shapes.py'"
    ), named["result"]
    assert other["ok"] and "function (or class)" not in other["result"], other["result"]
    assert (tmp_path / "shapes.py").read_text() == SHAPES


@pytest.mark.parametrize(
    ("files", "name", "owner"),
    [
        ({"shapes.py": SHAPES}, "largest", "shapes.py"),
        ({"pkg/geo.py": "class Circle:\n    pass\n"}, "Circle", "pkg/geo.py"),
        ({"a.py": "def f():\n    pass\n", "b.py": "def f():\n    pass\n"}, "f", ""),
        ({"a.py": "def g():\n    def f():\n        pass\n"}, "f", ""),  # not at the top level
        ({"a.py": "def f(:\n"}, "f", ""),  # does not parse
        ({"a.txt": "def f():\n    pass\n"}, "f", ""),
    ],
)
def test_the_one_file_that_defines_a_name_is_found(
    tmp_path: Path, files: dict[str, str], name: str, owner: str
) -> None:
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    assert pyfiles.owner(tmp_path, name) == owner
