"""A file that reads, through one of Python's own modules, names that module lacks and the
workspace's one package named after it has (`math.add` beside the package `mathx`): read
through that package.

Qwen2.5-Coder-1.5B's mathx tests began `import math` and called `math.add(1, 2)`,
`math.subtract(...)`, ...: mathx, written a round before, defines the four, and math has
none of them. Told "AttributeError: module 'math' has no attribute 'add'", it edited
mathx/__init__.py until the round limit, in 3 runs of 16 (the CPU).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from localagent.tools.mends.foreign import python_module
from localagent.tools.pkgimports import bound_names, text_of, tree_of


def mended(root: Path, name: str, content: str) -> tuple[str, str, str, list[str]] | None:
    """(the content read through the package, the module, the package, the names) for a
    Python file whose top-level `import M` (M one of Python's own modules) is read as
    `M.NAME` for names M lacks, where exactly one package folder here is named M and more
    (`mathx` for `math`) and binds each of those names in its `__init__.py`; None else."""
    if not name.endswith(".py"):
        return None
    tree = tree_of(content)
    if tree is None:
        return None
    for node in tree.body:
        if not isinstance(node, ast.Import) or len(node.names) != 1 or node.names[0].asname:
            continue
        module_name = node.names[0].name
        module = python_module(module_name)
        if module is None:
            continue
        read = {
            n.attr
            for n in ast.walk(tree)
            if isinstance(n, ast.Attribute)
            and isinstance(n.value, ast.Name)
            and n.value.id == module_name
        }
        lacking = sorted(a for a in read if not hasattr(module, a))
        package = _package(root, module_name, lacking) if lacking else ""
        if not package:
            continue
        reads = rf"(?<![\w.]){module_name}\.({'|'.join(lacking)})\b"
        text = re.sub(reads, rf"{package}.\1", content)
        line = re.compile(rf"^import {module_name}[ \t]*$", re.M)
        if not line.search(content):
            continue
        keep = "" if read <= set(lacking) else f"import {module_name}\n"  # read for more
        text = line.sub(f"{keep}import {package}", text, count=1)
        return text, module_name, package, lacking
    return None


def _package(root: Path, module: str, names: list[str]) -> str:
    """The one package folder at the workspace's top whose name is `module` and more and
    whose `__init__.py` binds each of `names` (a def, a class, an import); "" else."""
    try:
        folders = [p.name for p in root.iterdir() if p.is_dir() and p.name.startswith(module)]
    except OSError:
        return ""
    found = []
    for folder in folders:
        if folder == module or not folder.isidentifier():
            continue
        tree = tree_of(text_of(root, f"{folder}/__init__.py"))
        if tree is None:
            continue
        bound = {n for node in tree.body for n in bound_names(node)}
        bound |= {
            a.asname or a.name
            for node in tree.body
            if isinstance(node, ast.ImportFrom)
            for a in node.names
        }
        if all(n in bound for n in names):
            found.append(folder)
    return found[0] if len(found) == 1 else ""


def mended_note(module: str, package: str, names: list[str]) -> str:
    """What the write says of the names it read through the package."""
    shown = ", ".join(f"{module}.{n}" for n in names)
    return (
        f"; Python's {module} has no {', '.join(names)}, and the package {package} here "
        f"has each: {shown} were written as {package}'s, and {package} imported"
    )
