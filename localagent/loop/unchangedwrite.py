"""An unchanged rewrite of a file whose latest run failed for a reason in it, or that a
hand-back asks to open the file it is given and whose code opens none, ends no write step
(small profile): written again unchanged, it would fail the same way. The write's result
says why (`unchanged_note`)."""

from __future__ import annotations

from pathlib import Path

from localagent.loop.subtasks import written_file
from localagent.prompts.promptset import PromptSet
from localagent.state import State, current
from localagent.state.checkruns import command_words, norm
from localagent.tools import pyscript
from localagent.tools.loaderror import file_as_text
from localagent.tools.pkgimports import text_of
from localagent.tools.runproof import NEVER_OPENS


def stopped(state: State, path: str, root: Path, prompts: PromptSet) -> str:
    """Why the file `path` written again unchanged would fail again ("" for no reason):
    its latest run, with nothing changed since, "stopped on ERROR" (an error in it),
    "showed that its code never opens FILE ..." or "printed `OUTPUT`, not what the goal
    states"; or, in the hand-back's step that asks it to open the file it is given, "its
    code still opens no file". The 1.5B's wordcount read stdin; a replan gave back that
    step, and the same content written again ended it, twice (the CPU)."""
    here = current(state)
    if here is not None and here[1].description.startswith(
        prompts.render("handback_open", script=path)
    ):
        script = pyscript.parse(text_of(root, path) or "")
        if script is not None and not script.opens:
            return "its code still opens no file"
    runs = [
        c
        for c in state.ledger.checks.values()
        if c.epoch == state.guard.epoch and (c.broken.startswith(path + ": ") or _runs(c.cmd, path))
    ]
    last = max(runs, key=lambda c: c.seq, default=None)
    if last is None:
        return ""
    if last.passed is False and last.broken.startswith(path + ": "):
        return f"its last run stopped on {last.broken.partition(': ')[2]}"
    if last.passed is None and last.summary.startswith(f"inconclusive: {NEVER_OPENS} "):
        return "its last run showed that " + last.summary.removeprefix("inconclusive: ")
    if last.passed is False and last.kind == "script" and last.summary.startswith("exit code 0"):
        shown = last.summary.partition(": ")[2]
        return f"its last run printed `{shown}`, not what the goal states" if shown else ""
    return ""


def same_file(path: str, target: str) -> bool:
    """Whether a path a call reports is the file a step names (by its path, or its end)."""
    return path == target or path.endswith("/" + target)


def _runs(cmd: str, path: str) -> bool:
    """Whether `cmd` runs the script `path` with python."""
    words = command_words(cmd)
    return len(words) > 1 and words[0].startswith("python") and norm(words[1]) == path


def unchanged_note(
    state: State, root: Path, facts: dict[str, list[str]], prompts: PromptSet
) -> str:
    """What a write step's unchanged rewrite of its file adds when the file's latest run
    failed for a reason in it (the step goes on): the 1.5B's wordcount step "write_file
    wordcount.py with its code" ended with the same content twice after its run raised
    AttributeError, and the run raised it again each time (the CPU)."""
    here = current(state)
    target = written_file(here[1].description) if here is not None else ""
    unchanged = map(norm, facts.get("unchanged", []))
    if not target or not any(same_file(p, target) for p in unchanged):
        return ""
    if not (what := stopped(state, target, root, prompts)):
        return ""
    if said := file_as_text(what):
        what = f"{what} ({said})"
    return prompts.render("unchanged_stopped", path=target, what=what)
