"""A run subtask whose program calls none of its code goes back to a write.

Qwen2.5-Coder-1.5B wrote rock-paper-scissors games that define functions or a class
and call nothing. `python rps_game.py` printed nothing, the note said why (with the
call that fixes it where one function is clearly the start), and the model ran it again
until three strikes; each replan it made gave the same run back. Running is not the
work left, writing is: a run subtask fails as soon as a repeat of such a run is blocked,
and when a run subtask fails while the program it runs calls none of its code, the
replan is made here, without the model. The rest of the task becomes a
write subtask that makes the program call its code, then the run again, then the
subtasks that were left; the tasks after it stay as they were.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from localagent.loop.rundone import runs
from localagent.loop.subtasks import TESTS, ran_by
from localagent.prompts.promptset import PromptSet
from localagent.state import ReplanDue, State, current
from localagent.state.ledger import NO_OUTPUT, split_result
from localagent.tools import ToolResult, pyscript


def runs_idle(state: State, root: Path) -> bool:
    """Whether the active subtask runs a Python program that calls none of its code."""
    here = current(state)
    return here is not None and bool(_idle(here[1].description, root))


def ran_idle(state: State, root: Path, result: ToolResult) -> str:
    """The program the active run subtask runs, when `result` is a run of it that
    printed nothing, its code calling none of itself ("" otherwise)."""
    here = current(state)
    program = _idle(here[1].description, root) if here is not None else ""
    code, output = split_result(result.text)
    if not program or code != 0 or not output.lstrip().startswith(NO_OUTPUT):
        return ""
    return program if any(runs(program, cmd) for cmd in result.facts.get("ran", [])) else ""


def idle_program(due: ReplanDue, root: Path) -> str:
    """The Python program the failed run subtask runs, when it calls none of its code."""
    return _idle(due.subtask, root)


def _idle(subtask: str, root: Path) -> str:
    target = ran_by(subtask)
    if not target or target == TESTS or not target.lower().endswith(".py"):
        return ""
    script = pyscript.read(root, target)
    return target if script is not None and not script.acts else ""


def tasks(state: State, due: ReplanDue, program: str, prompts: PromptSet) -> list[dict[str, Any]]:
    """The plan from the failed subtask on: its task's description with a write of
    `program` first, the failed run, and what was left of the task; then the tasks after
    it, their subtasks as planned."""
    assert state.goal is not None
    planned = state.goal.tasks
    task = planned[due.task_index]
    texts = [s.description for s in task.subtasks]
    start = texts.index(due.subtask) if due.subtask in texts else len(texts)
    left = [s.description for s in task.subtasks[start:] if s.status != "completed"]
    write = prompts.render("handback_write", script=program)
    first = {"description": task.description, "subtasks": [write, *left][:8]}
    later = [
        {"description": t.description, "subtasks": [s.description for s in t.subtasks]}
        for t in planned[due.task_index + 1 :]
        if t.subtasks
    ]
    return [first, *later]
