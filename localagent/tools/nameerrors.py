"""A run that failed on a name its file lacks: the import to add, or where the name is.

The 1.5B's tests called add(2, 3) without importing it and ran pytest again unchanged;
its mathx/__init__.py imported `add` from Python's own `math`. Read with `ast` only;
nothing is imported or run.
"""

from __future__ import annotations

import ast
import json
import os
import re
import sys
from pathlib import Path

from localagent.tools import pyscript
from localagent.tools.pkgimports import bound_names, inside, text_of, tree_of

MAX_SCANNED = 200  # entries of the workspace root looked at for a name's module


_UNDEFINED = re.compile(r"NameError: name '(\w+)' is not defined")
_FRAME = re.compile(r'File "([^"]+)", line \d+')
_PYTEST_AT = re.compile(r"^([^\s:]+\.py):\d+: NameError$", re.M)


def undefined_note(root: Path, output: str) -> str:
    """For a run that failed with "NameError: name 'add' is not defined" in a workspace
    file, when a module of the workspace defines that name, or the name is a module to
    import (`importable`): the import that file lacks, ready to copy. The 1.5B's tests
    called add(2, 3) without importing it, and it ran pytest again unchanged, three runs
    of 16; on the CPU its tests used `pytest.raises` without `import pytest`."""
    found = _UNDEFINED.search(output)
    frames = _FRAME.findall(output[: found.start()]) if found else []
    # pytest names the place after the error instead: "tests/test_mathx.py:2: NameError"
    frames += _PYTEST_AT.findall(output[found.end() :]) if found else []
    where = inside(root, frames[-1]) if frames else ""
    if not found or not where:
        return ""
    name = found[1]
    module = _provider(root, name, where)
    if not module and not importable(name):
        return ""
    line = f"from {module} import {name}" if module else f"import {name}"
    text = text_of(root, where)
    if not text:
        return ""
    first = text.splitlines()[0]
    edit = ""
    if first.strip() and text.count(first) == 1:
        call = {"name": "replace_in_file", "arguments": {"path": where, "old": first}}
        call["arguments"]["new"] = f"{line}\n{first}"
        edit = f" To add it, send: {json.dumps(call)}"
    return f"NOTE: {where} uses {name} but does not import it; add `{line}` at its top.{edit}"


def importable(name: str) -> bool:
    """A module a file may use by importing it, not by defining it: Python's own, and
    pytest (the 1.5B's tests called `pytest.raises` without `import pytest`)."""
    return name in sys.stdlib_module_names or name == "pytest"


def missing_import(error: str) -> str:
    """`import pytest` for "NameError: name 'pytest' is not defined"; "" otherwise."""
    found = _UNDEFINED.search(error)
    return f"import {found[1]}" if found and importable(found[1]) else ""


_NOT_IN = re.compile(r"cannot import name '(\w+)' from '(\w+)'")


def foreign_name(error: str, path: str) -> str:
    """What to say of an import of a name from one of Python's own modules that has no
    such name: the 1.5B's mathx/__init__.py was `from math import add, subtract, ...`,
    and told only the ImportError it wrote that import back (the CPU). "" otherwise (a
    module of its own, or one this cannot know)."""
    found = _NOT_IN.search(error)
    if found is None or not importable(found[2]) or found[2] == "pytest":
        return ""
    name, module = found[1], found[2]
    return (
        f"Python's {module} has no {name}: define it in {path}, "
        "or import it from the module that has it"
    )


def _provider(root: Path, name: str, user: str) -> str:
    """The module a file imports `name` from: a package whose `__init__.py` has it, a
    package's module of that name that defines it, or a module at the root; ""."""
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)[:MAX_SCANNED]
    except OSError:
        return ""
    for entry in entries:
        if entry.is_dir(follow_symlinks=False) and (Path(entry.path) / "__init__.py").is_file():
            package = entry.name
            if name in _names(root, f"{package}/__init__.py"):
                return package
            if name in pyscript.defines(root, f"{package}/{name}.py"):
                return f"{package}.{name}"
        elif (
            entry.name.endswith(".py")
            and entry.name != user
            and name in pyscript.defines(root, entry.name)
        ):
            return entry.name[:-3]
    return ""


def _names(root: Path, path: str) -> set[str]:
    """What a module defines or imports at its top level."""
    tree = tree_of(text_of(root, path))
    if tree is None:
        return set()
    names = {n for node in tree.body for n in bound_names(node)}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom | ast.Import):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names
