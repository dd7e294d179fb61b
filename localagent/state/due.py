"""The owed work: what the loop does next, named by the state alone (a typed value per
kind of work, so the loop matches on it and nothing is passed untyped)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from localagent.state.model import Action, ReplanDue, State, Verifying, current


def pending_calls(state: State) -> list[dict[str, Any]]:
    """Tool calls of the latest reply not yet settled (a crash can fall between them)."""
    if not state.exchanges or state.exchanges[-1].round != state.rounds:
        return []
    last = state.exchanges[-1]
    return [c for c in last.tool_calls if c.get("id") not in last.settled]


@dataclass(frozen=True)
class DuePlan:
    """The goal has no plan yet."""


@dataclass(frozen=True)
class DueReplan:
    due: ReplanDue


@dataclass(frozen=True)
class DueRecovery:
    """An action a crash interrupted, to settle before anything else."""

    action: Action


@dataclass(frozen=True)
class DueCompletion:
    """A write or a run ended its subtask: the subtask's completion is owed."""

    owed: dict[str, str]


@dataclass(frozen=True)
class DueCall:
    """A tool call of the latest reply not yet settled."""

    call: dict[str, Any]


@dataclass(frozen=True)
class DueVerify:
    """Every subtask is done: verify the goal (`under_way` once it has begun)."""

    under_way: Verifying | None


@dataclass(frozen=True)
class DueRound:
    """Nothing is owed: the next round asks the model."""


Due = DuePlan | DueReplan | DueRecovery | DueCompletion | DueCall | DueVerify | DueRound


def next_due(state: State) -> Due:
    """The next piece of owed work, in the order the loop does it."""
    if state.goal is not None and (state.plan_due or not state.goal.tasks):
        return DuePlan()
    if state.replan_due is not None:
        return DueReplan(state.replan_due)
    if state.open_action is not None:
        return DueRecovery(state.open_action)
    if state.completion_due is not None:
        return DueCompletion(state.completion_due)
    calls = pending_calls(state)
    if calls:
        return DueCall(calls[0])
    if verification_due(state):
        return DueVerify(state.verifying)
    return DueRound()


def verification_due(state: State) -> bool:
    """Whether the goal is to be verified now: every subtask done, no verdict yet."""
    goal = state.goal
    return (
        goal is not None
        and goal.status not in ("completed", "failed")
        and bool(goal.tasks)
        and current(state) is None
        and state.unresolved == 0
        and state.verdict is None
        and state.settings.get("verify", True) is not False
    )
