"""An edit step that was to make a function the step or the goal names goes back, when it
failed and no file defines that function, to a read of the file, a write of the function
alone (small profile) and a write of the file whole, its functions calling it.

Qwen2.5-Coder-1.5B, asked to "move the repeated area formulas into a single function
area(kind, size)", renamed total_area, largest and report in turn (test_shapes.py
imports them, so each was refused), went on after the note that said how to add area,
and its replans planned the same edit step (the CPU, 20 rounds, twice). Given the step
"write_file shapes.py to move the formulas into a function area(kind, size)", it wrote
`def area(kind, size): ...` alone, which the loop adds above the file's functions
(`stepedit.as_merged_write`). Asked then for an edit that makes the three functions call
area, it renamed them again until the round limit; asked for a write of the file that adds
area, it had written the file whole with the three calling it (the CPU).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from localagent.loop import handback, usestep
from localagent.loop.stepedit import header_of, renamed
from localagent.loop.subtasks import edited_file, read_file_of, written_file
from localagent.prompts.promptset import PromptSet
from localagent.state import ReplanDue, State, current
from localagent.system.textcap import listed
from localagent.tools import ToolResult, pyfiles, pywrite
from localagent.tools.pkgimports import lost_users, text_of
from localagent.verify.named import callers, missing

MAX_USERS = 4  # functions an edit step names; past that it says "its functions"


def tasks(
    state: State, due: ReplanDue, root: Path, prompts: PromptSet
) -> list[dict[str, Any]] | None:
    """The plan from the failed subtask on (`handback.from_failed`, the failed subtask
    left out), or None when it is not such a step."""
    path = edited_file(due.subtask) or written_file(due.subtask)
    source = text_of(root, path) if path.endswith(".py") else None
    said = " ".join([due.subtask, state.goal.text if state.goal is not None else ""])
    wanted = missing(said, root) if source is not None else []
    if source is None or not wanted:
        return None
    had = pywrite.defined(source)
    if not had or not lost_users(root, path, had, []):
        return None  # a file no other imports from can be written whole
    name = wanted[0]
    write = prompts.render("handback_add", path=path, header=header_of(name, said), first=had[0])
    if due.subtask == write or written_file(write) != path:
        return None
    use = _use(prompts, path, source, name, had)
    read = prompts.render("handback_read", path=path)
    # The read first: the window starts anew at a replan. Without the file in view the
    # 1.5B sent edits of lines shapes.py never had (`total_area = area('circle', radius)
    # + ...`), "old was not found", until it was blocked; and wrote area with formulas
    # the file never had (`3.14 * size ** 2`, and a triangle), (the CPU).
    if written_file(use) == path and read_file_of(read) == path:
        steps = [read, write, use]
    else:
        steps = [write]
    return handback.from_failed(state, due, *steps, failed=False)


def rest_tasks(
    state: State, due: ReplanDue, root: Path, prompts: PromptSet
) -> list[dict[str, Any]] | None:
    """For a failed step of the write of a file's functions calling one of its own
    (`usestep.asked`), when some of them call it now and the rest do not: the plan from
    it on, a read of the file and the same write for the rest alone (the failed step left
    out); None for any other. Its write made total_area call area, and then the 1.5B
    sent that same write until blocked, though the note asked for largest alone: the
    step failed, and its replan began again with area (the CPU)."""
    step = usestep.asked(due.subtask)
    source = text_of(root, step[0]) if step is not None else None
    if step is None or source is None:
        return None
    path, name, users = step
    rest = usestep.not_calling(root, path, name, users)
    wanted = users or [f for f in pywrite.defined(source) if f != name]
    if not rest or len(rest) >= len(wanted):
        return None  # none calls it yet: nothing to go on from
    use = _use(prompts, path, source, name, rest)
    read = prompts.render("handback_read", path=path)
    if use == due.subtask or written_file(use) != path or read_file_of(read) != path:
        return None
    return handback.from_failed(state, due, read, use, failed=False)


_UNUSED = re.compile(r"^the goal says to use the function (\w+)\b")


def unused_tasks(
    state: State, due: ReplanDue, root: Path, prompts: PromptSet
) -> list[dict[str, Any]] | None:
    """For a verdict whose only findings are that a function the goal says to use is not
    called where it says (`verify.named.unused`), a task of its own: a read of its file,
    then the write that makes the functions the goal names call it (`_use`). Told only
    what was unmet, the 1.5B planned "replace_in_file shapes.py to add the function
    area(kind, size)" twice, for an area that was there, and the goal failed (the CPU)."""
    names = {found[1] for u in due.unmet if (found := _UNUSED.match(u))}
    if len(names) != 1 or len(due.unmet) != 1 or state.goal is None:
        return None
    name = names.pop()
    found = callers(state.goal.text, name, pyfiles.trees(root))
    source = text_of(root, found[2]) if found is not None else None
    if found is None or not found[1] or source is None:
        return None
    path = found[2]
    use = _use(prompts, path, source, name, found[1])
    read = prompts.render("handback_read", path=path)
    if written_file(use) != path or read_file_of(read) != path:
        return None
    return [{"description": use, "subtasks": [read, use]}]


def _use(prompts: PromptSet, path: str, source: str, name: str, had: list[str]) -> str:
    """The step that makes the file's functions call `name`: the first alone, its header
    shown, then the rest the same way (up to `MAX_USERS`); else the file whole. Asked for
    shapes.py whole with the three calling area, the 1.5B dropped them, nested them in
    area or made them aliases of it (five CPU runs); asked for `def area(kind, size):`
    alone, it wrote that function, in every run that got that far."""
    if 1 < len(had) <= MAX_USERS:
        header = pywrite.header(source, had[0])
        rest = listed(had[1:])
        return prompts.render("handback_use_each", path=path, header=header, name=name, rest=rest)
    users = listed(had)
    if len(had) > MAX_USERS:
        users = f"the functions of {path}"
    return prompts.render("handback_use", path=path, users=users, name=name)


def stops_now(
    state: State, root: Path, name: str, args: dict[str, Any], result: ToolResult,
    prompts: PromptSet, most: int,
) -> str:  # fmt: skip
    """Why the edit just refused fails its step at once (small profile), "" when it does
    not: it was one name for another (`stepedit.renamed`) and the step goes back to the
    write of the function it names. Told how to add area, the 1.5B renamed the next
    function, three names in turn until each was blocked: 9 rounds of 20 (the CPU)."""
    here = current(state)
    if result.ok or here is None or not handback.left(state, most):
        return ""
    if renamed(state, root, name, args) is None:
        return ""
    task, subtask = here[0].description, here[1].description
    due = ReplanDue(task_index=state.task_index, task=task, subtask=subtask, reason="")
    if tasks(state, due, root, prompts) is None:
        return ""
    wanted = missing(" ".join([subtask, state.goal.text if state.goal else ""]), root)
    return prompts.render("renames_only", name=wanted[0])
