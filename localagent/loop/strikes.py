"""The "three strikes" rule: when repeated mistakes of the model fail the subtask.

Three kinds count (the state counts them from the journal): actions the loop guard keeps
blocking, claims ("done" or "cannot be done") refused for want of evidence, and replies in
a row without a usable tool call. Here alone is decided how many are too many, and why
the subtask then fails, in the words of the run's prompt set.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import orjson

from localagent.loop.rundone import failed_run
from localagent.prompts.promptset import PromptSet
from localagent.state import State
from localagent.system.textcap import first_line

LAST_CHARS = 160  # of the blocked call, and of what its latest run said


@dataclasses.dataclass(frozen=True)
class Strikes:
    prompts: PromptSet
    max_blocked: int  # blocked actions the model insists on; refused claims
    max_format_errors: int  # replies in a row without a usable tool call

    def insisted(
        self, state: State, name: str = "", args: Any = None, note: str = ""
    ) -> str | None:
        """Why the subtask fails after the latest blocked action (`name` with `args`, told
        `note`), if it does: with the action and the latest error, so the replan knows
        what failed. Qwen2.5-Coder-1.5B's mathx runs: told only that actions repeated,
        the replan planned every file again and never `ruff check`, which the blocked
        `ruff tests/test_mathx.py` had been told to run."""
        count = state.guard.insisted
        if count < self.max_blocked:
            return None
        said = note.removeprefix("NOTE: ") or _ran(state, name, args)
        said = said or (state.errors[-1] if state.errors else "")
        last = f" The last: {first_line(_action(name, args), LAST_CHARS)}" if name else ""
        last += f"; it gave: {first_line(said, LAST_CHARS)}" if name and said else ""
        return self.prompts.render("insisted", count=count, last=last + "." if last else "")

    def format_errors(self, state: State) -> str | None:
        """Why the subtask fails after the latest reply without a usable call, if it does."""
        count = state.format_errors
        if count < self.max_format_errors:
            return None
        return self.prompts.render("too_many_format_errors", count=count)

    def refused(self, state: State, problems: str) -> str | None:
        """Why the subtask fails if the claim about to be refused is the last strike (it is
        then not journaled as refused: the subtask fails instead)."""
        count = state.ledger.refused + 1
        if count < self.max_blocked:
            return None
        return self.prompts.render("refused_too_often", count=count, problems=problems)


def _action(name: str, args: Any) -> str:
    """A blocked call as the replan reads it: a command as itself, else name and arguments."""
    if isinstance(args, dict) and name == "run_cmd" and isinstance(args.get("cmd"), str):
        return f"`{args['cmd']}`"
    return f"{name} {orjson.dumps(args).decode(errors='replace')}" if args else name


def _ran(state: State, name: str, args: Any) -> str:
    """What the ledger says of a blocked command's failed latest run: the file it could not
    load, else its summary (the latest error is only "run_cmd: exit code 2" for pytest)."""
    run = failed_run(state, name, args)
    return "" if run is None else run.broken or run.summary
