"""A package whose `__init__.py` imports none of the functions its modules define, and a
package's module run as a script.

Qwen2.5-Coder-1.5B's mathx plan on the CPU said "write_file mathx/__init__.py with the
following content: import math", then one module a function, and tests that call
`mathx.add(1, 2)`: pytest failed four times with "module 'mathx' has no attribute 'add'"
and said nothing of why. A run that says so is told which module of the package defines
each missing name, with the write of `__init__.py` that imports them, ready to copy. Read
with `ast` only; nothing is imported or run.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from localagent.system.textcap import listed
from localagent.tools import pyscript
from localagent.tools.loaderror import NO_PARENT
from localagent.tools.pkgimports import text_of, tree_of

_NO_ATTRIBUTE = re.compile(r"AttributeError: module '(\w+)' has no attribute '(\w+)'")
MAX_MODULES = 50  # of one package, looked at for the module that defines a name


def unexported_note(root: Path, output: str) -> str:
    """The note for a run whose output says a workspace package lacks names that modules
    of its own define, or ""."""
    missing: dict[str, list[str]] = {}
    for found in _NO_ATTRIBUTE.finditer(output):
        names = missing.setdefault(found[1], [])
        names += [] if found[2] in names else [found[2]]
    for package, names in missing.items():
        if note := _note(root, package, names):
            return note
    return ""


def _note(root: Path, package: str, names: list[str]) -> str:
    init = f"{package}/__init__.py"
    source = text_of(root, init)
    if source is None or tree_of(source) is None:
        return ""
    where = {name: module for name in sorted(names) if (module := _defining(root, package, name))}
    if not where:
        return ""
    imports = sorted(f"from .{module} import {name} as {name}" for name, module in where.items())
    kept = source.rstrip() + "\n" if source.strip() else ""
    call = {
        "name": "write_file",
        "arguments": {"path": init, "content": kept + "\n".join(imports) + "\n"},
    }
    files = list(dict.fromkeys(f"{package}/{module}.py" for module in where.values()))
    first = next(iter(where))
    return (
        f"NOTE: {init} does not import {listed(list(where))}, which {listed(files)} "
        f"define{'s' if len(files) == 1 else ''}, so {package}.{first}(...) finds no {first}. "
        f"To import them, send: {json.dumps(call)}"
    )


def _defining(root: Path, package: str, name: str) -> str:
    """The module of the package (its own folder, not below) that defines `name`: the one
    named after it first, or ""."""
    if name in pyscript.defines(root, f"{package}/{name}.py"):
        return name
    try:
        modules = sorted(p.stem for p in (root / package).glob("*.py") if p.stem.isidentifier())
    except OSError:
        return ""
    for module in modules[:MAX_MODULES]:
        if module != "__init__" and name in pyscript.defines(root, f"{package}/{module}.py"):
            return module
    return ""


def script_note(root: Path, script: str, output: str) -> str:
    """The note for a run of a package's module as a script (`python mathx/__init__.py`)
    that stopped on its relative imports, or "": the imports are right for the package,
    and the package runs through what imports it."""
    script = script.replace("\\", "/").removeprefix("./")
    if NO_PARENT not in output or "/" not in script:
        return ""
    package = script.rsplit("/", 1)[0]
    if not (root / package / "__init__.py").is_file():
        return ""
    dotted = package.replace("/", ".")
    return (
        f"NOTE: {script} is a module of the package {dotted}: run as a script it has no "
        f"package, so its relative imports (from .x import ...) fail, though {dotted} "
        "imports them as it should. Do not change them for this run: run what imports "
        f"{dotted} instead, its tests (python -m pytest) or a script beside the package."
    )
