"""Where a plan's files go: the package a goal asks for, and a step that writes one of
its modules at the top of the workspace (or as the module NAME.py) moved into it."""

from __future__ import annotations

import re

from localagent.loop.subtasks import written_file

_PACKAGE = (  # "package mathx", "package named `geo`", then "the mathx package"
    re.compile(r"\bpackage\s+(?:named\s+|called\s+)?[`'\"]?([A-Za-z_]\w*)\b", re.I),
    re.compile(r"\b([A-Za-z_]\w*)[`'\"]?\s+package\b", re.I),
)


# Files of a package's project that do not go into the package's folder.
_NOT_MODULES = re.compile(r"(?:test_.*|.*_test|tests?|conftest|setup|main|__main__|run|app)\.py$")
TESTED = re.compile(r"\b(?:pytest|tests?)\b", re.I)  # a goal whose package has tests
_NOT_NAMES = {
    *("a", "an", "and", "as", "for", "from", "in", "of", "that", "the", "to", "with"),
    *("new", "python", "python3", "simple", "small", "whole", "your", "this"),
}


def package_name(goal: str) -> str:
    """The package a goal asks for ("Create a Python package mathx ..."), or ""."""
    for pattern in _PACKAGE:
        for found in pattern.finditer(goal):
            if found[1].lower() not in _NOT_NAMES:
                return found[1]
    return ""


def into_package(text: str, package: str, goal: str) -> str:
    """A step with the package's module `NAME.py` (Qwen2.5-Coder-1.5B's mathx plans: "write_file
    mathx.py with the function definitions") as the package's `NAME/__init__.py`, and one
    that writes a module at the top (`write_file add.py with the add function`, beside
    `write_file mathx/__init__.py`) as the package's (`mathx/add.py`): a package is a
    folder, and the goal asked for one. Tests, setup and entry scripts stay where they are.
    A run of the package's `__init__.py` is the run of its tests, when the goal has tests."""
    text = re.sub(rf"(?<![\w/.\\-]){re.escape(package)}\.py\b", f"{package}/__init__.py", text)
    if TESTED.search(goal) and re.match(
        rf"\W*run(?:_cmd)?\s+python3?\s+{re.escape(package)}/__init__\.py\b", text, re.I
    ):
        # Run as a script, the package has no package: its relative imports fail, and the
        # 1.5B's mathx replan ran it three times (the CPU). Its tests run it as it is.
        return "run python -m pytest"
    module = written_file(text)
    if "/" in module or not module.endswith(".py") or _NOT_MODULES.match(module):
        return text
    if re.search(rf"(?<![\w/.\\-]){re.escape(module)}\b", goal):  # where the goal wants it
        return text
    return re.sub(rf"(?<![\w/.\\-]){re.escape(module)}\b", f"{package}/{module}", text)
