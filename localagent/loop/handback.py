"""A run subtask whose program calls none of its code, or that stopped because a file it
loads does not (small profile), goes back to a write.

Qwen2.5-Coder-1.5B wrote rock-paper-scissors games that define functions or a class
and call nothing. `python rps_game.py` printed nothing, the note said why (with the
call that fixes it where one function is clearly the start), and the model ran it again
until three strikes; each replan it made gave the same run back. Running is not the
work left, writing is: a run subtask fails as soon as a repeat of such a run is blocked,
and when a run subtask fails while the program it runs calls none of its code, the
replan is made here, without the model. The rest of the task becomes a
write subtask that makes the program call its code, then the run again, then the
subtasks that were left; the tasks after it stay as they were.

The same for a file this run wrote that the run could not load (`tools.loaderror`: an
ImportError, NameError or SyntaxError raised in it): the 1.5B's mathx runs stopped at
`ImportError: cannot import name 'add' from partially initialized module 'mathx'` in
`mathx/__init__.py`, and in the subtask "run pytest to ensure the tests pass" the model
ran pytest again until three strikes, while its own replans rewrote every file. With
the small profile the run subtask fails at the first blocked repeat of such a run, and
the write it goes back to names the file and the error. So for a test file that defines
no test (`tools.notests`): the tests ran none, and the write asks for test functions.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from localagent.loop import ruffback
from localagent.loop.planfrom import from_failed
from localagent.loop.rundone import runs
from localagent.loop.subtasks import (
    MAX_STEPS,
    TESTS,
    edited_file,
    ran_by,
    written_file,
)
from localagent.loop.testback import failed_after_edit
from localagent.prompts.promptset import PromptSet
from localagent.state import ReplanDue, State, current
from localagent.state.checkruns import NO_OUTPUT, refused_option, split_result
from localagent.tools import ToolResult, notests, pyscript, runproof
from localagent.tools.loaderror import file_as_text
from localagent.tools.mends import inits
from localagent.tools.nameerrors import foreign_name, missing_import
from localagent.tools.pkgimports import text_of
from localagent.verify.outputs import off_run
from localagent.verify.stated import mismatches, stated_forms, stated_script
from localagent.verify.statusfix import status_fix


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


def stops_now(state: State, root: Path, result: ToolResult, prompts: PromptSet) -> str:
    """Why the run just made fails the active run subtask at once (small profile), ""
    when it does not: its program calls none of its code, or never opens the file it was
    given, or its status, output or counts are not what the goal states (the counts last:
    a program that never opens its file counts nothing of it). The 1.5B ran such a
    program again and again until it was blocked."""
    if idle := ran_idle(state, root, result):
        return prompts.render("printed_nothing", script=idle, fix="").removeprefix("NOTE: ")
    here = current(state)
    target = ran_by(here[1].description) if here is not None else ""
    ran = [cmd for cmd in result.facts.get("ran", []) if target and runs(target, cmd)]
    goal = state.goal.text if state.goal is not None else ""
    text = result.observed  # not the notes after it: "SUBTASK COMPLETE: ... 1.2 ..."
    for cmd in ran:
        if off := off_run(goal, cmd, text):
            return off
    why = [w for w in result.facts.get("unproven", []) if w.startswith(runproof.NEVER_OPENS)]
    if ran and why:
        return f"{target}: {why[0]}"
    return next((off for cmd in ran if (off := off_run(goal, cmd, text, root))), "")


def unread_program(state: State, subtask: str) -> str:
    """The Python program the failed run `subtask` runs, when its latest run showed that
    its code never opens the file it was given, with nothing changed since. Qwen2.5-
    Coder-1.5B's wordcount.py counted sys.stdin; told so, it ran it again with stdin
    "test" until three strikes (the CPU)."""
    target, last = _latest_run(state, subtask)
    if last is None or last.passed is not None:
        return ""
    return target if runproof.NEVER_OPENS in last.summary else ""


def _latest_run(state: State, subtask: str) -> tuple[str, Any]:
    """What the run `subtask` runs, and its latest run when nothing changed since (else
    None)."""
    target = ran_by(subtask)
    done = [c for c in state.ledger.checks.values() if target and runs(target, c.cmd)]
    last = max(done, key=lambda c: c.seq, default=None)
    return target, last if last is not None and last.epoch == state.guard.epoch else None


def back(state: State, root: Path, prompts: PromptSet) -> str:
    """Why the active run subtask goes back to its file now ("" when it does not): its
    latest run stopped on a file this run wrote, the tests failed after an edit,
    argparse stopped it on an option the goal states that the program lacks, or its ruff
    check found only what ruff fixes itself (`ruffback`)."""
    here = current(state)
    text = here[1].description if here is not None else ""
    if found := broken(state, text):
        if found[1].startswith(notests.NONE_DEFINED):
            return prompts.render("no_test_ran", path=found[0])
        return prompts.render("load_failed", path=found[0], error=found[1])
    if found := failed_after_edit(state, text, root):
        return prompts.render("failed_after_edit", path=found[0], failure=found[1])
    if lacked := unknown_option(state, text):
        return prompts.render("option_lacked", script=lacked[0], flag=lacked[1])
    if (fixed := ruffback.fixable(state)) is not None:
        return prompts.render("ruff_fixable", cmd=fixed[0].cmd, summary=fixed[0].summary)
    return ""


def broken(state: State, subtask: str) -> tuple[str, str] | None:
    """The file this run wrote that the latest run of what the run `subtask` runs could
    not load, and the error, when nothing changed since."""
    target = ran_by(subtask)
    if not target:
        return None
    ledger = state.ledger
    done = [c for c in ledger.checks.values() if runs(target, c.cmd) and c.passed is False]
    last = max(done, key=lambda c: c.seq, default=None)
    if last is None or not last.broken or last.epoch != state.guard.epoch:
        return None
    path, _, error = last.broken.partition(": ")
    return (path, error) if path in ledger.writes else None


def fix_tasks(
    state: State, due: ReplanDue, found: tuple[str, str], prompts: PromptSet, root: Path
) -> list[dict[str, Any]]:
    """The plan from the failed run subtask on: a write of the file that did not load,
    naming the error (when the words keep it a write subtask), then as `tasks`. A package
    `__init__.py` that imports modules of its own that are not there ("No module named
    'mathx.add'") goes back to a write of each of them instead: the small profile wrote
    the 1.5B's `from mathx import add, ...` as `from .add import add as add; ...`, and
    told to write the `__init__.py` again, it would send that same line."""
    if found[1].startswith("ModuleNotFoundError") and (
        todo := inits.missing_modules(root, found[0])
    ):
        writes = [
            prompts.render("handback_module", path=path, names=", ".join(names))
            for path, names in todo[: MAX_STEPS - 1]
        ]
        if all(written_file(w) == path for w, (path, _) in zip(writes, todo, strict=False)):
            return from_failed(state, due, *writes)
    if found[1].startswith(notests.NONE_DEFINED):  # a test file with no test
        write = prompts.render("handback_tests", path=found[0])
        if written_file(write) == found[0]:
            return from_failed(state, due, write)
    error = found[1]
    if needed := missing_import(error):  # what fixes it, not only what it raised
        error = f"{error} (it needs `{needed}` at its top)"
    elif said := foreign_name(error, found[0]) or file_as_text(error):
        error = f"{error} ({said})"
    write = prompts.render("handback_fix", path=found[0], error=error)
    if written_file(write) != found[0]:  # the error's words read as more than a write
        write = prompts.render("handback_fix", path=found[0], error="the error its run showed")
    return from_failed(state, due, write + keeping(state, found[0]))


def status_tasks(
    state: State, due: ReplanDue, root: Path, prompts: PromptSet, fresh: bool = False
) -> list[dict[str, Any]] | None:
    """The plan when the goal's script, run without arguments since its last change,
    exited with another status than the goal states: a read of it, then the one edit that
    ends it so (`statusfix`), then its run again; from the failed run subtask on, or
    (`fresh`, for a verdict that found only that) as a task of its own. Told only what
    was unmet, Qwen2.5-Coder-1.5B planned its greet.py anew and wrote it worse (a
    hard-coded name, the function alone) in four of six runs (the H200)."""
    stated = stated_script(state.goal.text if state.goal is not None else "")
    if stated is None or not (fresh or mismatches(state.goal.text, state.ledger)):
        return None
    script, wanted = stated
    source = text_of(root, script)
    if source is None:
        return None
    fix = status_fix(source, wanted)
    edit = fix.step(script, wanted) if fix is not None else ""
    if edited_file(edit) != script:
        edit = prompts.render("handback_status", path=script, status=wanted)
    read = prompts.render("handback_read", path=script)
    if not fresh:
        return from_failed(state, due, read, edit)
    steps = [read, edit, f"run python {script}"]
    return [
        {
            "description": prompts.render("handback_status", path=script, status=wanted),
            "subtasks": steps,
        }
    ]


def idle_program(due: ReplanDue, root: Path) -> str:
    """The Python program the failed run subtask runs, when it calls none of its code."""
    return _idle(due.subtask, root)


def _idle(subtask: str, root: Path) -> str:
    target = ran_by(subtask)
    if not target or target == TESTS or not target.lower().endswith(".py"):
        return ""
    script = pyscript.read(root, target)
    return target if script is not None and not script.acts else ""


# Hand-backs a goal may have for each replan of the model's it may have: each answers one
# failure the run's evidence names, without a model call. Capped at the replans, they were
# spent in three of the 1.5B's wordcount runs on the CPU (a program that called nothing,
# then one that never opened its file), and the model's replans then wrote the same
# wrong count again until the round limit.
PER_REPLAN = 2


def left(state: State, most: int) -> bool:
    """Whether a hand-back is left, `most` being the model's replans (`max_replans`)."""
    return state.handbacks < PER_REPLAN * most


def unknown_option(state: State, subtask: str) -> tuple[str, str] | None:
    """(the program, the option) when the failed run `subtask` runs a program whose latest
    run, with nothing changed since, argparse stopped on an option the goal states that
    it lacks. Qwen2.5-Coder-1.5B's wordcount.py, written again without --lines, answered
    `python wordcount.py sample.txt --lines` so (the CPU)."""
    target, last = _latest_run(state, subtask)
    if last is None or last.passed is not False:
        return None
    flag = refused_option(last.summary)
    goal = state.goal.text if state.goal is not None else ""
    if not flag or not re.search(rf"(?<![\w-]){re.escape(flag)}\b", goal):
        return None
    return target, flag


def tasks(
    state: State, due: ReplanDue, program: str, prompts: PromptSet, write: str = "handback_write"
) -> list[dict[str, Any]]:
    """The plan from the failed subtask on: its task's description with a write of
    `program` first (the prompt `write` says which), the failed run, and what was left of
    the task; then the tasks after it, their subtasks as planned."""
    return from_failed(state, due, prompts.render(write, script=program) + keeping(state, program))


def keeping(state: State, path: str, but: str = "") -> str:
    """What a write that goes back to a program ends with: ", keeping its --lines option",
    the options the goal states for it (`but` the one the write adds). Told only to make
    wordcount.py open the file it is given, Qwen2.5-Coder-1.5B wrote it again without
    --lines (2 of 6 runs on the H200, and on the CPU), and the verification's run with
    --lines sent the work back once more."""
    goal = state.goal.text if state.goal is not None else ""
    stated = {f for script, given, _ in stated_forms(goal) if script == path for f in given}
    flags = sorted(stated - {but})
    if not flags:
        return ""
    return f", keeping its {' and '.join(flags)} option" + ("s" if len(flags) > 1 else "")
