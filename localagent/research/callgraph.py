"""Who calls what, from the `ast`, with how sure each edge is.

Python resolves calls at run time, so a static graph guesses. Each edge says how:
`exact` (a function of the same module, a method of the same class or of a base class
through `self`),
`import` (followed through the file's imports to a definition in the workspace),
`name` (the only definition anywhere with that name) or `ambiguous` (one of several
definitions with that name). Calls into code outside the workspace (the standard
library, dependencies) are left out.
"""

from __future__ import annotations

import ast
import contextlib
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localagent.research.facts import file_facts
from localagent.research.index import Index, save
from localagent.tools.walk import Walk

MAX_HOPS = 3  # re-exports followed (`from .models import Request` in __init__.py)


@dataclass(frozen=True)
class Def:
    path: str
    name: str  # qualified in its module: "Session.request"
    kind: str  # "function" or "class"
    start: int
    end: int
    bases: tuple[str, ...] = ()  # of a class, as written

    @property
    def id(self) -> str:
        return f"{self.path}::{self.name}"


@dataclass(frozen=True)
class Edge:
    caller: Def | None  # None: module-level code of `path`
    callee: Def
    path: str  # where the call is
    line: int
    text: str  # the call as written: "self.send", "cart.check"
    confidence: str  # "exact", "import", "name" or "ambiguous"
    candidates: int = 1

    def label(self) -> str:
        if self.confidence == "ambiguous":
            return f"ambiguous: one of {self.candidates} definitions named so"
        return {"exact": "exact", "import": "by import", "name": "by name only"}[self.confidence]


def load_facts(index: Index, folder: Path | None) -> None:
    """Read the call-graph facts of the Python files that lack them, and keep them."""
    walk = Walk(index.root, float("inf"), lambda: False)
    added = 0
    for path, entry in index.files.items():
        if "facts" in entry or not path.endswith((".py", ".pyi")) or not entry["sha"]:
            continue
        text = walk.read_text(path)
        try:
            entry["facts"] = file_facts(ast.parse(text)) if text is not None else None
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            entry["facts"] = None
        added += 1
    if added and folder is not None:
        with contextlib.suppress(OSError):  # read again next time
            save(folder, index.files)


def _module_names(path: str) -> list[str]:
    """`src/shop/cart.py` -> ["src.shop.cart", "shop.cart", "cart"]."""
    parts = path.rsplit(".", 1)[0].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return [".".join(parts[i:]) for i in range(len(parts))]


class CallGraph:
    def __init__(self, index: Index) -> None:
        self.facts: dict[str, dict[str, Any]] = {
            path: entry["facts"] for path, entry in index.files.items() if entry.get("facts")
        }
        self.defs: dict[str, dict[str, Def]] = {}  # path -> qualified name -> Def
        self.by_name: dict[str, list[Def]] = defaultdict(list)  # last name -> defs
        self.modules: dict[str, list[str]] = defaultdict(list)  # dotted suffix -> paths
        for path, facts in self.facts.items():
            own = {d[0]: Def(path, d[0], d[1], d[2], d[3], tuple(d[4])) for d in facts["defs"]}
            self.defs[path] = own
            for d in own.values():
                self.by_name[d.name.rsplit(".", 1)[-1]].append(d)
            for name in _module_names(path):
                self.modules[name].append(path)

    # ---- finding definitions -------------------------------------------------------------

    def find(self, symbol: str) -> list[Def]:
        """Definitions a model or a person may mean: `path::Class.method`, `Class.method`,
        `method`."""
        path, _, name = symbol.strip().rpartition("::")
        if path:
            found = self.defs.get(path.replace("\\", "/"), {}).get(name)
            return [found] if found else []
        last = name.rsplit(".", 1)[-1]
        return [
            d for d in self.by_name.get(last, []) if d.name == name or d.name.endswith("." + name)
        ]

    def _module_path(self, module: str, path: str, level: int) -> str | None:
        if level:
            package = path.split("/")[:-1]
            package = package[: len(package) - (level - 1)] if level > 1 else package
            module = ".".join([*package, module] if module else package)
        found = self.modules.get(module, [])
        return found[0] if len(found) == 1 else None

    # ---- resolving one call --------------------------------------------------------------

    def resolve(self, path: str, scope: str, text: str) -> tuple[list[Def], str]:
        """The definitions a call may reach, and how sure that is ([] when it leaves the
        workspace or reaches nothing defined in it)."""
        head, _, rest = text.partition(".")
        local = self._local(path, scope, head, rest)
        if local:
            return [local], "exact"
        if head in self.facts.get(path, {}).get("imports", {}):
            found = self._through_import(path, head, rest, 0)
            return ([found], "import") if found else ([], "")  # or from outside: not ours
        last = text.rsplit(".", 1)[-1]
        # A bare name reaches a module's function or class, an attribute a method.
        candidates = [d for d in self.by_name.get(last, []) if ("." in d.name) == bool(rest)]
        if not candidates:
            return [], ""
        return candidates, "name" if len(candidates) == 1 else "ambiguous"

    def _local(self, path: str, scope: str, head: str, rest: str) -> Def | None:
        own = self.defs.get(path, {})
        if not rest:
            nested = f"{scope}.{head}" if scope != "<module>" else head
            return own.get(nested) or own.get(head)
        if head in ("self", "cls") and "." not in rest:
            cls = self._enclosing_class(path, scope)
            return self._method(path, cls, rest, 0) if cls else None
        return own.get(f"{head}.{rest}")  # Class.method of this module

    def _method(self, path: str, cls: str, name: str, hops: int) -> Def | None:
        """`name` defined on class `cls` of `path` or inherited from its bases."""
        own = self.defs.get(path, {})
        if f"{cls}.{name}" in own or cls not in own or hops > MAX_HOPS:
            return own.get(f"{cls}.{name}")
        for base in own[cls].bases:
            if base in own and own[base].kind == "class":
                found = self._method(path, base, name, hops + 1)
            else:
                head, _, rest = base.partition(".")
                target = self._through_import(path, head, rest, 0)
                found = self._method(target.path, target.name, name, hops + 1) if target else None
            if found:
                return found
        return None

    def _enclosing_class(self, path: str, scope: str) -> str | None:
        parts = scope.split(".")
        own = self.defs.get(path, {})
        for i in range(len(parts), 0, -1):
            name = ".".join(parts[:i])
            if name in own and own[name].kind == "class":
                return name
        return None

    def _through_import(self, path: str, head: str, rest: str, hops: int) -> Def | None:
        entry = self.facts.get(path, {}).get("imports", {}).get(head)
        if not entry or hops > MAX_HOPS:
            return None
        module, name, level = entry
        if name:  # from module import name: a definition, or a module of a package
            target = self._module_path(module, path, level)
            full = f"{name}.{rest}" if rest else name
            if target and full in self.defs.get(target, {}):
                return self.defs[target][full]
            if target and name in self.facts.get(target, {}).get("imports", {}):
                return self._through_import(target, name, rest, hops + 1)
            submodule = self._module_path(f"{module}.{name}" if module else name, path, level)
            if submodule and rest:
                return self.defs.get(submodule, {}).get(rest)
            return None
        target = self._module_path(module, path, 0)  # import module [as head]
        return self.defs.get(target, {}).get(rest) if target and rest else None

    # ---- edges ----------------------------------------------------------------------------

    def callees(self, target: Def) -> list[Edge]:
        """The calls made inside `target` (not inside functions nested in it) that reach
        code in the workspace."""
        edges = []
        for scope, text, line in self.facts[target.path]["calls"]:
            if scope != target.name:
                continue
            found, confidence = self.resolve(target.path, scope, text)
            for callee in found:
                edges.append(Edge(target, callee, target.path, line, text, confidence, len(found)))
        return sorted(edges, key=lambda e: (e.line, e.callee.id))

    def callers(self, target: Def) -> list[Edge]:
        """Every call in the workspace that may reach `target`."""
        last = target.name.rsplit(".", 1)[-1]
        edges = []
        for path, facts in self.facts.items():
            own = self.defs[path]
            for scope, text, line in facts["calls"]:
                if text.rsplit(".", 1)[-1] != last:
                    continue
                found, confidence = self.resolve(path, scope, text)
                if target in found:
                    caller = own.get(scope)
                    edges.append(Edge(caller, target, path, line, text, confidence, len(found)))
        return sorted(edges, key=lambda e: (e.path, e.line))


def graph_for(index: Index, folder: Path | None) -> CallGraph:
    load_facts(index, folder)
    return CallGraph(index)


def describe(edges: list[Edge], target: Def, direction: str) -> str:
    """Edges as lines a model reads: where the call is, what it is, how sure."""
    title = f"{direction} of {target.id} ({target.kind}, lines {target.start}-{target.end})"
    if not edges:
        return f"{title}: none found in the workspace"
    lines = [f"{title}: {len(edges)}"]
    for edge in edges:
        other = (
            edge.callee.id
            if direction == "callees"
            else (edge.caller.name if edge.caller else "<module>")
        )
        lines.append(f"  {edge.path}:{edge.line} {other} via {edge.text}()  [{edge.label()}]")
    return "\n".join(lines)
