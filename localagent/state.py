"""The Goal → Task → Subtask → Action tree and the reducer that builds it from records.

Every change of state is a history record; `apply` folds one record into the state.
The snapshot (`state.json`) is this model, so replaying the history from the snapshot's
`seq` onwards yields exactly the state a live run had.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

SCHEMA_VERSION = 1
RECENT_ACTIONS = 20
EXCHANGES_KEPT = 40
RECENT_LIMIT = 8
RESULT_CHARS = 4000
CALL_CHARS = 1500  # longest argument string kept once a reply is no longer the latest

Status = Literal["pending", "in_progress", "completed", "failed"]
GoalStatus = Literal["in_progress", "completed", "failed", "stopped"]


class Subtask(BaseModel):
    description: str
    status: Status = "pending"
    reason: str = ""  # why it was completed or failed, as the model or the guard said


class Task(BaseModel):
    description: str
    status: Status = "pending"
    subtasks: list[Subtask] = Field(default_factory=list)


class Goal(BaseModel):
    text: str
    status: GoalStatus = "in_progress"
    reason: str = ""
    tasks: list[Task] = Field(default_factory=list)


class Action(BaseModel):
    seq: int
    tool: str
    args: dict[str, Any]
    ok: bool | None = None
    result: str = ""
    returncode: int | None = None


class Exchange(BaseModel):
    """One round as the model saw it: its reply and what came back."""

    round: int
    cursor: tuple[int, int] = (0, 0)  # task and subtask index when the model replied
    probe: dict[str, Any] = Field(default_factory=dict)  # the facts the model saw first
    content: str = ""
    tool_calls: list[dict[str, Any]] = Field(default_factory=list)
    results: list[dict[str, str]] = Field(default_factory=list)


class Tokens(BaseModel):
    prompt: int = 0
    completion: int = 0


class GuardState(BaseModel):
    """What the loop guard remembers: recent signatures, each with the workspace epoch."""

    epoch: int = 0
    window: list[tuple[str, int]] = Field(default_factory=list)
    insisted: int = 0


class State(BaseModel):
    schema_version: int = SCHEMA_VERSION
    seq: int = 0
    history_offset: int = 0
    goal: Goal | None = None
    task_index: int = 0
    subtask_index: int = 0
    rounds: int = 0
    tokens: Tokens = Field(default_factory=Tokens)
    llm_calls: int = 0
    replans: int = 0
    unresolved: int = 0  # failed subtasks not yet answered by a replan
    format_errors: int = 0
    blocked: list[str] = Field(default_factory=list)
    blocked_total: int = 0
    loops_total: int = 0
    open_action: Action | None = None
    recent_actions: list[Action] = Field(default_factory=list)
    exchanges: list[Exchange] = Field(default_factory=list)
    files_written: list[str] = Field(default_factory=list)
    commands: list[dict[str, Any]] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)
    guard: GuardState = Field(default_factory=GuardState)
    last_probe: dict[str, Any] = Field(default_factory=dict)


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


def pending_calls(state: State) -> list[dict[str, Any]]:
    """Tool calls of the last reply not yet executed (a crash can fall between them)."""
    if not state.exchanges:
        return []
    last = state.exchanges[-1]
    if last.cursor != (state.task_index, state.subtask_index) or last.round != state.rounds:
        return []
    return last.tool_calls[len(last.results) :]


def counts(state: State) -> dict[str, int]:
    subs = [s for t in state.goal.tasks for s in t.subtasks] if state.goal else []
    return {
        "subtasks": len(subs),
        "completed": sum(s.status == "completed" for s in subs),
        "failed": sum(s.status == "failed" for s in subs),
    }


def _advance(state: State) -> None:
    """Move the cursor to the next open subtask and keep task statuses in step."""
    assert state.goal is not None
    for task in state.goal.tasks:
        if task.subtasks and all(s.status in ("completed", "failed") for s in task.subtasks):
            done = all(s.status == "completed" for s in task.subtasks)
            task.status = "completed" if done else "failed"
    nxt = next_open_subtask(state)
    if nxt is None:
        state.task_index = len(state.goal.tasks)
        state.subtask_index = 0
        return
    state.task_index, state.subtask_index = nxt
    task = state.goal.tasks[state.task_index]
    task.status = "in_progress"
    task.subtasks[state.subtask_index].status = "in_progress"
    state.guard.insisted = 0
    state.format_errors = 0


def _finish_subtask(state: State, rec: dict[str, Any], status: Status) -> None:
    here = current(state)
    if here is not None:
        here[1].status = status
        here[1].reason = str(rec.get("reason", ""))[:300]
    if status == "failed":
        state.unresolved += 1
    _result(state, "mark_subtask_complete", f"subtask {status}: {rec.get('reason', '')}")
    _advance(state)


def clip(args: dict[str, Any], limit: int) -> dict[str, Any]:
    """Arguments with long strings (file contents) shortened, to keep the snapshot small."""
    return {
        k: v[:limit] + f"…[{len(v) - limit} more chars]"
        if isinstance(v, str) and len(v) > limit
        else v
        for k, v in args.items()
    }


def _push(items: list[Any], item: Any, limit: int) -> None:
    items.append(item)
    del items[:-limit]


# ---- the reducer -----------------------------------------------------------------


def _goal_started(state: State, rec: dict[str, Any]) -> None:
    fresh = State(seq=state.seq, history_offset=state.history_offset)
    fresh.goal = Goal(text=rec["goal"])
    for name in State.model_fields:
        setattr(state, name, getattr(fresh, name))


def _plan(state: State, rec: dict[str, Any]) -> None:
    assert state.goal is not None
    keep = state.goal.tasks[: rec.get("replace_from", 0)]
    for task in keep:  # a replan supersedes what was still pending before it
        task.subtasks = [s for s in task.subtasks if s.status != "pending"]
    new = [
        Task(description=t["description"], subtasks=[Subtask(description=s) for s in t["subtasks"]])
        for t in rec["tasks"]
    ]
    state.goal.tasks = keep + new
    if rec.get("replace_from", 0):
        state.replans += 1
        state.unresolved = 0
    _advance(state)


def _action_started(state: State, rec: dict[str, Any]) -> None:
    state.open_action = Action(seq=rec["seq"], tool=rec["tool"], args=rec["args"])
    state.format_errors = 0
    state.guard.window.append((rec["signature"], state.guard.epoch))
    del state.guard.window[:-10]


def _action_finished(state: State, rec: dict[str, Any]) -> None:
    action = Action(
        seq=rec["seq"],
        tool=rec["tool"],
        args=clip(rec["args"], 300),
        ok=rec["ok"],
        result=rec["result"][:RESULT_CHARS],
        returncode=rec.get("returncode"),
    )
    state.open_action = None
    _push(state.recent_actions, action, RECENT_ACTIONS)
    _result(state, rec["tool"], rec["result"])
    if rec.get("changed"):
        state.guard.epoch += 1
        path = str(rec["args"].get("path", ""))
        if path in state.files_written:
            state.files_written.remove(path)
        _push(state.files_written, path, RECENT_LIMIT * 4)
    if rec["tool"] == "run_cmd":
        cmd = {"cmd": str(rec["args"].get("cmd", "")), "returncode": rec.get("returncode")}
        _push(state.commands, cmd, RECENT_LIMIT)
    if not rec["ok"]:
        _push(state.errors, f"{rec['tool']}: {rec['result'][:300]}", 3)


def _result(state: State, tool: str, text: str) -> None:
    if state.exchanges:
        state.exchanges[-1].results.append({"tool": tool, "content": text[:RESULT_CHARS]})


def _action_blocked(state: State, rec: dict[str, Any]) -> None:
    sig = rec["signature"]
    if sig not in state.blocked:
        _push(state.blocked, sig, 50)
    state.blocked_total += 1
    state.guard.insisted += 1
    _result(state, rec["tool"], rec["reason"])


def _llm_call(state: State, rec: dict[str, Any]) -> None:
    state.tokens.prompt += rec.get("prompt_tokens", 0)
    state.tokens.completion += rec.get("completion_tokens", 0)
    state.llm_calls += 1
    if rec.get("purpose") == "round":
        state.rounds += 1
        state.last_probe = rec.get("probe", {})
        if state.exchanges:  # only the latest reply may still have calls to run in full
            last = state.exchanges[-1]
            last.tool_calls = [
                {**c, "arguments": clip(c["arguments"], CALL_CHARS)} for c in last.tool_calls
            ]
        exchange = Exchange(
            round=state.rounds,
            cursor=(state.task_index, state.subtask_index),
            probe=state.last_probe,
            content=rec.get("content", ""),
            tool_calls=rec.get("tool_calls", []),
        )
        _push(state.exchanges, exchange, EXCHANGES_KEPT)


def _feedback(state: State, rec: dict[str, Any]) -> None:
    if rec.get("format_error"):
        state.format_errors += 1
    _result(state, rec.get("tool", ""), rec["text"])


def _loop_detected(state: State, rec: dict[str, Any]) -> None:
    state.loops_total += 1


def _set_goal(status: GoalStatus) -> Any:
    def apply_status(state: State, rec: dict[str, Any]) -> None:
        if state.goal is not None:
            state.goal.status = status
            state.goal.reason = rec.get("reason", "")

    return apply_status


def _interrupted(state: State, rec: dict[str, Any]) -> None:
    if state.open_action is not None and state.guard.window:
        # An attempt that never finished gave no result: it is not a repeat to count.
        state.guard.window.pop()
    state.open_action = None
    _result(state, rec["tool"], rec["text"])


REDUCERS = {
    "goal_started": _goal_started,
    "plan": _plan,
    "action_started": _action_started,
    "action_finished": _action_finished,
    "action_blocked": _action_blocked,
    "action_interrupted": _interrupted,
    "subtask_completed": lambda state, rec: _finish_subtask(state, rec, "completed"),
    "subtask_failed": lambda state, rec: _finish_subtask(state, rec, "failed"),
    "llm_call": _llm_call,
    "feedback": _feedback,
    "loop_detected": _loop_detected,
    "resumed": _set_goal("in_progress"),
    "stopped": _set_goal("stopped"),
    "goal_completed": _set_goal("completed"),
    "goal_failed": _set_goal("failed"),
}


def apply(state: State, rec: dict[str, Any]) -> None:
    """Fold one history record into the state. Unknown types only advance `seq`."""
    reducer = REDUCERS.get(rec["type"])
    if reducer is not None and (state.goal is not None or rec["type"] == "goal_started"):
        reducer(state, rec)
    state.seq = rec["seq"]


# Append-only: MIGRATIONS[n] turns a schema-n snapshot dict into schema n+1.
MIGRATIONS: list[Any] = [lambda data: data]


def migrate(data: Any) -> dict[str, Any]:
    """A snapshot brought to the current schema; ValueError if it is not one at all."""
    if not isinstance(data, dict):
        raise ValueError(f"a snapshot is a JSON object, not {type(data).__name__}")
    version = data.get("schema_version", 0)
    if isinstance(version, bool) or not isinstance(version, int) or version < 0:
        raise ValueError(f"schema_version {version!r} is not a version number")
    if version > SCHEMA_VERSION:
        raise ValueError(
            f"schema_version {version} is newer than this localagent understands ({SCHEMA_VERSION})"
        )
    for step in MIGRATIONS[version:SCHEMA_VERSION]:
        data = step(data)
    data["schema_version"] = SCHEMA_VERSION
    return data
