"""The "three strikes" rule: when repeated mistakes of the model fail the subtask.

Three kinds count (the state counts them from the journal): actions the loop guard keeps
blocking, claims ("done" or "cannot be done") refused for want of evidence, and replies in
a row without a usable tool call. Here alone is decided how many are too many, and why
the subtask then fails.
"""

from __future__ import annotations

import dataclasses

from localagent.prompts.texts import INSISTED, REFUSED_TOO_OFTEN, TOO_MANY_FORMAT_ERRORS, render
from localagent.state import State


@dataclasses.dataclass(frozen=True)
class Strikes:
    max_blocked: int  # blocked actions the model insists on; refused claims
    max_format_errors: int  # replies in a row without a usable tool call

    def insisted(self, state: State) -> str | None:
        """Why the subtask fails after the latest blocked action, if it does."""
        count = state.guard.insisted
        return render(INSISTED, count=count) if count >= self.max_blocked else None

    def format_errors(self, state: State) -> str | None:
        """Why the subtask fails after the latest reply without a usable call, if it does."""
        count = state.format_errors
        if count < self.max_format_errors:
            return None
        return render(TOO_MANY_FORMAT_ERRORS, count=count)

    def refused(self, state: State, problems: str) -> str | None:
        """Why the subtask fails if the claim about to be refused is the last strike (it is
        then not journaled as refused: the subtask fails instead)."""
        count = state.ledger.refused + 1
        if count < self.max_blocked:
            return None
        return render(REFUSED_TOO_OFTEN, count=count, problems=problems)
