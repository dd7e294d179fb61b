"""What replaces the rest of the plan when a replan is due: tasks for what a verdict
found unmet; a write for a run of a program that calls none of its code, or (small
profile) of a file this run wrote that the run could not load (`handback`, without the
model); else the model's replan, with the subtasks it plans that earlier
work already did carried as done (`writedone`, `rundone`)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from localagent.loop import handback, rundone, writedone
from localagent.loop.planner import Planner
from localagent.models import Reply
from localagent.prompts.promptset import PromptSet
from localagent.state import ReplanDue, State

log = logging.getLogger("localagent.agent")


def revise(
    state: State,
    due: ReplanDue,
    planner: Planner,
    root: Path,
    prompts: PromptSet,
    on_call: Callable[[Reply], None],
) -> dict[str, Any] | None:
    """The `plan` record's fields, or None when no valid plan came back."""
    replace_from = due.task_index + 1
    if due.unmet:
        tasks = planner.unmet(state, due.unmet, on_call)
        log.info("plan for what is unmet: %s", "; ".join(t["description"] for t in tasks))
        return {"tasks": tasks, "replace_from": replace_from, "unmet": due.unmet}
    if program := handback.idle_program(due, root):
        log.info("%s calls none of its code: back to a write", program)
        tasks = handback.tasks(state, due, program, prompts)
        return {"tasks": tasks, "replace_from": replace_from, "by": "handback"}
    if planner.small and (program := handback.unread_program(state, due.subtask)):
        log.info("%s never opens the file it is given: back to a write", program)
        tasks = handback.tasks(state, due, program, prompts, "handback_open")
        return {"tasks": tasks, "replace_from": replace_from, "by": "handback"}
    if planner.small and (found := handback.broken(state, due.subtask)):
        log.info("%s does not load (%s): back to a write", *found)
        tasks = handback.fix_tasks(state, due, found, prompts, root)
        return {"tasks": tasks, "replace_from": replace_from, "by": "handback"}
    if planner.small and (found := handback.failed_after_edit(state, due.subtask, root)):
        log.info("the tests fail after the change to %s (%s): back to an edit", *found)
        tasks = handback.edit_tasks(state, due, found, prompts)
        return {"tasks": tasks, "replace_from": replace_from, "by": "handback"}
    tasks = planner.replan(state, (due.task, due.subtask), due.reason, on_call)
    if not tasks:
        return None
    log.info("replan: %s", "; ".join(t["description"] for t in tasks))
    carried = writedone.carried(state, root, tasks, due.subtask, prompts)
    carried += rundone.carried(state, tasks, prompts)
    return {
        "tasks": tasks,
        "replace_from": replace_from,
        **({"carried": carried} if carried else {}),
    }
