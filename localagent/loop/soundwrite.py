"""Whether a file a write subtask wrote can stand as its result, and whether the runs a
later subtask makes would run it (see `writedone`)."""

from __future__ import annotations

from pathlib import Path

from localagent.state.ledger import Ledger
from localagent.system import safefs
from localagent.tools import pyscript, rereads, undefined
from localagent.tools.loaderror import NO_MODULE
from localagent.tools.mends import inits
from localagent.tools.pkgimports import lost_users, self_imports
from localagent.tools.pyscript import TEST_FILE


def sound(root: Path, path: str, ledger: Ledger) -> bool:
    """Whether the written file can stand as the subtask's result: there, not empty,
    and when it is Python, compiling, with no function that only says `pass`, a test
    file with a test (`tools.notests`), and (a package's `__init__.py`) not importing
    from itself what its code defines only below,
    nor, once a run showed it cannot load, anything it lacks: told to write the code of
    mathx/__init__.py, the 1.5B kept `from mathx import add, ...` first, once with only
    `def __init__(self): pass` after it, once with the functions. A first write that is
    only that import stands (the run after it shows the error, the small profile goes
    back to the write from there)."""
    target = root / path
    try:
        if not target.is_file() or target.stat().st_size == 0:
            return False
    except OSError:
        return False
    if not path.endswith((".py", ".pyw")):
        return True
    script = pyscript.read(root, path)  # None: it does not compile
    if script is None or script.stubs or _undefined(root, path):
        return False
    if TEST_FILE.search(path) and not script.tests:  # `tools.notests`: nothing to run
        return False
    missing, below = self_imports(root, path)
    return (
        not below
        and not (missing and _did_not_load(ledger, path))
        and _modules_there(root, path, ledger)
    )


def _undefined(root: Path, path: str) -> bool:
    """Whether the file reads a name nothing binds (`tools.undefined`): running it raises
    NameError; or reads a file object to its end twice (`tools.rereads`): the second
    read gets nothing."""
    try:
        data = safefs.read_inside(root, root / path, pyscript.MAX_SOURCE_BYTES)
    except (OSError, safefs.UnsafeFile):
        return False
    return bool(undefined.names(data) or rereads.rereads(data))


def _did_not_load(ledger: Ledger, path: str) -> bool:
    return any(c.broken.startswith(f"{path}: ") for c in ledger.checks.values())


def _modules_there(root: Path, path: str, ledger: Ledger) -> bool:
    """Whether each workspace module a run found missing while loading the file ("No
    module named 'mathx.add'") is there now: the small profile writes `from mathx import
    add` as `from .add import add as add`, and a rewrite that keeps it loads no better."""
    for check in ledger.checks.values():
        if check.broken.startswith(f"{path}: ") and (found := NO_MODULE.search(check.broken)):
            module = root.joinpath(*found[1].split("."))
            there = module.with_suffix(".py").is_file() or module.is_dir()
            if not there and found[1] in inits.imported(root, path):
                return False
    return True


def imported(root: Path, path: str) -> bool:
    """A Python module whose functions other files import (shapes.py, which test_shapes.py
    imports): the tests a later subtask runs run it. Asked, after a hand-back, to write
    shapes.py whole with its functions calling area, Qwen2.5-Coder-1.5B's write was the
    work, and the tests the next subtask ran showed whether it worked."""
    if not path.endswith(".py"):
        return False
    had = pyscript.defines(root, path)
    return bool(had) and bool(lost_users(root, path, had, []))


def in_package(root: Path, path: str) -> bool:
    """A module of a package (its folder holds `__init__.py`, or it is that file): no
    one runs it to see what it does. Qwen2.5-Coder-1.5B's mathx plan wrote one module a
    subtask, and each took a second round: the same write again, unchanged."""
    parts = path.split("/")
    if len(parts) < 2 or not path.endswith(".py") or parts[-1] == "__main__.py":
        return False
    return parts[-1] == "__init__.py" or (root.joinpath(*parts[:-1]) / "__init__.py").is_file()
