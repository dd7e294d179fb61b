"""Names a Python file uses and never imports, imported from the one module here that has
them all. Qwen2.5-Coder-1.5B wrote tests/test_mathx.py calling add, subtract, multiply
and divide with only `import pytest` above them, told that running it raises NameError,
and wrote the same file back twice, a minute a round (the CPU): mathx, whose
`__init__.py` imports the four, was what the tests were for."""

from __future__ import annotations

import ast
from pathlib import Path

from localagent.tools import pyfiles, undefined
from localagent.tools.pkgimports import tree_of
from localagent.tools.pyscript import TEST_FILE


def mended(root: Path, name: str, content: str) -> tuple[str, str, list[str]] | None:
    """(the content with the import added, the module, the names) for Python content that
    reads names nothing binds, every one of them bound at the top level of one other
    module here (not a test file), which it can import by its path from the root; None
    for any other content, and for a file in a folder that is no test file (run as a
    script, it imports from its own folder)."""
    if not name.lower().endswith((".py", ".pyw")):
        return None
    if "/" in name and not TEST_FILE.search(name):
        return None  # run as a script, it imports from its own folder, not from the root
    missing = undefined.names(content)
    if not missing or len(missing) >= undefined.MOST:  # perhaps more than it listed
        return None
    holders = [
        module
        for path, tree in pyfiles.trees(root)
        if path != name
        and not TEST_FILE.search(path)
        and (module := _module(path))
        and set(missing) <= undefined.bound(tree)
    ]
    if len(holders) != 1:
        return None
    line = f"from {holders[0]} import {', '.join(missing)}"
    text = _inserted(content, line)
    if text is None or undefined.names(text):
        return None
    return text, holders[0], missing


def mended_note(module: str, names: list[str]) -> str:
    """What the write says of the import it added."""
    listed = ", ".join(names)
    return (
        f"; it used {listed}, which {module} has, without importing them, so `from {module} "
        f"import {listed}` was written at its top"
    )


def _module(path: str) -> str:
    """The dotted name the file is imported by from the root ("" when it has none)."""
    parts = path[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts) if parts and all(p.isidentifier() for p in parts) else ""


def _inserted(content: str, line: str) -> str | None:
    """The content with `line` as a block of its own after its first imports (after its
    docstring when it has no import); None when it does not parse."""
    tree = tree_of(content)
    if tree is None:
        return None
    body = tree.body
    after = 0
    for index, node in enumerate(body):
        text = isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        if isinstance(node, ast.Import | ast.ImportFrom) or (index == 0 and text):
            after = node.end_lineno or after
            continue
        break
    lines = content.splitlines(keepends=True)
    head = "".join(lines[:after])
    if head and not head.endswith("\n"):
        head += "\n"
    rest = "".join(lines[after:]).lstrip("\n")
    return f"{head}{chr(10) if head else ''}{line}\n\n\n{rest}"
