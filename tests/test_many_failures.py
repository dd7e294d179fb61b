"""Of tests that each fail their own way, the model reads a few reports and how many more
(`tools/outtrim.py`); read_output keeps every line. Qwen2.5-Coder-1.5B's mathx tests on
the CPU expected wrong values in 30 of 44 cases: 3,689 characters, 1,276 tokens the
engine read anew, three times in one run (the p90 of the tokens read per call)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from localagent.tools import ToolContext, execute
from localagent.tools.outtrim import LEFT_OUT, for_model

# tests/test_mathx.py as that run had it, verbatim (its import written by the import mend).
TESTS = (
    "import pytest\n"
    "\n"
    "from mathx import add, subtract, multiply, divide\n"
    "\n"
    "\n"
    "@pytest.mark.parametrize('a, b, expected', [(1, 2, 3), (3, 4, 7), (5, 6, 11), (0, 1,"
    " 1), (1, 0, 1), (-1, -1, 1), (-1, 1, -2), (1, -1, 2), (2, -2, 0), (0, 2, 0), (2, 0, "
    "2)])\n"
    "def test_add(a, b, expected):\n"
    "    assert add(a, b) == expected\n"
    "\n"
    "@pytest.mark.parametrize('a, b, expected', [(1, 2, -1), (3, 4, -1), (5, 6, -1), (0, "
    "1, -1), (1, 0, -1), (-1, -1, -1), (-1, 1, 0), (1, -1, 0), (2, -2, 1), (0, 2, 1), (2,"
    " 0, 1)])\n"
    "def test_subtract(a, b, expected):\n"
    "    assert subtract(a, b) == expected\n"
    "\n"
    "@pytest.mark.parametrize('a, b, expected', [(1, 2, 2), (3, 4, 1), (5, 6, 1), (0, 1, "
    "-1), (1, 0, 1), (-1, -1, 0), (-1, 1, -2), (1, -1, 2), (2, -2, -2), (0, 2, 2), (2, 0,"
    " 2)])\n"
    "def test_multiply(a, b, expected):\n"
    "    assert multiply(a, b) == expected\n"
    "\n"
    "@pytest.mark.parametrize('a, b, expected', [(1, 2, 0), (3, 4, 0), (5, 6, 0), (0, 1, "
    "0), (1, 0, 0), (-1, -1, 0), (-1, 1, 0), (1, -1, 0), (2, -2, 0), (0, 2, 0), (2, 0, 0)"
    "])\n"
    "def test_divide(a, b, expected):\n"
    "    assert divide(a, b) == expected"
)
MODULES = {
    "__init__": (
        "from .add import add as add\nfrom .divide import divide as divide\n"
        "from .multiply import multiply as multiply\nfrom .subtract import subtract as subtract"
    ),
    "add": "def add(a, b): return a + b",
    "subtract": "def subtract(a, b): return a - b",
    "multiply": "def multiply(a, b): return a * b",
    "divide": "def divide(a, b): return a / b",
}


def _seeded(root: Path) -> None:
    (root / "mathx").mkdir()
    for name, code in MODULES.items():
        (root / "mathx" / f"{name}.py").write_text(code)
    (root / "tests").mkdir()
    (root / "tests" / "test_mathx.py").write_text(TESTS)
    # pytest's rootdir and settings here, whatever the folders above hold.
    (root / "pytest.ini").write_text("[pytest]\n")


CMD = "python -m pytest -p no:cacheprovider tests/test_mathx.py"


def test_the_short_summary_of_tests_failing_each_their_own_way_ends_with_a_count(
    tmp_path: Path,
) -> None:
    _seeded(tmp_path)
    result = execute(ToolContext(tmp_path), "run_cmd", {"cmd": CMD})
    assert not result.ok and "30 failed, 14 passed" in result.text, result.text
    failed = [line for line in result.text.splitlines() if line.startswith("FAILED ")]
    assert len(failed) == 8, failed
    assert "\n(and 17 more)\n" in result.text
    assert len(result.text) < 2600, len(result.text)  # 3,689 characters before


def test_past_a_few_reports_the_others_are_left_out(tmp_path: Path) -> None:
    """The whole output (a run's is cut in its middle before it is trimmed)."""
    _seeded(tmp_path)
    # Set, CI makes pytest show each message whole in its short summary, two lines each.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "PY_COLORS"))}
    env.pop("CI", None)
    ran = subprocess.run(
        [sys.executable, *CMD.split()[1:]],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**env, "NO_COLOR": "1", "COLUMNS": "80"},
    )
    text = for_model(tmp_path, ran.stdout)
    reports = [line for line in text.splitlines() if line.startswith("_____")]
    assert len(reports) == 5, reports
    assert f"\n{LEFT_OUT}\n" in text
    assert len(ran.stdout) > 15_000 and len(text) < 2_800, text


def test_tests_failing_in_few_ways_keep_every_report(tmp_path: Path) -> None:
    code = "".join(f"def test_{n}():\n    assert {n} == {n + 1}\n\n\n" for n in range(4))
    (tmp_path / "test_few.py").write_text(code)
    cmd = "python -m pytest -p no:cacheprovider test_few.py"
    result = execute(ToolContext(tmp_path), "run_cmd", {"cmd": cmd})
    assert "4 failed" in result.text and LEFT_OUT not in result.text
    assert [line for line in result.text.splitlines() if line.startswith("FAILED ")] == [
        f"FAILED test_few.py::test_{n} - assert {n} == {n + 1}" for n in range(4)
    ]
