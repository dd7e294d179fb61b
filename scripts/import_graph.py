"""The import graph of localagent: its packages floor by floor, and every cycle.

Every import counts, wherever it is written: at load time, under `if TYPE_CHECKING:`, and
inside a function (a lazy import). A package's floor is one above the highest floor it
imports from, so a graph with every arrow pointing down has floors and no cycles; a
cycle is printed with the imports that make it, each marked with where it is written.

    python scripts/import_graph.py            # floors and cycles; exit 1 on a cycle
    python scripts/import_graph.py --modules  # also each module's imports, by kind
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "localagent"
# The one import that points up and stays: the top package's `__getattr__` hands out the
# Python API (`from localagent import run_goal`) on first use. Python loads the top package
# before any module below it, so this lazy re-export can never close a cycle at load time.
FACADE = "localagent"


@dataclass(frozen=True)
class Import:
    source: str  # the importing module, dotted
    target: str  # the imported module, dotted
    kind: str  # "load", "type" (under TYPE_CHECKING) or "lazy" (inside a function)
    line: int

    def __str__(self) -> str:
        return f"{self.source}:{self.line} -> {self.target} ({self.kind})"


def modules(root: Path) -> dict[str, Path]:
    """Each module of the package at `root`, by dotted name (a package by its own name)."""
    found: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = [root.name, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports(root: Path) -> list[Import]:
    """Every import of one module of the package by another, with its kind."""
    known = modules(root)
    found: list[Import] = []
    for name, path in known.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node, kind in _walk(tree, "load"):
            for target in _targets(node, package, known):
                if target != name:
                    found.append(Import(name, target, kind, node.lineno))
    return found


def _walk(node: ast.AST, kind: str) -> Iterator[tuple[ast.Import | ast.ImportFrom, str]]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child, kind
        elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            yield from _walk(child, "lazy" if kind == "load" else kind)
        elif isinstance(child, ast.If) and _type_checking(child.test):
            for part in child.body:
                yield from _walk(ast.Module(body=[part], type_ignores=[]), "type")
            for part in child.orelse:
                yield from _walk(ast.Module(body=[part], type_ignores=[]), kind)
        else:
            yield from _walk(child, kind)


def _type_checking(test: ast.expr) -> bool:
    name = test.attr if isinstance(test, ast.Attribute) else getattr(test, "id", "")
    return name == "TYPE_CHECKING"


def _targets(node: ast.Import | ast.ImportFrom, package: str, known: dict[str, Path]) -> list[str]:
    """The package's modules an import statement loads: `from a import b` is `a.b`
    when that is a module, else `a`."""
    if isinstance(node, ast.Import):
        return [t for alias in node.names if (t := _owner(alias.name, known))]
    base = node.module or ""
    if node.level:
        up = package.split(".")[: len(package.split(".")) - node.level + 1]
        base = ".".join([*up, *([base] if base else [])])
    found = []
    for alias in node.names:
        target = _owner(f"{base}.{alias.name}", known) or _owner(base, known)
        if target:
            found.append(target)
    return sorted(set(found))


def _owner(dotted: str, known: dict[str, Path]) -> str | None:
    """The longest module name that `dotted` starts with, or None (not ours)."""
    parts = dotted.split(".")
    while parts:
        if ".".join(parts) in known:
            return ".".join(parts)
        parts.pop()
    return None


def package_of(module: str) -> str:
    """The package a module belongs to: `localagent.loop.agent` is `loop`; a module at the
    top (`localagent.api`) is its own; the top package itself is `localagent`."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected parts of a graph with more than one node (Tarjan), each
    sorted; a graph with every arrow pointing down has none."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            part = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                part.append(top)
                if top == node:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return sorted(found)


def floors(edges: dict[str, set[str]]) -> dict[str, int]:
    """Each node's floor: 0 for one that imports nothing, else one above the highest it
    imports (nodes on a cycle are left out)."""
    tangled = {node for part in cycles(edges) for node in part}
    floor: dict[str, int] = {}

    def height(node: str) -> int:
        if node not in floor:
            below = [height(n) for n in edges.get(node, ()) if n not in tangled]
            floor[node] = 1 + max(below, default=-1)
        return floor[node]

    for node in edges:
        if node not in tangled:
            height(node)
    return floor


def graph(found: list[Import], by_package: bool) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for item in arrows(found):
        source, target = item.source, item.target
        if by_package:
            source, target = package_of(source), package_of(target)
        edges.setdefault(source, set())
        edges.setdefault(target, set())
        if source != target:
            edges[source].add(target)
    return edges


def arrows(found: list[Import]) -> list[Import]:
    """The imports that must point down: all but the facade's."""
    return [item for item in found if item.source != FACADE]


def problems(found: list[Import]) -> list[str]:
    """Each cycle among packages and among modules, with the imports that close it."""
    lines: list[str] = []
    for by_package, what in ((True, "packages"), (False, "modules")):
        for part in cycles(graph(found, by_package)):
            members = set(part)
            key = package_of if by_package else (lambda m: m)
            inside = [
                i for i in arrows(found) if key(i.source) in members and key(i.target) in members
            ]
            inside = [i for i in inside if key(i.source) != key(i.target)]
            lines.append(f"cycle among {what}: {' <-> '.join(part)}")
            lines += [f"    {item}" for item in inside]
    return lines


def report(found: list[Import], show_modules: bool = False) -> str:
    edges = graph(found, by_package=True)
    floor = floors(edges)
    out = ["floors (a package imports only from floors below it):"]
    for level in sorted(set(floor.values()), reverse=True):
        names = sorted(p for p, f in floor.items() if f == level)
        out.append(f"  {level:2d}  {', '.join(names)}")
    if show_modules:
        for item in sorted(found, key=lambda i: (i.source, i.line)):
            out.append(f"  {item}")
    out += [f"kept, pointing up: {item}" for item in found if item not in arrows(found)]
    out += problems(found) or ["no cycles"]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", action="store_true", help="list every import")
    args = parser.parse_args(argv)
    found = imports(ROOT)
    print(report(found, args.modules))
    return 1 if problems(found) else 0


if __name__ == "__main__":
    sys.exit(main())
