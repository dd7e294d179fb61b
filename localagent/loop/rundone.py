"""A run subtask ends with its successful run.

After its write subtask ended with the write, Qwen2.5-Coder-0.5B ran `python
hello_world.py` for the subtask "run python hello_world.py": exit code 0, "Hello,
world!". It never called mark_subtask_complete: it sent the same run again until the
loop guard's three strikes failed the subtask, and the replan gave it back. For a
subtask that says to run one program or the tests (`subtasks.ran_by`), the run is the
work: a repeat the loop guard blocks, after a run of that command in the same subtask
succeeded with nothing changed since, is the model saying it is done. In the
small-model profile the successful run itself is: the command is the subtask, and a
round of a small model costs 3-30 s. A larger model reads the output first (it may show
the program misbehaving), so there it keeps the say.

Success is the ledger's judgement (`checkruns.judge`): a test runner exited 0 with no
failures; a program printed something or exited with a status, without a traceback; a
program that waited for input, ran out of time or printed nothing proves nothing. The
subtask ends through the normal `subtask_completed` record (`by: "run"`), owed by the
run's `action_finished` or the repeat's `feedback`, so a crash between the two still
ends it on resume.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localagent.loop import readdone, searchdone, writedone
from localagent.loop.subtasks import (
    LINT,
    OPTION,
    TESTS,
    checkers,
    edited_file,
    looks,
    ran_by,
)
from localagent.prompts.promptset import PromptSet
from localagent.state import State, current
from localagent.state.checkruns import (
    check_kind,
    command_words,
    key,
    mentioned,
    outcome,
    run_facts,
)
from localagent.state.ledger import CheckRun, latest_tests
from localagent.textcalls import arguments_object
from localagent.tools.tool import Tool
from localagent.verify.claims import restates
from localagent.verify.outputs import off_run


@dataclass(frozen=True)
class Finished:
    """A run that ends its subtask: the command, and why (for the journal and the model)."""

    cmd: str
    reason: str

    def owed(self) -> dict[str, str]:
        """The `completes` field of the record that earned the completion."""
        return {"by": "run", "cmd": self.cmd, "reason": self.reason}


def runs(target: str, cmd: str, subtask: str = "") -> bool:
    """Whether `cmd` is the run a subtask that runs `target` asks for (with the options
    the `subtask`'s text names for its program: a step "to check the --lines option" is
    not done by a run without it)."""
    kind = check_kind(cmd)
    if kind == "script" and not set(OPTION.findall(subtask)) <= set(command_words(cmd)):
        return False
    if target == TESTS:
        return kind in ("pytest", "unittest")
    if target == LINT:
        return kind == "ruff"
    found = mentioned(cmd)
    return kind == "script" and any(p == target or p.endswith("/" + target) for p in found)


def _target(state: State) -> str:
    here = current(state)
    return ran_by(here[1].description) if here is not None else ""


def finished(
    state: State,
    root: Path,
    facts: dict[str, list[str]],
    text: str,
    small: bool,
    prompts: PromptSet,
) -> Finished | None:
    """Whether the run with these `facts` and observation, just made, ends the active
    run subtask (only in the small-model profile)."""
    target = _target(state) if small else ""
    here = current(state)
    look = here is not None and looks(here[1].description)
    goal = state.goal.text if state.goal is not None else ""
    for cmd in facts.get("ran", []) if target else []:
        found = outcome(cmd, text, *run_facts(facts, cmd))
        if off_run(goal, cmd, text, root):
            continue  # the goal states another status or output for it (`handback.stops_now`)
        if (
            runs(target, cmd, here[1].description if here else "")
            and found is not None
            and (found[0] or look)
        ):
            # A run to see what fails is done by the run, its tests passing or not.
            said = "done_by_look" if look else "done_by_run"
            return Finished(key(cmd), prompts.render(said, cmd=key(cmd), summary=found[1]))
    for cmd in facts.get("ran", []) if small else []:
        found = outcome(cmd, text, *run_facts(facts, cmd))
        if (done := checked(state, cmd, found is not None and found[0], prompts)) is not None:
            return done
    return None


def _whole_goal(state: State) -> set[str]:
    """The checkers the goal names, when the active subtask is the goal itself (a one-task
    plan: the plan fell back to it, or the model's plan was the goal again); else none."""
    here = current(state)
    if here is None or state.goal is None or not restates(here[1].description, state.goal.text):
        return set()
    return checkers(state.goal.text)


def checked(state: State, cmd: str, passed: bool, prompts: PromptSet) -> Finished | None:
    """Whether a check run (`passed`: it just did, or earlier with nothing changed since)
    ends the subtask that is the goal itself: every checker the goal names passed in this
    subtask with nothing changed since. Qwen2.5-Coder-1.5B's mathx ran as one task (its
    plan quoted code that does not compile): its tests passed, then `ruff check
    tests/test_mathx.py`, nothing changed since, and it never called
    mark_subtask_complete; it ran pip, pytest and ruff until the round limit, and the goal
    failed with the package working (the H200)."""
    wanted = _whole_goal(state) if passed and not _fixes(cmd) else set()
    if not any(runs(target, cmd) for target in wanted):
        return None
    shown = [f"`{key(cmd)}`"]
    for target in sorted(wanted):
        if runs(target, cmd):
            continue
        done = [r for r in state.ledger.checks.values() if runs(target, r.cmd)]
        run = next((r for r in reversed(done) if _succeeded(state, r.cmd) is not None), None)
        if run is None or run.subtask != state.ledger.subtask:
            return None
        shown.append(f"`{run.cmd}`")
    text = prompts.render("done_by_checks", runs=" and ".join(shown))
    return Finished(key(cmd), text)


def _fixes(cmd: str) -> bool:
    """Whether a ruff run changes files (`--fix`, `format` without `--check`): what ran
    before it no longer shows the workspace as it is."""
    words = cmd.split()
    return check_kind(cmd) == "ruff" and (
        "--fix" in words or ("format" in words and not {"--check", "--diff"} & set(words))
    )


def _succeeded(state: State, cmd: str) -> CheckRun | None:
    """The latest run of `cmd`, when it succeeded and nothing changed since."""
    run = state.ledger.checks.get(key(cmd))
    if run is None or not run.passed or run.epoch != state.guard.epoch:
        return None
    return run


def rerun(state: State, tool: Tool | None, args: dict[str, Any]) -> str:
    """The command a call runs, when it is a run_cmd and the active subtask a run subtask."""
    cmd = arguments_object(args).get("cmd") if tool is not None and tool.name == "run_cmd" else None
    return cmd if isinstance(cmd, str) and (_target(state) or _whole_goal(state)) else ""


def failed_run(state: State, name: str, args: Any) -> CheckRun | None:
    """The latest run of the command a run_cmd call runs, when it failed (not when it
    passed, nor when it was inconclusive: that has a note of its own)."""
    given = arguments_object(args) if name == "run_cmd" else {}
    cmd = given.get("cmd")
    run = state.ledger.checks.get(key(cmd)) if isinstance(cmd, str) else None
    return run if run is not None and run.passed is False else None


def failed_before(state: State, tool: Tool | None, args: dict[str, Any], prompts: PromptSet) -> str:
    """For a command the loop guard blocks, what its latest run gave, when it failed:
    after a replan the window no longer shows it, and Qwen2.5-Coder-1.5B's first call of
    a replanned mathx step, the pytest run that had failed, was blocked without a word of
    why it failed (12 rounds in 3 of 16 runs)."""
    run = failed_run(state, tool.name, args) if tool is not None else None
    return (
        "" if run is None else prompts.render("blocked_last_run", cmd=run.cmd, summary=run.summary)
    )


def repeated(state: State, cmd: str, prompts: PromptSet) -> Finished | None:
    """Whether a run of `cmd` that the loop guard blocks ends the active run subtask
    instead: the same command succeeded in this subtask and nothing changed since."""
    target = _target(state)
    if not target:
        run = _succeeded(state, cmd)
        return checked(state, cmd, run is not None and run.subtask == state.ledger.subtask, prompts)
    run = _succeeded(state, cmd) if runs(target, cmd) else None
    if run is None or run.subtask != state.ledger.subtask:
        return None
    return Finished(run.cmd, prompts.render("done_by_rerun", cmd=run.cmd, summary=run.summary))


def note(state: State, done: Finished, prompts: PromptSet, rerun: bool = False) -> str:
    """What the run's observation adds, or (`rerun`) what a repeat gets instead of its
    result: the subtask is complete, and what comes next."""
    text = writedone.completes(state, "run_completes", done.reason, prompts)
    return f"{prompts.render('rerun_skipped')}\n{text}" if rerun else text


def earned(
    state: State,
    root: Path,
    facts: dict[str, list[str]],
    text: str,
    small: bool,
    prompts: PromptSet,
) -> tuple[dict[str, str], str] | None:
    """The completion the call just run earns its subtask, by the write rule or the run
    rule: what its record owes, and what its observation adds; None when it earns none."""
    if (wrote := writedone.finished(state, root, facts, small, prompts)) is not None:
        return wrote.owed(), writedone.note(state, wrote, prompts)
    if (ran := finished(state, root, facts, text, small, prompts)) is not None:
        return ran.owed(), note(state, ran, prompts)
    if (read := readdone.finished(state, facts, small, prompts)) is not None:
        return read.owed(), readdone.note(state, read, prompts)
    if (search := searchdone.finished(state, facts, text, small, prompts)) is not None:
        return search.owed(), searchdone.note(state, search, prompts)
    return None


def completion(state: State, root: Path, owed: dict[str, Any]) -> dict[str, Any]:
    """The `subtask_completed` record's fields for a completion a write or a run owes."""
    if owed.get("by") == "read":
        return readdone.completion(state, root, owed)
    if owed.get("by") == "search":
        return searchdone.completion(state, root, owed)
    if owed.get("by") != "run":
        return writedone.completion(state, root, owed)
    run = state.ledger.checks.get(key(str(owed.get("cmd", ""))))
    return writedone.completed(state, root, owed, "run", run.seq if run is not None else None)


def carried(state: State, tasks: list[dict[str, Any]], prompts: PromptSet) -> list[dict[str, str]]:
    """The `carried` field of a replan's `plan` record, for its run subtasks: each whose
    run succeeded in this goal with nothing changed since (the failed one too, when the
    replan gives it back word for word). Doing it again could only show the same, which
    the loop guard blocks until the subtask fails again."""
    found = []
    for text in dict.fromkeys(t for task in tasks for t in task["subtasks"]):
        target = ran_by(text)
        done = [run for run in state.ledger.checks.values() if target and runs(target, run.cmd)]
        run = next((r for r in reversed(done) if _succeeded(state, r.cmd) is not None), None)
        if run is not None:
            reason = prompts.render("carried_run", cmd=run.cmd, summary=run.summary)
            found.append({"subtask": text, "reason": reason})
    return found


_FIXES = re.compile(r"\b(?:fix\w*|bugs?|failing)\b", re.I)
# What the tests passing does not show fixed: a linter's findings (mathx's "fix the ruff
# errors in tests/test_mathx.py").
_NOT_TESTS = re.compile(r"\b(?:ruff|lint\w*|flake8|format\w*|style|unused|imports?)\b", re.I)


def fixed_by_tests(step: str) -> bool:
    """Whether a step is an edit of one file to fix what the tests show: "replace_in_file
    stats.py to fix the bug", not "... to fix the ruff errors"."""
    return bool(edited_file(step) and _FIXES.search(step) and not _NOT_TESTS.search(step))


def nothing_to_fix(state: State, prompts: PromptSet) -> Finished | None:
    """An edit step that says to fix its file, when the tests passed with nothing changed
    since and the step has done nothing yet (small profile): done by that run. Qwen2.5-
    Coder-1.5B's fixtest plan had "replace_in_file stats.py to fix the bug" twice; the
    first fixed median and the tests passed, and for the second it rewrote the odd case
    as `ordered[n // 2 - 1] + ordered[n // 2] / 2`, which the tests still passed
    (`[3, 1, 2]` gives 2) and `[5]` does not (7.5): "completed (verified)" (the H200)."""
    here = current(state)
    if here is None or not fixed_by_tests(here[1].description) or state.ledger.tried:
        return None
    tests = latest_tests(state.ledger)
    if tests is None or not tests.passed or tests.epoch != state.guard.epoch:
        return None
    return Finished(
        tests.cmd, prompts.render("nothing_to_fix", cmd=tests.cmd, summary=tests.summary)
    )


def ran_already(state: State, prompts: PromptSet) -> Finished | None:
    """A run step that has done nothing yet, whose command (as the step writes it)
    succeeded earlier in the goal with nothing changed since (small profile): done by
    that run, as a replan carries it (`carried`). Qwen2.5-Coder-1.5B's mathx plan had
    "run python -m pytest" four times in a row: the tests passed in the first and the
    second, the third run was blocked as a repeat, three times, and the step failed (the
    CPU, two `kill -9`); the replan's steps and the round limit came."""
    here = current(state)
    step = " ".join(here[1].description.split()) if here is not None else ""
    target = ran_by(step)
    if here is None or not target or state.ledger.tried:
        return None
    # the very command the step names, with the options it names (a fix changes files)
    done = [
        r
        for r in state.ledger.checks.values()
        if _names(step, r.cmd) and runs(target, r.cmd, step) and not _fixes(r.cmd)
    ]
    run = next((r for r in reversed(done) if _succeeded(state, r.cmd) is not None), None)
    if run is None:
        return None
    return Finished(run.cmd, prompts.render("carried_run", cmd=run.cmd, summary=run.summary))


# What may follow a command a step names: its end, or words that are not its arguments.
_AFTER_COMMAND = re.compile(r"(?:$|[.,;:(]|\s+(?:to|and|so|then|again|once|with\s+no)\b)")


def _names(step: str, cmd: str) -> bool:
    """Whether `step` names the command `cmd` whole: "run python -m pytest to ensure the
    tests pass" names `python -m pytest`; "run python greet.py World" does not name
    `python greet.py`."""
    at = step.find(key(cmd))
    return at > 0 and step[at - 1] == " " and bool(_AFTER_COMMAND.match(step, at + len(key(cmd))))
