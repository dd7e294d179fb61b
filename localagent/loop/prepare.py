"""The prepare step of a run: what it does with the goal the workspace's journal holds.

The same goal, unfinished, is resumed; a different goal (or any goal after the previous
one ended) puts the previous one away in the archive. An unfinished goal is never put
away for another without the user's word (`start --new`): the refusal names both ways
forward. A question (`ask`, in its own journal) puts an unfinished earlier question away
and says so: research only reads, so nothing is lost but tokens.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

from localagent.journal import CONTEXT_DIR, QUESTIONS_DIR, Journal
from localagent.loop.lifecycle import Outcome, say
from localagent.state import State
from localagent.system.errors import UsageError
from localagent.system.names import display

log = logging.getLogger("localagent")
UNFINISHED = ("in_progress", "stopped")


def resume_mode(journal: Journal, state: State) -> str:
    """ "resume", or the final status of a goal that is over; nothing at all is bad usage."""
    if state.goal is None:
        where = display(journal.workspace)
        raise UsageError(
            f'nothing to resume in {where}; start a goal with: localagent start "GOAL" -w {where}'
        )
    if state.goal.status in ("completed", "failed"):
        return state.goal.status
    return "resume"


def prepare(
    journal: Journal,
    goal: str | None,
    repair: bool = False,
    archiving: Callable[[], AbstractContextManager[None]] = contextlib.nullcontext,
    adopt: bool = False,
    new: bool = False,
) -> str:
    """Load or create the goal; returns "new", "resume", or the final status if it is over.

    A goal to resume from a journal another agent wrote is refused (ForeignJournal, with
    what it would run) unless `adopt`; an unfinished goal is never put away for another
    one unless `new` (see `mode_of`). A new goal moves the previous one's files to the
    archive, inside `archiving()`: the caller closes what it holds open among them (the
    log) and opens it anew after."""
    state = journal.load(accept_loss=repair) if repair else journal.load()
    mode = mode_of(journal, state, goal, new)
    if mode == "resume" and adopt:
        journal.adopt()
    elif mode == "resume":
        journal.refuse_foreign()
    if mode != "new":
        return mode
    held = state.goal
    if journal.exists():
        with archiving():
            target = journal.archive()
        if target is not None:
            log.info("archived the previous goal to %s", display(target))
        if target is not None and held is not None and held.status in UNFINISHED:
            say(_put_away(journal, held.text, target))
    return "new"


def mode_of(journal: Journal, state: State, goal: str | None, new: bool = False) -> str:
    """What a run of `goal` (None: resume) does with the loaded state: "resume", "new",
    or the final status of the goal that is over.

    A different goal (or any goal with `new`) puts the journal's goal away. An unfinished
    goal is refused that way unless `new` (UsageError naming both ways forward); an
    unfinished question is put away for a new one, and said."""
    if goal is None:
        return resume_mode(journal, state)
    held = state.goal
    if held is None or held.status not in UNFINISHED or new:
        return "new"
    if held.text == goal:
        return "resume"
    if journal.part == QUESTIONS_DIR:
        return "new"
    where = display(journal.workspace)
    raise UsageError(
        f"the workspace {where} holds an unfinished goal ({held.status}): "
        f"{_cut(held.text)!r}; resume it with: localagent resume -w {where}, or run "
        f"this start again with --new to put it away (in {CONTEXT_DIR}/archive/) and begin "
        f"the new goal"
    )


def _put_away(journal: Journal, text: str, target: Path) -> str:
    if journal.part == QUESTIONS_DIR:
        return f"the unfinished question {_cut(text)!r} was put away in {display(target)}"
    return (
        f"the unfinished goal {_cut(text)!r} was put away in {display(target)}; see it "
        f"with: localagent history --archive 1 -w {display(journal.workspace)}"
    )


def _cut(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def over(state: State) -> Outcome:
    """The outcome of a goal that already ended (journaled then, not again now)."""
    assert state.goal is not None
    reason = state.goal.reason
    if state.goal.status == "failed":
        said = (
            f"the goal already failed ({reason}); to try again, run localagent start "
            f"with the same goal"
        )
        return Outcome("failed", reason, verification=state.verification, said=said)
    log.info("the goal is already completed; nothing to resume")
    return Outcome("completed", reason, verification=state.verification)
