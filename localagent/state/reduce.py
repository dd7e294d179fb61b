"""The reducer: `apply` folds one history record into the state.

Every change of state is a history record. The snapshot (`state.json`) is the state
model, so replaying the history from the snapshot's `seq` onwards yields exactly the
state a live run had. `REDUCERS` maps each record type to the function that folds it:
a new record type is one function (here, or in `rounds` for what a round does) and one
row in the table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from localagent.state import records, rewinds, rounds
from localagent.state.ledger import new_subtask, note_goal_check, note_program_check
from localagent.state.model import (
    PAST_WINDOWS,
    Goal,
    GoalStatus,
    GuardState,
    ReplanDue,
    State,
    Status,
    Subtask,
    Task,
    Verdict,
    Verifying,
    Waiting,
    current,
    next_open_subtask,
)

Reducer = Callable[[State, dict[str, Any]], None]
RESULT_OUTPUT_CHARS = 1000  # of a goal check's output, kept with its result


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
        _new_window(state.guard, sub.description)
        state.format_errors = 0


def _new_window(guard: GuardState, text: str) -> None:
    """The guard's window for a new subtask: empty, or the one an earlier subtask with
    the same text left (a replan that repeats a subtask does not rerun what failed)."""
    if guard.subtask:
        guard.past.pop(guard.subtask, None)
        guard.past[guard.subtask] = list(guard.window)
        while len(guard.past) > PAST_WINDOWS:
            del guard.past[next(iter(guard.past))]
    guard.window = guard.past.pop(text, [])
    guard.subtask = text
    guard.insisted = 0


def _finish_subtask(state: State, rec: dict[str, Any], status: Status) -> None:
    here = current(state)
    if here is not None:
        here[1].status = status
        here[1].reason = str(rec.get("reason", ""))[:300]
    rounds.count_claim(state, rec)
    state.completion_due = None
    if rec.get("stuck"):
        state.stuck = str(rec.get("reason", ""))
    if status == "failed":
        state.unresolved += 1
        if here is not None and rec.get("replan", False):
            state.replan_due = ReplanDue(
                task_index=state.task_index,
                task=here[0].description,
                subtask=here[1].description,
                reason=str(rec.get("reason", ""))[:300],
            )
    if rec.get("by") not in ("write", "run"):  # the call's own result already said so
        text = f"subtask {status}: {rec.get('reason', '')}"
        rounds.add_result(state, "mark_subtask_complete", text, rec)
    rounds.skip_rest_of_reply(state)
    _advance(state)


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
    carried = {c["subtask"]: c["reason"] for c in rec.get("carried") or []}
    new = [
        Task(description=t["description"], subtasks=[_subtask(s, carried) for s in t["subtasks"]])
        for t in rec["tasks"]
    ]
    state.goal.tasks = keep + new
    state.plan_due = False
    state.verdict = None
    if rec.get("unmet") or rec.get("replace_from", 0):
        state.errors.clear()  # they belong to the old plan: no longer the latest news
        state.replanned = True
        # So do the rounds before it: the next round's window starts after them, so a
        # small model does not copy the calls that failed, and the prompt after the
        # new plan is short instead of re-read whole.
        if state.exchanges:
            state.window_start = max(state.window_start, state.exchanges[-1].round)
    if rec.get("unmet"):  # tasks added for what the verdict found unmet
        state.verify_replans += 1
        state.replan_due = None
    elif rec.get("replace_from", 0):
        if rec.get("by") == "handback":
            state.handbacks += 1
        else:
            state.replans += 1
        state.unresolved = 0
        state.replan_due = None
    rounds.skip_rest_of_reply(state)
    _advance(state)


def _subtask(text: str, carried: dict[str, str]) -> Subtask:
    """A planned subtask; one the plan carries as done starts completed."""
    if text not in carried:
        return Subtask(description=text)
    return Subtask(description=text, status="completed", reason=carried.pop(text)[:300])


def _replan_skipped(state: State, rec: dict[str, Any]) -> None:
    state.replan_due = None


def _verify_started(state: State, rec: dict[str, Any]) -> None:
    state.verifying = Verifying(checks=list(rec.get("checks") or []))


def _check_started(state: State, rec: dict[str, Any]) -> None:
    if state.verifying is not None:
        state.verifying.open = str(rec["id"])


def _check_finished(state: State, rec: dict[str, Any]) -> None:
    if state.verifying is not None:
        fields = ("cmd", "source", "status", "summary", "returncode")
        result = {name: rec.get(name) for name in fields}
        # what it printed, for what the goal says it prints (`verify.outputs`)
        output = str(rec.get("output") or "")[:RESULT_OUTPUT_CHARS]
        state.verifying.results[str(rec["id"])] = {**result, "seq": rec["seq"], "output": output}
        state.verifying.open = None
    if rec.get("source") == "program":
        note_program_check(state.ledger, rec)
    else:
        note_goal_check(state.ledger, rec)


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


def _set_goal(status: GoalStatus) -> Reducer:
    def apply_status(state: State, rec: dict[str, Any]) -> None:
        state.waiting = None
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
    """A profile and a tool set chosen from the model's size are the run's from then on."""
    state.waiting = None
    if isinstance(rec.get("tools"), list) and not state.settings.get("tools"):
        state.settings["tools"] = [str(name) for name in rec["tools"]]
    size = rec.get("parameters")
    if isinstance(size, (int, float)) and not isinstance(size, bool):
        state.parameters = float(size)
    if rec.get("profile") in ("small", "full") and state.settings.get("profile", "auto") == "auto":
        state.settings["profile"] = rec["profile"]


def _suspended(state: State, rec: dict[str, Any]) -> None:
    state.suspended = str(rec.get("reason", ""))
    state.waiting = None


def _waiting(state: State, rec: dict[str, Any]) -> None:
    state.waiting = Waiting(since=str(rec.get("ts", "")), reason=str(rec.get("reason", "")))


# The reducer of each record type; a type with no row only advances `seq`.
REDUCERS: dict[str, Reducer] = {
    "goal_started": _goal_started,
    "plan": _plan,
    "action_started": rounds.action_started,
    "action_finished": rounds.action_finished,
    "action_blocked": rounds.action_blocked,
    "action_interrupted": rounds.action_interrupted,
    "subtask_completed": lambda state, rec: _finish_subtask(state, rec, "completed"),
    "subtask_failed": lambda state, rec: _finish_subtask(state, rec, "failed"),
    "llm_call": rounds.llm_call,
    "feedback": rounds.feedback,
    "loop_detected": rounds.loop_detected,
    "replan_skipped": _replan_skipped,
    "resumed": _resumed,
    "preflight": _preflight,
    "stopped": _stopped,
    "suspended": _suspended,
    "waiting": _waiting,
    "verify_started": _verify_started,
    "check_started": _check_started,
    "check_finished": _check_finished,
    "verdict": _verdict,
    "goal_completed": _set_goal("completed"),
    "goal_failed": _set_goal("failed"),
    "snapshot": rewinds.snapshot,
    "changes": rewinds.changes,
    "rewinding": rewinds.rewinding,
    "rewound": lambda state, rec: rewinds.rewound(state, rec, _advance),
}


def apply(state: State, rec: dict[str, Any]) -> None:
    """Fold one history record into the state. Unknown types only advance `seq`; a
    record whose fields cannot be read raises MalformedRecord (a ValueError) before
    anything changes."""
    records.check(rec)
    fold(state, rec)


def fold(state: State, rec: dict[str, Any]) -> None:
    """`apply` for a record already checked."""
    reducer = REDUCERS.get(rec["type"])
    if reducer is not None and (state.goal is not None or rec["type"] == "goal_started"):
        reducer(state, rec)
    state.seq = rec["seq"]
