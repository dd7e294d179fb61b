"""The read-only tools of a research step: `search_code`, `get_callers`, `get_callees`
and `finish_step` beside the catalog's `read_file`, `list_dir` and `find_files`.

The index and call graph are built once per run (`Library`), and each observation says
which lines of which files it showed (`spans`), so the answer's citations can be checked
against what the run actually saw.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

from localagent.research.callgraph import CallGraph, describe, graph_for
from localagent.research.retrieval import Searcher
from localagent.tools import catalog
from localagent.tools.base import ToolContext, ToolError, ToolResult
from localagent.tools.paths import normalize_path
from localagent.tools.registry import ToolRegistry, make_tool
from localagent.tools.tool import Policy

Span = tuple[str, int, int]  # path, first line, last line
CATALOG_TOOLS = ("read_file", "list_dir", "find_files")
MAX_K = 30
_HIT = re.compile(r"^(\S+):(\d+)-(\d+) ", re.M)
_CALL_SITE = re.compile(r"^  (\S+):(\d+) ", re.M)
_READ_RANGE = re.compile(r"lines (\d+)-(\d+) of \d+:")


class Library:
    """The workspace's search and call graph, for the tools of one research run."""

    def __init__(self, searcher: Searcher, folder: Path | None) -> None:
        self.searcher = searcher
        self.folder = folder  # where the index is kept, for the graph's facts
        self._graph: CallGraph | None = None

    @property
    def graph(self) -> CallGraph:
        if self._graph is None:  # built on first use: many questions never need it
            self._graph = graph_for(self.searcher.index, self.folder)
        return self._graph

    def search_code(
        self,
        ctx: ToolContext,
        query: Annotated[str, "What to look for: words, identifiers or both."],
        k: Annotated[int, "How many chunks to show (1-30)."] = 8,
    ) -> ToolResult:
        """Search the workspace's code (ranked chunks: functions, methods, classes, other
        text) and show each chunk's path, line range, symbol and first line."""
        if not query.strip():
            raise ToolError.of("query_empty")
        hits = self.searcher.search(query, min(max(k, 1), MAX_K))
        if not hits:
            return ToolResult(True, ctx.prompts.render("no_code_matches", query=repr(query)))
        chunks = [
            f"{hit.path}:{hit.start}-{hit.end} {hit.symbol or '-'}  | {hit.head}" for hit in hits
        ]
        said = ctx.prompts.render(
            "code_chunks",
            count=len(hits),
            query=repr(query),
            mode=self.searcher.mode,
            chunks="\n".join(chunks),
        )
        return ToolResult(True, said)

    def _edges(self, symbol: str, direction: str) -> ToolResult:
        found = self.graph.find(symbol)
        if not found:
            raise ToolError.of("no_such_symbol", symbol=repr(symbol))
        if len(found) > 5:
            names = ", ".join(d.id for d in found[:10])
            raise ToolError.of(
                "symbol_ambiguous", count=len(found), symbol=repr(symbol), names=names
            )
        parts = []
        for target in found:
            edges = (
                self.graph.callers(target) if direction == "callers" else self.graph.callees(target)
            )
            parts.append(describe(edges, target, direction))
        return ToolResult(True, "\n".join(parts))

    def get_callers(
        self,
        ctx: ToolContext,
        symbol: Annotated[str, "Function or method: name, Class.method or path::Class.method."],
    ) -> ToolResult:
        """The calls in the workspace that may reach a function, each with where it is and
        how sure the link is (exact, by import, by name only, ambiguous)."""
        return self._edges(symbol, "callers")

    def get_callees(
        self,
        ctx: ToolContext,
        symbol: Annotated[str, "Function or method: name, Class.method or path::Class.method."],
    ) -> ToolResult:
        """The workspace functions a function calls, each with how sure the link is."""
        return self._edges(symbol, "callees")


def finish_step(
    ctx: ToolContext,
    findings: Annotated[str, "What this step found, citing code as path:line or path:start-end."],
) -> ToolResult:
    """End this research step with its findings."""
    if not findings.strip():
        raise ToolError.of("findings_empty")
    return ToolResult(True, ctx.prompts.render("step_finished"), verdict=(True, findings))


def research_tools(library: Library) -> ToolRegistry:
    shown = catalog().select(CATALOG_TOOLS)
    return ToolRegistry(
        [
            make_tool(library.search_code),
            *shown,
            make_tool(library.get_callers),
            make_tool(library.get_callees),
            make_tool(finish_step, Policy(control=True)),
        ]
    )


def spans(tool: str, args: dict[str, object], result: ToolResult) -> list[Span]:
    """The lines of files an observation showed the model."""
    if not result.ok:
        return []
    text = result.text
    if tool == "search_code":
        return [(m[1], int(m[2]), int(m[3])) for m in _HIT.finditer(text)]
    if tool in ("get_callers", "get_callees"):
        found = [(m[1], int(m[2]), int(m[2])) for m in _CALL_SITE.finditer(text)]
        heads = re.findall(r"of (\S+)::\S+ \(\w+, lines (\d+)-(\d+)\)", text)
        return found + [(p, int(a), int(a)) for p, a, _ in heads]
    if tool == "read_file" and isinstance(args.get("path"), str):
        path = normalize_path(str(args["path"]))
        ranged = _READ_RANGE.search(text.split("\n", 1)[0])
        if ranged:
            return [(path, int(ranged[1]), int(ranged[2]))]
        return [(path, 1, text.count("\n") + 1)]
    return []
