"""The Goal → Task → Subtask → Action tree as pydantic models, and the queries over it."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from localagent.state.ledger import Ledger

SCHEMA_VERSION = 3
RECENT_ACTIONS = 20
EXCHANGES_KEPT = 40
RECENT_LIMIT = 8
RESULT_CHARS = 6000  # the tools' own cap: one rule (head and tail) everywhere
CALL_CHARS = 1500  # longest argument string kept once a reply is no longer the latest
GUARD_WINDOW = 10
CLAIMS_KEPT = 20  # distinct failure claims the loop guard remembers
PAST_WINDOWS = 8  # windows of earlier subtasks kept, by subtask text


class _Model(BaseModel):
    # Built on first use, not at import: a command validates a few of these, often none.
    model_config = ConfigDict(defer_build=True)


Status = Literal["pending", "in_progress", "completed", "failed"]
GoalStatus = Literal["in_progress", "completed", "failed", "stopped"]


class Subtask(_Model):
    description: str
    status: Status = "pending"
    reason: str = ""  # why it was completed or failed, as the model or the guard said


class Task(_Model):
    description: str
    status: Status = "pending"
    subtasks: list[Subtask] = Field(default_factory=list)


class Goal(_Model):
    text: str
    status: GoalStatus = "in_progress"
    reason: str = ""
    tasks: list[Task] = Field(default_factory=list)


class Action(_Model):
    seq: int
    tool: str
    args: dict[str, Any]
    call: str | None = None  # the id of the tool call it answers
    # The environment marker its processes carry, to stop them after a crash (journals
    # from before markers recorded the process itself: pid and create time).
    marker: str | None = None
    pid: int | None = None
    create_time: float | None = None
    before: dict[str, str] | None = None  # an edit's paths when it started (policy "check")
    ok: bool | None = None
    result: str = ""
    returncode: int | None = None


class Exchange(_Model):
    """One round as the model saw it: its reply and what came back.

    Each tool call has an `id`; `settled` lists the ids that were run, blocked, refused
    or skipped, so the calls still owed are explicit (a crash can fall between them).
    Each settled call has exactly one entry of `results` naming it (`call`, `status`:
    done, blocked, refused, skipped, interrupted); entries without `call` are notes that
    answer no call.
    """

    round: int
    cursor: tuple[int, int] = (0, 0)  # task and subtask index when the model replied
    subtask: int = 0  # the serial number of that subtask (the ledger's), 0 in older states
    probe: dict[str, Any] = Field(default_factory=dict)  # the facts the model saw first
    content: str = ""
    tool_calls: list[dict[str, Any]] = Field(default_factory=list)
    results: list[dict[str, str]] = Field(default_factory=list)
    settled: list[str] = Field(default_factory=list)
    written: bool = False  # its calls were read from the reply's text, not the server's
    cut_off: str = ""  # why the reply was cut short (`length`, `deadline`, `loop`), or ""


class Tokens(_Model):
    prompt: int = 0
    completion: int = 0
    # The server's prompt cache, over the calls whose server said what it served from it:
    # their prompt tokens (`measured`) and those of them taken from the cache (`cached`).
    measured: int = 0
    cached: int = 0


class Attempt(_Model):
    """One attempted action as the loop guard sees it."""

    sig: str
    epoch: int
    obs: str = ""  # a checksum of the observation, once there is one


class Claim(_Model):
    """One failure claim as the loop guard remembers it, over all subtasks."""

    count: int = 0
    first: int = 0  # the serial number of the subtask it was first made in


class GuardState(_Model):
    """What the loop guard remembers: this subtask's recent attempts, with the workspace
    epoch each ran in (a change to the workspace starts a new epoch)."""

    epoch: int = 0
    window: list[Attempt] = Field(default_factory=list)
    insisted: int = 0
    # The window belongs to the subtask with this text; a replan that gives a subtask the
    # same text gets its window back (`past`), so a command that failed is not run anew
    # while nothing changed. Epochs still tell a changed workspace apart.
    subtask: str = ""
    past: dict[str, list[Attempt]] = Field(default_factory=dict)
    claims: dict[str, Claim] = Field(default_factory=dict)  # failure claims, by signature


class Waiting(_Model):
    """A model call waiting out a server that fails, until a call ends or the run does."""

    since: str  # the `ts` of the `waiting` record
    reason: str


class ReplanDue(_Model):
    """A revision of the plan owed after a failed subtask, or after a verdict that found
    the goal not achieved (`unmet` is then what is missing, and tasks are appended)."""

    task_index: int  # tasks after this one are replaced
    task: str
    subtask: str
    reason: str
    unmet: list[str] = Field(default_factory=list)


class Verifying(_Model):
    """The goal checks of a verification under way; `open` is the check a crash cut off."""

    checks: list[dict[str, Any]] = Field(default_factory=list)
    results: dict[str, dict[str, Any]] = Field(default_factory=dict)
    open: str | None = None


class Verdict(_Model):
    verdict: Literal["VERIFIED", "NOT_VERIFIED"]
    source: Literal["checks", "model"]
    unmet: list[str] = Field(default_factory=list)
    evidence: list[int] = Field(default_factory=list)
    then: Literal["complete", "replan", "fail"] = "complete"
    verification: str = ""  # what the goal's end will say: verified, partial, unverified, failed
    note: str = ""  # why it is not verified, said loudly at the end


class Unsettled(_Model):
    """The step snapshotted last whose `changes` are not journaled yet (a crash may have
    cut it short): its seq, tool, round, and the paths it may change (None: any)."""

    seq: int
    tool: str = ""
    round: int = 0
    scope: list[str] | None = None


class Rewinding(_Model):
    """A rewind under way (its `rewinding` record): [path, id now, id restored] each."""

    seq: int
    to: int
    files: list[list[Any]] = Field(default_factory=list)


class State(_Model):
    schema_version: int = SCHEMA_VERSION
    seq: int = 0
    history_offset: int = 0
    goal: Goal | None = None
    settings: dict[str, Any] = Field(default_factory=dict)  # the run's effective settings
    plan_due: bool = False
    replan_due: ReplanDue | None = None
    stopped_by: str = ""  # "user" or "system" while the goal is stopped
    suspended: str = ""  # why the last run ended waiting for the model server
    waiting: Waiting | None = None  # the model server failed; the run waits it out
    chars_per_token: float = 4.0  # learned from the server's prompt token counts
    fingerprint: str = ""  # of the workspace after the last action (a change is progress)
    call_format: str = ""  # how the model's latest tool calls arrived: native, or a text format
    task_index: int = 0
    subtask_index: int = 0
    rounds: int = 0
    tokens: Tokens = Field(default_factory=Tokens)
    llm_calls: int = 0
    replans: int = 0  # the model's replans after a failed subtask
    handbacks: int = 0  # plans made without the model: a run back to its file (`handback`)
    unresolved: int = 0  # failed subtasks not yet answered by a replan
    format_errors: int = 0
    blocked: list[str] = Field(default_factory=list)
    blocked_total: int = 0
    loops_total: int = 0
    open_action: Action | None = None
    # A write that ended its write subtask ({"path", "reason"}): its `subtask_completed` is owed
    completion_due: dict[str, str] | None = None
    recent_actions: list[Action] = Field(default_factory=list)
    exchanges: list[Exchange] = Field(default_factory=list)
    files_written: list[str] = Field(default_factory=list)
    commands: list[dict[str, Any]] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)
    guard: GuardState = Field(default_factory=GuardState)
    last_probe: dict[str, Any] = Field(default_factory=dict)
    ledger: Ledger = Field(default_factory=Ledger)  # evidence for completion claims
    verifying: Verifying | None = None
    verdict: Verdict | None = None  # on the current plan; a new plan clears it
    verify_replans: int = 0
    verification: str = ""  # at the end: verified, partial, unverified or failed
    stuck: str = ""  # why the goal cannot go on (the model repeats one failure claim)
    replanned: bool = False  # a revised plan the model has not been told of yet
    notice: str = ""  # what the latest round's reply earned a word about in the next round
    window_start: int = 0  # the round the prompt's window of exchanges starts after
    parameters: float | None = None  # the model's size in billions, when the server said
    unsettled: Unsettled | None = None  # a step whose workspace changes are still owed
    rewinding: Rewinding | None = None  # a rewind that a kill cut short; `rewind` ends it
    rewound: str = ""  # what a rewind undid, told to the model in its next round


# ---- queries over the tree -------------------------------------------------------


def current(state: State) -> tuple[Task, Subtask] | None:
    """The task and subtask being worked on, or None when the plan is done."""
    if state.goal is None or state.task_index >= len(state.goal.tasks):
        return None
    task = state.goal.tasks[state.task_index]
    if state.subtask_index >= len(task.subtasks):
        return None
    return task, task.subtasks[state.subtask_index]


def next_open_subtask(state: State) -> tuple[int, int] | None:
    """Indices of the first subtask still pending or in progress."""
    if state.goal is None:
        return None
    for ti, task in enumerate(state.goal.tasks):
        for si, sub in enumerate(task.subtasks):
            if sub.status in ("pending", "in_progress"):
                return ti, si
    return None


def counts(state: State) -> dict[str, int]:
    subs = [s for t in state.goal.tasks for s in t.subtasks] if state.goal else []
    return {
        "subtasks": len(subs),
        "completed": sum(s.status == "completed" for s in subs),
        "failed": sum(s.status == "failed" for s in subs),
    }
