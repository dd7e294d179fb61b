"""A subtask's end as the model claims it (SPEC §11): a "done" is accepted on the
journal's evidence alone, and a "cannot be done" needs an attempt in this subtask and a
reason that is more than an earlier subtask's news.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from localagent.loop import loopguard
from localagent.loop.actions import Actions
from localagent.state import current
from localagent.textcalls import given_arguments
from localagent.verify import claims, evidence

log = logging.getLogger("localagent.loop.agent")


@dataclasses.dataclass(frozen=True)
class Failed:
    """How a subtask fails: why, the signature of the model's failure claim when it made
    one (the loop guard counts them), and whether the goal cannot go on at all."""

    reason: str
    claim: str = ""
    stuck: bool = False


def complete(actions: Actions, name: str, args: dict[str, Any], call_id: str) -> Failed | None:
    """Run a control tool (`mark_subtask_complete`); how the subtask fails, if it does."""
    result = actions.tools.execute(actions.ctx, name, given_arguments(args))
    if result.verdict is None:
        actions.journal.append("feedback", text=result.text, tool=name, call=call_id)
        return None
    success, reason = result.verdict
    if success:
        refused = _claim(actions, reason, call_id)
        return None if refused is None else Failed(refused)
    return _failure(actions, name, args, reason, call_id)


def _failure(
    actions: Actions, name: str, args: dict[str, Any], reason: str, call_id: str
) -> Failed | None:
    """A "cannot be done" needs evidence too: an attempt in this subtask, and a reason
    that is more than an earlier subtask's news. One the model keeps making, whatever
    the subtask, is a loop that ends the goal."""
    if unchecked := _only_unchecked(actions, reason):
        log.info("failure claim only repeats the nudge, completed unverified: %s", reason[:200])
        actions.journal.append(
            "subtask_completed",
            reason="done, unchecked: " + "; ".join(unchecked),
            call=call_id,
            verified=False,
            unverified=unchecked,
        )
        return None
    sig = loopguard.claim_signature(reason)
    block = loopguard.check_claim(actions.state.guard, sig, actions.state.ledger.subtask)
    if block is not None:
        actions.blocked(name, args, call_id, block)
        why = actions.prompts.render("claim_loop", count=block.count, reason=reason[:200])
        return Failed(why, claim=sig, stuck=True)
    why = claims.refusal(actions.state, reason)
    if why is None:
        return Failed(reason, claim=sig)
    problem = actions.prompts.render("failure_untried" if why == "untried" else "failure_repeated")
    if (last := actions.strikes.refused(actions.state, problem)) is not None:
        return Failed(last, claim=sig)
    log.info("failure claim refused (%s): %s", why, reason[:200])
    actions.journal.append(
        "feedback", text=problem, tool=name, call=call_id, refused=True, claim=sig
    )
    return None


def _only_unchecked(actions: Actions, reason: str) -> list[str]:
    """The "not accepted yet" problems a failure claim only repeats, after that nudge:
    the 1.5B's hello, told that hello_world.py "was written but never run or read",
    answered success=false with those words, and the replan wrote the same file again.
    The work is done, unchecked, as a second "done" would have had it; the goal's own
    checks still run it."""
    ledger = actions.state.ledger
    here = current(actions.state)
    if not ledger.nudged or here is None:
        return []
    found = evidence.gate(ledger, actions.ctx.root, [here[1].description, reason])
    said = claims.words(reason)
    if found.hard or not any(claims.words(problem) in said for problem in found.soft):
        return []
    return found.soft


def _claim(actions: Actions, reason: str, call_id: str) -> str | None:
    """A "done" is accepted only on the journal's evidence (SPEC §11); refused too
    often, the subtask fails (the reason is returned)."""
    here = current(actions.state)
    assert here is not None
    found = evidence.gate(actions.state.ledger, actions.ctx.root, [here[1].description, reason])
    ledger = actions.state.ledger
    if found.hard:
        problems = "; ".join(found.hard)
        if (last := actions.strikes.refused(actions.state, problems)) is not None:
            return last
        log.info("completion refused: %s", "; ".join(found.hard))
        actions.journal.append(
            "feedback",
            text=actions.prompts.render("completion_refused", problems=problems),
            tool="mark_subtask_complete",
            call=call_id,
            refused=True,
            evidence=found.hard,
        )
    elif found.soft and not ledger.nudged:
        actions.journal.append(
            "feedback",
            text=actions.prompts.render("not_accepted_yet", problems="; ".join(found.soft)),
            tool="mark_subtask_complete",
            call=call_id,
            nudged=True,
            evidence=found.soft,
        )
    else:
        log.info("subtask completed%s: %s", "" if not found.soft else " (unverified)", reason)
        actions.journal.append(
            "subtask_completed",
            reason=reason,
            call=call_id,
            verified=not found.soft,
            unverified=found.soft,
        )
    return None
