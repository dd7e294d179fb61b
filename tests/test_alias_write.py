"""A rewrite that makes what other files import aliases of another function is refused
with why. Qwen2.5-Coder-1.5B's refactor on the CPU, verbatim through the real CLI on the
scripted fake server: asked for shapes.py whole with total_area, largest and report
calling area, it wrote `def area` and `total_area = area`, `largest = area`, `report =
area` below it; refused as if it had dropped them, it sent the same file until blocked."""

from __future__ import annotations

from pathlib import Path

from shapes_support import GOAL, SHAPES, TESTS, USE_STEP, seeded
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
        "each a function whose code calls area, one at a time: write_file shapes.py with only "
        "`def total_area(shapes):` and its code changed to call area as the content; it takes "
        "the place of the one the file has, and the rest stays. It is now:\n"
    ), write["result"]
    assert (tmp_path / "shapes.py").read_text() == SHAPES


# The hand-back's write of area alone, then the first write of its next step, verbatim
# (refactor-1 on the CPU, code of ee4806d): the three names bound to the area the file
# has, and nothing else. Refused for dropping them, with no word of why, it sent the same
# three lines until blocked.
AREA = (
    "def area(kind, size):\n    if kind == 'circle':\n        return 3.14159 * size * size\n"
    "    elif kind == 'square':\n        return size * size\n"
)
BOUND_ONLY = (
    '{{"name": "write_file", "arguments": {"path": "shapes.py", "content": "total_area = are'
    'a\\nlargest = area\\nreport = area"}}}}'
)


def test_names_bound_to_the_file_s_own_function_are_aliases_too(tmp_path: Path) -> None:
    seeded(tmp_path, AREA)
    before = (tmp_path / "shapes.py").read_text()
    steps = ["read_file shapes.py", USE_STEP]
    read = '{"name": "read_file", "arguments": {"path": "shapes.py"}}'
    rounds = [{"content": r} for r in (read, BOUND_ONLY)]
    small_model_goal(tmp_path, GOAL, plan_rule((GOAL, steps)), rounds, LOCALAGENT_MAX_ROUNDS="2")
    (write,) = [r for r in records_of(tmp_path, "action_finished") if r["tool"] == "write_file"]
    assert not write["ok"]
    assert write["result"].startswith(
        "not written: 'shapes.py' defines area, total_area, largest, report, which "
        "test_shapes.py imports, and this content makes total_area, largest, report other "
        "names for area"
    ), write["result"]
    assert "write_file shapes.py with only `def total_area(shapes):`" in write["result"]
    assert (tmp_path / "shapes.py").read_text() == before


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
    assert pywrite.aliases("total_area = area\n", names, "def area(k, s):\n    pass\n") == (
        ["total_area"],
        "area",
    )
    assert pywrite.aliases("total_area = total_area\n", names, "def total_area():\n  pass\n") == (
        [],
        "",
    )
