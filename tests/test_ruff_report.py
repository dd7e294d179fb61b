"""ruff's report as the model reads it (`tools/outtrim.py`): each problem ruff fixes itself
(`[*]`) is one line, where and what, as its concise format writes it; a problem left to
the model keeps its excerpt of the code. Qwen2.5-Coder-1.5B's mathx run on the CPU read
ruff's two fixable import problems as 1,012 characters (about 300 tokens read anew), an
excerpt and a diff each, before it ran `ruff check --fix`."""

from __future__ import annotations

from pathlib import Path

from localagent.tools import ToolContext, execute
from localagent.tools.outtrim import for_model

# ruff 0.17's report of that run, verbatim.
MATHX = (
    "I001 [*] Import block is un-sorted or un-formatted\n --> tests/test_mathx.py:1:1\n  |\n"
    "1 | / import pytest\n2 | | from mathx import add, subtract, multiply, divide\n"
    "  | |_________________________________________________^\n3 |\n4 |   def test_add():\n"
    "  |\nhelp: Organize imports\n  |\n1 | import pytest\n"
    "  - from mathx import add, subtract, multiply, divide\n2 |\n"
    "3 + from mathx import add, divide, multiply, subtract\n4 +\n5 +\n6 | def test_add():\n"
    "  |\n\nF401 [*] `pytest` imported but unused\n --> tests/test_mathx.py:1:8\n  |\n"
    "1 | import pytest\n  |        ^^^^^^\n2 | from mathx import add, subtract, multiply, divide\n"
    "  |\nhelp: Remove unused import: `pytest`\n  |\n  - import pytest\n"
    "1 | from mathx import add, subtract, multiply, divide\n  |\n\nFound 2 errors.\n"
    "[*] 2 fixable with `--fix`.\n"
)

# ruff 0.6's report (the form before 0.12), verbatim: the place starts the line.
BEFORE = (
    "t.py:1:8: F401 [*] `pytest` imported but unused\n  |\n1 | import pytest\n"
    "  |        ^^^^^^ F401\n2 | import os\n3 | from mathx import add, subtract\n  |\n"
    "  = help: Remove unused import: `pytest`\n\n"
    "t.py:6:5: E741 Ambiguous variable name: `l`\n  |\n5 | def test_add():\n6 |     l = 1\n"
    "  |     ^ E741\n7 |     assert add(1, 2) == 3\n8 |     x = undefined_name\n  |\n\n"
    "t.py:8:9: F821 Undefined name `undefined_name`\n  |\n6 |     l = 1\n"
    "7 |     assert add(1, 2) == 3\n8 |     x = undefined_name\n"
    "  |         ^^^^^^^^^^^^^^ F821\n  |\n\nFound 3 errors.\n"
    "[*] 1 fixable with the `--fix` option.\n"
)


def test_the_problems_ruff_fixes_itself_are_a_line_each(tmp_path: Path) -> None:
    assert for_model(tmp_path, MATHX) == (
        "tests/test_mathx.py:1:1: I001 [*] Import block is un-sorted or un-formatted\n"
        "tests/test_mathx.py:1:8: F401 [*] `pytest` imported but unused\n"
        "Found 2 errors.\n[*] 2 fixable with `--fix`.\n"
    )


def test_ruffs_older_report_loses_the_excerpts_of_what_it_fixes_only(tmp_path: Path) -> None:
    text = for_model(tmp_path, BEFORE)
    assert text.startswith("t.py:1:8: F401 [*] `pytest` imported but unused\nt.py:6:5: E741")
    assert "Remove unused import" not in text and "^^^^^^ F401" not in text
    kept = BEFORE[BEFORE.index("t.py:6:5") :]
    assert text.endswith(kept)  # what the model must change itself, with its code


def test_a_run_of_ruff_shows_the_code_only_of_what_it_does_not_fix(tmp_path: Path) -> None:
    """Through run_cmd, with the ruff the project is checked with."""
    (tmp_path / "ruff.toml").write_text('[lint]\nselect = ["F", "I"]\n')
    code = "import pytest\nimport os\n\n\ndef test_add():\n    assert undefined_name == 3\n"
    (tmp_path / "t.py").write_text(code)
    result = execute(ToolContext(tmp_path), "run_cmd", {"cmd": "ruff check t.py"})
    assert not result.ok
    lines = result.text.splitlines()
    assert "t.py:1:8: F401 [*] `pytest` imported but unused" in lines, result.text
    assert "t.py:2:8: F401 [*] `os` imported but unused" in lines, result.text
    assert not any(line.startswith("help: Remove unused import") for line in lines)
    assert "Undefined name `undefined_name`" in result.text
    assert "6 |     assert undefined_name == 3" in lines, result.text  # its excerpt stays
    assert "Found 4 errors." in lines
