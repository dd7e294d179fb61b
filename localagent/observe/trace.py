"""The run as a readable transcript, rebuilt from the journal's records.

`entries` turns the records into transcript entries (plain dicts: what `--json` prints),
folding each record into a `State` with the loop's own reducer so every round knows its
task and subtask; `localagent.observe.text` writes them as text.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from localagent.observe.events import history, json_line
from localagent.observe.pace import seconds
from localagent.state import State, apply
from localagent.system.errors import UsageError

_COPIED = {
    "goal_started": ("goal", "model", "settings"),
    "preflight": ("backend", "num_ctx", "native_tools"),
    "resumed": ("model", "settings"),
    "suspended": ("reason",),
    "waiting": ("reason",),
    "stopped": ("reason", "by"),
    "replan_skipped": ("reason",),
    "action_blocked": ("call", "tool", "args", "pattern", "reason"),
    "loop_detected": ("tool", "count", "pattern"),
    "action_interrupted": ("call", "tool", "args", "text", "killed"),
    "feedback": ("call", "tool", "text", "format_error", "refused", "nudged"),
    "verdict": ("verdict", "source", "unmet", "then", "verification"),
    "goal_completed": ("reason", "verification"),
    "goal_failed": ("reason", "verification"),
}
_RESULT = ("call", "tool", "ok", "result", "returncode", "output", "redone", "applied")


class Tracer:
    """Turns records into entries, one record at a time (memory stays flat)."""

    def __init__(self) -> None:
        self.state = State()
        self.start: float | None = None
        self.started: dict[str, tuple[float | None, Any]] = {}  # call or check id: ts, args

    def feed(self, rec: dict[str, Any]) -> dict[str, Any] | None:
        kind = str(rec.get("type", "?"))
        at = seconds(rec.get("ts"))
        if self.start is None:
            self.start = at
        where = self._where()  # the subtask a record ends is the one before it is applied
        try:
            apply(self.state, rec)
        except (KeyError, TypeError, ValueError, AssertionError, ValidationError):
            return {"kind": "malformed", "type": kind, **self._common(rec, at)}
        if kind in ("action_started", "check_started"):
            self.started[str(rec.get("call") or rec.get("id"))] = (at, rec.get("args"))
            return None
        entry = self._entry(kind, rec, at, where)
        if entry is not None and kind in ("goal_completed", "goal_failed"):
            entry["tokens"] = self.state.tokens.model_dump()
        return None if entry is None else {**entry, **self._common(rec, at)}

    def _common(self, rec: dict[str, Any], at: float | None) -> dict[str, Any]:
        t = None if at is None or self.start is None else round(at - self.start, 3)
        return {"seq": rec.get("seq"), "t": t, "round": self.state.rounds}

    def _where(self) -> dict[str, Any]:
        s, goal = self.state, self.state.goal
        if goal is None or s.task_index >= len(goal.tasks):
            return {}
        task = goal.tasks[s.task_index]
        out = {"task": str(s.task_index + 1), "task_text": task.description}
        if s.subtask_index < len(task.subtasks):
            out["subtask"] = f"{s.task_index + 1}.{s.subtask_index + 1}"
            out["subtask_text"] = task.subtasks[s.subtask_index].description
        return out

    def _took(self, key: Any, at: float | None) -> tuple[float | None, Any]:
        began, args = self.started.pop(str(key), (None, None))
        took = None if began is None or at is None else round((at - began) * 1000, 1)
        return took, args

    def _entry(
        self, kind: str, rec: dict[str, Any], at: float | None, where: dict[str, Any]
    ) -> dict[str, Any] | None:
        if kind in _COPIED:
            name = {"goal_started": "goal", "action_blocked": "blocked"}.get(kind, kind)
            return {"kind": name, **{k: rec[k] for k in _COPIED[kind] if k in rec}}
        if kind == "llm_call":
            return self._call(rec)
        if kind == "plan":
            first = rec.get("replace_from")
            first = first if isinstance(first, int) and not isinstance(first, bool) else 0
            return {"kind": "plan", "first": first + 1, "tasks": rec.get("tasks"), **_some(rec)}
        if kind == "action_finished":
            took, args = self._took(rec.get("call"), at)
            fields = {k: rec[k] for k in _RESULT if k in rec}
            return {"kind": "result", **fields, "args": args or rec.get("args"), "ms": took}
        if kind in ("subtask_completed", "subtask_failed"):
            status = kind.split("_")[1]
            return {"kind": "subtask", "status": status, **where, **_some(rec)}
        if kind == "verify_started":
            cmds = [c.get("cmd") for c in _listed(rec.get("checks")) if isinstance(c, dict)]
            return {"kind": "verify", "checks": cmds}
        if kind == "check_finished":
            took, _ = self._took(rec.get("id"), at)
            keep = ("cmd", "status", "summary", "returncode", "output")
            return {"kind": "check", **{k: rec[k] for k in keep if k in rec}, "ms": took}
        if kind == "check_started":
            return None
        if kind in _FILES:
            return _files(kind, rec)
        return {"kind": "record", "type": kind}

    def _call(self, rec: dict[str, Any]) -> dict[str, Any]:
        keep = ("purpose", "prompt_tokens", "completion_tokens", "cached_tokens", "duration_ms")
        keep += ("cut_off", "estimated", "temperature")
        entry = {"kind": "model_call", **{k: rec[k] for k in keep if k in rec}}
        if rec.get("purpose") != "round":
            return entry
        calls = [
            {"id": c.get("id"), "name": c.get("name"), "arguments": c.get("arguments")}
            for c in _listed(rec.get("tool_calls"))
            if isinstance(c, dict)
        ]
        reply = rec.get("content", "")
        return {**entry, "kind": "round", **self._where(), "reply": reply, "calls": calls}


_FILES = ("snapshot", "changes", "rewinding", "rewound")  # rewind's records


def _files(kind: str, rec: dict[str, Any]) -> dict[str, Any] | None:
    """A step's changes to the files, a snapshot that copied the workspace or found it
    changed outside the agent, a rewind; nothing for a snapshot or step with no news."""
    files = _listed(rec.get("files"))
    if kind == "changes":
        return {"kind": kind, "action": rec.get("action"), "tool": rec.get("tool"), "files": files}
    if kind == "snapshot":
        return {"kind": kind, "base": rec.get("base"), "files": files}
    return {"kind": kind, "to": rec.get("to"), "files": files}


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _some(rec: dict[str, Any]) -> dict[str, Any]:
    keep = ("reason", "verified", "unverified", "replan", "unmet")
    return {k: rec[k] for k in keep if k in rec}


def entries(records: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    tracer = Tracer()
    for rec in records:
        entry = tracer.feed(rec)
        if entry is not None:
            yield entry


def transcript(
    records: Iterable[dict[str, Any]], round_: int | None = None, full: bool = False
) -> Iterator[dict[str, Any]]:
    """The entries of the run, or of one round only (UsageError when it has no such round)."""
    last = 0
    for entry in entries(records):
        last = max(last, entry["round"])
        if round_ is None or entry["round"] == round_:
            yield entry
    if round_ is not None and not 1 <= round_ <= last:
        raise UsageError(f"there is no round {round_}: the run has {last} rounds")


def show(workspace: Path, round_: int | None, full: bool, as_json: bool) -> Iterator[str]:
    """The lines `localagent trace` prints: text, or one JSON object per entry."""
    from localagent.observe import text

    for entry in transcript(history(workspace), round_, full):
        if as_json:
            yield json_line(entry)
        else:
            yield from text.render(entry, full)
