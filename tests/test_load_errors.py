"""A run that stops because a file this run wrote does not load goes back to a write of
that file. Qwen2.5-Coder-1.5B's mathx run on the CPU, replayed verbatim on the scripted
fake server through the real CLI: `mathx/__init__.py` held only an import of itself,
pytest stopped at collection, and in the subtask "run pytest to ensure the tests pass"
the model ran pytest again until three strikes; its own replan then planned the same
write, and it wrote the same line back."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support import VERIFIED, plan_rule, real_goal, records_of, small_model_goal

from localagent.state.checkruns import key
from localagent.state.ledger import Ledger, note_action, note_goal_check
from localagent.tools.loaderror import located
from localagent.tools.nameerrors import foreign_name

MATHX = (
    "Create a Python package mathx with the functions add, subtract, multiply and divide "
    "(divide raises ValueError when dividing by zero), with pytest tests in "
    "tests/test_mathx.py; the tests must pass with pytest and ruff check must be clean"
)
STEPS = [
    "write_file mathx/__init__.py with the package structure and functions",
    "write_file tests/test_mathx.py with the pytest tests",
    "run pytest to ensure the tests pass",
]
# The model's rounds, verbatim.
ROUNDS = [
    '{{"name": "write_file", "arguments": {"path": "mathx/__init__.py", "content": "from mathx '
    'import add, subtract, multiply, divide"}}}',
    '{{"name": "write_file", "arguments": {"path": "tests/test_mathx.py", "content": "import '
    "mathx\\n\\ndef test_add():\\n    assert mathx.add(1, 2) == 3\\n\\ndef test_subtract():\\n  "
    "  assert mathx.subtract(1, 2) == -1\\n\\ndef test_multiply():\\n    assert mathx.multiply(1"
    ', 2) == 2\\n\\ndef test_divide():\\n    assert mathx.divide(1, 2) == 0.5"}}}',
    '{{"name": "run_cmd", "arguments": {"cmd": "pytest tests/test_mathx.py"}}}',
    *['{{"name": "run_cmd", "arguments": {"cmd": "python -m pytest tests/test_mathx.py"}}}'] * 3,
]
TESTS = '{"name": "run_cmd", "arguments": {"cmd": "python -m pytest tests/test_mathx.py"}}'


# The 1.5B's modules in its other mathx runs on an H100, verbatim.
MODULES = [
    '{{"name": "write_file", "arguments": {"path": "mathx/add.py", "content": "def add(a, b):'
    '\\n    return a + b"}}}',
    '{{"name": "write_file", "arguments": {"path": "mathx/divide.py", "content": "def divide(a,'
    " b):\\n    if b == 0:\\n        raise ValueError('Cannot divide by zero')\\n    return a / "
    'b"}}}',
    '{{"name": "write_file", "arguments": {"path": "mathx/multiply.py", "content": "def '
    'multiply(a, b):\\n    return a * b"}}}',
    '{{"name": "write_file", "arguments": {"path": "mathx/subtract.py", "content": "def '
    'subtract(a, b):\\n    return a - b"}}}',
]


def test_a_run_that_stops_on_a_file_that_does_not_load_goes_back_to_its_write(
    tmp_path: Path,
) -> None:
    replies = [{"content": r} for r in [*ROUNDS[:5], *MODULES, TESTS]]
    ran, _ = small_model_goal(
        tmp_path, MATHX, plan_rule((MATHX, STEPS)), replies, LOCALAGENT_MAX_ROUNDS="12"
    )
    assert ran.returncode == 0, ran.stderr + ran.stdout
    runs = [r for r in records_of(tmp_path, "action_finished") if r["tool"] == "run_cmd"]
    # The small profile wrote the self-import as the import of the modules' functions
    # (`tools.mends.inits`); that the modules do not exist is the load error now.
    assert runs[1]["facts"]["broken"] == [
        "mathx/__init__.py: ModuleNotFoundError: No module named 'mathx.add'"
    ]
    # The same run sent again, with nothing changed, fails the run subtask: it is not
    # run again (the 1.5B's mathx on the CPU ran it twice more, the second time blocked) ...
    assert not records_of(tmp_path, "action_blocked")
    assert [r["args"]["cmd"] for r in runs[:3]] == [
        "pytest tests/test_mathx.py",
        "python -m pytest tests/test_mathx.py",
        "python -m pytest tests/test_mathx.py",
    ] and runs[2]["seq"] > records_of(tmp_path, "subtask_failed")[0]["seq"]
    (failed,) = records_of(tmp_path, "subtask_failed")
    assert failed["call"] == "5.1"
    assert failed["reason"].startswith(
        "the run stopped on an error in mathx/__init__.py: ModuleNotFoundError"
    )
    # ... and the replan, made without the model, goes back to a write of each module the
    # package's __init__.py imports that is not there.
    (handback,) = [p for p in records_of(tmp_path, "plan") if p.get("replace_from")]
    assert handback["by"] == "handback"
    assert handback["tasks"][0]["subtasks"] == [
        "write_file mathx/add.py with the code of add",
        "write_file mathx/divide.py with the code of divide",
        "write_file mathx/multiply.py with the code of multiply",
        "write_file mathx/subtract.py with the code of subtract",
        "run python -m pytest to ensure the tests pass",
    ]
    done = [c.get("by") for c in records_of(tmp_path, "subtask_completed")]
    assert done == ["write"] * 6 + ["run"]
    assert "4 passed" in runs[-1]["result"]


CASES = {
    "circular": (
        "from mathx import add",
        "import mathx\n",
        ("mathx/__init__.py", "ImportError: cannot import name 'add' from partially initialized"),
    ),
    "lacks": (
        "def sub(a, b):\n    return a - b\n",
        "from mathx import add\n",
        ("mathx/__init__.py", "ImportError: cannot import name 'add' from 'mathx'"),
    ),
    "name": (
        "",
        "def test_add():\n    assert add(1, 2) == 3\n",
        ("tests/test_mathx.py", "NameError: name 'add' is not defined"),
    ),
    "indent": (
        "def add(a, b):\n    return a + b\n  x = 1\n",
        "import mathx\n",
        ("mathx/__init__.py", "IndentationError: unindent does not match any outer"),
    ),
    "assert": (
        "def add(a, b):\n    return a - b\n",
        "from mathx import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
        None,
    ),
    "missing-package": ("import numpyy\n", "import mathx\n", None),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_load_error_is_placed_in_the_file_that_must_change(tmp_path: Path, case: str) -> None:
    package, tests, expected = CASES[case]
    (tmp_path / "mathx").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "mathx" / "__init__.py").write_text(package)
    (tmp_path / "tests" / "test_mathx.py").write_text(tests)
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "tests/test_mathx.py"]
    ran = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    found = located(tmp_path, ran.stdout + ran.stderr)
    if expected is None:
        assert found is None, found
    else:
        assert found is not None and found[0] == expected[0]
        assert found[1].startswith(expected[1]) and str(tmp_path) not in found[1]


def test_a_script_s_traceback_names_its_file_and_nothing_outside_counts(tmp_path: Path) -> None:
    (tmp_path / "x.py").write_text("print(1)\nfoo()\n")
    ran = subprocess.run([sys.executable, "x.py"], cwd=tmp_path, capture_output=True, text=True)
    assert located(tmp_path, ran.stderr) == ("x.py", "NameError: name 'foo' is not defined")
    outside = "File \"/usr/lib/python3/x.py\", line 1\nNameError: name 'foo' is not defined\n"
    assert located(tmp_path, outside) is None


# The 1.5B's replanned mathx run on the CPU (OpenAI API), verbatim: a class in
# mathx/__init__.py, tests that call pytest.raises without importing pytest.
REPLANNED = [
    ("Write the function definitions in mathx/__init__.py",
     ["write_file mathx/__init__.py with the function definitions"]),
    ("Write the test cases in tests/test_mathx.py",
     ["write_file tests/test_mathx.py with the test cases"]),
    ("Run pytest to ensure the tests pass", ["run python -m pytest tests/test_mathx.py"]),
]  # fmt: skip
CLASS_ROUNDS = [
    '```json\n{\n  "name": "write_file",\n  "arguments": {\n    "path": "mathx/__init__.py",\n'
    '    "content": """\nclass Mathx:\n    def add(self, a, b):\n        return a + b\n\n    '
    "def subtract(self, a, b):\n        return a - b\n\n    def multiply(self, a, b):\n        "
    "return a * b\n\n    def divide(self, a, b):\n        if b == 0:\n            raise "
    'ValueError("Cannot divide by zero")\n        return a / b\n    """\n  }\n}\n```',
    '```json\n{\n  "name": "write_file",\n  "arguments": {\n    "path": "tests/test_mathx.py",'
    '\n    "content": """\nimport mathx\n\ndef test_add():\n    assert mathx.Mathx().add(1, 2)'
    " == 3\n\ndef test_subtract():\n    assert mathx.Mathx().subtract(1, 2) == -1\n\ndef "
    "test_multiply():\n    assert mathx.Mathx().multiply(1, 2) == 2\n\ndef test_divide():\n    "
    "assert mathx.Mathx().divide(1, 2) == 0.5\n    with pytest.raises(ValueError):\n        "
    'mathx.Mathx().divide(1, 0)\n    """\n  }\n}\n```',
    *[
        '```json\n{\n  "name": "run_cmd",\n  "arguments": {\n    "cmd": "python -m pytest '
        'tests/test_mathx.py"\n  }\n}\n```'
    ]
    * 3,
]


def test_a_module_used_without_its_import_is_imported_by_the_write(tmp_path: Path) -> None:
    """The test file uses `pytest.raises` and does not import pytest: the write imports it
    and says so, and the tests pass on the first run. (Before, the write said that running
    it raises NameError, and the model wrote it again with the import; before that, the
    write ended its subtask, and the run's `NameError: name 'pytest' is not defined` sent
    the work back to it.)"""
    rounds = CLASS_ROUNDS[:3]
    replies = [{"content": r} for r in rounds]
    plan = plan_rule(*REPLANNED)
    ran, _ = small_model_goal(tmp_path, MATHX, plan, replies, LOCALAGENT_MAX_ROUNDS="4")
    assert ran.returncode == 0, ran.stderr + ran.stdout
    writes = [r for r in records_of(tmp_path, "action_finished") if r["tool"] == "write_file"]
    assert (
        "; it used pytest without importing it, so `import pytest` was written at its top"
        in (writes[1]["result"])
    )
    assert "SUBTASK COMPLETE" in writes[1]["result"]
    written = (tmp_path / "tests" / "test_mathx.py").read_text()
    assert written.startswith("import pytest\n\nimport mathx\n\ndef test_add():\n"), written
    runs = [r for r in records_of(tmp_path, "action_finished") if r["tool"] == "run_cmd"]
    done = [c.get("by") for c in records_of(tmp_path, "subtask_completed")]
    assert done == ["write", "write", "run"], done
    assert "4 passed" in runs[0]["result"], runs[0]["result"]


# After the write it went back to, the 1.5B's mathx run on the CPU (OpenAI API), verbatim:
# the import of itself kept first, a module-level `def __init__(self): pass`, then the code.
KEPT_IMPORT = [
    '{{"name": "write_file", "arguments": {"path": "mathx/__init__.py", "content": "from mathx '
    'import add, subtract, multiply, divide\\n\\ndef __init__(self):\\n    pass"}}}',
    '{{"name": "write_file", "arguments": {"path": "mathx/__init__.py", "content": "from mathx '
    "import add, subtract, multiply, divide\\n\\ndef __init__(self):\\n    pass\\n\\ndef add(a, "
    "b):\\n    return a + b\\n\\ndef subtract(a, b):\\n    return a - b\\n\\ndef multiply(a, b):"
    "\\n    return a * b\\n\\ndef divide(a, b):\\n    if b == 0:\\n        raise ValueError('Can"
    "not divide by zero')\\n    return a / b\"}}}",
]


def test_a_package_that_imports_itself_above_its_code_has_that_import_left_out(
    tmp_path: Path,
) -> None:
    """Told to write the code in mathx/__init__.py, the 1.5B kept `from mathx import add,
    ...` first and wrote the functions below it: still "partially initialized". It was told
    only that its `def __init__(self): pass` was a stub to fill, and wrote the file again
    unchanged until three strikes; told to delete the import, it wrote it again too. Now
    the write leaves the import out (`mends.inits.self_imported`), and a module's
    `__init__` that passes is no stub. (The import with nothing of its names below it is
    written as the import of the modules' functions: `test_init_mend`.)"""
    rounds = [KEPT_IMPORT[1], ROUNDS[1], TESTS]
    replies = [{"content": r} for r in rounds]
    ran, _ = small_model_goal(
        tmp_path, MATHX, plan_rule((MATHX, STEPS)), replies, LOCALAGENT_MAX_ROUNDS="6"
    )
    assert ran.returncode == 0, ran.stderr + ran.stdout
    writes = [r for r in records_of(tmp_path, "action_finished") if r["tool"] == "write_file"]
    assert "only `pass`" not in writes[0]["result"]
    assert writes[0]["result"].startswith(
        "wrote 238 bytes to 'mathx/__init__.py' (created); `from mathx import add, subtract, "
        "multiply, divide` imports mathx from itself, and this file defines add, subtract, "
        "multiply and divide: that import was left out"
    ), writes[0]["result"]
    assert (tmp_path / "mathx" / "__init__.py").read_text().startswith("def __init__(self):")
    runs = [r for r in records_of(tmp_path, "action_finished") if r["tool"] == "run_cmd"]
    assert "4 passed" in runs[-1]["result"]


# The 1.5B's tests on the CPU, verbatim: its test_divide expects ValueError for 1 / 2.
PARAMETRIZED = (
    '{{"name": "write_file", "arguments": {"path": "tests/test_mathx.py", "content": "import '
    "pytest\\nfrom mathx import add, subtract, multiply, divide\\n\\n@pytest.mark.parametrize("
    "'a, b, expected', [(1, 2, 3), (3, 4, 7), (5, 6, 11), (7, 8, 15)])\\ndef test_add(a, b, "
    "expected):\\n    assert add(a, b) == expected\\n\\n@pytest.mark.parametrize('a, b, "
    "expected', [(1, 2, -1), (3, 4, -1), (5, 6, -1), (7, 8, -1)])\\ndef test_subtract(a, b, "
    "expected):\\n    assert subtract(a, b) == expected\\n\\n@pytest.mark.parametrize('a, b, "
    "expected', [(1, 2, 2), (3, 4, 12), (5, 6, 30), (7, 8, 56)])\\ndef test_multiply(a, b, "
    "expected):\\n    assert multiply(a, b) == expected\\n\\n@pytest.mark.parametrize('a, b, "
    "expected', [(1, 2, 0), (3, 4, 0), (5, 6, 0), (7, 8, 0)])\\ndef test_divide(a, b, "
    "expected):\\n    with pytest.raises(ValueError):\\n        divide(a, b)}}}"
)


@pytest.mark.parametrize(
    ("error", "first"),
    [
        # divide.py raises it only when b == 0: the run's note gives the test's edit
        # (`testback.raise_tasks`), and the hand-back is that edit.
        (
            "ValueError",
            [
                "read_file tests/test_mathx.py",
                "replace_in_file tests/test_mathx.py so that its test checks the raise as the "
                "code makes it: replace `divide(a, b)` with `divide(a, 0)`",
            ],
        ),
        # An error divide.py never raises: no note, and the file that defines divide.
        (
            "ZeroDivisionError",
            [
                "read_file mathx/divide.py",
                "replace_in_file mathx/divide.py to fix the failing test: Failed: DID NOT RAISE "
                "ZeroDi... (and 3 more)",
            ],
        ),
    ],
)
def test_tests_that_fail_after_a_write_go_back_to_the_file_of_the_function_they_test(
    tmp_path: Path, error: str, first: list[str]
) -> None:
    """The 1.5B's test_divide failed after its plan wrote mathx/subtract.py last; the
    handback sent it to subtract.py, where no edit could help. It goes to the file that
    defines divide, or to the test's own edit where the run's note gives one."""
    steps = [
        "write_file tests/test_mathx.py with the pytest tests",
        "write_file mathx/__init__.py with the package structure",
        *[f"write_file mathx/{n}.py with the {n} function" for n in ("add", "divide")],
        *[f"write_file mathx/{n}.py with the {n} function" for n in ("multiply", "subtract")],
        "run python -m pytest tests/test_mathx.py",
    ]
    init = '{{"name": "write_file", "arguments": {"path": "mathx/__init__.py", "content": "from '
    init += '. import add, subtract, multiply, divide"}}}'
    rounds = [PARAMETRIZED.replace("ValueError", error), init, *MODULES, TESTS, TESTS, TESTS]
    replies = [{"content": r} for r in rounds]
    small_model_goal(
        tmp_path, MATHX, plan_rule((MATHX, steps)), replies, LOCALAGENT_MAX_ROUNDS="10"
    )
    runs = [r for r in records_of(tmp_path, "action_finished") if r["tool"] == "run_cmd"]
    assert "4 failed, 12 passed" in runs[0]["result"]
    (handback,) = [p for p in records_of(tmp_path, "plan") if p.get("replace_from")]
    assert handback["tasks"][0]["subtasks"][:2] == first


def test_a_failed_test_run_a_later_one_settles_is_not_the_goal_s_unmet(tmp_path: Path) -> None:
    """The 1.5B's mathx on the CPU: `pytest tests/test_mathx.py` could not import mathx,
    `python -m pytest tests/test_mathx.py` then passed, and so did the goal's own test
    check; the verdict named the first run's failure as unmet, and its replan rewrote the
    tests that worked into ones that failed. The runs are verbatim; `pytest` now runs as
    `python -m pytest`, so here the first fails for want of the package, written after
    it."""
    goal = (
        "Create a Python package mathx with the function add, with pytest tests in "
        "tests/test_mathx.py; the tests must pass with pytest"
    )
    steps = [
        "write_file tests/test_mathx.py with the pytest tests",
        "run pytest to ensure the tests pass",
    ]
    package = {"path": "mathx/__init__.py", "content": "def add(a, b):\n    return a + b\n"}
    replies = [
        {"content": json.dumps({"name": "write_file", "arguments": w})}
        for w in ({"path": "tests/test_mathx.py", "content": TEST_ADD}, package)
    ]
    replies.insert(1, {"content": ROUNDS[2]})
    replies.append({"content": ROUNDS[3]})
    ran, _ = small_model_goal(
        tmp_path, goal, plan_rule((goal, steps)), replies, VERIFIED, LOCALAGENT_VERIFY="1"
    )
    assert ran.returncode == 0, ran.stderr + ran.stdout
    runs = [r for r in records_of(tmp_path, "action_finished") if r["tool"] == "run_cmd"]
    assert [r["returncode"] for r in runs] == [2, 0]
    (verdict,) = records_of(tmp_path, "verdict")
    assert not any("did not pass" in unmet for unmet in verdict["unmet"]), verdict
    assert verdict["then"] == "complete" and len(records_of(tmp_path, "plan")) == 1
    assert (tmp_path / "tests" / "test_mathx.py").read_text() == TEST_ADD


TEST_ADD = "import mathx\n\ndef test_add():\n    assert mathx.add(1, 2) == 3\n"


@pytest.mark.parametrize(
    ("passing", "failed", "settles"),
    [
        ("python -m pytest tests/test_mathx.py", "pytest tests/test_mathx.py", True),
        ("python -m pytest -q", "pytest tests/test_mathx.py", True),
        ("pytest -q tests", "python -m pytest tests/", True),
        ("python -m pytest tests/test_a.py", "pytest tests/test_b.py", False),
        ("python -m pytest tests/test_a.py", "python -m pytest", False),  # part of all
        ("python -m pytest -k add", "pytest tests/test_mathx.py", False),  # some tests
        ("python -m pytest --lf", "python -m pytest", False),
        ("python -m pytest -m fast", "python -m pytest", False),
        ("python -m unittest", "python -m pytest", False),  # another runner's tests
        ("ruff check --fix tests/test_mathx.py", "ruff check tests/test_mathx.py", True),
        ("ruff check .", "ruff check tests/test_mathx.py", True),
        ("python -m ruff check", "ruff check mathx/", True),
        ("ruff check mathx", "ruff check .", False),
        ("ruff check --select F .", "ruff check .", False),  # some rules
        ("ruff format --check .", "ruff check .", False),  # another check
    ],
)
def test_which_failed_check_a_passing_one_settles(passing: str, failed: str, settles: bool) -> None:
    ledger = Ledger()
    note_action(ledger, _run(1, failed, "exit code 1\ncollected 0 items / 1 error"))
    note_goal_check(ledger, {"seq": 2, "cmd": passing, "status": "passed"})
    assert (key(failed) not in ledger.checks) is settles
    ledger = Ledger()
    note_action(ledger, _run(1, failed, "exit code 1\ncollected 0 items / 1 error"))
    note_action(ledger, _run(2, passing, "exit code 0\n1 passed in 0.01s"))
    assert (key(failed) not in ledger.checks) is settles


def _run(seq: int, cmd: str, result: str) -> dict[str, object]:
    return {"seq": seq, "tool": "run_cmd", "ok": result.startswith("exit code 0"),
            "result": result, "facts": {"ran": [cmd]}}  # fmt: skip


def test_a_load_error_names_no_path_of_the_machine(tmp_path: Path) -> None:
    """The 1.5B's mathx on the CPU, its run verbatim but the workspace's path: Python names
    the module it could not import from by its file, a compiled one (`.so`), and the step
    it went back to ended in the middle of that path."""
    (tmp_path / "mathx").mkdir()
    (tmp_path / "mathx" / "__init__.py").write_text("from math import add, subtract\n")
    run = (
        f'Traceback (most recent call last):\n  File "{tmp_path}/mathx/__init__.py", line 1, '
        "in <module>\n    from math import add, subtract, multiply, divide\nImportError: can"
        "not import name 'add' from 'math' (/root/.pyenv/versions/3.11.7/lib/python3.11/lib-"
        "dynload/math.cpython-311-x86_64-linux-gnu.so)\n"
    )
    assert located(tmp_path, run) == (
        "mathx/__init__.py",
        "ImportError: cannot import name 'add' from 'math'",
    )
    unknown = run.replace("(/root/.pyenv/versions/3.11.7/lib/python3.11/lib-dynload/math.cpyt"
                          "hon-311-x86_64-linux-gnu.so)", "(unknown location)")  # fmt: skip
    assert located(tmp_path, unknown) == (
        "mathx/__init__.py",
        "ImportError: cannot import name 'add' from 'math'",
    )


# The 1.5B's mathx on the CPU (OpenAI API), verbatim: its package imports its own
# functions from Python's math; told only the error, it wrote the same import back.
MATH_PLAN = [
    "write_file mathx/__init__.py with the following code",
    "write_file tests/test_mathx.py with the following code",
    "run python -m pytest tests/test_mathx.py",
    "run ruff check mathx",
]
FROM_MATH = (
    '{{"name": "write_file", "arguments": {"path": "mathx/__init__.py", "content": "from math '
    'import add, subtract, multiply, divide"}}}}'
)
MATH_TESTS = (
    '{{"name": "write_file", "arguments": {"path": "tests/test_mathx.py", "content": "from ma'
    "thx import add, subtract, multiply, divide\\n\\n# Test cases\\nassert add(1, 2) == 3\\n"
    "assert subtract(3, 1) == 2\\nassert multiply(2, 3) == 6\\nassert divide(6, 2) == 3\\nas"
    "sert divide(0, 2) == 'ValueError: division by zero'\"}}}}"
)
MATH_RUN = '{{"name": "run_cmd", "arguments": {"cmd": "python -m pytest tests/test_mathx.py"}}}}'


def test_a_name_imported_from_a_module_without_it_is_said_so(tmp_path: Path) -> None:
    goal = real_goal("mathx").text
    # Its test file, which asserts at its top level and so defines no test, is there
    # already: a write of it would not end its step (`tools.notests`).
    tests = json.JSONDecoder().raw_decode(MATH_TESTS[1:])[0]["arguments"]["content"]
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_mathx.py").write_text(tests, encoding="utf-8")
    plan = [step for step in MATH_PLAN if "tests/test_mathx.py with" not in step]
    replies = [{"content": r} for r in (FROM_MATH, MATH_RUN, MATH_RUN)]
    small_model_goal(tmp_path, goal, plan_rule((goal, plan)), replies, LOCALAGENT_MAX_ROUNDS="3")
    (back,) = [p for p in records_of(tmp_path, "plan") if p.get("replace_from")]
    assert back["tasks"][0]["subtasks"][0] == (
        "write_file mathx/__init__.py again, changed so that it no longer raises ImportError: "
        "cannot import name 'add' from 'math' (Python's math has no add: define it in "
        "mathx/__init__.py, or import it from the module that has it)"
    ), back["tasks"][0]["subtasks"]


def test_what_a_foreign_import_error_says() -> None:
    error = "ImportError: cannot import name 'add' from 'math'"
    assert foreign_name(error, "m/__init__.py") == (
        "Python's math has no add: define it in m/__init__.py, or import it from the module "
        "that has it"
    )
    own = "ImportError: cannot import name 'add' from partially initialized module 'mathx'"
    assert foreign_name(own, "mathx/__init__.py") == ""
    assert foreign_name("ImportError: cannot import name 'x' from 'mylib'", "a.py") == ""
