"""Names a Python file uses and never imports, imported from the one module here that has
them all. Qwen2.5-Coder-1.5B wrote tests/test_mathx.py calling add, subtract, multiply
and divide with only `import pytest` above them, told that running it raises NameError,
and wrote the same file back twice, a minute a round (the CPU): mathx, whose
`__init__.py` imports the four, was what the tests were for. Another run's tests called
`mathx.add(...)` with only `import pytest` above them, and the same write went back until
it was blocked: a name that is a package or module here, read only as `name.attribute`
and never imported, is imported whole. So is one of Python's own modules, or pytest, read
that way and never imported: the 1.5B's tests used `pytest.raises` without `import
pytest` (the H100, the CPU)."""

from __future__ import annotations

import ast
from pathlib import Path

from localagent.tools import pyfiles, undefined
from localagent.tools.nameerrors import importable
from localagent.tools.pkgimports import tree_of
from localagent.tools.pyscript import TEST_FILE

# Modules of Python's own whose names a program reads for something else: `this.name`
# written for `self.name` would import the Zen of Python, which prints itself.
_NOT_MEANT = frozenset({"this", "antigravity", "test", "self"})


def mended(root: Path, name: str, content: str) -> tuple[str, str] | None:
    """(the content with the imports added, what the write says of them) for Python
    content that reads names nothing binds, each of them a package or module here that
    the root imports (`import mathx`), one of Python's own modules or pytest (read only
    as `name.attribute`: `import pytest`) or, the rest, bound at the top level of one other
    module here (not a test file) that it can import by its path from the root; None for
    any other content, and for a file in a folder that is no test file that lacks more
    than Python's own modules (run as a script, it imports from its own folder)."""
    if not name.lower().endswith((".py", ".pyw")):
        return None
    missing = undefined.names(content)
    if not missing or len(missing) >= undefined.MOST:  # perhaps more than it listed
        return None
    dotted = _only_dotted(content)
    kinds = {n: kind for n in missing if n in dotted and (kind := _kind(root, n, name))}
    kinds |= {
        n: ""
        for n in missing
        if n in dotted and n not in kinds and importable(n) and n not in _NOT_MEANT
    }
    rest = [n for n in missing if n not in kinds]
    if (any(kinds.values()) or rest) and "/" in name and not TEST_FILE.search(name):
        return None  # run as a script, it imports from its own folder, not the root's
    own = [f"import {module}" for module, kind in kinds.items() if not kind]
    lines = [f"import {module}" for module, kind in kinds.items() if kind]
    holder = ""
    if rest:
        holders = [
            module
            for path, tree in pyfiles.trees(root)
            if path != name
            and not TEST_FILE.search(path)
            and (module := _module(path))
            and set(rest) <= undefined.bound(tree)
        ]
        if len(holders) != 1:
            return None
        holder = holders[0]
        lines.append(f"from {holder} import {', '.join(rest)}")
    text = _inserted(content, "\n".join(lines)) if lines else content
    if own and text is not None:
        text = _inserted(text, "\n".join(sorted(own)), first=True)
    if text is None or undefined.names(text):
        return None
    return text, _note(kinds, holder, rest)


def _note(kinds: dict[str, str], holder: str, names: list[str]) -> str:
    """What the write says of the imports it added."""
    said = [
        f"; it used {module}{f', the {kind} here,' if kind else ''} without importing it, "
        f"so `import {module}` was written at its top"
        for module, kind in kinds.items()
    ]
    if names:
        listed = ", ".join(names)
        said.append(
            f"; it used {listed}, which {holder} has, without importing them, so `from "
            f"{holder} import {listed}` was written at its top"
        )
    return "".join(said)


def _only_dotted(content: str) -> set[str]:
    """The names the content reads only as `name.attribute` (a module's use of them)."""
    tree = tree_of(content)
    if tree is None:
        return set()
    values = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    names = [n for n in ast.walk(tree) if isinstance(n, ast.Name)]
    return {n.id for n in names} - {n.id for n in names if id(n) not in values}


def _kind(root: Path, module: str, name: str) -> str:
    """ "package" or "module" for a package (with its `__init__.py`) or a module at the
    root named `module`, other than the file being written; "" for any other name."""
    if name in (f"{module}.py", f"{module}/__init__.py"):
        return ""
    if (root / module / "__init__.py").is_file():
        return "package"
    return "module" if (root / f"{module}.py").is_file() else ""


def _module(path: str) -> str:
    """The dotted name the file is imported by from the root ("" when it has none)."""
    parts = path[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts) if parts and all(p.isidentifier() for p in parts) else ""


def _inserted(content: str, line: str, first: bool = False) -> str | None:
    """The content with `line` as a block of its own after its first imports (`first`:
    before them, where imports of Python's own modules and pytest go), after its
    docstring when it has one; None when it does not parse."""
    tree = tree_of(content)
    if tree is None:
        return None
    body = tree.body
    after = 0
    for index, node in enumerate(body):
        text = isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        future = isinstance(node, ast.ImportFrom) and node.module == "__future__"
        if (not first and isinstance(node, ast.Import | ast.ImportFrom)) or future:
            after = node.end_lineno or after
            continue
        if index == 0 and text:
            after = node.end_lineno or after
            continue
        break
    lines = content.splitlines(keepends=True)
    head = "".join(lines[:after])
    if head and not head.endswith("\n"):
        head += "\n"
    rest = "".join(lines[after:]).lstrip("\n")
    gap = "\n\n" if rest.startswith(("import ", "from ")) else "\n\n\n"
    return f"{head}{chr(10) if head else ''}{line}{gap}{rest}"
