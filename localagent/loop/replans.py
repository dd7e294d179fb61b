"""What replaces the rest of the plan when a replan is due: tasks for what a verdict
found unmet (`verdictback`, without the model, where one kind of finding names the fix);
a write for a run of a program that calls none of its code, or (small
profile) of a file this run wrote that the run could not load (`handback`, without the
model); else the model's replan, with the subtasks it plans that earlier
work already did carried as done (`writedone`, `rundone`)."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from localagent.loop import (
    addback,
    approxback,
    handback,
    ruffback,
    rundone,
    stoodback,
    testback,
    verdictback,
    writedone,
)
from localagent.loop.planner import Planner
from localagent.loop.subtasks import ran_by
from localagent.models import Reply
from localagent.prompts.promptset import PromptSet
from localagent.state import ReplanDue, State, current
from localagent.verify.counts import stated_counts

log = logging.getLogger("localagent.agent")


def revise(
    state: State,
    due: ReplanDue,
    planner: Planner,
    root: Path,
    prompts: PromptSet,
    on_call: Callable[[Reply], None],
    most: int,
) -> dict[str, Any] | None:
    """The `plan` record's fields, or None when no valid plan came back (`most`: the
    replans a goal may have; apart from them, twice as many hand-backs, `handback.left`)."""
    replace_from = due.task_index + 1
    small_back = due.unmet and planner.small and handback.left(state, most)
    if small_back and (tasks := verdictback.tasks(state, due, root, prompts)) is not None:
        return {"tasks": tasks, "replace_from": replace_from, "by": "handback"}
    if due.unmet:
        tasks = planner.unmet(state, due.unmet, on_call)
        log.info("plan for what is unmet: %s", "; ".join(t["description"] for t in tasks))
        return {"tasks": tasks, "replace_from": replace_from, "unmet": due.unmet}
    goal = state.goal.text if state.goal is not None else ""
    ask = functools.partial(planner.value, goal, on_call=on_call)  # what a call returns
    if handback.left(state, most) and (
        tasks := back(state, due, planner.small, root, prompts, ask)
    ):
        return {"tasks": tasks, "replace_from": replace_from, "by": "handback"}
    if state.replans >= most:
        return None
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


def back(
    state: State,
    due: ReplanDue,
    small: bool,
    root: Path,
    prompts: PromptSet,
    ask: Callable[[str], str] | None = None,
) -> list[dict[str, Any]] | None:
    """The plan made without the model when the failed run goes back to its file: a write
    for a program that calls none of its code; with the small profile, a write for one
    that never opens the file it was given, or that lacks an option the goal states, a
    fix of a file the run could not load, an edit after which the tests failed (or, when
    this run wrote the failed test and the model, `ask`ed alone, gives the code's value,
    an edit of the test: `testback`).
    Counted apart from the model's replans: two such
    hand-backs spent the 1.5B's greet.py replans, and its next failure, at round 10 of
    24, ended the goal (the H200)."""
    if program := handback.idle_program(due, root):
        log.info("%s calls none of its code: back to a write", program)
        return handback.tasks(state, due, program, prompts)
    if small and (program := handback.unread_program(state, due.subtask)):
        log.info("%s never opens the file it is given: back to a write", program)
        return handback.tasks(state, due, program, prompts, "handback_open")
    if small and (lacked := handback.unknown_option(state, due.subtask)):
        log.info("%s lacks the goal's option %s: back to a write that adds it", *lacked)
        write = verdictback.option_write(state, *lacked, prompts)
        return handback.from_failed(state, due, write)
    if small and (tasks := _miscounted(state, due, prompts, root)):
        log.info("the goal's script printed other numbers than it counts: back to a write")
        return tasks
    if small and (tasks := handback.status_tasks(state, due, root, prompts)):
        log.info("the goal's script exits with another status than it states: back to an edit")
        return tasks
    if small and (found := handback.broken(state, due.subtask)):
        log.info("%s does not load (%s): back to a write", *found)
        return handback.fix_tasks(state, due, found, prompts, root)
    if small and (tasks := testback.raise_tasks(state, due, prompts, root)):
        log.info("the run's own test checks a raise the code makes otherwise: back to it")
        return tasks
    if small and (tasks := approxback.tasks(state, due, prompts, root)):
        log.info("the run's own test compares floats that differ by rounding: back to it")
        return tasks
    if small and (tasks := stoodback.tasks(state, due, prompts, ask, root)):
        log.info("the model gave the code back unchanged: back to the test's expected values")
        return tasks
    if small and (found := testback.failed_after_edit(state, due.subtask, root)):
        if ask is not None and (
            tasks := testback.expected_tasks(state, due, found[1], prompts, ask, root)
        ):
            log.info("the run's own test expects another value than the model says: back to it")
            return tasks
        log.info("the tests fail after the change to %s (%s): back to an edit", *found)
        return testback.edit_tasks(state, due, found, prompts, root)
    if small and (tasks := ruffback.tasks(state, due)):
        log.info("ruff found only what it fixes itself: back to its fix")
        return tasks
    if small and (tasks := addback.tasks(state, due, root, prompts)):
        log.info("the function the failed step names is defined nowhere: back to a write of it")
        return tasks
    if small and (tasks := addback.rest_tasks(state, due, root, prompts)):
        log.info("some of the functions call the new one: back to a write of the rest")
        return tasks
    return None


def _miscounted(
    state: State, due: ReplanDue, prompts: PromptSet, root: Path
) -> list[dict[str, Any]] | None:
    """For a run subtask that failed on a run of the goal's script whose numbers are not
    what the goal says it counts (`verify.counts`): too few, or none right for a count of
    the file it was given. The plan from it on: the edit of the line that counts wrong,
    or a write of the script that prints them (`verdictback.recount`), the run again,
    the rest."""
    counted = stated_counts(state.goal.text if state.goal is not None else "")
    if counted is None or ran_by(due.subtask) != counted.script:
        return None
    if not due.reason.startswith(f"the goal says `python {counted.script} "):
        return None
    step = verdictback.recount(state, counted, due.reason, prompts, root)
    return handback.from_failed(state, due, step)


def left(
    state: State, most: int, small: bool, root: Path, prompts: PromptSet, reason: str = ""
) -> bool:
    """Whether a plan follows the failure of the active subtask (for `reason`): the
    model's replans are not spent, or a hand-back would be made and those are not."""
    here = current(state)
    if state.replans < most:
        return True
    if here is None or not handback.left(state, most):
        return False
    task, subtask = here[0].description, here[1].description
    due = ReplanDue(task_index=state.task_index, task=task, subtask=subtask, reason=reason)
    return back(state, due, small, root, prompts) is not None
