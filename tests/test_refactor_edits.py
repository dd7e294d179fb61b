"""Qwen2.5-Coder-1.5B's refactor edits on the H200 (6 runs of 6 failed), verbatim through
the real CLI on the scripted fake server: its strings in Python's three quotes, and its
new function put in place of one the tests import."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from shapes_support import GOAL, SHAPES, TESTS
from support import VERIFIED, plan_rule, pytest_in, real_goal, records_of, small_model_goal

from localagent.tools import pywrite
from localagent.verify.evidence import named_files
from localagent.verify.named import named_functions, unused

# refactor-1, round 3: `def area` in place of total_area, which test_shapes.py imports.
IN_PLACE = (
    '{{"name": "replace_in_file", "arguments": {"path": "shapes.py", "old": """def total_area'
    '(shapes):\n    total = 0.0\n    for kind, size in shapes:\n        if kind == "circle":\n'
    '            total += 3.14159 * size * size\n        elif kind == "square":\n'
    '            total += size * size\n    return total""",\n        "new": """def area(kind, '
    'size):\n    if kind == "circle":\n        return 3.14159 * size * size\n    elif kind =='
    ' "square":\n        return size * size\n    else:\n        return None"""}}}}'
)
# refactor-1, round 6: report's `"\n".join` is the file's own escape.
REPORT = (
    '{{"name": "replace_in_file", "arguments": {"path": "shapes.py", "old": """def report(sh'
    'apes):\n    lines = []\n    for kind, size in shapes:\n        if kind == "circle":\n   '
    '         lines.append(f"{kind} {size}: {3.14159 * size * size:.2f}")\n        elif kind'
    ' == "square":\n            lines.append(f"{kind} {size}: {size * size:.2f}")\n    retur'
    'n "\\n".join(lines)""",\n        "new": """def report(shapes):\n    lines = []\n    for '
    'kind, size in shapes:\n        if kind == "circle":\n            lines.append(f"{kind} {'
    'size}: {area(\'circle\', size):.2f}")\n        elif kind == "square":\n            lin'
    'es.append(f"{kind} {size}: {area(\'square\', size):.2f}")\n    return "\\n".join(lin'
    'es)"""}}}}'
)
STEPS = [
    "replace_in_file shapes.py to add the function area(kind, size)",
    "replace_in_file shapes.py so that report uses area",
]


def test_the_model_s_edits_are_made_as_it_meant_them(tmp_path: Path) -> None:
    (tmp_path / "shapes.py").write_text(SHAPES)
    (tmp_path / "test_shapes.py").write_text(TESTS)
    rounds = [{"content": r} for r in (IN_PLACE, REPORT)]
    ran, _ = small_model_goal(
        tmp_path, GOAL, plan_rule((GOAL, STEPS)), rounds, LOCALAGENT_MAX_ROUNDS="2"
    )
    results = [r["result"] for r in records_of(tmp_path, "action_finished")]
    assert len(results) == 2, results
    assert results[0].startswith(
        "added area to 'shapes.py', above total_area, which other files import and which "
        "stays as it was"
    ), results[0]
    assert results[1].startswith("replaced 1 occurrence in 'shapes.py'"), results[1]
    text = (tmp_path / "shapes.py").read_text()
    assert text.count("def area(kind, size):") == 1 and "def total_area(shapes):" in text
    assert text.index("def area") < text.index("def total_area")
    assert "{area('circle', size):.2f}" in text and 'return "\\n".join(lines)' in text
    tests = pytest_in(tmp_path)
    assert tests.returncode == 0, tests.stdout + ran.stdout


# refactor-1 on the H200 (this code), verbatim: the whole file in Python's three quotes,
# its docstring's own quotes lost; the same write three times, "syntax error at line 1".
WHOLE = (
    '{{"name": "write_file", "arguments": {"path": "shapes.py", "content": ""'
    '"Areas of shapes given as (kind, size) pairs; unknown kinds are left out.\n\ndef area'
    '(kind, size):\n    if kind == "circle":\n        return 3.14159 * size * size\n    e'
    'lif kind == "square":\n        return size * size\n    else:\n        return None\n'
    "\ndef total_area(shapes):\n    total = 0.0\n    for kind, size in shapes:\n        tot"
    "al += area(kind, size)\n    return total\n\ndef largest(shapes):\n    best, best_area "
    '= None, -1.0\n    for kind, size in shapes:\n        if kind == "circle":\n         '
    '   this = area(kind, size)\n        elif kind == "square":\n            this = area('
    "kind, size)\n        else:\n            continue\n        if this > best_area:\n      "
    "      best, best_area = (kind, size), this\n    return best\n\ndef report(shapes):\n  "
    '  lines = []\n    for kind, size in shapes:\n        if kind == "circle":\n         '
    '   lines.append(f"{kind} {size}: {area(kind, size):.2f}")\n        elif kind == "sq'
    'uare":\n            lines.append(f"{kind} {size}: {area(kind, size):.2f}")\n    ret'
    'urn "\\n".join(lines)"""}}}'
)


def test_a_docstring_written_without_its_quotes_is_written_with_them(tmp_path: Path) -> None:
    (tmp_path / "shapes.py").write_text(SHAPES)
    (tmp_path / "test_shapes.py").write_text(TESTS)
    steps = ["write_file shapes.py with area(kind, size) used in all three", "run python -m pytest"]
    small_model_goal(
        tmp_path, GOAL, plan_rule((GOAL, steps)), [{"content": WHOLE}], LOCALAGENT_MAX_ROUNDS="1"
    )
    (result,) = [r["result"] for r in records_of(tmp_path, "action_finished")]
    line = "Areas of shapes given as (kind, size) pairs; unknown kinds are left out."
    assert f'`{line}` did not compile, so it was written as `"""{line}"""`' in result, result
    assert (tmp_path / "shapes.py").read_text().startswith(f'"""{line}"""\n\ndef area(')
    tests = pytest_in(tmp_path)
    # the file loads: the tests now show what is left, the model's own `area` giving
    # None for a triangle
    assert "1 failed, 2 passed" in tests.stdout and "NoneType" in tests.stdout, tests.stdout


# refactor-2 on the H200, verbatim: a `}` too early ends the arguments after `old`, and
# `new` follows as a key of the call; it was refused as "missing required parameter 'new'".
OUTSIDE = (
    '{{"name": "replace_in_file", "arguments": {"path": "shapes.py", "old": """def total_are'
    'a(shapes):\n    total = 0.0\n    for kind, size in shapes:\n        if kind == "circle":'
    '\n            total += 3.14159 * size * size\n        elif kind == "square":\n        '
    '    total += size * size\n    return total"""}, "new": """def total_area(shapes):\n    '
    "total = 0.0\n    for kind, size in shapes:\n        total += area(kind, size)\n    retu"
    'rn total"""}}}}'
)


def test_an_argument_written_after_the_arguments_is_read_as_one(tmp_path: Path) -> None:
    (tmp_path / "shapes.py").write_text(SHAPES)
    steps = ["replace_in_file shapes.py so that total_area uses area"]
    small_model_goal(
        tmp_path, GOAL, plan_rule((GOAL, steps)), [{"content": OUTSIDE}], LOCALAGENT_MAX_ROUNDS="1"
    )
    (result,) = [r["result"] for r in records_of(tmp_path, "action_finished")]
    assert result.startswith("(arguments read: new from outside the arguments)\nreplaced 1 "), (
        result
    )
    text = (tmp_path / "shapes.py").read_text()
    assert "        total += area(kind, size)\n    return total" in text, text


def test_a_key_beside_the_arguments_that_names_no_parameter_changes_nothing(
    tmp_path: Path,
) -> None:
    reply = '{"name": "write_file", "arguments": {"path": "a.txt", "content": "x"}, "why": "asked"}'
    steps = ["write_file a.txt with x"]
    small_model_goal(
        tmp_path,
        "Write a.txt",
        plan_rule(("Write a.txt", steps)),
        [{"content": reply}],
        LOCALAGENT_MAX_ROUNDS="1",
    )
    (result,) = [r["result"] for r in records_of(tmp_path, "action_finished")]
    assert result.startswith("wrote 1 bytes to 'a.txt'"), result


# refactor-1 on the CPU, verbatim: the plan, the write (the function gives None for a
# triangle), then the tests run until three strikes. "to move the area formulas" read as
# moving files, so the write step named no file and the failed run had no file to go back to.
CPU_PLAN = [
    "read_file shapes.py",
    "write_file shapes.py to move the area formulas into one function area(kind, size) and "
    "use it in all three.",
    "run python -m pytest to ensure the area formulas are still correct.",
]
MOVE = "Move the area formulas into one function area(kind, size) and use it in all three."
CPU_WRITE = (
    '{{"name": "write_file", "arguments": {"path": "shapes.py", "content": """def area(kind, '
    'size):\n    if kind == "circle":\n        return 3.14159 * size * size\n    elif kind == '
    '"square":\n        return size * size\n    else:\n        return None\n\ndef total_area('
    "shapes):\n    total = 0.0\n    for kind, size in shapes:\n        total += area(kind, siz"
    "e)\n    return total\n\ndef largest(shapes):\n    best, best_area = None, -1.0\n    for "
    'kind, size in shapes:\n        if kind == "circle":\n            this = area(kind, size)'
    '\n        elif kind == "square":\n            this = area(kind, size)\n        else:\n  '
    "          continue\n        if this > best_area:\n            best, best_area = (kind, si"
    "ze), this\n    return best\n\ndef report(shapes):\n    lines = []\n    for kind, size in "
    'shapes:\n        lines.append(f"{kind} {size}: {area(kind, size):.2f}")\n    return "\\n'
    '".join(lines)"""}}}}'
)
CPU_READ = '{{"name": "read_file", "arguments": {"path": "shapes.py"}}}}'
CPU_TESTS = '{{"name": "run_cmd", "arguments": {"cmd": "python -m pytest"}}}}'


def test_tests_failing_after_a_write_that_moves_code_go_back_to_the_file(tmp_path: Path) -> None:
    (tmp_path / "shapes.py").write_text(SHAPES)
    (tmp_path / "test_shapes.py").write_text(TESTS)
    replies = [CPU_READ, CPU_WRITE, CPU_WRITE, CPU_TESTS, CPU_TESTS, CPU_TESTS]
    small_model_goal(
        tmp_path,
        GOAL,
        plan_rule((MOVE, CPU_PLAN)),
        [{"content": r} for r in replies],
        LOCALAGENT_MAX_ROUNDS="6",
    )
    (back,) = [p for p in records_of(tmp_path, "plan") if p.get("replace_from")]
    assert back["by"] == "handback", back
    first = back["tasks"][0]["subtasks"]
    assert first[:2] == [
        "read_file shapes.py",
        "replace_in_file shapes.py to fix the failing test: total_area() raised TypeError: "
        "unsupported operand type(s) for +=: 'float' and 'NoneType' at shapes.py:12 "
        "(`total += area(kind, size)`) (area returns None for the cases it does not handle, "
        "and this line uses what it returns: make area return a number in every case)",
    ], first


def test_a_step_that_moves_code_still_names_its_file() -> None:
    assert named_files(CPU_PLAN[1]) == ["shapes.py"]
    assert named_files("Move the formulas from shapes.py into area()") == ["shapes.py"]
    assert named_files("move utils.py into pkg/") == []
    assert named_files("Delete the file temp.log") == []
    assert named_files("rename a.py to b.py") == []
    assert named_files("remove the build folder and write notes.txt") == []


def test_the_function_that_raised_or_gave_its_none_is_asked_for_whole(tmp_path: Path) -> None:
    """After the handback's read, its edit step asks for the function that raised, or,
    for an error about None, for the function the None came from: told to fix the line
    of total_area, the 1.5B changed the callers, not area, in three runs of four (the
    CPU)."""
    (tmp_path / "shapes.py").write_text(SHAPES)
    (tmp_path / "test_shapes.py").write_text(TESTS)
    replies = [CPU_READ, CPU_WRITE, CPU_WRITE, CPU_TESTS, CPU_TESTS, CPU_READ, "no code"]
    _, requests = small_model_goal(
        tmp_path,
        GOAL,
        plan_rule((MOVE, CPU_PLAN)),
        [{"content": r} for r in replies],
        LOCALAGENT_MAX_ROUNDS="7",
    )
    asked = [r for r in requests if "again, whole, fixed" in str(r["messages"])]
    assert len(asked) == 1 and not asked[0].get("tools"), len(asked)
    said = asked[0]["messages"][-1]["content"]
    assert "Write the function area of shapes.py again, whole" in said, said
    assert "The tests fail: total_area() raised TypeError: unsupported operand type(s)" in said
    assert "(area returns None for the cases it does not handle," in said
    assert "def test_total_area():" in said, said


# refactor-1 on the CPU, round 2 (and 3, and 4, each refused): the new function alone,
# written as the whole of shapes.py.
AREA_ALONE = (
    '{{"name": "write_file", "arguments": {"path": "shapes.py", "content": "def area(kind, '
    "size):\\n    if kind == 'circle':\\n        return 3.14159 * size * size\\n    elif kind"
    " == 'square':\\n        return size * size\"}}}}"
)
CPU_STEPS = [
    "read_file shapes.py",
    "write_file shapes.py to move the formulas into a function area(kind, size)",
    "replace_in_file shapes.py to replace the repeated formulas with the function call",
]


def test_a_write_of_only_a_new_function_adds_it(tmp_path: Path) -> None:
    """The function the goal names ("one function area(kind, size)"): a function no one
    named, written over a file, is refused (tests/test_tools.py)."""
    (tmp_path / "shapes.py").write_text(SHAPES)
    (tmp_path / "test_shapes.py").write_text(TESTS)
    rounds = [{"content": '{{"name": "read_file", "arguments": {"path": "shapes.py"}}}}'}]
    rounds += [{"content": AREA_ALONE}]
    small_model_goal(
        tmp_path, GOAL, plan_rule((GOAL, CPU_STEPS)), rounds, LOCALAGENT_MAX_ROUNDS="2"
    )
    (write,) = [r for r in records_of(tmp_path, "action_finished") if r["tool"] == "write_file"]
    assert (
        write["ok"]
        and (
            "(made as an addition: area went above total_area, and total_area, largest, report, "
            "which test_shapes.py imports, stay as they were; change them next so that they use "
            "area)"
        )
        in write["result"]
    ), write["result"]
    text = (tmp_path / "shapes.py").read_text()
    assert text.startswith('"""Areas of shapes given as (kind, size) pairs')
    assert text.index("def area(kind, size):") < text.index("def total_area(shapes):")
    assert text.replace("def area(kind, size):\n    if kind == 'circle':\n        return "
                        "3.14159 * size * size\n    elif kind == 'square':\n        return "
                        "size * size\n\n\n", "") == SHAPES  # fmt: skip
    assert pytest_in(tmp_path).returncode == 0


# refactor-1 on the CPU, later code, verbatim: renames of what test_shapes.py imports,
# total_area, largest and report in turn, each refused, then blocked, for 19 rounds; in
# the next runs the same with `area(kind, size)`, with their `def` lines, and `def
# area(kind, size):` for itself.
def _edit(old: str, new: str) -> str:
    call = '{{"name": "replace_in_file", "arguments": {"path": "shapes.py", "old": "OLD"'
    return call.replace("OLD", old) + ', "new": "' + new + '"}}}'


@pytest.mark.parametrize(
    "reply",
    [
        _edit("total_area", "area") + "}",
        _edit("total_area", "area(kind, size)") + "}",
        _edit("def total_area(shapes):", "def area(kind, size):"),
        _edit("def area(kind, size):", "def area(kind, size):"),
    ],
)
def test_a_rename_of_what_the_tests_import_is_told_how_to_add_the_named_function(
    tmp_path: Path, reply: str
) -> None:
    (tmp_path / "shapes.py").write_text(SHAPES)
    (tmp_path / "test_shapes.py").write_text(TESTS)
    moves = "move the repeated area formulas into a single function area(kind, size)"
    steps = ["read_file shapes.py", f"replace_in_file shapes.py to {moves}", "run python -m pytest"]
    rounds = [{"content": '{{"name": "read_file", "arguments": {"path": "shapes.py"}}}}'}]
    rounds += [{"content": reply}, {"content": AREA_ALONE}]
    small_model_goal(tmp_path, GOAL, plan_rule((GOAL, steps)), rounds, LOCALAGENT_MAX_ROUNDS="3")
    edit, write = [r for r in records_of(tmp_path, "action_finished") if r["tool"] != "read_file"]
    assert not edit["ok"] and edit["result"].endswith(
        "\nNOTE: area, which the step names, is defined nowhere yet, and this edit does not "
        "add it. Add it first: write_file shapes.py with only `def area(kind, size):` and its "
        "code as the content; it goes above total_area, and the rest of shapes.py stays."
    ), edit["result"]
    assert write["ok"] and "(made as an addition: area went above total_area" in write["result"]
    assert pytest_in(tmp_path).returncode == 0
    # The note is journaled with its call, so a resumed run shows the model the same.
    started = records_of(tmp_path, "action_started")
    assert [bool(r.get("said")) for r in started] == [False, True, True]


# refactor-1 on the CPU (8425af6), round 2 verbatim: asked for "write_file shapes.py to add
# the area function", the 1.5B wrote the file whole, the three functions calling area (its
# docstring without quotes, put back). Its edits of them, asked for after a hand-back, were
# renames of what the tests import, 9 rounds until the round limit.
WHOLE = (
    '{{"name": "write_file", "arguments": {"path": "shapes.py", "content": """Areas of shapes'
    " given as (kind, size) pairs; unknown kinds are left out.\n\ndef area(kind, size):\n    "
    'if kind == "circle":\n        return 3.14159 * size * size\n    elif kind == "square":'
    "\n        return size * size\n    else:\n        return None\n\ndef total_area(shapes"
    "):\n    total = 0.0\n    for kind, size in shapes:\n        total += area(kind, size)\n"
    "    return total\n\ndef largest(shapes):\n    best, best_area = None, -1.0\n    for k"
    'ind, size in shapes:\n        if kind == "circle":\n            this = area(kind, size)'
    '\n        elif kind == "square":\n            this = area(kind, size)\n        else:\n'
    "            continue\n        if this > best_area:\n            best, best_area = (kind"
    ", size), this\n    return best\n\ndef report(shapes):\n    lines = []\n    for kind, "
    'size in shapes:\n        if kind == "circle":\n            lines.append(f"{kind} {size'
    '}: {area(kind, size):.2f}")\n        elif kind == "square":\n            lines.append(f'
    '"{kind} {size}: {area(kind, size):.2f}")\n    return "\\n".join(lines)"""}}'
)


def test_an_edit_step_that_failed_to_add_the_named_function_goes_back_to_writing_it(
    tmp_path: Path,
) -> None:
    """refactor-1 on the CPU, its first edit step verbatim: three renames in turn until
    they were blocked (9 rounds). Now the first fails the step: without the model, a
    read of the file, a write of area alone and a write of each of the three functions
    calling it, the first alone with its header shown (the file written whole, as here, does
    them all at once). The read
    first: after the replan the file was out of view, and the 1.5B wrote area with
    formulas shapes.py never had (`3.14 * size ** 2`, a triangle)."""
    (tmp_path / "shapes.py").write_text(SHAPES)
    (tmp_path / "test_shapes.py").write_text(TESTS)
    moves = "move the repeated area formulas into a single function area(kind, size)"
    steps = ["read_file shapes.py", f"replace_in_file shapes.py to {moves}", "run python -m pytest"]
    renames = [("total_area", "area"), ("largest", "largest_area"), ("report", "report_area")]
    rounds = [{"content": '{{"name": "read_file", "arguments": {"path": "shapes.py"}}}}'}]
    rounds += [{"content": _edit(old, new) + "}"} for old, new in renames[:1]]
    rounds += [rounds[0], {"content": AREA_ALONE}, {"content": WHOLE}]
    small_model_goal(tmp_path, GOAL, plan_rule((GOAL, steps)), rounds, LOCALAGENT_MAX_ROUNDS="5")
    (failed,) = records_of(tmp_path, "subtask_failed")
    assert failed["replan"] and failed["reason"] == (
        "area is defined nowhere, and this step's edits rename what other files import"
    ), failed
    plan = records_of(tmp_path, "plan")[-1]
    assert plan["by"] == "handback", plan
    assert plan["tasks"][0]["subtasks"] == [
        "read_file shapes.py",
        "write_file shapes.py with only `def area(kind, size):` and its code as the content "
        "(it goes above total_area, and the rest of shapes.py stays)",
        "write_file shapes.py with only `def total_area(shapes):` and its code changed to call "
        "area as the content (it takes the place of the one shapes.py has, and the rest of "
        "shapes.py stays); then largest and report the same way, one at a time",
        "run python -m pytest",
    ]
    writes = [r for r in records_of(tmp_path, "action_finished") if r["tool"] == "write_file"]
    assert (
        writes[0]["ok"]
        and "(made as an addition: area went above total_area" in (writes[0]["result"])
    )
    assert (
        writes[1]["ok"] and "SUBTASK COMPLETE: 2.3 (shapes.py is written" in writes[1]["result"]
    ), writes[1]["result"]
    text = (tmp_path / "shapes.py").read_text()
    assert text.startswith('"""Areas of shapes') and "total += area(kind, size)" in text
    done = records_of(tmp_path, "subtask_completed")
    assert [d["by"] for d in done][-3:] == ["read", "write", "write"], done


def test_an_edit_of_one_name_says_nothing_more_once_the_named_function_exists(
    tmp_path: Path,
) -> None:
    (tmp_path / "shapes.py").write_text("def area(kind, size):\n    return size\n\n\n" + SHAPES)
    (tmp_path / "test_shapes.py").write_text(TESTS)
    steps = ["replace_in_file shapes.py to move the formulas into one function area(kind, size)"]
    rounds = [{"content": _edit("total_area", "area") + "}"}]
    small_model_goal(tmp_path, GOAL, plan_rule((GOAL, steps)), rounds, LOCALAGENT_MAX_ROUNDS="1")
    (edit,) = records_of(tmp_path, "action_finished")
    assert not edit["ok"] and "NOTE" not in edit["result"], edit["result"]


# refactor-1 on the CPU with the code after the fixes above, round 2, verbatim: the
# docstring's text as old (its quotes read as the string's), the new function as new. Made
# as sent, the function was inside the docstring, the tests passed, and the goal was
# "completed (verified)" with nothing refactored; refused, the 1.5B sent renames until the
# round limit (91f3f5e, the CPU). It is the function's addition below the docstring.
IN_DOCSTRING = (
    '{{"name": "replace_in_file", "arguments": {"path": "shapes.py", "old": "'
    '""Areas of shapes given as (kind, size) pairs; unknown kinds are left ou'
    't."""}, "new": """def area(kind, size):\n    if kind == "circle":\n       '
    ' return 3.14159 * size * size\n    elif kind == "square":\n        return '
    'size * size\n    else:\n        return None\n"""}}}}'
)


def test_an_edit_of_a_docstring_s_text_into_a_function_adds_the_function(
    tmp_path: Path,
) -> None:
    edit = _edit_after_read(tmp_path, [EDIT_STEP, "run python -m pytest"], IN_DOCSTRING)
    assert (
        edit["ok"]
        and (
            "old was the text of the docstring of 'shapes.py', so new went in as code below it, "
            "not inside it: area added above total_area"
        )
        in edit["result"]
    ), edit["result"]
    made = (tmp_path / "shapes.py").read_text()
    docstring, rest = SHAPES.split("\n\n\n", 1)
    assert made.startswith(f"{docstring}\n\n\ndef area(kind, size):\n") and made.endswith(rest)
    compile(made, "shapes.py", "exec")
    # A file that holds more than a docstring and functions, or text that is not the
    # docstring's, is no such edit (it stays refused as code inside a string).
    area = "def area(kind, size):\n    return size\n"
    with_constant = SHAPES.replace("\n\n\ndef total_area", "\nPI = 3.14159\n\n\ndef total_area", 1)
    assert pywrite.as_module(with_constant, "Areas of shapes", area) is None
    assert pywrite.as_module(SHAPES, "total = 0.0", area) is None
    assert pywrite.as_module(SHAPES, "Areas of shapes", "area = 1\n") is None


def test_an_edit_of_the_docstring_s_text_into_the_whole_module_is_the_module(
    tmp_path: Path,
) -> None:
    """refactor-1 on the CPU (350101c), round 2, verbatim: the docstring's text as old, and
    as new area and the three functions rewritten to call it, every function shapes.py
    has. Refused as code inside a string, it sent the same again with its new text as old,
    until the subtask failed. Such an edit is the file's code, under its docstring."""
    from test_textcalls import SEMICOLON

    edit = _edit_after_read(tmp_path, [EDIT_STEP, "run python -m pytest"], SEMICOLON)
    assert edit["ok"], edit["result"]
    assert edit["result"].startswith(
        "old was the text of the docstring of 'shapes.py', so new went in as code below it, "
        "not inside it: new defines area, total_area, largest and report, every function "
        "the file had, in their place"
    ), edit["result"]
    made = (tmp_path / "shapes.py").read_text()
    docstring = '"""Areas of shapes given as (kind, size) pairs; unknown kinds are left out."""'
    assert made.startswith(docstring + "\n\n\ndef area(kind, size):\n")
    assert made.count("def total_area(") == 1 and made.count("3.14159") == 1
    assert "total += area(kind, size)" in made
    compile(made, "shapes.py", "exec")


# refactor-1 on the CPU (fe61f7b), verbatim: the plan's write step, written as the whole
# refactor (its docstring's text without quotes, mended); then the plan's edit step, the
# docstring's text as old and, as new, that text and the same code again. Refused as code
# inside a string, then sent with the code as old, not found.
WHOLE_WRITE = (
    '{{"name": "write_file", "arguments": {"path": "shapes.py", "content": """Are'
    "as of shapes given as (kind, size) pairs; unknown kinds are left out.\n\ndef a"
    'rea(kind, size):\n    if kind == "circle":\n        return 3.14159 * size * si'
    'ze\n    elif kind == "square":\n        return size * size\n    else:\n        r'
    "eturn None\n\ndef total_area(shapes):\n    total = 0.0\n    for kind, size in sh"
    "apes:\n        total += area(kind, size)\n    return total\n\n\ndef largest(shape"
    "s):\n    best, best_area = None, -1.0\n    for kind, size in shapes:\n        i"
    'f kind == "circle":\n            this = area(kind, size)\n        elif kind =='
    ' "square":\n            this = area(kind, size)\n        else:\n            con'
    "tinue\n        if this > best_area:\n            best, best_area = (kind, size"
    "), this\n    return best\n\n\ndef report(shapes):\n    lines = []\n    for kind, s"
    'ize in shapes:\n        if kind == "circle":\n            lines.append(f"{kind'
    '} {size}: {area(kind, size):.2f}")\n        elif kind == "square":\n          '
    '  lines.append(f"{kind} {size}: {area(kind, size):.2f}")\n    return "\\n".joi'
    'n(lines)"""}}'
)
AGAIN_EDIT = (
    '{{"name": "replace_in_file", "arguments": {"path": "shapes.py", "old": """Ar'
    'eas of shapes given as (kind, size) pairs; unknown kinds are left out."""}, '
    '"new": """Areas of shapes given as (kind, size) pairs; unknown kinds are lef'
    't out.\n\ndef area(kind, size):\n    if kind == "circle":\n        return 3.1415'
    '9 * size * size\n    elif kind == "square":\n        return size * size\n    el'
    "se:\n        return None\n\ndef total_area(shapes):\n    total = 0.0\n    for kin"
    "d, size in shapes:\n        total += area(kind, size)\n    return total\n\n\ndef "
    "largest(shapes):\n    best, best_area = None, -1.0\n    for kind, size in shap"
    'es:\n        if kind == "circle":\n            this = area(kind, size)\n       '
    ' elif kind == "square":\n            this = area(kind, size)\n        else:\n  '
    "          continue\n        if this > best_area:\n            best, best_area "
    "= (kind, size), this\n    return best\n\n\ndef report(shapes):\n    lines = []\n  "
    '  for kind, size in shapes:\n        if kind == "circle":\n            lines.a'
    'ppend(f"{kind} {size}: {area(kind, size):.2f}")\n        elif kind == "square'
    '":\n            lines.append(f"{kind} {size}: {area(kind, size):.2f}")\n    re'
    'turn "\\n".join(lines)"""}}'
)


def test_an_edit_of_the_docstring_s_text_into_the_code_the_file_has_changes_nothing(
    tmp_path: Path,
) -> None:
    steps = [
        "write_file shapes.py to add the area function",
        "replace_in_file shapes.py to replace the repeated area formulas with the area function",
    ]
    edit = _edit_after_read(tmp_path, steps, WHOLE_WRITE, AGAIN_EDIT)
    written = (tmp_path / "shapes.py").read_text()
    assert (
        not edit["ok"]
        and (
            "\n'shapes.py' already has this code: old is the text of its docstring, and new is "
            "that text and the code below it; nothing would change"
        )
        in edit["result"]
    ), edit["result"]
    assert "def area(kind, size):" in written
    done = records_of(tmp_path, "subtask_completed")
    assert [d["by"] for d in done][-1] == "write", done


EDIT_STEP = "replace_in_file shapes.py to move the area formulas into one function area(kind, size)"


def _edit_after_read(ws: Path, steps: list[str], *replies: str) -> dict[str, Any]:
    """The replace_in_file record of a goal planned as a read of shapes.py and `steps`, the
    model reading it, then sending `replies`."""
    (ws / "shapes.py").write_text(SHAPES)
    (ws / "test_shapes.py").write_text(TESTS)
    rounds = [{"content": '{{"name": "read_file", "arguments": {"path": "shapes.py"}}}}'}]
    rounds += [{"content": r} for r in replies]
    plan = plan_rule((GOAL, ["read_file shapes.py", *steps]))
    small_model_goal(ws, GOAL, plan, rounds, LOCALAGENT_MAX_ROUNDS=str(len(rounds)))
    (edit,) = [r for r in records_of(ws, "action_finished") if r["tool"] == "replace_in_file"]
    return edit


def test_a_function_the_goal_names_that_nothing_defines_is_unmet(tmp_path: Path) -> None:
    """The tests pass before any change: a run that refactored nothing is not verified,
    whatever the small verifier says."""
    verdict = _read_and_tested(tmp_path, SHAPES)
    assert verdict["unmet"] == [
        "the goal names the function area, and no Python file here defines it"
    ]


def _read_and_tested(ws: Path, shapes: str) -> dict[str, Any]:
    """The verdict on a run that read shapes.py (as `shapes`) and ran the tests, which
    passed, with the small verifier's VERIFIED: failed, on the checks."""
    (ws / "shapes.py").write_text(shapes)
    (ws / "test_shapes.py").write_text(TESTS)
    steps = ["read_file shapes.py", "run python -m pytest"]
    rounds = [{"content": '{{"name": "read_file", "arguments": {"path": "shapes.py"}}}}'}]
    rounds += [{"content": '{{"name": "run_cmd", "arguments": {"cmd": "python -m pytest"}}}}'}]
    ran, _ = small_model_goal(
        ws, GOAL, plan_rule((GOAL, steps)), rounds, VERIFIED,
        LOCALAGENT_MAX_ROUNDS="2", LOCALAGENT_VERIFY="1",
    )  # fmt: skip
    verdict = records_of(ws, "verdict")[0]
    assert (verdict["source"], verdict["verification"]) == ("checks", "failed"), verdict
    assert not records_of(ws, "goal_completed") and ran.returncode != 0
    return verdict


def test_a_function_the_goal_says_to_use_that_nothing_calls_is_unmet(tmp_path: Path) -> None:
    """area added above the three functions, which still repeat its code (the 1.5B's CPU
    runs, after the hand-back's write): the tests pass as they did before any change, and
    the goal says to use area; its own call of itself counts for nothing."""
    area = "def area(kind, size):\n    return area(kind, size)\n\n\n"
    verdict = _read_and_tested(tmp_path, area + SHAPES)
    assert verdict["unmet"] == ["the goal says to use the function area, and no code here calls it"]


def test_a_function_the_goal_says_to_use_counts_as_called_where_it_is(tmp_path: Path) -> None:
    (tmp_path / "shapes.py").write_text(
        "def area(kind, size):\n    return 3.14159 * size * size if kind == 'circle' else "
        "size * size if kind == 'square' else 0.0\n\n\n"
        + SHAPES.replace("total += 3.14159 * size * size", "total += area(kind, size)")
    )
    (tmp_path / "test_shapes.py").write_text(TESTS)
    assert "total += area(kind, size)" in (tmp_path / "shapes.py").read_text()
    steps = ["run python -m pytest"]
    rounds = [{"content": '{{"name": "run_cmd", "arguments": {"cmd": "python -m pytest"}}}}'}]
    small_model_goal(
        tmp_path, GOAL, plan_rule((GOAL, steps)), rounds, VERIFIED,
        LOCALAGENT_MAX_ROUNDS="1", LOCALAGENT_VERIFY="1",
    )  # fmt: skip
    verdict = records_of(tmp_path, "verdict")[0]
    assert not any("no code here calls it" in u for u in verdict["unmet"]), verdict
    assert (
        "the goal says to use the function area in total_area, largest and report, and "
        "largest and report do not call it"
    ) in verdict["unmet"], verdict


@pytest.mark.parametrize(
    ("goal", "names"),
    [
        (GOAL, ["area"]),
        (real_goal("mathx").text, ["add", "subtract", "multiply", "divide"]),
        ("Write a function that adds two numbers", []),
        ("Create a function called `greet` in a.py", ["greet"]),
        ("Use the function json.loads(x) in app.py", []),
        ("Write the function fib(n) in fib.py", ["fib"]),
    ],
)
def test_which_functions_a_goal_names(goal: str, names: list[str]) -> None:
    assert named_functions(goal) == names


@pytest.mark.parametrize(
    ("goal", "code", "found"),
    [
        (GOAL, "def area(k, s):\n    return area(k, s)\n", True),  # only itself
        (GOAL, "def area(k, s):\n    return s\n\ndef t(x):\n    return sum(map(area, x))\n", False),
        (GOAL, "def area(k, s):\n    return s\n\nimport shapes\nshapes.area(1, 2)\n", False),
        (
            "Write the function area(kind, size) in shapes.py",
            "def area(k, s):\n    return s\n",
            False,
        ),
        (GOAL, "x = 1\n", False),  # not defined: `undefined` says so
    ],
)
def test_which_functions_the_goal_says_to_use_are_unused(
    tmp_path: Path, goal: str, code: str, found: bool
) -> None:
    (tmp_path / "shapes.py").write_text(code)
    assert bool(unused(goal, tmp_path)) is found


# refactor-1 on the CPU (code of dd932bd), rounds 1 to 4, verbatim: area added, written
# again unchanged, then area's definition sent as old and total_area's old code as new.
READ = '{{"name": "read_file", "arguments": {"path": "shapes.py"}}}}'
ADD_AREA = (
    '{{"name": "replace_in_file", "arguments": {"path": "shapes.py", "old": """Areas '
    'of shapes given as (kind, size) pairs; unknown kinds are left out."""}, "new": "'
    '""def area(kind, size):\n    if kind == "circle":\n        return 3.14159 * size *'
    ' size\n    elif kind == "square":\n        return size * size\n    else:\n        re'
    'turn None  # or raise an error, depending on your requirements"""}}}}'
)
AREA_AGAIN = (
    '{{"name": "write_file", "arguments": {"path": "shapes.py", "content": """def are'
    'a(kind, size):\n    if kind == "circle":\n        return 3.14159 * size * size\n   '
    ' elif kind == "square":\n        return size * size\n    else:\n        return None'
    '  # or raise an error, depending on your requirements"""}}}}'
)
SWAP = (
    '{{"name": "replace_in_file", "arguments": {"path": "shapes.py", "old": """def ar'
    'ea(kind, size):\n    if kind == "circle":\n        return 3.14159 * size * size\n  '
    '  elif kind == "square":\n        return size * size\n    else:\n        return Non'
    'e  # or raise an error, depending on your requirements"""}, "new": """def total_'
    'area(shapes):\n    total = 0.0\n    for kind, size in shapes:\n        if kind == "'
    'circle":\n            total += 3.14159 * size * size\n        elif kind == "square'
    '":\n            total += size * size\n    return total"""}}}}'
)


def test_an_edit_that_defines_a_function_twice_is_refused(tmp_path: Path) -> None:
    """Made, the edit left area gone and total_area twice; every write after it changed
    one of the two, and the goal failed with the circle's formula in three places."""
    (tmp_path / "shapes.py").write_text(SHAPES)
    (tmp_path / "test_shapes.py").write_text(TESTS)
    steps = [
        "read_file shapes.py",
        "replace_in_file shapes.py to move the area formulas into one function area(kind, size)",
        "run python -m pytest",
    ]
    rounds = [{"content": r} for r in (READ, ADD_AREA, AREA_AGAIN, SWAP)]
    small_model_goal(tmp_path, GOAL, plan_rule((GOAL, steps)), rounds, LOCALAGENT_MAX_ROUNDS="4")
    swap = records_of(tmp_path, "action_finished")[-1]
    assert swap["ok"] is False, swap
    assert (
        "\nnot changed: after this edit 'shapes.py' would define total_area (lines 4 and 14), "
        "and Python keeps only the last." in swap["result"]
    ), swap["result"]
    text = (tmp_path / "shapes.py").read_text()
    assert text.count("def area(kind, size):") == 1
    assert text.count("def total_area(shapes):") == 1


def test_a_write_merged_into_a_file_keeps_its_line_ends() -> None:
    """On Windows the seeded shapes.py has CRLF line ends: the merged write of area kept
    LF for area's lines, and an edit of area sent after it (its old made CRLF, as the file
    has) no longer matched them."""
    crlf = SHAPES.replace("\n", "\r\n")
    area = "def area(kind, size):\n    return size * size\n"
    made = pywrite.merged(crlf, area)
    assert made is not None
    assert made[0].count("\n") == made[0].count("\r\n"), made[0]
    assert "def area(kind, size):\r\n    return size * size\r\n" in made[0]
