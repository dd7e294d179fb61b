"""A package `__init__.py` that imports from its own package what only its modules can
hold, written as the import of those modules' functions (the small-model profile).

Qwen2.5-Coder-1.5B began `mathx/__init__.py` with `from mathx import add, subtract,
multiply, divide` in every one of 16 mathx runs on an H100. Where it then wrote one
module a function (`mathx/add.py` defining `add`), the line imports the modules, and
`mathx.add(1, 2)` raises "'module' object is not callable"; where it wrote nothing else,
the package cannot load ("partially initialized module"). Told so with the edit to copy,
it sent the same line again until three strikes, 15 runs of 16. A name imported so is
taken for its module's function when nothing else can be meant: the file does not define
it, and its module `PACKAGE/NAME.py` is yet to be written or defines it.
"""

from __future__ import annotations

import ast
from pathlib import Path

from localagent.system.textcap import listed
from localagent.tools import pyscript
from localagent.tools.pkgimports import bound_names, from_package, text_of, tree_of


def mend(root: Path, path: str, content: str) -> tuple[str, str, str] | None:
    """For a write of `content` to the package `__init__.py` at `path` (relative, '/'):
    (the import line, the lines that replace it, the content with them), or None."""
    found = _init_tree(path, content)
    if found is None:
        return None
    package, tree = found
    folder = root.joinpath(*path.split("/")[:-1])
    defined = {name for node in tree.body for name in bound_names(node)}
    lines = content.splitlines()
    for node in tree.body:
        if not isinstance(node, ast.ImportFrom) or not from_package(node, package):
            continue
        names = [alias.name for alias in node.names]
        if any(n in defined or not _module_function(root, folder, n) for n in names):
            continue  # defined here (the write's note says to delete the line), or a module
        old = lines[node.lineno - 1]
        if content.count(old) != 1:
            continue
        # `as` re-exports the name (`ruff check` F401 otherwise), sorted as ruff wants
        new = "\n".join(sorted(f"from .{n} import {n} as {n}" for n in names))
        return old, new, content.replace(old, new, 1)
    return None


def self_imported(path: str, content: str) -> tuple[str, str, list[str]] | None:
    """For a write of the package `__init__.py` at `path` that imports from its own package
    names it defines itself (`from mathx import add, subtract, multiply, divide` above its
    four functions): (the content without that line, the line, the names); None else.
    The package cannot load so ("partially initialized module"): the 1.5B's mathx wrote
    that file so, then again three times, blocked, and its next write was `from mathx
    import *` alone (the CPU)."""
    found = _init_tree(path, content)
    if found is None:
        return None
    package, tree = found
    defined = {
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    }
    lines = content.splitlines(keepends=True)
    for node in tree.body:
        if not isinstance(node, ast.ImportFrom) or not from_package(node, package):
            continue
        names = [alias.name for alias in node.names]
        old = lines[node.lineno - 1]
        if not all(n in defined for n in names) or old.strip() != ast.get_source_segment(
            content, node
        ):
            continue
        rest = lines[: node.lineno - 1] + lines[node.lineno :]
        return "".join(rest).lstrip("\n"), old.strip(), names
    return None


def _init_tree(path: str, content: str) -> tuple[str, ast.Module] | None:
    """(the package, the content's syntax tree) for a package `__init__.py` at `path`
    whose content parses; None otherwise."""
    parts = path.split("/")
    if len(parts) < 2 or parts[-1] != "__init__.py":
        return None
    try:
        return parts[-2], ast.parse(content)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def self_imported_note(path: str, old: str, names: list[str]) -> str:
    """What the write says of a package's import from itself that it left out."""
    package = path.split("/")[-2]
    return (
        f"; `{old}` imports {package} from itself, and this file defines {listed(names)}: "
        "that import was left out"
    )


def _module_function(root: Path, folder: Path, name: str) -> bool:
    """Whether `name` can only mean the function of the module `folder/name.py`: that
    module is yet to be written, or defines `name` (not a sub-package or a helper)."""
    if (folder / name).exists():
        return False
    module = folder / f"{name}.py"
    if not module.exists():
        return True
    return name in pyscript.defines(root, module.relative_to(root).as_posix())


def unwritten(root: Path, path: str, new: str) -> list[str]:
    """The modules the mended lines import that do not exist yet (relative, '/')."""
    folder = path.rsplit("/", 1)[0]
    names = [line.split()[1][1:] for line in new.splitlines()]
    return [f"{folder}/{n}.py" for n in names if not (root / folder / f"{n}.py").exists()]


def imported(root: Path, path: str) -> set[str]:
    """What the `__init__.py` at `path` imports, as dotted names (`.add` in mathx is mathx.add)."""
    package = path.rsplit("/", 1)[0].replace("/", ".")
    tree = tree_of(text_of(root, path))
    found: set[str] = set()
    for node in tree.body if tree is not None else []:
        if isinstance(node, ast.ImportFrom):
            base = f"{package}.{node.module}" if node.level == 1 and node.module else node.module
            base = package if node.level == 1 and not node.module else base
            found.add(base or "")
            found |= {f"{base}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return found


def missing_modules(root: Path, path: str) -> list[tuple[str, list[str]]]:
    """For the package `__init__.py` at `path`: each module of its own it imports from
    (`from .add import add`) that is neither a file nor a folder, with the names it
    imports from it: [("mathx/add.py", ["add"]), ...]."""
    folder = path.rsplit("/", 1)[0] if "/" in path else ""
    tree = tree_of(text_of(root, path)) if folder and path.endswith("/__init__.py") else None
    found: list[tuple[str, list[str]]] = []
    for node in tree.body if tree is not None else []:
        if not isinstance(node, ast.ImportFrom) or node.level != 1 or not node.module:
            continue
        if "." in node.module or any(a.name == "*" for a in node.names):
            continue
        module = root / folder / node.module
        if not module.with_suffix(".py").exists() and not module.exists():
            found.append((f"{folder}/{node.module}.py", [a.name for a in node.names]))
    return found
