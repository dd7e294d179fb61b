"""Whether the goal ends before the next round, and how: stopped, stuck, every subtask
done (as the verdict says), a subtask failed with no plan left, or the round limit."""

from __future__ import annotations

import logging

from localagent.prompts.promptset import PromptSet
from localagent.state import State, current
from localagent.state import due as owed
from localagent.system.exits import Ending, Outcome
from localagent.system.stopping import StopSignal

log = logging.getLogger("localagent.loop.agent")


def finished(state: State, stop: StopSignal, max_rounds: int, prompts: PromptSet) -> Outcome | None:
    """How the goal ends now, or None while there is work to do."""
    assert state.goal is not None
    if reason := stop.requested():
        return Outcome("stopped", reason, by=stop.by)
    if not isinstance(owed.next_due(state), owed.DueRound):
        return None
    if state.stuck:
        return _end("failed", state.stuck, "unverified")
    if current(state) is None:
        if state.unresolved:
            return _end("failed", _failures(state), "unverified")
        return _conclude(state)
    if state.rounds >= max_rounds:
        return _end("failed", prompts.render("max_rounds", limit=max_rounds), "unverified")
    return None


def _conclude(state: State) -> Outcome:
    """End a goal whose every subtask is done, as its verdict says."""
    found = state.verdict
    if found is None:  # verification is off
        return _end("completed", "every subtask is done", "unverified")
    if found.then == "fail":
        reason = f"the goal's checks still fail after {state.verify_replans} replans: "
        return _end("failed", reason + "; ".join(found.unmet), "failed")
    reason = "every subtask is done"
    if found.verification == "verified":
        reason += " and the goal is verified"
    elif found.unmet:
        reason += "; still unmet: " + "; ".join(found.unmet)
    if found.note:
        log.warning("%s", found.note)
        reason += "; " + found.note
    return _end("completed", reason, found.verification)


def _end(status: Ending, reason: str, verification: str) -> Outcome:
    log.info("goal %s (%s): %s", status, verification, reason)
    return Outcome(status, reason, verification=verification)


def _failures(state: State) -> str:
    assert state.goal is not None
    failed = [s for t in state.goal.tasks for s in t.subtasks if s.status == "failed"]
    last = failed[-1]
    more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
    return f"subtask '{last.description}' failed: {last.reason}{more}"
