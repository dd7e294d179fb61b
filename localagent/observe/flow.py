"""The agent's state machine as Mermaid text, each step with how often a run went through
it (`localagent graph --flow`)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from localagent.observe.graph import Edge, Node, draw, plan_graph

# (id, shape, text): what `Agent.step` does next, as `state.next_due` names it.
FLOW_NODES = (
    ("f0", "stadium", "start or resume"),
    ("f1", "box", "preflight: the model server and model"),
    ("f2", "box", "plan: decompose the goal"),
    ("f3", "box", "round: ask the model"),
    ("f4", "box", "run the tool"),
    ("f5", "hexagon", "loop guard"),
    ("f6", "hexagon", "evidence gate"),
    ("f7", "box", "replan the rest"),
    ("f8", "box", "verify: goal checks, verdict"),
    ("f9", "stadium", "goal completed"),
    ("f10", "stadium", "goal failed"),
    ("f11", "stadium", "stopped or suspended: resumable"),
)
FLOW_EDGES = (
    ("f0", "f1", ""),
    ("f1", "f2", "new goal"),
    ("f1", "f3", "plan exists"),
    ("f1", "f11", "no model server"),
    ("f2", "f3", ""),
    ("f3", "f5", "each tool call"),
    ("f3", "f3", "no usable call: feedback"),
    ("f3", "f10", "round limit"),
    ("f5", "f4", "allowed"),
    ("f5", "f3", "blocked: the model is told why"),
    ("f4", "f3", "result"),
    ("f4", "f6", "mark_subtask_complete"),
    ("f6", "f3", "next subtask, or refused"),
    ("f6", "f7", "subtask failed"),
    ("f7", "f3", ""),
    ("f6", "f8", "last subtask done"),
    ("f8", "f9", "VERIFIED"),
    ("f8", "f7", "NOT_VERIFIED: plan what is unmet"),
    ("f8", "f10", "checks fail at the replan cap"),
    ("f3", "f11", "stop"),
    ("f11", "f0", "localagent resume"),
)
# Which records count a pass through a node, for a flow drawn over a journal.
FLOW_COUNTS = {
    "f0": ("goal_started", "resumed"),
    "f1": ("preflight",),
    "f2": ("plan",),
    "f3": ("llm_call:round",),
    "f4": ("action_finished", "action_interrupted"),
    "f5": ("action_started", "action_blocked"),
    "f6": ("subtask_completed", "subtask_failed", "feedback:mark_subtask_complete"),
    "f7": ("replan", "replan_skipped"),
    "f8": ("verdict",),
    "f9": ("goal_completed",),
    "f10": ("goal_failed",),
    "f11": ("stopped", "suspended"),
}


def flow_counts(records: Iterable[dict[str, Any]]) -> dict[str, int]:
    """How often the run went through each node of the state machine."""
    seen: dict[str, int] = {}
    for rec in records:
        kind = str(rec.get("type"))
        if kind in ("llm_call", "feedback"):
            kind += f":{rec.get('purpose') or rec.get('tool')}"
        elif kind == "plan" and rec.get("replace_from"):
            kind = "replan"
        seen[kind] = seen.get(kind, 0) + 1
    return {node: sum(seen.get(k, 0) for k in kinds) for node, kinds in FLOW_COUNTS.items()}


def flow(counts: dict[str, int] | None = None) -> str:
    """The agent's state machine; with `counts`, each node says how often the run was there."""
    nodes = []
    for node_id, shape, text in FLOW_NODES:
        times = (counts or {}).get(node_id)
        status = "in_progress" if times else "pending"
        nodes.append(Node(node_id, text + (f" ×{times}" if times else ""), status, shape))
    edges = [Edge(a, b, "-->", text) for a, b, text in FLOW_EDGES]
    return draw(nodes, edges)


def show(workspace: Path, state_machine: bool) -> str:
    """What `localagent graph` prints: the goal's plan tree, or (`--flow`) the agent's
    state machine, with how often the run went through each step when there is a run."""
    from localagent.journal import Journal
    from localagent.observe.events import history

    if not state_machine:
        return plan_graph(history(workspace))
    return flow(flow_counts(history(workspace)) if Journal(workspace).exists() else None)
