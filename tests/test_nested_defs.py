"""Functions a small model wrote indented inside the function above them go back to the
top level (small profile, `tools/mends/nested.py`). Qwen2.5-Coder-1.5B's refactor on the CPU,
verbatim through the real CLI on the scripted fake server: asked for shapes.py whole, it
wrote area first and total_area, largest and report one level deeper, inside area's body,
three times; each write was refused for dropping what test_shapes.py imports, until its
repeat was blocked."""

from __future__ import annotations

from pathlib import Path

import pytest
from shapes_support import GOAL, USE_STEP, seeded
from support import plan_rule, records_of, small_model_goal
from test_refactor_edits import WHOLE

from localagent.tools.mends import nested

# The area the hand-back's first step had added, verbatim.
AREA = (
    "def area(kind, size):\n    if kind == 'circle':\n        return 3.14 * size ** 2\n"
    "    elif kind == 'square':\n        return size ** 2\n    elif kind == 'triangle':\n"
    "        return 0.5 * size * size\n"
)
# Round 5 of refactor-1 (code of a68a53e), verbatim.
NESTED = (
    '{{"name": "write_file", "arguments": {"path": "shapes.py", "content": "def area(kind'
    ", size):\\n    if kind == 'circle':\\n        return 3.14 * size ** 2\\n    elif kind ="
    "= 'square':\\n        return size ** 2\\n    elif kind == 'triangle':\\n        return "
    "0.5 * size * size\\n\\n    def total_area(shapes):\\n        total = 0.0\\n        for k"
    "ind, size in shapes:\\n            if kind == 'circle':\\n                total += 3.1"
    "4159 * size * size\\n            elif kind == 'square':\\n                total += siz"
    "e * size\\n        return total\\n\\n    def largest(shapes):\\n        best, best_area "
    "= None, -1.0\\n        for kind, size in shapes:\\n            if kind == 'circle':\\n "
    "               this = 3.14159 * size * size\\n            elif kind == 'square':\\n   "
    "             this = size * size\\n            else:\\n                continue\\n      "
    "      if this > best_area:\\n                best, best_area = (kind, size), this\\n  "
    "      return best\\n\\n    def report(shapes):\\n        lines = []\\n        for kind, "
    "size in shapes:\\n            if kind == 'circle':\\n                lines.append(f'{k"
    "ind} {size}: {3.14159 * size * size:.2f}')\\n            elif kind == 'square':\\n    "
    "            lines.append(f'{kind} {size}: {size * size:.2f}')\\n        return '\\n'.j"
    'oin(lines)\\n"}}}}'
)
READ = '{{"name": "read_file", "arguments": {"path": "shapes.py"}}}}'
RUN = '{{"name": "run_cmd", "arguments": {"cmd": "python -m pytest"}}}'


def test_functions_written_inside_another_go_back_to_the_top_level(tmp_path: Path) -> None:
    seeded(tmp_path, AREA)
    steps = [USE_STEP, "run python -m pytest"]
    rounds = [{"content": r} for r in (READ, NESTED, WHOLE)]
    small_model_goal(tmp_path, GOAL, plan_rule((GOAL, steps)), rounds, LOCALAGENT_MAX_ROUNDS="3")
    _, nested, whole = records_of(tmp_path, "action_finished")[:3]
    assert nested["ok"], nested["result"]
    assert (
        "; total_area, largest, report were written indented inside area, so they were "
        "written at the top level, as the file had them"
    ) in nested["result"]
    # Written, the three still repeat the formulas: the step asks that they call area.
    assert "SUBTASK COMPLETE" not in nested["result"]
    assert nested["result"].endswith(
        "NOTE: total_area, largest and report do not call area yet, and this step is done "
        "only when each of them calls it instead of repeating its code. Next: write_file "
        "shapes.py with only `def total_area(shapes):` and its code changed to call area as "
        "the content; it takes the place of the one shapes.py has, and the rest of shapes.py "
        "stays"
    ), nested["result"]
    assert "SUBTASK COMPLETE" in whole["result"] and "NOTE" not in whole["result"]
    done = records_of(tmp_path, "subtask_completed")
    assert [(d["by"], d["evidence"]) for d in done][1:2] == [("write", [whole["seq"]])], done


def test_the_nested_functions_are_written_at_the_top_level(tmp_path: Path) -> None:
    seeded(tmp_path, AREA)
    steps = [USE_STEP, "run python -m pytest"]
    rounds = [{"content": r} for r in (READ, NESTED, RUN)]
    small_model_goal(tmp_path, GOAL, plan_rule((GOAL, steps)), rounds, LOCALAGENT_MAX_ROUNDS="3")
    _, write, run = records_of(tmp_path, "action_finished")[:3]
    text = (tmp_path / "shapes.py").read_text()
    assert write["ok"] and text.startswith("def area(kind, size):\n"), write["result"]
    assert "\n\n\ndef total_area(shapes):\n    total = 0.0\n" in text
    assert "\ndef report(shapes):\n" in text and "\n    return '\\n'.join(lines)\n" in text
    assert "3 passed" in run["result"], run["result"]


NESTED_TAIL = (
    "def outer(x):\n    y = x + 1\n    return y\n\n    def total_area(shapes):\n"
    "        return len(shapes)\n"
)


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (
            "def outer(x):\n    y = x + 1\n\n    def total_area(shapes):\n        return y\n",
            "it uses the outer function's own name",
        ),
        ("def outer(x):\n    def total_area(shapes):\n        return 1\n", "nothing else in outer"),
        (NESTED_TAIL.replace("total_area", "helper"), "the file never had it at the top level"),
        (NESTED_TAIL + "\n\ndef total_area(shapes):\n    return 0\n", "the top level has it"),
        (
            "def outer(x):\n    y = 1\n\n    def total_area(shapes):\n        nonlocal z\n",
            "the parser takes it, the compiler does not",
        ),
        (
            "def outer(x):\n    return x\n\n    def total_area(shapes):\n"
            "        return '''a\nb'''\n",
            "a line less indented than the function",
        ),
    ],
)
def test_nested_functions_stay_where_lifting_could_change_the_code(
    tmp_path: Path, content: str, why: str
) -> None:
    (tmp_path / "shapes.py").write_text("def total_area(shapes):\n    return 0\n")
    assert nested.lifted(tmp_path, "shapes.py", content) is None, why


def test_only_python_files_the_workspace_has_are_mended(tmp_path: Path) -> None:
    assert nested.lifted(tmp_path, "shapes.py", NESTED_TAIL) is None  # no file yet
    (tmp_path / "shapes.txt").write_text("def total_area(shapes):\n    return 0\n")
    assert nested.lifted(tmp_path, "shapes.txt", NESTED_TAIL) is None


def test_siblings_that_call_each_other_still_find_each_other(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("def a():\n    return 1\n\n\ndef b():\n    return a()\n")
    content = (
        "def main():\n    print(b())\n\n    @staticmethod\n    def a():\n        return 1\n\n"
        "    def b():\n        return a()\n\n\nmain()\n"
    )
    text, names, outer = nested.lifted(tmp_path, "m.py", content) or ("", [], "")
    assert (names, outer) == (["a", "b"], "main")
    assert text == (
        "def main():\n    print(b())\n\n\n@staticmethod\ndef a():\n    return 1\n\n"
        "def b():\n    return a()\n\n\nmain()\n"
    )
