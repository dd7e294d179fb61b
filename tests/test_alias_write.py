"""A rewrite that makes what other files import aliases of another function is refused
with why. Qwen2.5-Coder-1.5B's refactor on the CPU, verbatim through the real CLI on the
scripted fake server: asked for shapes.py whole with total_area, largest and report
calling area, it wrote `def area` and `total_area = area`, `largest = area`, `report =
area` below it; refused as if it had dropped them, it sent the same file until blocked."""

from __future__ import annotations

from pathlib import Path

from shapes_support import GOAL, SHAPES, TESTS, USE_STEP
from support import plan_rule, records_of, small_model_goal

from localagent.tools import pywrite

# Round 5 of refactor-1 (code of 0c90150), verbatim.
ALIASES = (
    '```json\n{\n  "name": "write_file",\n  "arguments": {\n    "path": "shapes.py",\n    "con'
    'tent": """\ndef area(kind, size):\n    if kind == "circle":\n        return 3.14159 * s'
    'ize * size\n    elif kind == "square":\n        return size * size\n    else:\n        r'
    'eturn None\n\ntotal_area = area\nlargest = area\nreport = area\n"""\n  }\n}\n```'
)


def test_a_rewrite_that_makes_imported_functions_aliases_says_so(tmp_path: Path) -> None:
    (tmp_path / "shapes.py").write_text(SHAPES)
    (tmp_path / "test_shapes.py").write_text(TESTS)
    rounds = [{"content": ALIASES}]
    small_model_goal(
        tmp_path, GOAL, plan_rule((GOAL, [USE_STEP])), rounds, LOCALAGENT_MAX_ROUNDS="1"
    )
    (write,) = [r for r in records_of(tmp_path, "action_finished") if r["tool"] == "write_file"]
    assert not write["ok"]
    assert write["result"].startswith(
        "not written: 'shapes.py' defines total_area, largest, report, which test_shapes.py "
        "imports, and this content makes total_area, largest, report other names for area, "
        "not functions of their own: called as they are called now, they would break. Keep "
        "each a function (`def total_area(...):` with its parameters as they are) whose code "
        "calls area. It is now:\n"
    ), write["result"]
    assert (tmp_path / "shapes.py").read_text() == SHAPES


def test_only_names_bound_to_one_function_it_defines_are_aliases() -> None:
    names = ["total_area", "largest"]
    assert pywrite.aliases("def area(k, s):\n    pass\n\n\ntotal_area = area\n", names) == (
        ["total_area"],
        "area",
    )
    assert pywrite.aliases("import math\n\ntotal_area = math\n", names) == ([], "")
    two = "def a():\n    pass\n\n\ndef b():\n    pass\n\n\ntotal_area = a\nlargest = b\n"
    assert pywrite.aliases(two, names) == ([], "")
    assert pywrite.aliases("total_area = (\n", names) == ([], "")
