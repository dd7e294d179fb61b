"""Where a run stopped because a workspace file does not load: the file, and the error.

Qwen2.5-Coder-1.5B's mathx runs (H100, and again on the CPU): `mathx/__init__.py` held
only `from mathx import add, subtract, multiply, divide`; pytest stopped at collection
with `ImportError: cannot import name 'add' from partially initialized module 'mathx'`,
and the model, in the subtask "run pytest to ensure the tests pass", ran pytest again
until three strikes. In other runs the test file called `add(...)` with no import
(`NameError`). An error of this kind is in one file, which a run names: the run's facts
say which (`broken`), and a run subtask that fails on it goes back to a write of that
file (`loop/handback.py`).
"""

from __future__ import annotations

import re
from pathlib import Path

from localagent.tools.pkgimports import inside

# Errors raised while a file loads, each in the file that must change. Not
# ModuleNotFoundError, whose cause is how the program was started or a missing package,
# unless it names a module of a package the workspace holds (`_own_module`): a package
# `__init__.py` that imports `.add`, which no mathx/add.py provides.
_ERROR = re.compile(
    r"^(?:E\s+)?((?:(?:ImportError|NameError|SyntaxError|IndentationError|TabError)\b"
    r"|ModuleNotFoundError: No module named '\w+\.[\w.]+').*)$",
    re.M,
)
# A traceback's frame: Python's own, or pytest's short form (`tests/test_x.py:1: in <module>`).
_FRAME = re.compile(r'File "([^"]+\.pyw?)", line \d+|^([^\s:]+\.pyw?):\d+: in ', re.M)
# pytest's line after a failed test's error: where it was raised (`tests/t.py:2: NameError`).
_AT = re.compile(r"^([^\s:]+\.pyw?):\d+: \w*(?:Error|Exception)$", re.M)
_NAMED = re.compile(r"\(([^()]+\.pyw?)\)")  # "cannot import name 'add' from 'mathx' (/…/x.py)"
# Where Python says a module is ("(/…/math.cpython-311-x86_64-linux-gnu.so)", "(unknown
# location)"): no help to the model, and cut short it ended the 1.5B's step mid-path.
_WHERE = re.compile(r"\s*\((?:[^()]+\.pyw?|(?:[A-Za-z]:)?[/\\][^()]*|unknown location)\)")
ERROR_CHARS = 120
NO_MODULE = re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'")
# A package's module run as a script (`python mathx/__init__.py`): its relative imports
# have no package. Qwen2.5-Coder-1.5B's mathx replan planned that run (the CPU), and each
# failure sent it back to a write of the `__init__.py` that was right, three times.
NO_PARENT = "attempted relative import with no known parent package"


# Errors a program's own code raised as it ran, in the file that must change (a program's
# run, not the tests': a test's error is its failure). Qwen2.5-Coder-1.5B's wordcount.py
# called `f.split()` on the file it opened: "AttributeError: '_io.TextIOWrapper' object
# has no attribute 'split'", run until strikes, twice, on the CPU.
_RUNTIME = re.compile(
    r"^((?:AttributeError|TypeError|IndexError|KeyError|UnboundLocalError|ZeroDivisionError)"
    r"\b.*)$",
    re.M,
)


def located(root: Path, output: str, program: bool = False) -> tuple[str, str] | None:
    """The workspace file (relative, with '/') the run's load error is in, and the error's
    line (at most ERROR_CHARS, without paths); None when the run stopped on no such error
    or its file is not in the workspace. For the run of a `program` (not the tests), an
    error its code raised as it ran counts too."""
    errors = list(_ERROR.finditer(output)) or (list(_RUNTIME.finditer(output)) if program else [])
    if not errors:
        return None if program else _fixture(root, output)
    error = errors[-1]
    if error[1].startswith("ModuleNotFoundError") and not _own_module(root, error[1]):
        return None
    named = _NAMED.search(error[1])
    frames = [m[1] or m[2] for m in _FRAME.finditer(output, 0, error.start())]
    at = _AT.search(output, error.end())
    for candidate in [*([named[1]] if named else []), *([at[1]] if at else []), *frames[::-1]]:
        path = own_file(root, candidate)
        if path and NO_PARENT in error[1] and _in_package(root, path):
            return None  # the file is right: a module of a package was run as a script
        if path:
            text = _WHERE.sub("", error[1]).strip()
            return path, text[:ERROR_CHARS]
    return None


# pytest's report of a test that asks for a fixture no plugin gives: `file /…/t.py, line
# 4`, the test's `def` line, then `E       fixture 'self' not found`.
_FIXTURE = re.compile(
    r"^file (.+\.pyw?), line \d+$(?:\n.*){1,3}?\nE\s+(fixture '\w+' not found)$", re.M
)
NOT_A_FIXTURE = "a test function's arguments are pytest's fixtures or its parametrize names"


def _fixture(root: Path, output: str) -> tuple[str, str] | None:
    """The test file whose test asks for a fixture that is not there, and the error: the
    1.5B's mathx test file held `def test_add(self):` at its top level, pytest said
    "fixture 'self' not found", and the hand-back sent the model to mathx/__init__.py,
    which was right, until the round limit (the CPU)."""
    found = _FIXTURE.search(output)
    path = own_file(root, found[1]) if found else ""
    return (path, f"{found[2]} ({NOT_A_FIXTURE})") if found and path else None


def _in_package(root: Path, path: str) -> bool:
    """Whether the workspace file is a module of a package (its folder has `__init__.py`)."""
    return "/" in path and (root / path.rsplit("/", 1)[0] / "__init__.py").is_file()


def _own_module(root: Path, error: str) -> bool:
    """Whether "No module named 'pkg.sub'" names a module of a package of the workspace."""
    package = error.split("'")[1].split(".")[0]
    return (root / package / "__init__.py").is_file()


def own_file(root: Path, name: str) -> str:
    """A traceback's file as the workspace names it, when it is a file of the workspace's
    own (not in a hidden folder such as a virtual environment, nor in site-packages)."""
    path = inside(root, name)
    parts = path.split("/") if path else []
    if not path or any(p.startswith(".") or p == "site-packages" for p in parts):
        return ""
    return path if (root / path).is_file() else ""


# A file object used as its text: `f.split()`, `len(f)`. Told only the error, the 1.5B
# wrote `f.split()` again in each of three writes of wordcount.py (the CPU); told to take
# its text with `text = f.read()`, it wrote that line where no `f` was open.
_FILE_AS_TEXT = re.compile(
    r"'_io\.TextIOWrapper' object has no attribute '(\w+)'"
    r"|object of type '_io\.TextIOWrapper' has no (len)\(\)"
)


# A list used as text: the 1.5B's wordcount counted its words as
# `len(text.split().split())`, and wrote that again in every write until the round limit,
# in two runs (the CPU).
_LIST_AS_TEXT = re.compile(r"'list' object has no attribute '(\w+)'")


def file_as_text(error: str) -> str:
    """What to say of an error raised where code used an open file, or a list, as its
    text; "" otherwise (or for an attribute no string has either)."""
    if (listed := _LIST_AS_TEXT.search(error)) and hasattr(str, listed[1]):
        name = listed[1]
        said = f"a list has no {name}: `.split()`, `.splitlines()` and `.readlines()` give lists"
        if name == "split":
            return f"{said}, so split the text once: `len(text.split())` counts its words"
        return f"{said}: call {name} on the text, or on each item of the list"
    found = _FILE_AS_TEXT.search(error)
    if found is None:
        return ""
    if found[2]:
        return f"an open file has no len(): {_TAKE}, then `len(text)`"
    if not hasattr(str, found[1]):
        return ""
    return f"an open file has no {found[1]}: {_TAKE}, then `text.{found[1]}()`"


_TAKE = "in its `with open(...) as f:` block, take its text with `text = f.read()`"


def file_as_text_note(found: tuple[str, str] | None) -> str:
    """For a run that stopped where a workspace file used an open file as its text (the
    file and error `located` found), what the run's result says of it ("" otherwise).
    Qwen2.5-Coder-1.5B ran its wordcount.py within its write step, `f.split()` raising
    there, and swapped `split` and `splitlines` for 14 rounds: the hand-back that names
    the fix follows only a run step (the CPU)."""
    said = file_as_text(found[1]) if found is not None else ""
    return f"NOTE: in {found[0]}, {said}." if said else ""
