"""Mermaid text (`flowchart TD`) of a goal's plan tree and the path its run took, and of
the agent's state machine (`flow`). Both render on GitHub as they are.

Goal, task and subtask text is user and model input: it only ever appears inside a
quoted label, with every character that means something to Mermaid or to HTML written as
an entity code (`#34;`), line breaks as spaces. Node ids are generated (`g0`, `t3`,
`s7`), never taken from the text.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from localagent.state import ReplanDue, State, apply, current

LABEL_CHARS = 60
_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,:_-+=/?!'*@()")
CLASSES = {
    "pending": "fill:#f5f5f5,stroke:#9e9e9e,color:#424242",
    "in_progress": "fill:#e3f2fd,stroke:#1565c0,color:#0d47a1",
    "completed": "fill:#e8f5e9,stroke:#2e7d32,color:#1b5e20",
    "failed": "fill:#ffebee,stroke:#c62828,color:#b71c1c",
    "replaced": "fill:#fafafa,stroke:#bdbdbd,color:#9e9e9e,stroke-dasharray:4 3",
    "stopped": "fill:#fff8e1,stroke:#f9a825,color:#795548",
}
_END_CLASS = {"completed": "completed", "failed": "failed", "stopped": "stopped"}


def label(text: Any, limit: int = LABEL_CHARS) -> str:
    """`text` as the inside of a quoted Mermaid label: one line, entities for anything
    that is not plainly text (quotes, brackets, backticks, `<`, `>`, `#`, `;`, ...)."""
    words = " ".join(str(text).split())
    if len(words) > limit:
        words = words[: limit - 1] + "…"
    out = []
    for ch in words:
        if ch in _PLAIN or (ord(ch) > 127 and ch.isprintable()):
            out.append(ch)
        else:
            out.append(f"#{ord(ch) if ch.isprintable() else 0xFFFD};")
    return "".join(out)


@dataclass
class Node:
    id: str
    text: str
    status: str = "pending"
    shape: str = "box"  # box, stadium, hexagon
    children: list[Node] = field(default_factory=list)  # every subtask it ever had
    live: list[Node] = field(default_factory=list)  # the subtasks the plan holds now


@dataclass
class Edge:
    source: str
    target: str
    style: str = "-->"  # --> tree, ==> path taken, -.-> replan
    text: str = ""


class PlanGraph:
    """Folds records into the plan tree (every task and subtask ever planned) and the
    path taken through it, with the loop's own reducer deciding what each record does."""

    def __init__(self) -> None:
        self.state = State()
        self.goal = Node("g0", "Goal", "in_progress", "stadium")
        self.tasks: list[Node] = []  # every task ever planned, in order
        self.live: list[Node] = []  # the tasks the plan holds now (state.goal.tasks)
        self.extra: list[Node] = []  # verdicts and the end
        self.edges: list[Edge] = []
        self.count = 0
        self.last: Node | None = None  # the last node the run worked on
        self.steps = 0
        self.note = ""  # said on the next path edge (a resume)
        self.end: Node | None = None
        self.skipped: list[str] = []  # the records the reducer refused, as Mermaid comments

    def _new(self, prefix: str, text: str, **kw: Any) -> Node:
        self.count += 1
        return Node(f"{prefix}{self.count}", text, **kw)

    def feed(self, rec: dict[str, Any]) -> None:
        kind = rec.get("type")
        due = self.state.replan_due
        try:
            apply(self.state, rec)
        except (KeyError, TypeError, ValueError, AssertionError, ValidationError):
            what = f"record {rec.get('seq')} ({label(kind, 40)})"
            self.skipped.append(f"%% {what} is malformed; skipped")
            return
        if kind == "goal_started":  # a history holds one goal (a new goal archives it)
            self.goal.text = f"Goal: {rec.get('goal', '')}"
        elif kind == "plan" and self.state.goal is not None:
            keep = rec.get("replace_from")
            self._plan(keep if isinstance(keep, int) and keep > 0 else 0, due)
        elif kind == "verdict":
            self._verdict(rec)
        elif kind == "resumed":
            self.note = "resumed"
        self._sync()
        self._walk(kind == "llm_call" and rec.get("purpose") == "round")

    def _plan(self, keep: int, due: ReplanDue | None) -> None:
        for task in self.live[:keep]:
            task.live = [s for s in task.live if s.status in ("completed", "failed")]
            for sub in task.children:
                if sub not in task.live:
                    sub.status = "replaced"
        for task in self.live[keep:]:
            task.status = "replaced"
            for sub in task.children:
                sub.status = "replaced" if sub.status in ("pending", "in_progress") else sub.status
        assert self.state.goal is not None  # feed plans only once the goal has started
        new = []
        for i, task in enumerate(self.state.goal.tasks[keep:], keep + 1):
            node = self._new("t", f"{i} {task.description}")
            for j, sub in enumerate(task.subtasks, 1):
                node.children.append(self._new("s", f"{i}.{j} {sub.description}"))
            node.live = list(node.children)
            new.append(node)
            self.edges.append(Edge(self.goal.id, node.id))
            self.edges += [Edge(node.id, s.id) for s in node.children]
        self.tasks += new
        self.live = self.live[:keep] + new
        if due is not None and new and self.last is not None:
            why = "unmet" if due.unmet else "replan"
            self.edges.append(Edge(self.last.id, new[0].id, "-.->", why))

    def _verdict(self, rec: dict[str, Any]) -> None:
        found = rec.get("unmet")
        unmet = "; ".join(str(u) for u in found) if isinstance(found, list) else ""
        text = f"verdict {rec.get('verdict')}" + (f": {unmet}" if unmet else "")
        ok = rec.get("verdict") == "VERIFIED"
        self._step(self._new("v", text, status="completed" if ok else "failed", shape="hexagon"))

    def _sync(self) -> None:
        goal = self.state.goal
        if goal is None or len(goal.tasks) != len(self.live):
            return
        self.goal.status = goal.status
        for node, task in zip(self.live, goal.tasks, strict=True):
            node.status = task.status
            for sub_node, sub in zip(node.live, task.subtasks, strict=False):
                sub_node.status = sub.status

    def _walk(self, round_: bool) -> None:
        """A path edge each time a round works on another subtask, and to the goal's end.
        (Only rounds count: the cursor passes over subtasks a replan then replaces.)"""
        goal = self.state.goal
        if round_ and current(self.state) is not None and self.state.task_index < len(self.live):
            task = self.live[self.state.task_index]
            if self.state.subtask_index < len(task.live):
                node = task.live[self.state.subtask_index]
                if node is not self.last:
                    self._step(node)
        if goal is None or self.last is None:
            return
        if goal.status == "in_progress":
            self.end = None  # resumed: the run goes on from where it stopped
        elif self.end is None or self.end.status != _END_CLASS[goal.status]:
            how = f" · {self.state.verification}" if self.state.verification else ""
            self.end = self._new("e", f"goal {goal.status}{how}", shape="stadium")
            self.end.status = _END_CLASS[goal.status]
            self._step(self.end)

    def _step(self, node: Node) -> None:
        if node not in self.extra and node.shape != "box":
            self.extra.append(node)
        if self.last is not None:
            self.steps += 1
            text = f"{self.steps}" + (f" {self.note}" if self.note else "")
            self.edges.append(Edge(self.last.id, node.id, "==>", text))
        self.note = ""
        self.last = node


def _node(node: Node) -> str:
    text = label(node.text)
    shapes = {"box": ('["', '"]'), "stadium": ('(["', '"])'), "hexagon": ('{{"', '"}}')}
    left, right = shapes[node.shape]
    return f"    {node.id}{left}{text}{right}"


def _edge(edge: Edge) -> str:
    middle = f"|{label(edge.text, 40)}|" if edge.text else ""
    return f"    {edge.source} {edge.style}{middle} {edge.target}"


def plan_graph(records: Iterable[dict[str, Any]]) -> str:
    """The plan tree of the journal's goal with statuses, and the path the run took."""
    graph = PlanGraph()
    for rec in records:
        graph.feed(rec)
    nodes = [graph.goal]
    for task in graph.tasks:
        nodes += [task, *task.children]
    nodes += graph.extra
    return draw(nodes, graph.edges, graph.skipped)


def draw(nodes: list[Node], edges: list[Edge], comments: list[str] | None = None) -> str:
    lines = ["flowchart TD", *(comments or [])]
    lines += [_node(n) for n in nodes]
    lines += [_edge(e) for e in edges]
    used: dict[str, list[str]] = {}
    for node in nodes:
        used.setdefault(node.status, []).append(node.id)
    lines += [f"    classDef {name} {CLASSES[name]}" for name in CLASSES if name in used]
    lines += [f"    class {','.join(ids)} {name}" for name, ids in used.items() if name in CLASSES]
    return "\n".join(lines) + "\n"
