"""The "three strikes" rule: when repeated mistakes of the model fail the subtask.

Three kinds count (the state counts them from the journal): actions the loop guard keeps
blocking, claims ("done" or "cannot be done") refused for want of evidence, and replies in
a row without a usable tool call. Here alone is decided how many are too many, and why
the subtask then fails, in the words of the run's prompt set.
"""

from __future__ import annotations

import dataclasses

from localagent.prompts.promptset import PromptSet
from localagent.state import State


@dataclasses.dataclass(frozen=True)
class Strikes:
    prompts: PromptSet
    max_blocked: int  # blocked actions the model insists on; refused claims
    max_format_errors: int  # replies in a row without a usable tool call

    def insisted(self, state: State) -> str | None:
        """Why the subtask fails after the latest blocked action, if it does."""
        count = state.guard.insisted
        return self.prompts.render("insisted", count=count) if count >= self.max_blocked else None

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
