"""Every text a tool refuses with is a named prompt: raised by name with its values,
rendered through the run's prompt set, so a user can read and replace each one."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import localagent
from localagent.prompts import texts as prompts
from localagent.prompts.promptset import PromptSet
from localagent.tools import ToolError

PACKAGE = Path(localagent.__file__).parent


def _calls(tree: ast.AST) -> Iterator[tuple[ast.Call, ast.AST]]:
    """Each call with the innermost function (or the module) it is in."""
    scopes: dict[ast.AST, ast.AST] = {}
    for parent in ast.walk(tree):
        inner = parent if isinstance(parent, ast.FunctionDef | ast.AsyncFunctionDef) else None
        for child in ast.iter_child_nodes(parent):
            scopes[child] = inner or scopes.get(parent, tree)
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
    for node in sorted(calls, key=lambda node: (node.lineno, node.col_offset)):
        yield node, scopes.get(node, tree)


def _is_tool_error(func: ast.expr) -> bool:
    return (isinstance(func, ast.Name) and func.id == "ToolError") or (
        isinstance(func, ast.Attribute) and func.attr == "ToolError"
    )


def _is_text(node: ast.AST) -> bool:
    """A message written here: a string literal, an f-string, or one built from them."""
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.BinOp):
        return _is_text(node.left) or _is_text(node.right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr == "format" and _is_text(node.func.value)
    return isinstance(node, ast.IfExp) and (_is_text(node.body) or _is_text(node.orelse))


def _texts_named(scope: ast.AST) -> set[str]:
    """The local names this function binds to a message written in it."""
    return {
        target.id
        for node in ast.walk(scope)
        if isinstance(node, ast.Assign) and _is_text(node.value)
        for target in node.targets
        if isinstance(target, ast.Name)
    }


def refusal_problems(source: str, where: str) -> list[str]:
    found = []
    for node, scope in _calls(ast.parse(source)):
        at = f"{where}:{node.lineno}"
        if _is_tool_error(node.func):
            named = _texts_named(scope)
            for arg in [*node.args, *(k.value for k in node.keywords)]:
                if _is_text(arg) or (isinstance(arg, ast.Name) and arg.id in named):
                    found.append(f"{at}: a ToolError message written in code")
        elif isinstance(node.func, ast.Attribute) and node.func.attr == "of":
            found += _of_problems(node, at) if _is_tool_error(node.func.value) else []
    return found


def _of_problems(node: ast.Call, at: str) -> list[str]:
    first = node.args[0] if node.args else None
    if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
        return [f"{at}: ToolError.of takes a prompt's name as written"]
    if first.value not in prompts.PROMPTS:
        return [f"{at}: {first.value!r} is no prompt"]
    if any(k.arg is None for k in node.keywords):
        return []
    given = {k.arg for k in node.keywords}
    declared = prompts.PROMPTS[first.value].spec.names
    if given != declared:
        # A replacement may use any declared placeholder: each one needs its value.
        return [f"{at}: {first.value} declares {sorted(declared)}, given {sorted(given)}"]
    return []


def test_every_tool_refusal_is_a_named_prompt_with_all_its_values() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        found += refusal_problems(path.read_text("utf-8"), str(path.relative_to(PACKAGE)))
    assert found == []


def test_the_walk_finds_a_message_written_in_code() -> None:
    source = """
def f(path):
    outside = f"path {path} is outside"
    if path:
        raise ToolError(outside)
    raise ToolError("empty " + path)

def g(tools):
    raise tools.ToolError(f"no {tools}")

def h():
    raise ToolError.of("path_nul")
    raise ToolError.of("no_such_prompt")
"""
    found = refusal_problems(source, "x.py")
    assert [line.split(": ", 1)[0] for line in found] == [
        "x.py:5",
        "x.py:6",
        "x.py:9",
        "x.py:12",
        "x.py:13",
    ]


def test_a_refusal_renders_through_the_prompt_set_it_reaches() -> None:
    nested = ToolError.of(
        "old_not_found",
        path="'a.py'",
        nearest=ToolError.of("old_nearest_lines", lines="  1| x"),
        now="",
    )
    default = nested.text()
    assert default.startswith("old was not found in 'a.py'")
    assert default.endswith("; the nearest lines are:\n  1| x")
    assert str(nested) == default
    mine = PromptSet({"old_not_found": "NOT IN {path}{nearest}", "old_nearest_lines": " ~ {lines}"})
    assert nested.text(mine) == "NOT IN 'a.py' ~   1| x"
