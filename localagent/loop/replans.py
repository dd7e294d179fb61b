"""What replaces the rest of the plan when a replan is due: tasks for what a verdict
found unmet; a write for a run of a program that calls none of its code, or (small
profile) of a file this run wrote that the run could not load (`handback`, without the
model); else the model's replan, with the subtasks it plans that earlier
work already did carried as done (`writedone`, `rundone`)."""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from localagent.loop import addback, handback, rundone, testback, writedone
from localagent.loop.planner import Planner
from localagent.loop.subtasks import ran_by
from localagent.models import Reply
from localagent.prompts.promptset import PromptSet
from localagent.state import ReplanDue, State, current
from localagent.system.textcap import listed
from localagent.tools import runproof
from localagent.verify import verdict
from localagent.verify.counts import Counted, stated_counts
from localagent.verify.stated import status_said

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
    replans, and apart from them the hand-backs, a goal may have)."""
    replace_from = due.task_index + 1
    small_back = due.unmet and planner.small and state.handbacks < most
    if small_back and (tasks := _verdict_back(state, due, root, prompts)) is not None:
        return {"tasks": tasks, "replace_from": replace_from, "by": "handback"}
    if due.unmet:
        tasks = planner.unmet(state, due.unmet, on_call)
        log.info("plan for what is unmet: %s", "; ".join(t["description"] for t in tasks))
        return {"tasks": tasks, "replace_from": replace_from, "unmet": due.unmet}
    goal = state.goal.text if state.goal is not None else ""
    ask = functools.partial(planner.value, goal, on_call=on_call)  # what a call returns
    if state.handbacks < most and (tasks := back(state, due, planner.small, root, prompts, ask)):
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


def _verdict_back(
    state: State, due: ReplanDue, root: Path, prompts: PromptSet
) -> list[dict[str, Any]] | None:
    """The plan made without the model for a verdict whose findings are all of one kind
    that one write, edit or run fixes (small profile), or None: the exit status without
    arguments, a program that never opened the file its checks gave it, ruff's own fixes,
    a function not called where the goal says to use it, the numbers the goal's script
    counts."""
    if _status_only(state, due) and (
        tasks := handback.status_tasks(state, due, root, prompts, fresh=True)
    ):
        log.info("%s exits with another status than the goal states: back to an edit", tasks)
        return tasks
    backs: list[tuple[str, Callable[[], list[dict[str, Any]] | None]]] = [
        ("the goal's checks never opened the file they gave", lambda: _unread(state, due, prompts)),
        ("the goal's program calls none of its code", lambda: _idle(state, due, prompts)),
        ("the goal's ruff check failed on what ruff fixes itself", lambda: _ruff_fixes(due)),
        (
            "a function the goal says to use is not called where it says",
            lambda: addback.unused_tasks(state, due, root, prompts),
        ),
        (
            "the goal's script printed other numbers than it counts",
            lambda: _recounted(state, due, prompts),
        ),
    ]
    for why, make in backs:
        if (tasks := make()) is not None:
            log.info("%s: back to the work that fixes it", why)
            return tasks
    return None


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
    that never opens the file it was given, a fix of a file the run could not load, an
    edit after which the tests failed (or, when this run wrote the failed test and the
    model, `ask`ed alone, gives the code's value, an edit of the test: `testback`).
    Counted apart from the model's replans: two such
    hand-backs spent the 1.5B's greet.py replans, and its next failure, at round 10 of
    24, ended the goal (the H200)."""
    if program := handback.idle_program(due, root):
        log.info("%s calls none of its code: back to a write", program)
        return handback.tasks(state, due, program, prompts)
    if small and (program := handback.unread_program(state, due.subtask)):
        log.info("%s never opens the file it is given: back to a write", program)
        return handback.tasks(state, due, program, prompts, "handback_open")
    if small and (tasks := _miscounted(state, due, prompts)):
        log.info("the goal's script printed other numbers than it counts: back to a write")
        return tasks
    if small and (tasks := handback.status_tasks(state, due, root, prompts)):
        log.info("the goal's script exits with another status than it states: back to an edit")
        return tasks
    if small and (found := handback.broken(state, due.subtask)):
        log.info("%s does not load (%s): back to a write", *found)
        return handback.fix_tasks(state, due, found, prompts, root)
    if small and (found := testback.failed_after_edit(state, due.subtask, root)):
        if ask is not None and (
            tasks := testback.expected_tasks(state, due, found[1], prompts, ask, root)
        ):
            log.info("the run's own test expects another value than the model says: back to it")
            return tasks
        log.info("the tests fail after the change to %s (%s): back to an edit", *found)
        return testback.edit_tasks(state, due, found, prompts, root)
    if small and (tasks := addback.tasks(state, due, root, prompts)):
        log.info("the function the failed step names is defined nowhere: back to a write of it")
        return tasks
    if small and (tasks := addback.rest_tasks(state, due, root, prompts)):
        log.info("some of the functions call the new one: back to a write of the rest")
        return tasks
    return None


_UNREAD = re.compile(
    rf"goal check `(python (\S+\.py)\b[^`]*)` failed: {re.escape(runproof.NEVER_OPENS)} "
)


def _unread(state: State, due: ReplanDue, prompts: PromptSet) -> list[dict[str, Any]] | None:
    """For a verdict whose only findings are goal checks of one program that never opened
    the file each gave it, a task of its own: the write that makes it read the file (as
    for such a run subtask, `handback_open`), then each of those runs. Told what was
    unmet, Qwen2.5-Coder-1.5B planned one write of wordcount.py and no run (the CPU)."""
    if (one := _one_program(_UNREAD, due.unmet, 2)) is None:
        return None
    program, found = one
    write = prompts.render("handback_open", script=program) + handback.keeping(state, program)
    runs = [f"run {f[1]}" for f in found]
    return [{"description": write, "subtasks": [write, *dict.fromkeys(runs)]}]


def _one_program(
    pattern: re.Pattern[str], unmet: list[str], group: int
) -> tuple[str, list[re.Match[str]]] | None:
    """The one program every finding names (`pattern`'s `group`) when each is of that
    kind, with the findings read; None otherwise."""
    found = [pattern.match(item) for item in unmet]
    read = [f for f in found if f is not None]
    programs = {f[group] for f in read}
    if not found or len(read) != len(found) or len(programs) != 1:
        return None
    return programs.pop(), read


_IDLE = re.compile(rf"^`python (\S+\.py)` printed nothing: .* {re.escape(verdict.IDLE)}$")


def _idle(state: State, due: ReplanDue, prompts: PromptSet) -> list[dict[str, Any]] | None:
    """For a verdict whose only findings are that the goal's one program calls none of
    its code, a task of its own: the write that calls it (as for such a run subtask,
    `handback_write`), then its run. The 1.5B's rps replans had dropped the run step, and
    the goal ended "completed" with a game that defined play_game and never played."""
    if (one := _one_program(_IDLE, due.unmet, 1)) is None:
        return None
    program = one[0]
    write = prompts.render("handback_write", script=program) + handback.keeping(state, program)
    return [{"description": write, "subtasks": [write, f"run python {program}"]}]


def _miscounted(state: State, due: ReplanDue, prompts: PromptSet) -> list[dict[str, Any]] | None:
    """For a run subtask that failed on a run of the goal's script whose numbers are not
    what the goal says it counts (`verify.counts`): too few, or none right for a count of
    the file it was given. The plan from it on: a write of the script that prints them
    (`_recount`), the run again, the rest."""
    counted = stated_counts(state.goal.text if state.goal is not None else "")
    if counted is None or ran_by(due.subtask) != counted.script:
        return None
    if not due.reason.startswith(f"the goal says `python {counted.script} "):
        return None
    write = _recount(counted, due.reason, prompts) + handback.keeping(state, counted.script)
    return handback.from_failed(state, due, write)


def _recounted(state: State, due: ReplanDue, prompts: PromptSet) -> list[dict[str, Any]] | None:
    """For a verdict whose only findings are the verification's own runs of the goal's
    script whose numbers are not what the goal says it counts, a task of its own: the
    write that prints them (`_recount`), then each of those runs. Told only what was
    unmet, Qwen2.5-Coder-1.5B planned its three steps anew twice, its run step the
    `--lines` form alone, and the goal failed (the CPU)."""
    counted = stated_counts(state.goal.text if state.goal is not None else "")
    said = f"the goal says `python {counted.script} " if counted else ""
    if counted is None or not due.unmet or not all(u.startswith(said) for u in due.unmet):
        return None
    runs = [f"run {cmd}" for u in due.unmet for cmd in _RAN.findall(u)]
    write = _recount(counted, due.unmet[0], prompts) + handback.keeping(state, counted.script)
    return [{"description": write, "subtasks": [write, *dict.fromkeys(runs)]}]


def _recount(counted: Counted, finding: str, prompts: PromptSet) -> str:
    """The write step for a count finding: count the one thing right (with the file's
    counts and what it printed; not the file's name: a write step that names two files
    writes neither, and the 1.5B's write never ended it), print only the one count the
    option asks for, or print each."""
    if (wrong := _WRONG.search(finding)) is not None:
        return prompts.render(
            "handback_miscount", script=counted.script, things=wrong[3], counts=wrong[1],
            printed=wrong[2],
        )  # fmt: skip
    if (only := _ONLY.search(finding)) is not None:
        return prompts.render("handback_only", script=counted.script, flag=only[1], thing=only[2])
    return prompts.render("handback_counts", script=counted.script, counted=listed(counted.counted))


_RAN = re.compile(r"; `(python [^`]+)` printed")
_ONLY = re.compile(r"^the goal says `python \S+ (--[\w-]+) \w+` prints only the number of (\w+)")


# `verify.counts.off_counts`: "...; sample.txt has 3 lines and 10 words, and `python
# wordcount.py sample.txt` printed `3 3`: no number right for the words".
_WRONG = re.compile(r"; \S+ has (.+?), and `[^`]+` printed `([^`]*)`: no number right for (.+)$")


# A goal check of ruff that failed, and the fix its note names (`prompts.feedback.RUFF_FIX`).
_FIXABLE = re.compile(
    r"goal check `(ruff check\b[^`]*)` failed: .*ruff fixes the problems marked \[\*\] itself: "
    r"run `(ruff check --fix\b[^`]*)`",
    re.S,
)


def _ruff_fixes(due: ReplanDue) -> list[dict[str, Any]] | None:
    """For a verdict whose only findings are goal checks of ruff that failed on problems
    ruff fixes itself, a task of its own: each fix, then each check again. Told that
    `ruff check .` failed on mathx/__init__.py's import order, with `ruff check --fix .`
    named, Qwen2.5-Coder-1.5B planned its test file anew and wrote 90 s of parameters
    that held no call (the CPU)."""
    found = [_FIXABLE.match(item) for item in due.unmet]
    if not found or None in found:
        return None
    fixes = [f"run {f[2]}" for f in found if f is not None]
    checks = [f"run {f[1]}" for f in found if f is not None]
    steps = [*dict.fromkeys(fixes), *dict.fromkeys(checks)]
    return [{"description": steps[0], "subtasks": steps}]


def _status_only(state: State, due: ReplanDue) -> bool:
    """Whether all a verdict found unmet is the exit status of the goal's script without
    arguments (`stated.mismatches`)."""
    said = status_said(state.goal.text if state.goal is not None else "")
    return bool(said) and all(item.startswith(said) for item in due.unmet)


def left(
    state: State, most: int, small: bool, root: Path, prompts: PromptSet, reason: str = ""
) -> bool:
    """Whether a plan follows the failure of the active subtask (for `reason`): the
    model's replans are not spent, or a hand-back would be made and those are not."""
    here = current(state)
    if state.replans < most:
        return True
    if here is None or state.handbacks >= most:
        return False
    task, subtask = here[0].description, here[1].description
    due = ReplanDue(task_index=state.task_index, task=task, subtask=subtask, reason=reason)
    return back(state, due, small, root, prompts) is not None
