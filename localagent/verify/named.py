"""The functions a goal names, each defined by a Python file of the workspace.

"Refactor shapes.py: ... move them into one function area(kind, size) and use it in all
three. Behaviour must not change: python -m pytest must still pass": the tests passed
before any change, so they prove nothing about the refactor. Qwen2.5-Coder-1.5B put its
`def area` inside shapes.py's docstring (the CPU); the tests passed, the small verifier said
VERIFIED, and nothing was refactored. A function the goal names (`area(kind, size)`, "the
functions add, subtract, multiply and divide", `` `area` ``) that no Python file defines,
as code, is a hard finding of the verdict.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from localagent.system.textcap import listed
from localagent.tools import pycalls, pyfiles

_NAME = re.compile(r"`?([A-Za-z_]\w*)`?(?:\s*\([^()]*\))?")
_OPENS = re.compile(r"\bfunctions?\s+(?:(?:called|named)\s+)?", re.I)
_NEXT = re.compile(r"\s*,\s*and\s+|\s*,\s*|\s+and\s+")
# Words a list of names ends at: "area(kind, size) and use it", "... zero), with tests".
_NOT_NAMES = frozenset(
    {
        *("a", "an", "and", "or", "the", "that", "which", "with", "to", "for", "in", "of"),
        *("on", "as", "is", "are", "be", "it", "its", "use", "using", "each", "all", "both"),
        *("must", "should", "will", "can", "from", "into", "by"),
    }
)


def named_functions(goal: str) -> list[str]:
    """The functions the goal names: written with their parentheses or in backticks, or
    two or more in a list; not "a function that ..."."""
    found: list[str] = []
    for opening in _OPENS.finditer(goal):
        items, at = [], opening.end()
        while (item := _NAME.match(goal, at)) is not None and item[1].lower() not in _NOT_NAMES:
            items.append(item)
            if (gap := _NEXT.match(goal, item.end())) is None:
                break
            at = gap.end()
        for item in items:
            if len(items) > 1 or "(" in item[0] or item[0].startswith("`"):
                found.append(item[1])
    return list(dict.fromkeys(found))


def undefined(goal: str, root: Path) -> list[str]:
    """The verdict's findings: each function the goal names that no Python file of the
    workspace defines (a `def` or `class` of that name, at any depth)."""
    return [
        f"the goal names the function {name}, and no Python file here defines it"
        for name in missing(goal, root)
    ]


def unused(goal: str, root: Path) -> list[str]:
    """The verdict's findings: each function the goal names and says to use ("move them
    into one function area(kind, size) and use it in all three") that a Python file here
    defines and no code here calls (or uses at all), outside the function itself.
    Qwen2.5-Coder-1.5B added `def area` above the three functions and then only renamed
    them, refused each time (the CPU): the tests passed as they did before any change.
    Where the goal says where to use it ("use it in ..."), each function of its file that
    the goal names must call it (`callers`)."""
    wanted = [name for name in named_functions(goal) if _said_to_use(goal, name)]
    if not wanted:
        return []
    found = pyfiles.trees(root)  # parsed once for all the questions
    trees = [tree for _, tree in found]
    defined, called = _defined(trees), _called(trees)
    findings = []
    for name in wanted:
        if name in defined and name not in called:
            findings.append(f"the goal says to use the function {name}, and no code here calls it")
        elif (
            name in called
            and said_where(goal, name)
            and (users := callers(goal, name, found))
            and (missing := users[1])
        ):
            verb = "does" if len(missing) == 1 else "do"
            findings.append(
                f"the goal says to use the function {name} in {listed(users[0])}, and "
                f"{listed(missing)} {verb} not call it"
            )
    return findings


def callers(
    goal: str, name: str, found: list[tuple[str, ast.Module]]
) -> tuple[list[str], list[str], str] | None:
    """(the functions of the one file that defines `name` which the goal names, those of
    them that do not call it, that file); None when several files or none define it, or
    the goal names none of its other functions. The 1.5B's refactor made total_area call
    area and left largest and report as they were (the CPU): "no code calls it" alone let
    that pass."""
    owners = [(path, tree) for path, tree in found if name in pycalls.functions(tree)]
    if len(owners) != 1:
        return None
    path, tree = owners[0]
    users = [f for f in pycalls.functions(tree) if f != name and re.search(rf"\b{f}\b", goal)]
    if not users:
        return None
    return users, pycalls.not_calling(tree, name, users), path


def said_where(goal: str, name: str) -> bool:
    """The goal says where to use it: "use it in all three", "call area from report"."""
    said = rf"\b(?:use|call)s?\s+(?:it|them|{re.escape(name)})\s+(?:in|from|inside)\b"
    return re.search(said, goal, re.I) is not None


def _said_to_use(goal: str, name: str) -> bool:
    said = rf"\b(?:use|call)s?\s+(?:it|them|this|that|{re.escape(name)})\b"
    return re.search(said, goal, re.I) is not None


def _called(trees: list[ast.Module]) -> set[str]:
    """The names some code here uses (`f(...)`, `obj.f(...)`, `map(f, xs)`), not counting
    a function's uses of itself."""
    names: set[str] = set()
    for tree in trees:
        stack: list[tuple[ast.AST, str]] = [(tree, "")]
        while stack:
            node, inside = stack.pop()
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                inside = node.name
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                name = node.id
            else:
                name = node.attr if isinstance(node, ast.Attribute) else ""
            if name and name != inside:
                names.add(name)
            stack.extend((child, inside) for child in ast.iter_child_nodes(node))
    return names


def missing(text: str, root: Path) -> list[str]:
    """The functions a text names (`named_functions`) that no Python file here defines."""
    wanted = named_functions(text)
    if not wanted:
        return []
    defined = _defined([tree for _, tree in pyfiles.trees(root)])
    return [name for name in wanted if name not in defined]


def _defined(trees: list[ast.Module]) -> set[str]:
    return {
        node.name
        for tree in trees
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    }
