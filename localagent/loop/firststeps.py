"""Steps a small model's plan gets before the steps that need them: a read of a file
before its edit, the failing tests' run before a fix, a sample file before a run on it;
and the run of the goal's command line that a plan with no run lacks.
The small-model profile's planner adds them to the plan it journals, so a resumed run
has them too."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from localagent.loop.subtasks import (
    FIX,
    MAX_STEPS,
    TESTS,
    edited_file,
    looks,
    names_tests,
    ran_by,
    read_file_of,
    write_of,
    write_to_fix,
    written_file,
)
from localagent.tools import runproof
from localagent.verify import evidence
from localagent.verify.claims import restates
from localagent.verify.stated import stated_forms


def read_first(
    tasks: list[dict[str, Any]],
    goal: str,
    read: Callable[[str], str],
    exists: Callable[[str], bool] = lambda _path: False,
) -> None:
    """Put a read of a file the goal names (the `read` step for it) before the plan's
    first edit of it, or first write of it while it `exists`, when no step before that
    reads it. Qwen2.5-Coder-1.5B's fixtest plan began "replace_in_file stats.py to fix the
    bug": never shown the file, it sent `{"old": "old_text", "new": "new_text"}` until
    three strikes (CPU), as it had 45 times in 9 H100 runs: an edit needs the text it
    replaces in the window. Its refactor plans began "write_file shapes.py to move the
    area formulas into one function area(kind, size) ...": never shown shapes.py, it wrote
    only `def area(...)` over it, refused (the tests import the rest), 6 runs of 6."""
    seen: set[str] = set()
    named = set(evidence.file_names(goal))  # a goal that says to move code names them too
    for task in tasks:
        steps: list[str] = []
        for text in task["subtasks"]:
            written = write_of(text)
            target = edited_file(text) or (written if written and exists(written) else "")
            if target in named and target not in seen and read_file_of(read(target)) == target:
                steps.append(read(target))
            seen |= {target, read_file_of(text)}
            steps.append(text)
        task["subtasks"] = steps[:MAX_STEPS]


def see_first(tasks: list[dict[str, Any]], goal: str, step: str) -> None:
    """Put `step` (the tests' run to see what fails) before the plan's first edit of a
    file (and the read of it just before), when the goal is to fix failing tests and no
    step before that edit runs them. Qwen2.5-Coder-1.5B's fixtest plans were "read_file stats.py",
    "replace_in_file stats.py to fix the bug", then the tests: never shown what fails, it
    sent the functions as they were as edits (12 runs of 12, the H100 and the CPU), or
    added `+ 1` to `mean`; the tests' output says `median([4, 1, 3, 2])` gave 3."""
    if not (FIX.search(goal) and names_tests(goal)) or not looks(step):
        return
    places = [(task, at) for task in tasks for at in range(len(task["subtasks"]))]
    for n, (task, at) in enumerate(places):
        text = task["subtasks"][at]
        if ran_by(text) == TESTS:
            return
        if target := edited_file(text) or write_to_fix(text):
            if n > 0 and read_file_of(places[n - 1][0]["subtasks"][places[n - 1][1]]) == target:
                task, at = places[n - 1]  # before the read of the file too
            task["subtasks"] = [*task["subtasks"][:at], step, *task["subtasks"][at:]][:MAX_STEPS]
            return


_RUN = re.compile(r"^\W*run(?:_cmd)?\s+(.+?)\s*$", re.I)


def sample_first(
    tasks: list[dict[str, Any]], exists: Callable[[str], bool], write: Callable[[str], str]
) -> None:
    """Before a run step that gives its program an input file (the goal's placeholder,
    `FILE`, or a sample's name) that the workspace lacks and no step before writes, the
    `write` step of a sample of it; the placeholder becomes sample.txt in the run.
    Qwen2.5-Coder-1.5B's wordcount plans said "run python wordcount.py FILE": run on a
    file that did not exist, the program failed or counted nothing, and, offered the
    sample's write_file call, the model ran the same command until three strikes (CPU)."""
    written: set[str] = set()
    for task in tasks:
        steps: list[str] = []
        for text in task["subtasks"]:
            written.add(written_file(text) or write_of(text))
            run = _RUN.match(text)
            for word in runproof.input_words(run[1]) if run else []:
                path = runproof.sample_file(word)[0]
                if path not in written and not exists(path):
                    steps.append(write(path))
                    written.add(path)
                text = runproof.on_samples(text, [word])
            steps.append(text)
        task["subtasks"] = steps[:MAX_STEPS]


def run_last(tasks: list[dict[str, Any]], goal: str) -> None:
    """When the goal states how its script runs (`python wordcount.py FILE`) and no step
    of the plan runs anything, that command line run at the plan's end (its `FILE` then a
    sample, `sample_first`); not for a plan whose step is the goal again, which its own
    checks end. Qwen2.5-Coder-1.5B's wordcount plan was "write_file wordcount.py" eight
    times: nothing ran the program, the verification had no file to give it, and the
    goal ended "completed (unverified)" with a wordcount.py that raised AttributeError on
    any file (the CPU)."""
    forms = stated_forms(goal)
    steps = [text for task in tasks for text in task["subtasks"]]
    if not forms or not steps or any(ran_by(t) or _RUN.match(t) for t in steps):
        return
    if any(restates(t, goal) for t in steps):
        return
    script, flags, count = forms[0]
    run = "run " + " ".join(["python", script, *flags, *["FILE"] * count])
    # room for the run, and for the sample's write `sample_first` may put before it
    tasks[-1]["subtasks"] = [*tasks[-1]["subtasks"][: MAX_STEPS - 2], run]
