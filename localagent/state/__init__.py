"""The run's state: the Goal → Task → Subtask → Action tree, built from history records.

`model` holds the pydantic models and the queries over them, `due` the owed work the
loop does next (`next_due`), `reduce` the reducer
(`apply` folds one record into the state; `rounds` holds what a round does), `records`
the shape of each record type, `ledger` the evidence ledger (what was written, read and
checked), and `migrations` brings older snapshots to the current schema.
"""

from localagent.state.due import (
    Due,
    DueCall,
    DuePlan,
    DueRecovery,
    DueReplan,
    DueRound,
    DueVerify,
    next_due,
    pending_calls,
    verification_due,
)
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
    Claim,
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
    Waiting,
    counts,
    current,
    next_open_subtask,
)
from localagent.state.records import MalformedRecord, check
from localagent.state.reduce import REDUCERS, Reducer, apply, fold

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
    "Claim",
    "Due",
    "DueCall",
    "DuePlan",
    "DueRecovery",
    "DueReplan",
    "DueRound",
    "DueVerify",
    "Exchange",
    "Goal",
    "GoalStatus",
    "GuardState",
    "MalformedRecord",
    "Reducer",
    "ReplanDue",
    "State",
    "Status",
    "Subtask",
    "Task",
    "Tokens",
    "Verdict",
    "Verifying",
    "Waiting",
    "apply",
    "check",
    "counts",
    "current",
    "fold",
    "migrate",
    "next_due",
    "next_open_subtask",
    "pending_calls",
    "verification_due",
]
