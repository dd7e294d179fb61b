"""What the records of snapshots and rewinds do to the state (see `reduce` for the table).

A rewind puts files back; the state follows it simply: the subtasks finished at or after
the step rewound to are open again (the plan itself, with any replan made since, stays),
the plan position returns to the first open subtask, a verdict is forgotten, calls of the
latest reply not yet run are never run, and a goal that had ended is stopped, so `resume`
goes on from there with the model told what was undone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from localagent.state import rounds
from localagent.state.model import Rewinding, State, Unsettled


def snapshot(state: State, rec: dict[str, Any]) -> None:
    # The step it is for is the record after it (an action_started or a check_started);
    # a rewind's own snapshot only records what changed outside the agent.
    if rec["tool"] == "rewind":
        return
    state.unsettled = Unsettled(
        seq=rec["seq"] + 1, tool=rec["tool"], round=rec["round"], scope=rec.get("scope")
    )


def changes(state: State, rec: dict[str, Any]) -> None:
    settles = state.unsettled is not None and state.unsettled.seq == rec["action"]
    if settles and not rec.get("more"):
        state.unsettled = None
    if rec["files"]:
        state.guard.epoch += 1


def rewinding(state: State, rec: dict[str, Any]) -> None:
    state.rewinding = Rewinding(seq=rec["seq"], to=rec["to"], files=rec["files"])


def rewound(state: State, rec: dict[str, Any], advance: Callable[[State], None]) -> None:
    assert state.goal is not None
    state.rewinding = None
    state.unsettled = None
    state.rewound = rec["undone"]
    state.guard.epoch += 1
    state.verdict = state.verifying = state.replan_due = state.completion_due = None
    if state.open_action is not None and state.open_action.seq >= rec["to"]:
        state.open_action = None
    rounds.skip_rest_of_reply(state)
    tasks = state.goal.tasks
    reopened = False
    for ti, si in rec.get("reopen") or []:
        if ti < len(tasks) and si < len(tasks[ti].subtasks):
            sub = tasks[ti].subtasks[si]
            if sub.status == "failed":
                state.unresolved = max(state.unresolved - 1, 0)
            if sub.status in ("completed", "failed"):
                sub.status, sub.reason, reopened = "pending", "", True
    if reopened:
        for task in tasks:
            for sub in task.subtasks:
                sub.status = "pending" if sub.status == "in_progress" else sub.status
            if any(sub.status == "pending" for sub in task.subtasks):
                task.status = "pending"
    if state.goal.status in ("completed", "failed"):
        state.goal.status, state.goal.reason = "stopped", "rewound"
        state.stopped_by = "user"
    advance(state)
