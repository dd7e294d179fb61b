"""The workspace's Python files, parsed: found as search_files walks them (at most
MAX_FILES, each at most MAX_BYTES, within WALK_SECONDS), those that do not parse left
out."""

from __future__ import annotations

import ast
import itertools
import time
from pathlib import Path

from localagent.system import safefs
from localagent.tools.paths import relative
from localagent.tools.walk import Walk

MAX_FILES = 200
MAX_BYTES = 200_000
WALK_SECONDS = 2.0


def trees(root: Path) -> list[tuple[str, ast.Module]]:
    """(its path from the root, its syntax tree) for each Python file that parses."""
    found = []
    for path in _python_files(root):
        try:
            tree = ast.parse(safefs.read_inside(root, path, MAX_BYTES))
        except (OSError, safefs.UnsafeFile, SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        found.append((relative(root, path), tree))
    return found


def owner(root: Path, name: str, besides: str = "") -> str:
    """The one Python file (other than `besides`) that defines `name` at its top level
    (a function or class), or "" when none or several do."""
    owners = [
        path
        for path, tree in trees(root)
        if path != besides
        and any(
            isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and n.name == name
            for n in tree.body
        )
    ]
    return owners[0] if len(owners) == 1 else ""


def _python_files(root: Path) -> list[Path]:
    walk = Walk(root, time.monotonic() + WALK_SECONDS, lambda: False)
    found = (root / path for path in walk.files(root) if path.endswith(".py"))
    return list(itertools.islice(found, MAX_FILES))


def function_note(root: Path, name: str) -> str:
    """For a new Python file named after a function (or class) that one other file here
    defines, what its write says of it; "" for any other. Qwen2.5-Coder-1.5B's refactor
    wrote report.py and total_area.py, each a function of shapes.py, as new files, then
    edited them in place of shapes.py (the CPU)."""
    stem = name.rsplit("/", 1)[-1][:-3] if name.endswith(".py") else ""
    found = owner(root, stem, besides=name) if stem.isidentifier() else ""
    if not found:
        return ""
    return (
        f"{stem} is a function (or class) of '{found}', and this new file does not change "
        f"it there: to change {stem}, change it in '{found}'"
    )
