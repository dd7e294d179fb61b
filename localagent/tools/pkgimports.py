"""A package whose `__init__.py` imports its modules where it means their functions.

Qwen2.5-Coder-1.5B wrote mathx as one module a function (`mathx/add.py` defining `add`)
and `mathx/__init__.py` as `from mathx import add, subtract, multiply, divide`: that
imports the modules, so `mathx.add(1, 2)` raises "'module' object is not callable". A
run that says so is told which imports these are, with the edit that imports the
functions instead, ready to copy. Read with `ast` only; nothing is imported or run.
"""

from __future__ import annotations

import ast
import json
import os
import re
from pathlib import Path

from localagent.system import safefs
from localagent.tools import pyscript

NOT_CALLABLE = "'module' object is not callable"
_CIRCULAR = re.compile(r"cannot import name '\w+' from partially initialized module '(\w+)'")
MAX_PACKAGES = 20  # folders of the workspace root looked at


def module_imports_note(root: Path, output: str) -> str:
    """The note for a run whose output says a module was called, or that a package's
    `__init__.py` imports from itself what it lacks; ""."""
    if (circular := _CIRCULAR.search(output)) is not None:
        return _lacking_note(root, circular[1])
    if NOT_CALLABLE not in output:
        return ""
    try:
        folders = sorted(p for p in root.iterdir() if (p / "__init__.py").is_file())
    except OSError:
        return ""
    for folder in folders[:MAX_PACKAGES]:
        if note := _package_note(root, folder.name):
            return note
    return ""


def written_note(root: Path, path: str) -> str:
    """The note for a write of a package's `__init__.py` that imports its modules where it
    means their functions (read from the file as written), or "". The 1.5B wrote that
    line first in all 16 of its mathx runs; told only when a run failed, it went on."""
    parts = path.split("/")
    if len(parts) != 2 or parts[1] != "__init__.py":
        return ""
    return _package_note(root, parts[0])


def _lacking_note(root: Path, package: str) -> str:
    """ "cannot import name 'add' from partially initialized module 'mathx'": the 1.5B's
    `mathx/__init__.py` was `from mathx import add, ...` and nothing else (7 runs of 16);
    pytest failed so, with no word on why, and it ran pytest again unchanged."""
    init = f"{package}/__init__.py"
    source = text_of(root, init)
    missing = missing_from_itself(root, init, source) if source is not None else []
    if not missing or source is None:
        return ""
    return f"NOTE: {self_import_note(init, source, missing)}."


def _package_note(root: Path, package: str) -> str:
    init = f"{package}/__init__.py"
    source = text_of(root, init)
    tree = tree_of(source)
    if source is None or tree is None:
        return ""
    for node in tree.body:
        if not isinstance(node, ast.ImportFrom) or not from_package(node, package):
            continue
        names = [a.name for a in node.names]
        same = [n for n in names if n in pyscript.defines(root, f"{package}/{n}.py")]
        if not same:
            continue
        old = source.splitlines()[node.lineno - 1].strip()
        if source.count(old) != 1:
            return ""
        # `as` re-exports the name: `from .add import add` alone fails `ruff check` (F401);
        # sorted, as ruff's import-order rule wants them
        new = "\n".join(
            sorted(
                f"from .{n} import {n} as {n}" if n in same else f"from . import {n}" for n in names
            )
        )
        call = {"name": "replace_in_file", "arguments": {"path": init, "old": old, "new": new}}
        return (
            f"NOTE: `{old}` in {init} imports the modules {', '.join(same)}, not the "
            f"functions they define, so calling {package}.{same[0]}(...) calls a module. To "
            f"import the functions, send: {json.dumps(call)}"
        )
    return ""


def from_package(node: ast.ImportFrom, package: str) -> bool:
    """`from PACKAGE import a, b` or `from . import a, b` on one line, with no `as`."""
    if node.end_lineno != node.lineno:
        return False
    ours = (node.module, node.level) in ((package, 0), (None, 1))
    return ours and all(a.asname is None and a.name != "*" for a in node.names)


MAX_IMPORTERS_SCANNED = 60  # Python files looked at for who imports a module


def importers(root: Path, path: str, names: list[str]) -> list[str]:
    """The Python files of the workspace's root, of `path`'s folder and of `tests/` that
    import one of `names` from the module at `path` (`from stats import mean`, or
    `stats.mean` after `import stats`): what a write that drops them breaks."""
    module = path[:-3].removesuffix("/__init__").replace("/", ".")
    folders = dict.fromkeys(["", path.rpartition("/")[0], "tests"])
    found: list[str] = []
    seen = 0
    for folder in folders:
        try:
            entries = sorted(os.scandir(root / folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            name = f"{folder}/{entry.name}" if folder else entry.name
            python = entry.name.endswith(".py") and entry.is_file(follow_symlinks=False)
            if not python or name == path:
                continue
            seen += 1
            if seen > MAX_IMPORTERS_SCANNED:
                return found
            if _imports(root, name, module, set(names)):
                found.append(name)
    return found


def _imports(root: Path, name: str, module: str, names: set[str]) -> bool:
    tree = tree_of(text_of(root, name))
    if tree is None:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and _absolute(name, node) == module:
            if names & {a.name for a in node.names}:
                return True
        elif _attribute_of(node, module, names):
            return True
    return False


def _absolute(name: str, node: ast.ImportFrom) -> str:
    """The module a `from ... import` in the file `name` imports from, by its dotted name
    from the root: `from .add import add` in mathx/__init__.py is from mathx.add (the
    1.5B's package imported its modules' functions that way, and a write over
    mathx/add.py that dropped add went through); "" for one that leaves the root."""
    if node.level == 0:
        return node.module or ""
    package = name.split("/")[:-1]
    if node.level - 1 > len(package):
        return ""
    base = package[: len(package) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _attribute_of(node: ast.AST, module: str, names: set[str]) -> bool:
    """`module.name` for one of names (after `import module`)."""
    if not isinstance(node, ast.Attribute) or node.attr not in names:
        return False
    return isinstance(node.value, ast.Name) and node.value.id == module


def lost_users(root: Path, name: str, had: list[str], now: list[str]) -> str:
    """ "mean, median, which test_stats.py imports": what a change of `name` from defining
    `had` to defining `now` drops that other files of the workspace import, or ""."""
    lost = [d for d in had if d not in now]
    users = importers(root, name, lost) if lost else []
    if not users:
        return ""
    verb = "imports" if len(users) == 1 else "import"
    return f"{', '.join(lost[:5])}, which {' and '.join(users[:3])} {verb}"


def missing_from_itself(root: Path, path: str, source: str) -> list[str]:
    """The names a package's `__init__.py` (at `path`, with `source`) imports from its own
    package that nothing there has when the import runs: neither it (no def, class or
    assignment above the import) nor a module or folder of the package. Qwen2.5-Coder-1.5B's
    mathx/__init__.py was the one line `from mathx import add, subtract, multiply, divide`,
    and nothing else was written; told to write the code there, it kept that line first
    and wrote the functions below it, which still raises "partially initialized"."""
    parts = path.split("/")
    if len(parts) < 2 or parts[-1] != "__init__.py":
        return []
    package = parts[-2]
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    folder = root.joinpath(*parts[:-1])
    defined: set[str] = set()
    missing = []
    for node in tree.body:
        defined.update(bound_names(node))
        if not isinstance(node, ast.ImportFrom) or (node.module, node.level) not in (
            (package, 0),
            (None, 1),
        ):
            continue
        for alias in node.names:
            name = alias.name
            there = (folder / f"{name}.py").is_file() or (folder / name).is_dir()
            if name != "*" and name not in defined and not there and name not in missing:
                missing.append(name)
    return missing


def self_imports(root: Path, path: str) -> tuple[list[str], list[str]]:
    """For the package `__init__.py` at `path`: the names it imports from its own package
    that it lacks when the import runs (`missing_from_itself`), and those of them its code
    defines below the import; ([], []) for any other file."""
    source = text_of(root, path) if path.endswith("__init__.py") else None
    if source is None:
        return [], []
    missing = missing_from_itself(root, path, source)
    return missing, defined_below(source, missing)


def defined_below(source: str, names: list[str]) -> list[str]:
    """Of `names`, those the module's own code defines (at its top level)."""
    if not names:
        return []
    tree = tree_of(source)
    defined = {n for node in tree.body for n in bound_names(node)} if tree is not None else set()
    return [name for name in names if name in defined]


def self_import_note(init: str, source: str, missing: list[str]) -> str:
    """What a package's `__init__.py` that imports `missing` from itself must do: write
    their code there, or (when it does, below the import) delete the import."""
    package = init.split("/")[-2]
    names = ", ".join(missing[:6])
    if later := defined_below(source, missing):
        tree = tree_of(source)
        line = next(
            (
                ast.get_source_segment(source, node) or ""
                for node in (tree.body if tree is not None else [])
                if isinstance(node, ast.ImportFrom) and later[0] in {a.name for a in node.names}
            ),
            "",
        )
        return (
            f"{init} imports {names} from {package} itself before the code below defines "
            f"them, so it cannot load: delete the line `{line}`"
        )
    has = "has none of them" if len(missing) > 1 else "does not have it"
    return (
        f"{init} imports {names} from {package} itself, which {has} (no "
        f"{package}/{missing[0]}.py, no def {missing[0]}): write their code in {init} "
        f"(def {missing[0]}(...): ...) instead of importing them, or each in a module of "
        f"its own ({package}/{missing[0]}.py)"
    )


def bound_names(node: ast.stmt) -> list[str]:
    """The names a top-level statement defines (def, class, assignment)."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return []


def inside(root: Path, path: str) -> str:
    """A traceback's file as a workspace path ("" for one outside the workspace)."""
    try:
        given = Path(path)
        relative = (
            (given if given.is_absolute() else root / given).resolve().relative_to(root.resolve())
        )
    except (OSError, ValueError):
        return ""
    return relative.as_posix()


def text_of(root: Path, path: str) -> str | None:
    """A workspace file's text (None when it cannot be read or is not UTF-8); a planted
    link is not followed out of the workspace."""
    try:
        return safefs.read_inside(root, root / path, pyscript.MAX_SOURCE_BYTES + 1).decode("utf-8")
    except (OSError, safefs.UnsafeFile, UnicodeDecodeError):
        return None


def tree_of(source: str | None) -> ast.Module | None:
    """The module's syntax tree, or None when there is no source or it does not parse."""
    if source is None:
        return None
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
