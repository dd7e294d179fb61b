"""The run as a readable transcript, rebuilt from the journal's records.

`entries` turns the records into transcript entries (plain dicts: what `--json` prints),
folding each record into a `State` with the loop's own reducer so every round knows its
task and subtask. `render` writes an entry as text lines: model and tool text has its
control characters escaped, and long results are cut (unless `full`) with a pointer to
the whole output in the output store.
"""

from __future__ import annotations

import reprlib
from collections.abc import Iterable, Iterator
from typing import Any

from pydantic import ValidationError

from localagent.errors import UsageError
from localagent.observe.events import seconds
from localagent.report import visible
from localagent.state import State, apply

RESULT_LINES = 8
RESULT_CHARS = 600
REPLY_CHARS = 400
INDENT = " " * 11
_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother = 3, 60, 60
_FULL_REPR = reprlib.Repr()
_FULL_REPR.maxlevel, _FULL_REPR.maxstring, _FULL_REPR.maxother = 10, 10**9, 10**9
_COPIED = {
    "goal_started": ("goal", "model", "settings"),
    "preflight": ("backend", "num_ctx", "native_tools"),
    "resumed": ("model", "settings"),
    "suspended": ("reason",),
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


class _Tracer:
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
            first = rec.get("replace_from", 0)
            return {"kind": "plan", "first": first + 1, "tasks": rec.get("tasks"), **_some(rec)}
        if kind == "action_finished":
            took, args = self._took(rec.get("call"), at)
            fields = {k: rec[k] for k in _RESULT if k in rec}
            return {"kind": "result", **fields, "args": args or rec.get("args"), "ms": took}
        if kind in ("subtask_completed", "subtask_failed"):
            status = kind.split("_")[1]
            return {"kind": "subtask", "status": status, **where, **_some(rec)}
        if kind == "verify_started":
            cmds = [c.get("cmd") for c in rec.get("checks") or [] if isinstance(c, dict)]
            return {"kind": "verify", "checks": cmds}
        if kind == "check_finished":
            took, _ = self._took(rec.get("id"), at)
            keep = ("cmd", "status", "summary", "returncode", "output")
            return {"kind": "check", **{k: rec[k] for k in keep if k in rec}, "ms": took}
        if kind == "check_started":
            return None
        return {"kind": "record", "type": kind}

    def _call(self, rec: dict[str, Any]) -> dict[str, Any]:
        keep = ("purpose", "prompt_tokens", "completion_tokens", "duration_ms", "cut_off")
        entry = {"kind": "model_call", **{k: rec[k] for k in keep if k in rec}}
        if rec.get("purpose") != "round":
            return entry
        calls = [
            {"id": c.get("id"), "name": c.get("name"), "arguments": c.get("arguments")}
            for c in rec.get("tool_calls") or []
            if isinstance(c, dict)
        ]
        reply = rec.get("content", "")
        return {**entry, "kind": "round", **self._where(), "reply": reply, "calls": calls}


def _some(rec: dict[str, Any]) -> dict[str, Any]:
    keep = ("reason", "verified", "unverified", "replan", "unmet")
    return {k: rec[k] for k in keep if k in rec}


def entries(records: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    tracer = _Tracer()
    for rec in records:
        entry = tracer.feed(rec)
        if entry is not None:
            yield entry


# ---- text ------------------------------------------------------------------------------


def _clock(t: Any) -> str:
    return f"{t:>8.1f}s " if isinstance(t, int | float) else f"{'?':>9} "


def _secs(ms: Any) -> str:
    return f"{ms / 1000:.1f}s" if isinstance(ms, int | float) else "?s"


def _one_line(value: Any, limit: int) -> str:
    text = visible(" ".join(str(value).split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _call(name: Any, args: Any, full: bool) -> str:
    if not isinstance(args, dict):
        return f"{visible(str(name))}({visible(str(args))})"
    shown = []
    for key, value in args.items():
        if key == "content" and not full:
            shown.append(f"{key}=<{len(str(value))} chars>")
        else:
            shown.append(f"{key}={(_FULL_REPR if full else _REPR).repr(value)}")
    return visible(f"{name}({', '.join(shown)})")


def _block(
    text: Any, full: bool, lines: int = RESULT_LINES, chars: int = RESULT_CHARS
) -> list[str]:
    """Multi-line text, each line escaped; cut to `lines` lines and `chars` characters."""
    rows = str(text).splitlines() or [""]
    if full:
        return [visible(row) for row in rows]
    kept: list[str] = []
    used = 0
    for row in rows[:lines]:
        if used + len(row) > chars:
            kept.append(visible(row[: max(0, chars - used)]) + "…")
            break
        kept.append(visible(row))
        used += len(row)
    if len(rows) > len(kept):
        kept.append(f"… {len(rows) - len(kept):,} more lines (--full shows them)")
    return kept


def _tokens(entry: dict[str, Any]) -> str:
    took = _secs(entry.get("duration_ms"))
    cut = f", cut off ({entry['cut_off']})" if entry.get("cut_off") else ""
    return (
        f"{entry.get('prompt_tokens', 0)}+{entry.get('completion_tokens', 0)} tokens in {took}{cut}"
    )


def _tasks(tasks: Any, first: int) -> list[str]:
    lines = []
    for i, task in enumerate(tasks if isinstance(tasks, list) else [], first):
        task = task if isinstance(task, dict) else {}
        lines.append(f"{i}  {_one_line(task.get('description', ''), 200)}")
        for j, sub in enumerate(task.get("subtasks") or [], 1):
            lines.append(f"  {i}.{j}  {_one_line(sub, 200)}")
    return lines


def _goal(e: dict[str, Any]) -> list[str]:
    s = e.get("settings") if isinstance(e.get("settings"), dict) else {}
    line = f"model {e.get('model', '?')}, {s.get('backend', 'ollama')} backend"
    line += f", at most {s.get('max_rounds', '?')} rounds"
    if s.get("checks"):
        line += ", checks: " + "; ".join(str(c) for c in s["checks"])
    return [f"goal: {visible(str(e.get('goal', '')))}", visible(line)]


def _round(e: dict[str, Any], full: bool) -> list[str]:
    where = f" · subtask {e['subtask']} {_one_line(e.get('subtask_text', ''), 50)}"
    lines = [f"round {e['round']}{where if 'subtask' in e else ''} · {_tokens(e)}"]
    if e.get("reply"):
        said = _block(e["reply"], full, lines=4, chars=REPLY_CHARS)
        lines += [f"  says: {said[0]}"] + [f"        {row}" for row in said[1:]]
    for c in e.get("calls") or []:
        lines.append(f"  calls {c.get('id')} {_call(c.get('name'), c.get('arguments'), full)}")
    if not e.get("calls"):
        lines.append("  (no tool call)")
    return lines


def _result(e: dict[str, Any], full: bool) -> list[str]:
    how = "ok" if e.get("ok") is True else "error"
    extra = "".join(f", {k}" for k in ("redone", "applied") if e.get(k))
    if e.get("returncode") is not None:
        extra += f", exit code {e['returncode']}"
    head = f"  {e.get('call') or ''} {visible(str(e.get('tool')))} -> {how}"
    lines = [f"{head} in {_secs(e.get('ms'))}{extra}"]
    lines += [f"    {row}" for row in _block(e.get("result", ""), full)]
    if e.get("output") is not None:
        ref = e["output"]
        lines.append(f"    whole output: read_output(id={ref}), .agent_context/outputs/{ref}.txt")
    return lines


def _plan(e: dict[str, Any]) -> list[str]:
    if e.get("unmet"):
        head = "plan for what is unmet: " + "; ".join(_one_line(u, 80) for u in e["unmet"])
    elif e.get("first", 1) > 1:
        head = f"replan: the tasks from {e['first']} on are now"
    else:
        head = "plan"
    return [head] + [f"  {row}" for row in _tasks(e.get("tasks"), e.get("first", 1))]


def _end(e: dict[str, Any]) -> list[str]:
    tokens = e.get("tokens") or {}
    total = tokens.get("prompt", 0) + tokens.get("completion", 0)
    how = f" ({e['verification']})" if e.get("verification") else ""
    return [
        f"goal {e['kind'].split('_')[1]}{how}: {_one_line(e.get('reason', ''), 300)}",
        f"  {e['round']} rounds, {total:,} tokens",
    ]


def _lines(e: dict[str, Any], full: bool) -> list[str]:
    kind = e["kind"]
    if kind == "goal":
        return _goal(e)
    if kind == "round":
        return _round(e, full)
    if kind == "result":
        return _result(e, full)
    if kind == "plan":
        return _plan(e)
    if kind in ("goal_completed", "goal_failed"):
        return _end(e)
    if kind == "model_call":
        return [f"model call ({e.get('purpose', '?')}): {_tokens(e)}"]
    if kind == "blocked":
        call = _call(e.get("tool"), e.get("args"), full)
        head = f"  {e.get('call') or ''} BLOCKED {call} ({e.get('pattern', '?')}), not run"
        return [head] + [f"    {row}" for row in _block(e.get("reason"), full, 1, 160)]
    if kind == "subtask":
        what = f"subtask {e.get('subtask', '?')} {e['status']}: {_one_line(e.get('reason'), 200)}"
        return [what + (" (a replan is owed)" if e.get("replan") else "")]
    if kind == "check":
        cmd = _one_line(e.get("cmd"), 100)
        head = f"check `{cmd}` {e.get('status')} in {_secs(e.get('ms'))}: "
        return [head + _one_line(e.get("summary", ""), 100)]
    if kind == "verdict":
        unmet = "; ".join(_one_line(u, 80) for u in e.get("unmet") or []) or "nothing unmet"
        return [
            f"verdict {e.get('verdict')} (by the {e.get('source')}): {unmet}; then {e.get('then')}"
        ]
    return _other(e, full)


def _other(e: dict[str, Any], full: bool) -> list[str]:
    kind = e["kind"]
    if kind == "loop_detected":
        return []  # the blocked action above says it
    if kind == "preflight":
        how = "native tool calls" if e.get("native_tools") else "tool calls written as text"
        return [f"preflight: {e.get('backend', '?')}, num_ctx {e.get('num_ctx')}, {how}"]
    if kind == "resumed":
        changed = ", ".join(f"{k}={v!r}" for k, v in (e.get("settings") or {}).items())
        return [visible(f"resumed (model {e.get('model')}{'; ' + changed if changed else ''})")]
    if kind == "verify":
        checks = "; ".join(_one_line(c, 80) for c in e.get("checks") or []) or "none"
        return [f"verify the goal: checks {checks}"]
    if kind in ("feedback", "action_interrupted"):
        head = f"  {e.get('call') or ''} {kind.replace('_', ' ')} ({visible(str(e.get('tool')))})"
        return [head.replace("   ", "  ")] + [
            f"    {row}" for row in _block(e.get("text"), full, 3)
        ]
    if kind == "malformed":
        return [f"record {e.get('seq')} ({visible(e.get('type'))}) is malformed; skipped"]
    if kind in ("suspended", "stopped", "replan_skipped"):
        by = f" by the {e['by']}" if e.get("by") else ""
        return [f"{kind.replace('_', ' ')}{by}: {_one_line(e.get('reason', ''), 300)}"]
    return [f"record {visible(str(e.get('type', kind)))}"]


def render(entry: dict[str, Any], full: bool = False) -> list[str]:
    """An entry as text: the first line starts with the seconds since the goal began."""
    lines = _lines(entry, full)
    if not lines:
        return []
    return [_clock(entry.get("t")) + lines[0]] + [INDENT + line for line in lines[1:]]


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
