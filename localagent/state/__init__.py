"""The run's state: the Goal → Task → Subtask → Action tree, built from history records.

`model` holds the pydantic models and the queries over them, `reduce` the reducer
(`apply` folds one record into the state; `rounds` holds what a round does), and
`migrations` brings older snapshots to the current schema.
"""

from localagent.state.migrations import MIGRATIONS, migrate
from localagent.state.model import (
    CALL_CHARS,
    EXCHANGES_KEPT,
    GUARD_WINDOW,
    RECENT_ACTIONS,
    RECENT_LIMIT,
    RESULT_CHARS,
    SCHEMA_VERSION,
    Action,
    Attempt,
    Exchange,
    Goal,
    GoalStatus,
    GuardState,
    ReplanDue,
    State,
    Status,
    Subtask,
    Task,
    Tokens,
    Verdict,
    Verifying,
    counts,
    current,
    next_due,
    next_open_subtask,
    pending_calls,
    verification_due,
)
from localagent.state.reduce import REDUCERS, Reducer, apply

__all__ = [
    "CALL_CHARS",
    "EXCHANGES_KEPT",
    "GUARD_WINDOW",
    "MIGRATIONS",
    "RECENT_ACTIONS",
    "RECENT_LIMIT",
    "REDUCERS",
    "RESULT_CHARS",
    "SCHEMA_VERSION",
    "Action",
    "Attempt",
    "Exchange",
    "Goal",
    "GoalStatus",
    "GuardState",
    "Reducer",
    "ReplanDue",
    "State",
    "Status",
    "Subtask",
    "Task",
    "Tokens",
    "Verdict",
    "Verifying",
    "apply",
    "counts",
    "current",
    "migrate",
    "next_due",
    "next_open_subtask",
    "pending_calls",
    "verification_due",
]
