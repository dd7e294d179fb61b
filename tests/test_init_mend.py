"""A small model's package `__init__.py` that imports from its own package what only its
modules hold is written as the import of their functions. Qwen2.5-Coder-1.5B's mathx runs
on an H100, replayed verbatim on the scripted fake server through the real CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from support import plan_rule, records_of, ruff_step, small_model_goal

from localagent.tools.mends import inits

MATHX = (
    "Create a Python package mathx with the functions add, subtract, multiply and divide "
    "(divide raises ValueError when dividing by zero), with pytest tests in "
    "tests/test_mathx.py; the tests must pass with pytest and ruff check must be clean"
)
STEPS = [
    "write_file mathx/__init__.py with the package structure",
    "write_file mathx/add.py with the add function",
    "write_file mathx/subtract.py with the subtract function",
    "write_file mathx/multiply.py with the multiply function",
    "write_file mathx/divide.py with the divide function",
    "write_file tests/test_mathx.py with the test cases",
    "run python -m pytest tests/test_mathx.py to ensure the tests pass",
]
# The 1.5B's rounds, verbatim: the self-import first, then one module a function. The
# tests failed with "'module' object is not callable" and it ran pytest until strikes.
ROUNDS = [
    '{{"name": "write_file", "arguments": {"path": "mathx/__init__.py", "content": "from mathx '
    'import add, subtract, multiply, divide"}}}',
    '{{"name": "write_file", "arguments": {"path": "mathx/add.py", "content": "def add(a, b):'
    '\\n    return a + b"}}}',
    '{{"name": "write_file", "arguments": {"path": "mathx/subtract.py", "content": "def '
    'subtract(a, b):\\n    return a - b"}}}',
    '{{"name": "write_file", "arguments": {"path": "mathx/multiply.py", "content": "def '
    'multiply(a, b):\\n    return a * b"}}}',
    '{{"name": "write_file", "arguments": {"path": "mathx/divide.py", "content": "def divide(a,'
    " b):\\n    if b == 0:\\n        raise ValueError('Cannot divide by zero')\\n    return a / "
    'b"}}}',
    '{{"name": "write_file", "arguments": {"path": "tests/test_mathx.py", "content": "import '
    "mathx\\n\\ndef test_add():\\n    assert mathx.add(1, 2) == 3\\n\\ndef test_subtract():\\n"
    "    assert mathx.subtract(1, 2) == -1\\n\\ndef test_multiply():\\n    assert "
    'mathx.multiply(1, 2) == 2\\n\\ndef test_divide():\\n    assert mathx.divide(1, 2) == 0.5"}}}',
    '{{"name": "run_cmd", "arguments": {"cmd": "python -m pytest tests/test_mathx.py"}}}',
]
IMPORTS = (
    "from .add import add as add\nfrom .divide import divide as divide\n"
    "from .multiply import multiply as multiply\nfrom .subtract import subtract as subtract"
)


def test_the_self_import_of_functions_yet_to_be_written_imports_their_modules_functions(
    tmp_path: Path,
) -> None:
    replies = [{"content": r} for r in ROUNDS]
    ran, _ = small_model_goal(
        tmp_path, MATHX, plan_rule((MATHX, STEPS)), replies, LOCALAGENT_MAX_ROUNDS="8"
    )
    results = [r["result"] for r in records_of(tmp_path, "action_finished")]
    assert results[0].startswith(
        "wrote 150 bytes to 'mathx/__init__.py' (created); `from mathx import add, subtract, "
        "multiply, divide` would import mathx's modules, not their functions, so it was "
        "written as `from .add import add as add; from .divide import divide as divide; "
        "from .multiply import multiply as multiply; from .subtract import subtract as "
        "subtract`; mathx loads once mathx/add.py, mathx/divide.py, mathx/multiply.py, "
        "mathx/subtract.py are written, each with its function (mathx/add.py: def add(...): "
        "...)\nSUBTASK COMPLETE"
    )
    assert (tmp_path / "mathx" / "__init__.py").read_text() == IMPORTS
    assert "4 passed" in results[-1]
    assert ran.returncode == 0, ran.stdout + ran.stderr
    by = [c.get("by") for c in records_of(tmp_path, "subtask_completed")]
    assert by == ["write"] * 6 + ["run"]


def test_which_imports_are_mended(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "add.py").write_text("def add(a, b):\n    return a + b\n")
    (package / "utils.py").write_text("def helper():\n    return 1\n")
    (package / "sub").mkdir()
    init = "pkg/__init__.py"
    assert inits.mend(tmp_path, init, "from . import add\n") == (
        "from . import add",
        "from .add import add as add",
        "from .add import add as add\n",
    )
    # a helper module, a sub-package, a name the file defines, an alias, another package
    for content in (
        "from . import add, utils\n",
        "from pkg import sub\n",
        "from pkg import add\n\n\ndef add(a, b):\n    return a + b\n",
        "from pkg import add as plus\n",
        "from other import add\n",
        "from pkg import (\n    add,\n)\n",
    ):
        assert inits.mend(tmp_path, init, content) is None, content
    assert inits.mend(tmp_path, "pkg/add.py", "from pkg import add\n") is None
    assert inits.unwritten(
        tmp_path, init, "from .add import add as add\nfrom .mul import mul as mul"
    ) == ["pkg/mul.py"]


def test_a_goal_that_names_ruff_is_checked_with_ruff_and_told_its_fix(tmp_path: Path) -> None:
    """The package mended, its tests pass; the 1.5B's test file fails ruff's import-order
    rule (one blank line after `import mathx`). The run is told the `--fix` command; the
    verification runs `ruff check .` itself, since the goal names ruff."""
    if shutil.which("ruff") is None:
        pytest.skip("no ruff program on PATH")
    steps = [*STEPS, "run ruff check to ensure the code is clean"]
    ruff = '{{"name": "run_cmd", "arguments": {"cmd": "ruff check"}}}'
    fix = '{{"name": "run_cmd", "arguments": {"cmd": "ruff check --fix"}}}'
    verdict = {
        "content": json.dumps(
            {"verdict": "VERIFIED", "unmet": [], "evidence": [], "next": "finish"}
        )
    }
    replies = [{"content": r} for r in [*ROUNDS, ruff, fix]]
    ran, _ = small_model_goal(
        tmp_path,
        MATHX,
        plan_rule((MATHX, steps)),
        replies,
        verdict,
        LOCALAGENT_MAX_ROUNDS="10",
        LOCALAGENT_VERIFY="1",
    )
    results = [r["result"] for r in records_of(tmp_path, "action_finished")]
    assert results[-2].startswith("exit code 1\n") and "I001" in results[-2]
    assert (
        "NOTE: ruff fixes the problems marked [*] itself: run `ruff check --fix`, e.g. send: "
        '{"name": "run_cmd", "arguments": {"cmd": "ruff check --fix"}}' in results[-2]
    ), results[-2]
    assert results[-1].startswith("exit code 0\n")
    started = records_of(tmp_path, "verify_started")[0]
    assert [(c["cmd"], c["source"]) for c in started["checks"]] == [
        ("python -m pytest -q", "tests"),
        ("ruff check .", "goal"),
    ]
    assert [c["status"] for c in records_of(tmp_path, "check_finished")] == ["passed", "passed"]
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert records_of(tmp_path, "goal_completed")[0]["verification"] == "verified"


def test_a_ruff_step_is_done_by_its_passing_run(tmp_path: Path) -> None:
    """The 1.5B's step "run ruff check to ensure the code is clean" on the CPU: its
    `ruff check mathx` passed twice, then each repeat was blocked, and the step failed on
    the third strike. A passing ruff run ends a ruff step, as a passing test run ends a
    test step."""
    (tmp_path / "mathx").mkdir()
    (tmp_path / "mathx" / "__init__.py").write_text("def add(a, b):\n    return a + b\n")
    ruff = '{{"name": "run_cmd", "arguments": {"cmd": "ruff check mathx"}}}}'
    ran, _ = ruff_step(tmp_path, MATHX, "run ruff check to ensure the code is clean", ruff)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    (done,) = records_of(tmp_path, "subtask_completed")
    assert done["by"] == "run" and done["reason"].startswith("`ruff check mathx` ran and succeeded")
    assert not records_of(tmp_path, "action_blocked")
