"""The plans made without the model for a verdict (small profile) whose findings are all
of one kind that one write, edit or run fixes: the exit status without arguments, a
program that never opened the file its checks gave it, an option its argparse lacks,
ruff's own fixes, a function not called where the goal says to use it, the numbers the
goal's script counts, its command line never given a file."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from localagent.loop import addback, handback
from localagent.loop.firststeps import sample_first
from localagent.prompts.promptset import PromptSet
from localagent.state import ReplanDue, State
from localagent.system.textcap import listed
from localagent.tools import ruffnotes, runproof
from localagent.tools.paths import workspace_file
from localagent.tools.pkgimports import text_of
from localagent.verify import verdict
from localagent.verify.countfix import FROM_TEXT, count_fix
from localagent.verify.counts import Counted, stated_counts
from localagent.verify.stated import form_checks, status_said, unrun_forms

log = logging.getLogger("localagent.agent")


def tasks(
    state: State, due: ReplanDue, root: Path, prompts: PromptSet
) -> list[dict[str, Any]] | None:
    """The plan made without the model for a verdict whose findings are all of one kind
    that one write, edit or run fixes (small profile), or None (see the module)."""
    if _status_only(state, due) and (
        tasks := handback.status_tasks(state, due, root, prompts, fresh=True)
    ):
        log.info("%s exits with another status than the goal states: back to an edit", tasks)
        return tasks
    backs: list[tuple[str, Callable[[], list[dict[str, Any]] | None]]] = [
        ("the goal's checks never opened the file they gave", lambda: _unread(state, due, prompts)),
        ("the goal's program calls none of its code", lambda: _idle(state, due, prompts)),
        ("the goal's program lacks an option", lambda: _unknown_option(state, due, prompts)),
        ("the goal's ruff check failed on what ruff fixes itself", lambda: _ruff_fixes(due)),
        (
            "a function the goal says to use is not called where it says",
            lambda: addback.unused_tasks(state, due, root, prompts),
        ),
        (
            "the goal's script printed other numbers than it counts",
            lambda: _recounted(state, due, prompts, root),
        ),
        (
            "no run gave the goal's script the file its command line names",
            lambda: _sampled(state, due, prompts, root),
        ),
    ]
    for why, make in backs:
        if (tasks := make()) is not None:
            log.info("%s: back to the work that fixes it", why)
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


# argparse's answer to an option it was never given: "wordcount.py: error: unrecognized
# arguments: --lines".
_UNKNOWN = re.compile(
    r"goal check `(python (\S+\.py)\b[^`]*)` failed: exit code 2: .*\bunrecognized "
    r"arguments: (--?[a-z][\w-]*)"
)


def _unknown_option(
    state: State, due: ReplanDue, prompts: PromptSet
) -> list[dict[str, Any]] | None:
    """For a verdict whose only findings are goal checks of one program that argparse
    stopped on an option it lacks, each the same option the goal states, a task of its
    own: the write that adds it, then each of those runs. Told only what was unmet,
    Qwen2.5-Coder-1.5B planned its wordcount's three steps anew ("write_file wordcount.py
    with its code"), wrote it again without --lines, and the goal failed (the CPU)."""
    if (one := _one_program(_UNKNOWN, due.unmet, 2)) is None:
        return None
    program, found = one
    goal = state.goal.text if state.goal is not None else ""
    flags = {f[3] for f in found}
    if len(flags) != 1 or not re.search(rf"(?<![\w-]){re.escape(next(iter(flags)))}\b", goal):
        return None
    write = option_write(state, program, flags.pop(), prompts)
    runs = [f"run {f[1]}" for f in found]
    return [{"description": write, "subtasks": [write, *dict.fromkeys(runs)]}]


def option_write(state: State, program: str, flag: str, prompts: PromptSet) -> str:
    """The write that adds the goal's option `flag` to `program` (`handback_option`),
    with what the goal says of it and the other options it keeps."""
    goal = state.goal.text if state.goal is not None else ""
    said = re.search(rf"\bwith\s+(?:the\s+)?{re.escape(flag)}\b[^;.]*", goal)
    write = prompts.render(
        "handback_option", script=program, flag=flag,
        said=said[0].strip() if said else "the goal states it",
    )  # fmt: skip
    return write + handback.keeping(state, program, but=flag)


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


def _recounted(
    state: State, due: ReplanDue, prompts: PromptSet, root: Path
) -> list[dict[str, Any]] | None:
    """For a verdict whose only findings are the verification's own runs of the goal's
    script whose numbers are not what the goal says it counts, a task of its own: the
    write that prints them (`recount`), then each of those runs. Told only what was
    unmet, Qwen2.5-Coder-1.5B planned its three steps anew twice, its run step the
    `--lines` form alone, and the goal failed (the CPU)."""
    counted = stated_counts(state.goal.text if state.goal is not None else "")
    said = f"the goal says `python {counted.script} " if counted else ""
    if counted is None or not due.unmet or not all(u.startswith(said) for u in due.unmet):
        return None
    runs = [f"run {cmd}" for u in due.unmet for cmd in _RAN.findall(u)]
    write = recount(state, counted, due.unmet[0], prompts, root)
    return [{"description": write, "subtasks": [write, *dict.fromkeys(runs)]}]


def recount(
    state: State, counted: Counted, finding: str, prompts: PromptSet, root: Path | None = None
) -> str:
    """The step for a count finding: the edit of the one line that counts the thing
    wrong, where that line is certain (`countfix`), else the write that counts it right
    (with the file's counts and what it printed; not the file's name: a write step that
    names two files writes neither, and the 1.5B's write never ended it), prints only the
    one count the option asks for, or prints each (a write keeps the goal's options)."""
    wrong = _WRONG.search(finding)
    source = text_of(root, counted.script) if root is not None and wrong else None
    things = wrong[3].removeprefix("the ") if wrong else ""
    if wrong and source and (fix := count_fix(source, things)):
        return prompts.render(
            "handback_recount", script=counted.script, things=wrong[3], old=fix[0],
            new=fix[1], counts=wrong[1], printed=wrong[2],
        )  # fmt: skip
    return _rewrite(counted, finding, prompts) + handback.keeping(state, counted.script)


def _rewrite(counted: Counted, finding: str, prompts: PromptSet) -> str:
    """The write step for a count finding (see `recount`)."""
    if (wrong := _WRONG.search(finding)) is not None:
        return prompts.render(
            "handback_miscount", script=counted.script, things=wrong[3], counts=wrong[1],
            printed=wrong[2], how=_counted_by(wrong[3]),
        )  # fmt: skip
    if (only := _ONLY.search(finding)) is not None:
        return prompts.render("handback_only", script=counted.script, flag=only[1], thing=only[2])
    return prompts.render("handback_counts", script=counted.script, counted=listed(counted.counted))


def _counted_by(things: str) -> str:
    """ " (with `text = f.read()`: the words are `len(text.split())`)" for the things a
    count finding names ("the words", "the lines and the words"); "" for others."""
    # Told only that its words were wrong, Qwen2.5-Coder-1.5B wrote `len(lines) *
    # len(lines[0].split())`, then `text.count(' ')`, then the same program until blocked.
    found = [
        f"the {t} are `{how.format('text')}`"
        for t, how in FROM_TEXT.items()
        if re.search(rf"\b{t}\b", things)
    ]
    return f" (with `text = f.read()`: {' and '.join(found)})" if found else ""


# The run a count finding names: "...; `python wordcount.py sample.txt` printed `15`, one
# number", or "...; sample.txt has 3 lines, ..., and `python wordcount.py sample.txt`
# printed `Lines: 3, Words: 3, ...`" (wordcount-7 on the CPU: read only the first way, the
# edit's step had no run after it, ended no step made, and was sent until the round limit).
_RAN = re.compile(r"(?:;|, and) `(python [^`]+)` printed")
_ONLY = re.compile(r"^the goal says `python \S+ (--[\w-]+) \w+` prints only the number of (\w+)")


# `verify.counts.off_counts`: "...; sample.txt has 3 lines and 10 words, and `python
# wordcount.py sample.txt` printed `3 3`: no number right for the words".
_WRONG = re.compile(r"; \S+ has (.+?), and `[^`]+` printed `([^`]*)`: no number right for (.+)$")


# A goal check of ruff that failed, and its summary (ruff's last line, `checkruns.judge`).
_RUFF_FAILED = re.compile(r"goal check `(ruff check\b[^`]*)` failed: (.*)", re.S)


def _sampled(
    state: State, due: ReplanDue, prompts: PromptSet, root: Path
) -> list[dict[str, Any]] | None:
    """For a verdict whose every finding names the goal's script, when the command lines
    the goal states for it ("python wordcount.py FILE") were never run with a file, a
    task of its own: each of those lines, after the write of a sample file to give it
    (`firststeps.sample_first`, as a first plan gets). The 1.5B's wordcount ran only
    `python wordcount.py` and `--lines`, each a usage error; its replan said "run python
    wordcount.py ARG", run as such until the round limit (the CPU)."""
    goal = state.goal.text if state.goal is not None else ""
    forms = unrun_forms(goal, state.ledger)
    if not forms or form_checks(goal, state.ledger):
        return None
    script = forms[0].split()[1]
    if not all(runproof.input_words(f) for f in forms) or not all(script in u for u in due.unmet):
        return None
    tasks = [{"description": f"run {forms[0]}", "subtasks": [f"run {f}" for f in forms]}]
    sample_first(tasks, partial(workspace_file, root), partial(_sample, prompts))
    tasks[0]["description"] = tasks[0]["subtasks"][0]
    return tasks


def _sample(prompts: PromptSet, path: str) -> str:
    return prompts.render("sample_write", path=path)


def _ruff_fixes(due: ReplanDue) -> list[dict[str, Any]] | None:
    """For a verdict whose only findings are goal checks of ruff that failed on problems
    ruff fixes itself, a task of its own: each fix, then each check again. Told that
    `ruff check .` failed on mathx/__init__.py's import order, with `ruff check --fix .`
    named, Qwen2.5-Coder-1.5B planned its test file anew and wrote 90 s of parameters
    that held no call (the CPU)."""
    found = [_RUFF_FAILED.match(item) for item in due.unmet]
    fixed = [ruffnotes.fix_command(f[1], f[2]) if f else "" for f in found]
    if not found or "" in fixed:
        return None
    fixes = [f"run {fix}" for fix in fixed]
    checks = [f"run {f[1]}" for f in found if f is not None]
    steps = [*dict.fromkeys(fixes), *dict.fromkeys(checks)]
    return [{"description": steps[0], "subtasks": steps}]


def _status_only(state: State, due: ReplanDue) -> bool:
    """Whether all a verdict found unmet is the exit status of the goal's script without
    arguments (`stated.mismatches`)."""
    said = status_said(state.goal.text if state.goal is not None else "")
    return bool(said) and all(item.startswith(said) for item in due.unmet)
