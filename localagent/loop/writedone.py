"""A write subtask ends with its write.

A small model does not call mark_subtask_complete after writing the file a subtask
names: Qwen2.5-Coder-0.5B wrote hello_world.py in round 1, then sent the same write
again and again until three strikes failed the subtask and the replan gave it back
unchanged. For a subtask that says to write one named file (`subtasks.written_file`),
the write is the work: an unchanged rewrite of that file after a successful write by
this run (in this subtask, or in an earlier one that a replan gave back) is the model
saying it is done. In the small-model profile the first
write that creates or changes the file already is, when a later subtask of the plan
names the same file (runs or tests it): the check has a subtask of its own, and a round
of a small model costs 3-30 s; so is the first write of a package's module, which no one
runs. Without one, the model's next move after a write is
often to run it, and that run is the evidence a small verifier's verdict needs.

Either way the subtask ends through the normal `subtask_completed` record (the write's
`action_finished` names the completion owed, so a crash between the two still ends it
on resume), its evidence is the write, and nothing here counts as progress or as a
check for the goal's verdict.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localagent.loop import soundwrite, unchangedwrite, usestep
from localagent.loop.subtasks import (
    TESTS,
    edited_file,
    ran_by,
    writes_unnamed,
    written_file,
)
from localagent.loop.unchangedwrite import same_file as _same
from localagent.prompts.promptset import PromptSet
from localagent.state import State, current
from localagent.state.checkruns import norm
from localagent.state.ledger import CheckRun, latest_tests
from localagent.tools.pyscript import TEST_FILE
from localagent.verify import evidence
from localagent.verify.claims import restates


@dataclass(frozen=True)
class Finished:
    """A write that ends its subtask: the file, and why (for the journal and the model)."""

    path: str
    reason: str

    def owed(self) -> dict[str, str]:
        """The `completes` field of the write's `action_finished` record."""
        return {"path": self.path, "reason": self.reason}


def finished(
    state: State, root: Path, facts: dict[str, list[str]], small: bool, prompts: PromptSet
) -> Finished | None:
    """Whether the call with these `facts`, just run, ends the active write subtask."""
    here = current(state)
    if here is None:
        return None
    ledger = state.ledger
    edits = edited_file(here[1].description)
    if edits:
        return _edited(state, root, facts, small, prompts, edits)
    target = written_file(here[1].description) or _own_file(state, here[1].description, facts)
    if not target:
        return None
    rewritten = [p for p in map(norm, facts.get("unchanged", [])) if _same(p, target)]
    wrote = [p for p in map(norm, facts.get("wrote", [])) if _same(p, target)]
    # Written by this run, in this subtask or an earlier one (a replan or a verdict may
    # give the write back): the file already is what the subtask asks for.
    earlier = ledger.writes.get(rewritten[0]) if rewritten else None
    # written again unchanged, it would fail again
    failed = small and unchangedwrite.stopped(state, target, root, prompts)
    if earlier is not None and not earlier.emptied and not failed:
        path, name = rewritten[0], "done_by_rewrite"
    elif (
        wrote
        and small
        and (
            _checked_later(state, target)
            or soundwrite.in_package(root, wrote[0])
            or (_tests_later(state) and soundwrite.imported(root, wrote[0]))
        )
    ):
        path, name = wrote[0], "done_by_write"
    else:
        return None
    if not soundwrite.sound(root, path, ledger) or path in map(norm, facts.get("emptied", [])):
        return None
    if usestep.unmet(state, root, facts)[2]:
        return None  # the hand-back's functions do not call the one it added yet
    return Finished(path, prompts.render(name, path=path))


def _edited(
    state: State,
    root: Path,
    facts: dict[str, list[str]],
    small: bool,
    prompts: PromptSet,
    target: str,
) -> Finished | None:
    """An edit subtask ends (small profile) with the first call that changes its file,
    when a later subtask runs it or the tests: Qwen2.5-Coder-1.5B's fixtest plans were
    "read_file stats.py", "replace_in_file stats.py to fix the bug", "run python -m
    pytest", and the model never calls mark_subtask_complete; the run shows whether the
    edit fixed it."""
    changed = [p for p in map(norm, facts.get("wrote", [])) if _same(p, target)]
    # An edit it has already, of a file this run changed: Qwen2.5-Coder-1.5B's fixtest
    # plan had "replace_in_file stats.py to fix the bug" twice; the first made the fix,
    # and for the second it sent that edit's new text as both old and new (the CPU).
    same = [p for p in map(norm, facts.get("unchanged", [])) if _same(p, target)]
    made = [p for p in same if p in state.ledger.writes]
    later = _checked_later(state, target) or _tests_later(state)
    done = changed or made
    if not (small and done and later) or not soundwrite.sound(root, done[0], state.ledger):
        return None
    if usestep.unmet(state, root, facts)[2]:
        return None  # the functions the step or goal names do not call the new one yet
    said = "done_by_edit" if changed else "done_by_rewrite"
    return Finished(done[0], prompts.render(said, path=done[0]))


def _own_file(state: State, subtask: str, facts: dict[str, list[str]]) -> str:
    """For a write subtask that names no file ("Write a hello world script", the 0.5B
    model's one-subtask plan), the file this subtask wrote and now rewrites unchanged.
    So for the subtask that is the goal itself, when the goal names one file and that is
    the one: the 1.5B's greet plan fell back to the goal, it wrote a greet.py that did
    all the goal asks, then wrote it twice more unchanged, was blocked three times, and
    the subtask failed (the CPU). Ended, the goal's verification runs what it states."""
    goal = state.goal.text if state.goal is not None else ""
    if writes_unnamed(subtask):
        named: list[str] | None = None
    elif restates(subtask, goal) and len(files := evidence.named_files(goal)) == 1:
        named = files
    else:
        return ""
    ledger = state.ledger
    for path in map(norm, facts.get("unchanged", [])):
        earlier = ledger.writes.get(path)
        mine = named is None or any(_same(path, n) for n in named)
        if earlier is not None and earlier.subtask == ledger.subtask and mine:
            return path
    return ""


def _checked_later(state: State, target: str) -> bool:
    """Whether a later subtask of the plan runs or tests the file: names it, or, for a
    test file, runs the tests (Qwen2.5-Coder-1.5B's mathx plans: "write_file
    tests/test_mathx.py with the test cases", then "run pytest to ensure the tests
    pass"; each test file was written twice, 14 rounds in 7 runs)."""
    if any(_same(p, target) for p in _later_files(state)):
        return True
    return TEST_FILE.search(target) is not None and _tests_later(state)


def _later_files(state: State) -> list[str]:
    """The files the plan's later subtasks name (one that runs or tests the file written)."""
    return [name for text in _later(state) for name in evidence.named_files(text)]


def _later(state: State, numbered: bool = False) -> list[str]:
    """The subtasks after the active one still to do, in plan order (`numbered`: their
    numbers, `2.1`, instead of their text)."""
    assert state.goal is not None
    return [
        f"{ti + 1}.{si + 1}" if numbered else sub.description
        for ti, task in enumerate(state.goal.tasks)
        for si, sub in enumerate(task.subtasks)
        if (ti, si) > (state.task_index, state.subtask_index) and sub.status == "pending"
    ]


def note(state: State, done: Finished, prompts: PromptSet) -> str:
    """What the write's observation adds: the subtask is complete, and what comes next."""
    return completes(state, "write_completes", done.reason, prompts)


def completes(state: State, prompt: str, reason: str, prompts: PromptSet) -> str:
    """What a call that ends the active subtask adds to its observation (`prompt`: the
    write's, the read's, the search's, the run's): the subtask is complete, why, and what
    is next, each subtask by its number in the plan."""
    here = current(state)
    assert here is not None
    number = f"{state.task_index + 1}.{state.subtask_index + 1}"
    later = _later(state, numbered=True)
    after = f"subtask {later[0]}" if later else "nothing: every subtask is done"
    return prompts.render(
        prompt, subtask=here[1].description, number=number, reason=reason, next=after
    )


def completion(state: State, root: Path, owed: dict[str, Any]) -> dict[str, Any]:
    """The `subtask_completed` record's fields for a completion a write owes."""
    here = current(state)
    assert here is not None
    write = state.ledger.writes.get(str(owed.get("path", "")))
    return completed(state, root, owed, "write", write.seq if write is not None else None)


def completed(
    state: State, root: Path, owed: dict[str, Any], by: str, seq: int | None
) -> dict[str, Any]:
    """The `subtask_completed` fields of a completion a step owes (`by` it, with the
    step's `seq` as evidence), verified as the completion gate says."""
    here = current(state)
    assert here is not None
    found = evidence.gate(state.ledger, root, [here[1].description])
    return {
        "reason": str(owed.get("reason", "")),
        "by": by,
        "evidence": [seq] if seq is not None else [],
        "verified": not found.soft,
        "unverified": found.soft,
    }


def carried(
    state: State, root: Path, tasks: list[dict[str, Any]], failed: str, prompts: PromptSet
) -> list[dict[str, str]]:
    """The `carried` field of a replan's `plan` record, for its write subtasks:

    - the failed write subtask, when the replan gives it back word for word while the
      file it names is written by this run and sound. Doing it again could only rewrite
      the file unchanged, which the loop guard blocks until the subtask fails again;
    - any write subtask whose file this run wrote, when the tests passed since and
      nothing changed. Qwen2.5-Coder-1.5B's mathx runs (H100): the tests passed after the
      fix of `mathx/__init__.py`, a ruff step failed, and the replan planned every file
      again; with the fix out of its window the model wrote the broken import back, byte
      for byte (5 of 16 runs).
    """
    found = []
    path = _written(state, written_file(failed))
    again = any(text == failed for task in tasks for text in task["subtasks"])
    if again and path and soundwrite.sound(root, path, state.ledger):
        found.append({"subtask": failed, "reason": prompts.render("carried", path=path)})
    if (passed := _tests_passed(state)) is None:
        return found
    for text in (t for task in tasks for t in task["subtasks"] if t != failed):
        path = _written(state, written_file(text))
        if (
            path
            and soundwrite.sound(root, path, state.ledger)
            and all(c["subtask"] != text for c in found)
        ):
            reason = prompts.render(
                "carried_tested", path=path, cmd=passed.cmd, summary=passed.summary
            )
            found.append({"subtask": text, "reason": reason})
    return found


def _tests_passed(state: State) -> CheckRun | None:
    """The latest run of the tests, when it passed and nothing changed since."""
    run = latest_tests(state.ledger)
    return run if run is not None and run.passed and run.epoch == state.guard.epoch else None


def _written(state: State, target: str) -> str:
    """The path this run wrote that a subtask's `target` names ("" when none)."""
    return next((p for p in state.ledger.writes if target and _same(p, target)), "")


def _tests_later(state: State) -> bool:
    """Whether a later subtask of the plan runs the tests."""
    return any(ran_by(text) == TESTS for text in _later(state))
