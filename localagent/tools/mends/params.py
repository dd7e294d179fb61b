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
    if (tree := _test_tree(content, name)) is None:
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
    if _test_tree(text, name) is None:
        return None
    return text, made


def _test_tree(content: str, name: str) -> ast.Module | None:
    """A test file's syntax tree; None for another file, or one that does not parse."""
    if not TEST_FILE.search(name):
        return None
    try:
        return ast.parse(content)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


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


# pytest's own fixtures: a test taking one of them is run as written.
PYTEST_FIXTURES = frozenset({
    "cache", "capfd", "capfdbinary", "caplog", "capsys", "capsysbinary", "capteesys",
    "doctest_namespace", "monkeypatch", "pytestconfig", "record_property",
    "record_testsuite_property", "record_xml_attribute", "recwarn", "request", "subtests",
    "tmp_path", "tmp_path_factory", "tmpdir", "tmpdir_factory",
})  # fmt: skip
# An argument a test compares with: no value made up for it can be right.
_ANSWER = re.compile(r"expect|result|want|answer|output|^out$|^exp$", re.I)


def unbound(content: str, name: str) -> tuple[str, dict[str, list[str]]] | None:
    """The test file with each top-level test function whose arguments no fixture or
    parametrize gives written under a parametrize of two rows of small numbers, and the
    functions so written by that decorator; None when there is none (a fixture of the
    file's own, pytest's, an argument named as an expected value, a decorator, a default
    or a method: the model's to mend), or the file does not parse.

    Qwen2.5-Coder-1.5B's mathx tests on the CPU were `def test_add(a, b): assert add(a,
    b) == a + b`: pytest stopped each at its setup ("fixture 'a' not found"), and the
    hand-back sent the model to mathx/__init__.py, which was right, until the round
    limit. Such a test checks a property of its arguments, whatever they are: it runs
    as written for each row. (The workspace's conftest.py is `mend`'s to look for.)"""
    if (tree := _test_tree(content, name)) is None:
        return None
    if any("fixture" in ast.unparse(d) for n in ast.walk(tree) if isinstance(n, _FUNCTIONS)
           for d in n.decorator_list):  # fmt: skip
        return None
    lines = content.splitlines(keepends=True)
    made: dict[str, list[str]] = {}
    for node in reversed([n for n in tree.body if isinstance(n, _FUNCTIONS)]):
        names = _free_arguments(node)
        if not names:
            continue
        shown = ", ".join(names)
        rows = [tuple(range(n, n + len(names))) for n in (1, len(names) + 1)]
        values = [row[0] for row in rows] if len(names) == 1 else rows
        decorator = f"@pytest.mark.parametrize({shown!r}, {values!r})"
        indent = lines[node.lineno - 1][: -len(lines[node.lineno - 1].lstrip())]
        lines.insert(node.lineno - 1, f"{indent}{decorator}\n")
        made.setdefault(decorator, []).insert(0, node.name)
    if not made:
        return None
    if not _imports_pytest(tree):
        lines.insert(_import_at(tree), "import pytest\n")
    text = "".join(lines)
    if _test_tree(text, name) is None:
        return None
    return text, made


def unbound_note(made: dict[str, list[str]]) -> str:
    """What the write says of it."""
    said = ""
    for decorator, functions in made.items():
        names = decorator.split("'")[1].split(", ")
        one = len(functions) == 1
        said += (
            f"; {listed(functions)} took {listed(names)}, which no fixture or parametrize "
            f"gives {'it' if one else 'them'} (pytest would stop {'it' if one else 'each'} at "
            f"its setup), so {'it' if one else 'each'} was written under `{decorator}`"
        )
    return said


def _free_arguments(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """The arguments of a plain test function that nothing would give it."""
    arguments = node.args
    if not node.name.startswith("test") or node.decorator_list or arguments.defaults:
        return []
    if arguments.vararg or arguments.kwarg or arguments.kwonlyargs or arguments.posonlyargs:
        return []
    names = [a.arg for a in arguments.args]
    if any(n in PYTEST_FIXTURES or n in ("self", "cls") or _ANSWER.search(n) for n in names):
        return []
    return names


def _imports_pytest(tree: ast.Module) -> bool:
    return any(
        isinstance(n, ast.Import) and any(a.name == "pytest" and not a.asname for a in n.names)
        for n in tree.body
    )


def _import_at(tree: ast.Module) -> int:
    """The line (0-based) an `import pytest` goes on: before the first import that is not
    from __future__, else after the docstring, else first."""
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom) and not (
            isinstance(node, ast.ImportFrom) and node.module == "__future__"
        ):
            return node.lineno - 1
    first = tree.body[0] if tree.body else None
    docstring = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
    return first.end_lineno or 0 if docstring and first is not None else 0
