"""The plan from a failed subtask on, as a hand-back makes it."""

from __future__ import annotations

from typing import Any

from localagent.loop.subtasks import MAX_STEPS
from localagent.state import ReplanDue, State


def from_failed(
    state: State, due: ReplanDue, *first_steps: str, failed: bool = True
) -> list[dict[str, Any]]:
    """The plan from the failed subtask on: its task with `first_steps`, then the failed
    subtask (unless not `failed`) and what was left of the task; then the tasks after it."""
    assert state.goal is not None
    planned = state.goal.tasks
    task = planned[due.task_index]
    texts = [s.description for s in task.subtasks]
    start = texts.index(due.subtask) if due.subtask in texts else len(texts)
    start += 0 if failed or start == len(texts) else 1
    left = [s.description for s in task.subtasks[start:] if s.status != "completed"]
    first = {"description": task.description, "subtasks": [*first_steps, *left][:MAX_STEPS]}
    later = [
        {"description": t.description, "subtasks": [s.description for s in t.subtasks]}
        for t in planned[due.task_index + 1 :]
        if t.subtasks
    ]
    return [first, *later]
