"""A write of some of a Python file's own functions, and not all, over a file whose names
other files import, changes them where they stand and keeps the rest (`stepedit`,
`pywrite.merged`). Asked for shapes.py whole with three functions changed, the 1.5B
dropped some of them, nested them or made them aliases (the CPU, five runs): a small
model asked to change one function writes that function."""

from __future__ import annotations

import json
from pathlib import Path

from shapes_support import GOAL, SHAPES, USE_STEP, seeded
from support import plan_rule, pytest_in, records_of, small_model_goal

from localagent.tools import pywrite

AREA = (
    "def area(kind, size):\n    if kind == 'circle':\n        return 3.14159 * size * size\n"
    "    elif kind == 'square':\n        return size * size\n    return 0.0\n"
)
TOTAL = (
    '{"name": "write_file", "arguments": {"path": "shapes.py", "content": "def total_area('
    "shapes):\\n    total = 0.0\\n    for kind, size in shapes:\\n        total += area(kind,"
    ' size)\\n    return total\\n"}}'
)
READ = '{"name": "read_file", "arguments": {"path": "shapes.py"}}'
LARGEST = (
    '{"name": "write_file", "arguments": {"path": "shapes.py", "content": "def largest(shap'
    "es):\\n    best, best_area = None, -1.0\\n    for kind, size in shapes:\\n        if ki"
    "nd not in ('circle', 'square'):\\n            continue\\n        this = area(kind, siz"
    "e)\\n        if this > best_area:\\n            best, best_area = (kind, size), this\\n"
    '    return best\\n"}}'
)


def test_a_write_of_one_of_the_file_s_functions_changes_it_where_it_stands(
    tmp_path: Path,
) -> None:
    seeded(tmp_path, AREA)
    before = (tmp_path / "shapes.py").read_text()
    rounds = [{"content": r} for r in (READ, TOTAL, LARGEST)]
    steps = ["read_file shapes.py", USE_STEP]
    small_model_goal(tmp_path, GOAL, plan_rule((GOAL, steps)), rounds, LOCALAGENT_MAX_ROUNDS="3")
    total, largest = records_of(tmp_path, "action_finished")[1:3]
    assert total["ok"], total["result"]
    assert (
        "(made as a change of total_area where it stood in shapes.py; area, largest and "
        "report stay as they were)"
    ) in total["result"], total["result"]
    assert "largest and report do not call area yet" in total["result"], total["result"]
    assert "(made as a change of largest where it stood" in largest["result"], largest
    assert "report does not call area yet" in largest["result"], largest["result"]
    text = (tmp_path / "shapes.py").read_text()
    # Only the two functions changed, each where it was; the report stays as it was.
    start, end = before.index("def total_area"), before.index("def report")
    assert text[:start] == before[:start] and text.endswith(before[end:]), text
    assert text.index("def total_area") < text.index("def largest") < text.index("def report")
    assert text.count("area(kind, size)") == 3  # area's own line and the two calls
    assert pytest_in(tmp_path).returncode == 0


EACH_STEP = (
    "write_file shapes.py with only `def total_area(shapes):` and its code changed to call "
    "area as the content (it takes the place of the one shapes.py has, and the rest of "
    "shapes.py stays); then largest and report the same way, one at a time"
)
REPORT = (
    '{"name": "write_file", "arguments": {"path": "shapes.py", "content": "def report(shape'
    "s):\\n    lines = []\\n    for kind, size in shapes:\\n        if kind in ('circle', "
    "'square'):\\n            lines.append(f'{kind} {size}: {area(kind, size):.2f}')\\n  "
    "  return '\\\\n'.join(lines)\\n\"}}"
)


def test_the_hand_back_s_step_asks_for_one_function_at_a_time_and_ends_with_the_last(
    tmp_path: Path,
) -> None:
    """The edit step fails at its first rename of what the tests import; the hand-back
    reads the file, adds area alone, then asks for each function alone."""
    seeded(tmp_path)
    moves = "move the repeated area formulas into a single function area(kind, size)"
    steps = ["read_file shapes.py", f"replace_in_file shapes.py to {moves}", "run python -m pytest"]
    rename = (
        '{"name": "replace_in_file", "arguments": {"path": "shapes.py", "old": "total_area", '
        '"new": "area"}}'
    )
    add = json.dumps({"name": "write_file", "arguments": {"path": "shapes.py", "content": AREA}})
    rounds = [{"content": r} for r in (READ, rename, READ, add, TOTAL, LARGEST, REPORT)]
    small_model_goal(tmp_path, GOAL, plan_rule((GOAL, steps)), rounds, LOCALAGENT_MAX_ROUNDS="7")
    back = records_of(tmp_path, "plan")[-1]
    assert back.get("by") == "handback" and EACH_STEP in back["tasks"][0]["subtasks"], back
    writes = [r for r in records_of(tmp_path, "action_finished") if r["tool"] == "write_file"]
    assert len(writes) == 4 and all(w["ok"] for w in writes), writes
    assert "Next: write_file shapes.py with only `def largest(shapes):`" in writes[1]["result"]
    assert "Next: write_file shapes.py with only `def report(shapes):`" in writes[2]["result"]
    assert "SUBTASK COMPLETE" in writes[3]["result"], writes[3]["result"]
    done = [d["by"] for d in records_of(tmp_path, "subtask_completed")]
    assert done[-3:] == ["read", "write", "write"], done
    assert pytest_in(tmp_path).returncode == 0


# refactor-1 on the CPU (code of 946655f), verbatim: area written alone and added, then
# the three as wrappers of it, with no `def area`: written whole over shapes.py, area was
# lost, and the same write was sent until blocked.
AREA_CPU = (
    "def area(kind, size):\n    if kind == 'circle':\n        return 3.14159 * size * size\n"
    "    elif kind == 'square':\n        return size * size"
)
WRAPPERS = (
    '{{"name": "write_file", "arguments": {"path": "shapes.py", "content": "def total_area(s'
    "hapes):\\n    return area(shapes)\\n\\ndef largest(shapes):\\n    return largest(shap"
    'es)\\n\\ndef report(shapes):\\n    return report(shapes)"}}}}'
)


def test_a_write_of_functions_that_call_one_it_drops_keeps_that_one_and_says_what_fails(
    tmp_path: Path,
) -> None:
    seeded(tmp_path, AREA_CPU + "\n")
    (tmp_path / "test_shapes.py").unlink()  # nothing imports them: the calls alone keep area
    rounds = [{"content": r} for r in (READ, WRAPPERS)]
    steps = ["read_file shapes.py", USE_STEP]
    small_model_goal(tmp_path, GOAL, plan_rule((GOAL, steps)), rounds, LOCALAGENT_MAX_ROUNDS="2")
    write = records_of(tmp_path, "action_finished")[1]
    assert write["ok"], write
    assert (
        "(made as a change of total_area, largest and report where they stood in shapes.py; "
        "area stays as it was)"
    ) in write["result"], write["result"]
    assert (
        "; but largest calls itself before anything else, so no call of it ever returns "
        "(RecursionError); and report calls itself before anything else, so no call of it "
        "ever returns (RecursionError); and `area(shapes)` gives area 1 argument, and it takes "
        "2 (kind, size): the call raises TypeError"
    ) in write["result"], write["result"]
    text = (tmp_path / "shapes.py").read_text()
    assert text.count("def area(kind, size):") == 1 and text.index("def area") < text.index(
        "def total_area"
    )


def test_a_write_of_the_new_function_and_one_of_the_file_s_does_both() -> None:
    content = (
        AREA + "\n\n" + "def total_area(shapes):\n    return sum(area(k, s) for k, s in shapes)\n"
    )
    made = pywrite.merged(SHAPES, content)
    assert made is not None
    text, replaced, added, above = made
    assert (replaced, added, above) == (["total_area"], ["area"], "total_area")
    assert text.index("def area") < text.index("def total_area") < text.index("def largest")
    assert "return sum(area(k, s) for k, s in shapes)\n\n\ndef largest" in text
    assert text.count("3.14159") == 3  # area's, and largest's and report's, still there
    compile(text, "shapes.py", "exec")


def test_decorators_go_with_the_function_they_stand_above() -> None:
    source = (
        "import functools\n\n\n@functools.cache\ndef a(x):\n    return x\n\n\n"
        "def b():\n    return 1\n"
    )
    made = pywrite.merged(source, "@functools.lru_cache(2)\ndef a(x):\n    return x + 1\n")
    assert made is not None
    assert made[0] == (
        "import functools\n\n\n@functools.lru_cache(2)\ndef a(x):\n    return x + 1\n\n\n"
        "def b():\n    return 1\n"
    )


def test_what_is_no_partial_write_of_functions_is_written_as_it_was_sent() -> None:
    whole = SHAPES.split("\n\n\n", 1)[1]  # every function of the file, docstring aside
    for content in (
        whole,
        "total_area = lambda shapes: 0\n",  # not a function
        "import math\n\ndef total_area(shapes):\n    return 0\n",  # a statement beside it
        "def total_area(shapes):\n    return 0\n\ndef total_area(s):\n    return 1\n",
        "def total_area(shapes):\n    return (\n",  # does not parse
    ):
        assert pywrite.merged(SHAPES, content) is None, content


# refactor-1 on the CPU (91f3f5e), the hand-back's step and the file as its writes of area,
# total_area and largest left it; the model's write of report, verbatim: its `'\n'` sent
# as a line break in the JSON, so the string was cut. Not parsed, it was taken as the file
# whole, refused for dropping area, total_area and largest, then sent until blocked.
AFTER_LARGEST = '''"""Areas of shapes given as (kind, size) pairs; unknown kinds are left out."""


def area(kind, size):
    if kind == 'circle':
        return 3.14159 * size * size
    elif kind == 'square':
        return size * size


def total_area(shapes):
    return sum(area(kind, size) for kind, size in shapes)


def largest(shapes):
    return max(area(kind, size) for kind, size in shapes)


def report(shapes):
    lines = []
    for kind, size in shapes:
        if kind == "circle":
            lines.append(f"{kind} {size}: {3.14159 * size * size:.2f}")
        elif kind == "square":
            lines.append(f"{kind} {size}: {size * size:.2f}")
    return "\\n".join(lines)
'''
CUT_REPORT = (
    '{{"name": "write_file", "arguments": {"path": "shapes.py", "content": "def report(shap'
    "es):\\n    return '\\n'.join(f'{kind} {size}: {area(kind, size):.2f}' for kind, size in"
    ' shapes)"}}}}'
)


def test_a_function_written_with_a_cut_string_is_mended_then_changed_where_it_stands(
    tmp_path: Path,
) -> None:
    seeded(tmp_path)
    (tmp_path / "shapes.py").write_text(AFTER_LARGEST)
    rounds = [{"content": CUT_REPORT}]
    small_model_goal(
        tmp_path, GOAL, plan_rule((GOAL, [EACH_STEP])), rounds, LOCALAGENT_MAX_ROUNDS="1"
    )
    (report,) = records_of(tmp_path, "action_finished")
    assert report["ok"], report["result"]
    assert "(made as a change of report where it stood in shapes.py" in report["result"]
    assert "a line break in `def report(shapes):` ended its string" not in report["result"]
    assert (
        "a line break in `return '` ended its string, so it was written as `\\n`"
        in (report["result"])
    ), report["result"]
    text = (tmp_path / "shapes.py").read_text()
    assert text.startswith(AFTER_LARGEST.split("def report")[0])
    assert text.endswith(
        "def report(shapes):\n    return '\\n'.join(f'{kind} {size}: {area(kind, size):.2f}' "
        "for kind, size in shapes)\n"
    ), text
    compile(text, "shapes.py", "exec")
