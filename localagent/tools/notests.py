"""A test file that defines no test.

Qwen2.5-Coder-1.5B's mathx plan (the CPU) had the step "write_file tests/test_mathx.py
with the following content: from mathx import add, subtract, multiply, divide". It wrote
that one line, the write ended the step ("which is all the subtask asks"), and `python -m
pytest tests/test_mathx.py` ran nothing ("no tests ran", exit code 5) twice before its
repeat was blocked; the model's replan then planned docstrings. A test file without a
test is not written yet: its write says so and does not end its step
(`loop/writedone`), and a test run that ran nothing because of it fails on that file (the
run's facts: `empty`, and `broken` as for a file that does not load), so the small
profile goes back to a write of it (`loop/handback`).
"""

from __future__ import annotations

import ast
import itertools
import re
import time
from pathlib import Path

from localagent.tools import pyscript
from localagent.tools.pyscript import TEST_FILE
from localagent.tools.walk import Walk

NONE_DEFINED = "it defines no test function"
MAX_SCANNED = 400  # files looked at for test files, when a run names none
SCAN_SECONDS = 2.0
_RUNNER = re.compile(
    r"(?:^|[\s/\\])(?:pytest|py\.test)(?:\.exe)?(?=\s|$)|(?:^|\s)-m\s+(?:pytest|unittest)\b"
)


def lacks_tests(source: str | bytes, name: str) -> bool:
    """Whether `source`, a Python file pytest would read for tests (by its `name`),
    parses and defines none."""
    if not TEST_FILE.search(name.replace("\\", "/")):
        return False
    script = pyscript.parse(source)
    return script is not None and not script.tests


def write_note(source: str | bytes, name: str) -> str:
    """What a write of a test file with no test adds to its result ("" otherwise)."""
    if not lacks_tests(source, name):
        return ""
    return f"; but {NONE_DEFINED}: {_how(source)}"


def run_note(files: list[str]) -> str:
    """The note on a test run that ran nothing because these test files define no test."""
    if not files:
        return ""
    return (
        f"NOTE: no test ran: {', '.join(files)} {NONE_DEFINED.removeprefix('it ')}. "
        "pytest runs only functions named test_...; write the tests in it."
    )


# What a test file may hold at its top level, below its imports, to be put in one test.
_CHECKS = (ast.Assert, ast.With, ast.Expr, ast.Assign, ast.Import, ast.ImportFrom)


def wrapped(source: str, name: str) -> tuple[str, str] | None:
    """For a test file that defines no test and whose code below its imports is asserts
    (with `with pytest.raises(...)` blocks, calls, assignments and `try` blocks of them
    among them), the file
    with that code put in one test named after the file, and that name; None for any
    other. Qwen2.5-Coder-1.5B wrote tests/test_mathx.py as `import mathx` and four
    asserts, four times, told each time that pytest runs only functions named test_...
    (the CPU): the asserts were its tests."""
    if not lacks_tests(source, name):
        return None
    tree = ast.parse(source)
    body = list(tree.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the module's docstring
    imports = ast.Import | ast.ImportFrom
    start = next((i for i, n in enumerate(body) if not isinstance(n, imports)), None)
    rest = body[start:] if start is not None else []
    if not any(isinstance(n, ast.Assert | ast.With | ast.Try) for n in rest):
        return None
    if not all(_checks(n) for n in rest) or _multiline_strings(rest):
        return None
    stem = name.replace("\\", "/").rsplit("/", 1)[-1].rsplit(".", 1)[0]
    test = stem if stem.startswith("test_") and stem.isidentifier() else "test_all"
    lines = source.splitlines()
    at = rest[0].lineno - 1
    while at > 0 and lines[at - 1].lstrip().startswith("#"):
        at -= 1  # the comments just above it go with it
    inner = [f"    {line}" if line.strip() else "" for line in lines[at:]]
    head = "\n".join(lines[:at]).rstrip()
    text = (head + "\n\n\n" if head else "") + f"def {test}():\n" + "\n".join(inner) + "\n"
    script = pyscript.parse(text)
    return (text, test) if script is not None and script.tests else None


def _checks(node: ast.stmt) -> bool:
    """Whether a statement only checks: an assert, a `with` block, a call, an assignment,
    an import, or a `try` whose every part is such statements (a raise checked by
    try/except/else: mathx-1 on the CPU wrote its tests so four times)."""
    if isinstance(node, ast.Try):
        parts = [*node.body, *node.orelse, *node.finalbody]
        parts += [n for handler in node.handlers for n in handler.body]
        return all(isinstance(n, ast.Pass) or _checks(n) for n in parts)
    return isinstance(node, _CHECKS)


def wrapped_note(test: str) -> str:
    """What the write says of a test file whose asserts it put in a test."""
    return (
        f"; it defined no test function, and pytest runs only those: its code below the "
        f"imports was written as the test `def {test}():`"
    )


def _multiline_strings(nodes: list[ast.stmt]) -> bool:
    """Whether a string spans lines in these statements: indented, it would change."""
    return any(
        isinstance(n, ast.Constant)
        and isinstance(n.value, str | bytes)
        and n.lineno != n.end_lineno
        for node in nodes
        for n in ast.walk(node)
    )


def _how(source: str | bytes) -> str:
    """pytest's rule, with a test named after the first function the file imports."""
    name = _imported(source)
    example = (
        f"`def test_{name}():` with an assert on what {name}(...) returns"
        if name
        else "`def test_something():` with an assert"
    )
    return f"pytest runs only functions named test_..., e.g. {example}"


def _imported(source: str | bytes) -> str:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ""
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module not in ("pytest", "unittest"):
            names = [a.name for a in node.names if a.name.isidentifier()]
            if names:
                return names[0]
    return ""


def empty_files(root: Path, cmd: str, returncode: int | None, output: str) -> list[str]:
    """For a pytest or unittest run that ran no test, the test files it covers (those it
    names, else those under the folders it names or the workspace) that define none;
    relative, with '/'."""
    if returncode != 5 and "no tests ran" not in output.lower() and "Ran 0 tests" not in output:
        return []
    found = _RUNNER.search(cmd)
    if found is None:
        return []
    named = [w.strip("'\"").split("::")[0] for w in cmd[found.end() :].split()]
    named = [w for w in named if w and not w.startswith("-")]
    files = [n for n in named if TEST_FILE.search(n)] or _scanned(root, named)
    return sorted({f.replace("\\", "/") for f in files if _empty(root, f)})[:3]


def _scanned(root: Path, named: list[str]) -> list[str]:
    """The test files under the folders named (else the workspace), as search_files walks."""
    folders = [root / n for n in named if (root / n).is_dir()] or [root]
    walk = Walk(root, time.monotonic() + SCAN_SECONDS, lambda: False)
    found = (path for folder in folders for path in walk.files(folder))
    return [path for path in itertools.islice(found, MAX_SCANNED) if TEST_FILE.search(path)]


def _empty(root: Path, path: str) -> bool:
    script = pyscript.read(root, path)
    return script is not None and not script.tests


# pytest's and ruff's words for a file they were given that is not there.
_ABSENT = re.compile(
    r"^ERROR: file or directory not found: (\S+)$"
    r"|^E902 No such file or directory.*\n--> ([^:\n]+):",
    re.M,
)


def absent_note(root: Path, output: str) -> str:
    """The note on a test or ruff run given a Python file that does not exist, or "".
    Qwen2.5-Coder-1.5B wrote its mathx tests as mathx/tests/main.py, then ran `pytest
    tests/test_mathx.py` and `ruff check tests/test_mathx.py`, the file the goal names,
    six times, and edited its tests to hold ruff's "E902 No such file or directory"."""
    named = [m[1] or m[2] for m in _ABSENT.finditer(output)]
    missing = [n for n in dict.fromkeys(named) if n.endswith(".py") and not _there(root, n)]
    if not missing:
        return ""
    listed = ", ".join(missing[:3])
    return (
        f"NOTE: {listed} does not exist: no run can check it. Write it first "
        f"(write_file {missing[0]}), then run this again."
    )


def _there(root: Path, name: str) -> bool:
    try:
        return (root / name).exists()
    except (OSError, ValueError):
        return False
