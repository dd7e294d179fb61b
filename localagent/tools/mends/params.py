"""A test function that does not take the arguments its `@pytest.mark.parametrize` passes
it, written to take them.

Qwen2.5-Coder-1.5B's mathx tests on the CPU put `@pytest.mark.parametrize('a, b,
expected', [...])` above `def test_divide_by_zero():`: pytest stops at collecting the file
("function uses no argument 'a'") and runs none of its tests; told so, the model ran
pytest again until it was blocked, three subtasks running. The function does what its body
says for each row; taking the arguments it ignores changes nothing else.
"""

from __future__ import annotations

import ast
import re

from localagent.system.textcap import listed
from localagent.tools.pyscript import TEST_FILE

_FUNCTIONS = ast.FunctionDef | ast.AsyncFunctionDef
# A header on one line whose parameters are plain names: the ones added go after them.
_HEADER = r"^(\s*(?:async\s+)?def\s+{name}\s*\()([\w\s,]*?)(,?\s*\)\s*(?:->[^:]*)?:)"


def mended(content: str, name: str) -> tuple[str, list[tuple[str, list[str]]]] | None:
    """The test file with each test function given the parametrized names it lacks, and
    the functions mended with those names; None when there is none, or the file does not
    parse as written or as mended."""
    if not TEST_FILE.search(name):
        return None
    try:
        tree = ast.parse(content)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    lines = content.splitlines(keepends=True)
    made: list[tuple[str, list[str]]] = []
    for node in _functions(tree):
        lacking = [n for n in _parametrized(node) if n not in _parameters(node)]
        if not lacking or node.args.vararg or node.args.kwarg:
            continue
        at = node.lineno - 1
        header = re.compile(_HEADER.format(name=re.escape(node.name)))
        found = header.match(lines[at]) if at < len(lines) else None
        if found is None:
            continue
        given = [p.strip() for p in found[2].split(",") if p.strip()]
        lines[at] = (
            found[1]
            + ", ".join([*given, *lacking])
            + found[3].lstrip(", ")
            + lines[at][found.end() :]
        )
        made.append((node.name, lacking))
    if not made:
        return None
    text = "".join(lines)
    try:
        ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return text, made


def mended_note(made: list[tuple[str, list[str]]]) -> str:
    """What the write says of it."""
    return "".join(
        f"; {function} did not take {listed(names)}, which its parametrize passes it (pytest "
        "would collect none of the file's tests), so it was written to take them"
        for function, names in made
    )


def _functions(tree: ast.Module) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The module's functions and its classes' methods."""
    found = [n for n in tree.body if isinstance(n, _FUNCTIONS)]
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            found += [n for n in node.body if isinstance(n, _FUNCTIONS)]
    return found


def _parametrized(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """The names its `parametrize` decorators pass it, as written."""
    names: list[str] = []
    for decorator in node.decorator_list:
        if not (isinstance(decorator, ast.Call) and decorator.args):
            continue
        func = decorator.func
        if not (isinstance(func, ast.Attribute) and func.attr == "parametrize"):
            continue
        first = decorator.args[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            names += [n.strip() for n in first.value.split(",") if n.strip()]
        elif isinstance(first, ast.List | ast.Tuple):
            names += [
                e.value.strip()
                for e in first.elts
                if isinstance(e, ast.Constant) and isinstance(e.value, str)
            ]
    return [n for n in dict.fromkeys(names) if n.isidentifier()]


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    arguments = node.args
    return {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]}
