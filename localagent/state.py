"""The Goal → Task → Subtask → Action tree and the reducer that builds it from records.

Every change of state is a history record; `apply` folds one record into the state.
The snapshot (`state.json`) is this model, so replaying the history from the snapshot's
`seq` onwards yields exactly the state a live run had.
"""

from __future__ import annotations

import zlib
from typing import Any, Literal

from pydantic import BaseModel, Field

from localagent.textcap import cap_text, clip
from localagent.verify.ledger import Ledger, new_subtask, note_action, recorded_facts

SCHEMA_VERSION = 2
RECENT_ACTIONS = 20
EXCHANGES_KEPT = 40
RECENT_LIMIT = 8
RESULT_CHARS = 6000  # the tools' own cap: one rule (head and tail) everywhere
CALL_CHARS = 1500  # longest argument string kept once a reply is no longer the latest
GUARD_WINDOW = 10

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
    call: str | None = None  # the id of the tool call it answers
    pid: int | None = None  # a command's process, to stop it after a crash
    create_time: float | None = None
    before: dict[str, str] | None = None  # an edit's paths when it started (policy "check")
    ok: bool | None = None
    result: str = ""
    returncode: int | None = None


class Exchange(BaseModel):
    """One round as the model saw it: its reply and what came back.

    Each tool call has an `id`; `settled` lists the ids that were run, blocked, refused
    or skipped, so the calls still owed are explicit (a crash can fall between them).
    """

    round: int
    cursor: tuple[int, int] = (0, 0)  # task and subtask index when the model replied
    probe: dict[str, Any] = Field(default_factory=dict)  # the facts the model saw first
    content: str = ""
    tool_calls: list[dict[str, Any]] = Field(default_factory=list)
    results: list[dict[str, str]] = Field(default_factory=list)
    settled: list[str] = Field(default_factory=list)


class Tokens(BaseModel):
    prompt: int = 0
    completion: int = 0


class Attempt(BaseModel):
    """One attempted action as the loop guard sees it."""

    sig: str
    epoch: int
    obs: str = ""  # a checksum of the observation, once there is one


class GuardState(BaseModel):
    """What the loop guard remembers: this subtask's recent attempts, with the workspace
    epoch each ran in (a change to the workspace starts a new epoch)."""

    epoch: int = 0
    window: list[Attempt] = Field(default_factory=list)
    insisted: int = 0


class ReplanDue(BaseModel):
    """A revision of the plan owed after a failed subtask, or after a verdict that found
    the goal not achieved (`unmet` is then what is missing, and tasks are appended)."""

    task_index: int  # tasks after this one are replaced
    task: str
    subtask: str
    reason: str
    unmet: list[str] = Field(default_factory=list)


class Verifying(BaseModel):
    """The goal checks of a verification under way; `open` is the check a crash cut off."""

    checks: list[dict[str, Any]] = Field(default_factory=list)
    results: dict[str, dict[str, Any]] = Field(default_factory=dict)
    open: str | None = None


class Verdict(BaseModel):
    verdict: Literal["VERIFIED", "NOT_VERIFIED"]
    source: Literal["checks", "model"]
    unmet: list[str] = Field(default_factory=list)
    evidence: list[int] = Field(default_factory=list)
    then: Literal["complete", "replan", "fail"] = "complete"
    verification: str = ""  # what the goal's end will say: verified, partial, unverified, failed


class State(BaseModel):
    schema_version: int = SCHEMA_VERSION
    seq: int = 0
    history_offset: int = 0
    goal: Goal | None = None
    settings: dict[str, Any] = Field(default_factory=dict)  # the run's effective settings
    plan_due: bool = False
    replan_due: ReplanDue | None = None
    stopped_by: str = ""  # "user" or "system" while the goal is stopped
    suspended: str = ""  # why the last run ended waiting for the model server
    chars_per_token: float = 4.0  # learned from the server's prompt token counts
    fingerprint: str = ""  # of the workspace after the last action (a change is progress)
    call_format: str = ""  # how the model's latest tool calls arrived: native, or a text format
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
    ledger: Ledger = Field(default_factory=Ledger)  # evidence for completion claims
    verifying: Verifying | None = None
    verdict: Verdict | None = None  # on the current plan; a new plan clears it
    verify_replans: int = 0
    verification: str = ""  # at the end: verified, partial, unverified or failed


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
    """Tool calls of the latest reply not yet settled (a crash can fall between them)."""
    if not state.exchanges or state.exchanges[-1].round != state.rounds:
        return []
    last = state.exchanges[-1]
    return [c for c in last.tool_calls if c.get("id") not in last.settled]


def next_due(state: State) -> tuple[str, Any]:
    """The next piece of owed work, in the order the loop does it.

    ("plan", None), ("replan", ReplanDue), ("recover", Action) for an action a crash
    interrupted, ("call", call) for a tool call of the latest reply, ("verify",
    Verifying | None) once every subtask is done, or ("round", None).
    """
    if state.goal is not None and (state.plan_due or not state.goal.tasks):
        return "plan", None
    if state.replan_due is not None:
        return "replan", state.replan_due
    if state.open_action is not None:
        return "recover", state.open_action
    calls = pending_calls(state)
    if calls:
        return "call", calls[0]
    if verification_due(state):
        return "verify", state.verifying
    return "round", None


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
    sub = task.subtasks[state.subtask_index]
    if sub.status == "pending":  # a new subtask: the guard's memory starts afresh
        sub.status = "in_progress"
        new_subtask(state.ledger)
        state.guard.window.clear()
        state.guard.insisted = 0
        state.format_errors = 0


def _skip_rest_of_reply(state: State) -> None:
    """Calls after a subtask boundary belong to the old subtask: they are never run."""
    if state.exchanges:
        last = state.exchanges[-1]
        last.settled += [c["id"] for c in last.tool_calls if c.get("id") not in last.settled]


def _finish_subtask(state: State, rec: dict[str, Any], status: Status) -> None:
    here = current(state)
    if here is not None:
        here[1].status = status
        here[1].reason = str(rec.get("reason", ""))[:300]
    if status == "failed":
        state.unresolved += 1
        if here is not None and rec.get("replan", False):
            state.replan_due = ReplanDue(
                task_index=state.task_index,
                task=here[0].description,
                subtask=here[1].description,
                reason=str(rec.get("reason", ""))[:300],
            )
    _result(state, "mark_subtask_complete", f"subtask {status}: {rec.get('reason', '')}", rec)
    _skip_rest_of_reply(state)
    _advance(state)


def _push(items: list[Any], item: Any, limit: int) -> None:
    items.append(item)
    del items[:-limit]


# ---- the reducer -----------------------------------------------------------------


def _goal_started(state: State, rec: dict[str, Any]) -> None:
    fresh = State(seq=state.seq, history_offset=state.history_offset)
    fresh.goal = Goal(text=rec["goal"])
    fresh.settings = dict(rec.get("settings") or {})
    fresh.plan_due = True
    for name in State.model_fields:
        setattr(state, name, getattr(fresh, name))


def _plan(state: State, rec: dict[str, Any]) -> None:
    assert state.goal is not None
    keep = state.goal.tasks[: rec.get("replace_from", 0)]
    for task in keep:  # a replan supersedes whatever of the kept tasks was not finished
        task.subtasks = [s for s in task.subtasks if s.status in ("completed", "failed")]
    new = [
        Task(description=t["description"], subtasks=[Subtask(description=s) for s in t["subtasks"]])
        for t in rec["tasks"]
    ]
    state.goal.tasks = keep + new
    state.plan_due = False
    state.verdict = None
    if rec.get("unmet"):  # tasks added for what the verdict found unmet
        state.verify_replans += 1
        state.replan_due = None
    elif rec.get("replace_from", 0):
        state.replans += 1
        state.unresolved = 0
        state.replan_due = None
    _skip_rest_of_reply(state)
    _advance(state)


def _replan_skipped(state: State, rec: dict[str, Any]) -> None:
    state.replan_due = None


def _action_started(state: State, rec: dict[str, Any]) -> None:
    state.open_action = Action(
        seq=rec["seq"],
        tool=rec["tool"],
        args=rec["args"],
        call=rec.get("call"),
        pid=rec.get("pid"),
        create_time=rec.get("create_time"),
        before=rec.get("before"),
    )
    state.format_errors = 0
    state.guard.window.append(Attempt(sig=rec["signature"], epoch=state.guard.epoch))
    del state.guard.window[:-GUARD_WINDOW]


def _action_finished(state: State, rec: dict[str, Any]) -> None:
    result = cap_text(rec["result"], RESULT_CHARS)
    action = Action(
        seq=rec["seq"],
        tool=rec["tool"],
        args=clip(rec["args"], 300),
        ok=rec["ok"],
        result=result,
        returncode=rec.get("returncode"),
    )
    if state.open_action is not None and state.guard.window:
        state.guard.window[-1].obs = f"{zlib.crc32(rec['result'].encode('utf-8', 'replace')):08x}"
    state.open_action = None
    state.fingerprint = str(rec.get("fingerprint") or state.fingerprint)
    note_action(state.ledger, rec)
    _push(state.recent_actions, action, RECENT_ACTIONS)
    _result(state, rec["tool"], result, rec)
    if rec.get("changed"):
        state.guard.epoch += 1
    facts = recorded_facts(rec)
    for path in facts.get("removed", []) + facts.get("wrote", []):
        if path in state.files_written:
            state.files_written.remove(path)
    for path in facts.get("wrote", []):
        _push(state.files_written, path, RECENT_LIMIT * 4)
    for cmd in facts.get("ran", []):
        _push(state.commands, {"cmd": cmd, "returncode": rec.get("returncode")}, RECENT_LIMIT)
    if not rec["ok"]:
        _push(state.errors, f"{rec['tool']}: {rec['result'][:300]}", 3)


def _result(state: State, tool: str, text: str, rec: dict[str, Any] | None = None) -> None:
    """The observation of a call of the latest reply; settles that call.

    Records name their call by `call` (its id); records without one (older journals)
    settle the first call still open. A result with no call (feedback on a reply that
    held none) is kept without an id.
    """
    if not state.exchanges:
        return
    last = state.exchanges[-1]
    call_id = (rec or {}).get("call")
    older = rec is not None and "call" not in rec and rec.get("type") != "feedback"
    if older and last.round == state.rounds:
        call_id = next(
            (c.get("id") for c in last.tool_calls if c.get("id") not in last.settled), None
        )
    entry = {"tool": tool, "content": cap_text(text, RESULT_CHARS)}
    if call_id is not None:
        entry["call"] = str(call_id)
        if call_id not in last.settled:
            last.settled.append(str(call_id))
    last.results.append(entry)


def _action_blocked(state: State, rec: dict[str, Any]) -> None:
    sig = rec["signature"]
    if sig not in state.blocked:
        _push(state.blocked, sig, 50)
    state.blocked_total += 1
    state.guard.insisted += 1
    _result(state, rec["tool"], rec["reason"], rec)


def _learn_token_size(state: State, rec: dict[str, Any]) -> None:
    chars, tokens = rec.get("prompt_chars"), rec.get("prompt_tokens")
    if isinstance(chars, int) and isinstance(tokens, int) and chars > 0 and tokens > 0:
        seen = min(max(chars / tokens, 1.5), 8.0)
        state.chars_per_token = round(0.5 * state.chars_per_token + 0.5 * seen, 3)


def _llm_call(state: State, rec: dict[str, Any]) -> None:
    state.tokens.prompt += rec.get("prompt_tokens", 0)
    state.tokens.completion += rec.get("completion_tokens", 0)
    state.llm_calls += 1
    state.suspended = ""
    if rec.get("purpose") == "round":
        _learn_token_size(state, rec)
        state.call_format = str(rec.get("recogniser") or state.call_format)
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
            tool_calls=[
                {**call, "id": str(call.get("id") or f"{state.rounds}.{i}")}
                for i, call in enumerate(rec.get("tool_calls", []), 1)
            ],
        )
        _push(state.exchanges, exchange, EXCHANGES_KEPT)


def _feedback(state: State, rec: dict[str, Any]) -> None:
    if rec.get("format_error"):
        state.format_errors += 1
    if rec.get("refused"):
        state.ledger.refused += 1
    if rec.get("nudged"):
        state.ledger.nudged = True
    _result(state, rec.get("tool", ""), rec["text"], rec)


def _loop_detected(state: State, rec: dict[str, Any]) -> None:
    state.loops_total += 1


def _verify_started(state: State, rec: dict[str, Any]) -> None:
    state.verifying = Verifying(checks=list(rec.get("checks") or []))


def _check_started(state: State, rec: dict[str, Any]) -> None:
    if state.verifying is not None:
        state.verifying.open = str(rec["id"])


def _check_finished(state: State, rec: dict[str, Any]) -> None:
    if state.verifying is not None:
        fields = ("cmd", "source", "status", "summary", "returncode")
        result = {name: rec.get(name) for name in fields}
        state.verifying.results[str(rec["id"])] = {**result, "seq": rec["seq"]}
        state.verifying.open = None


def _verdict(state: State, rec: dict[str, Any]) -> None:
    assert state.goal is not None
    verdict = Verdict.model_validate({k: v for k, v in rec.items() if k in Verdict.model_fields})
    state.verdict = verdict
    state.verifying = None
    if verdict.then == "replan":
        last = len(state.goal.tasks) - 1
        state.replan_due = ReplanDue(
            task_index=last,
            task=state.goal.tasks[last].description if last >= 0 else "",
            subtask="",
            reason="the goal is not achieved yet",
            unmet=verdict.unmet or ["the verifier found the goal not achieved"],
        )


def _set_goal(status: GoalStatus) -> Any:
    def apply_status(state: State, rec: dict[str, Any]) -> None:
        if state.goal is not None:
            state.goal.status = status
            state.goal.reason = rec.get("reason", "")
        if status in ("completed", "failed"):
            state.verification = str(rec.get("verification", ""))

    return apply_status


def _stopped(state: State, rec: dict[str, Any]) -> None:
    _set_goal("stopped")(state, rec)
    state.stopped_by = str(rec.get("by", "user"))


def _resumed(state: State, rec: dict[str, Any]) -> None:
    _set_goal("in_progress")(state, rec)
    state.settings.update(rec.get("settings") or {})
    state.stopped_by = ""
    state.suspended = ""


def _preflight(state: State, rec: dict[str, Any]) -> None:
    """A tool set chosen from the model's size is the run's from then on."""
    if isinstance(rec.get("tools"), list) and not state.settings.get("tools"):
        state.settings["tools"] = [str(name) for name in rec["tools"]]


def _suspended(state: State, rec: dict[str, Any]) -> None:
    state.suspended = str(rec.get("reason", ""))


def _interrupted(state: State, rec: dict[str, Any]) -> None:
    if state.open_action is not None and state.guard.window:
        # An attempt that never finished gave no result: it is not a repeat to count.
        state.guard.window.pop()
    state.open_action = None
    _result(state, rec["tool"], rec["text"], rec)


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
    "replan_skipped": _replan_skipped,
    "resumed": _resumed,
    "preflight": _preflight,
    "stopped": _stopped,
    "suspended": _suspended,
    "verify_started": _verify_started,
    "check_started": _check_started,
    "check_finished": _check_finished,
    "verdict": _verdict,
    "goal_completed": _set_goal("completed"),
    "goal_failed": _set_goal("failed"),
}


def apply(state: State, rec: dict[str, Any]) -> None:
    """Fold one history record into the state. Unknown types only advance `seq`."""
    reducer = REDUCERS.get(rec["type"])
    if reducer is not None and (state.goal is not None or rec["type"] == "goal_started"):
        reducer(state, rec)
    state.seq = rec["seq"]


def _v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    """Guard attempts became objects; calls gained ids (a v1 snapshot has none to settle)."""
    guard = data.get("guard") or {}
    guard["window"] = [
        {"sig": item[0], "epoch": item[1]} if isinstance(item, list | tuple) else item
        for item in guard.get("window", [])
    ]
    data["guard"] = guard
    for exchange in data.get("exchanges", []):
        for i, call in enumerate(exchange.get("tool_calls", [])):
            call.setdefault("id", f"{exchange.get('round', 0)}.{i + 1}")
        done = len(exchange.get("results", []))
        exchange["settled"] = [c["id"] for c in exchange.get("tool_calls", [])[:done]]
    return data


# Append-only: MIGRATIONS[n] turns a schema-n snapshot dict into schema n+1.
MIGRATIONS: list[Any] = [lambda data: data, _v1_to_v2]


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
