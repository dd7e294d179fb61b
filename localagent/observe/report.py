"""What `status` and `history` show (and `list`, in `observe/listing.py`), built from
the journal without touching it.

Every text that came from a model, a tool or a file is shown with its control
characters escaped (`\\x1b` rather than a live terminal escape), and formatting never
fails on a record of an unexpected shape.
"""

from __future__ import annotations

import reprlib
from datetime import datetime
from pathlib import Path
from typing import Any

from localagent.journal import Journal, resume_hint
from localagent.journal.archive import archived
from localagent.journal.reading import History
from localagent.observe import pace
from localagent.state import counts, current
from localagent.system.console import printable
from localagent.system.errors import UsageError
from localagent.system.lock import held, owner
from localagent.system.names import display
from localagent.system.sandbox import status_line

_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother = 3, 200, 200
ACTIONS = ("action_started", "action_finished", "action_blocked")
JSON_SCHEMA = 1  # the version of what `status --json` and `list --json` print


def visible(value: Any) -> str:
    """`value` as text that cannot drive a terminal: controls shown as escapes."""
    return printable(value if isinstance(value, str) else _REPR.repr(value), one_line=True)


def open_journal(workspace: Path) -> Journal:
    journal = Journal(workspace)
    if not journal.exists():
        why = "" if journal.top.is_dir() else " (no .agent_context/ there)"
        raise UsageError(
            f"no goal in {display(workspace)}{why}; "
            f'start one with: localagent start "GOAL" -w {display(workspace)}'
        )
    return journal


def running(journal: Journal) -> tuple[bool, int | None]:
    """Whether an agent holds the workspace, and its pid when the pid file can be
    trusted. The lock decides: a pid check that fails (a clock change) still says so."""
    info = owner(journal.dir)
    if info is not None:
        return True, info["pid"]
    return held(journal.dir), None


def shown_status(status: str | None, suspended: bool, alive: bool) -> str | None:
    """The status word `status --json` and `list --json` share: the goal's own
    (in_progress, stopped, completed, failed), or "suspended" for a goal in progress
    whose last run gave up waiting for the model server and that no agent runs now."""
    if status == "in_progress" and suspended and not alive:
        return "suspended"
    return status


def last_activity(journal: History) -> str | None:
    """When the journal's last record was written (ISO 8601, UTC), or None."""
    last = journal.tail(1)
    ts = last[0].get("ts") if last else None
    return ts if isinstance(ts, str) else None


def status_info(workspace: Path) -> dict[str, Any]:
    """`status --json`: absent values are null; `schema` is the version of the shape."""
    journal = open_journal(workspace)
    state = journal.load(repair=False)
    alive, pid = running(journal)
    goal = state.goal
    return {
        "schema": JSON_SCHEMA,
        "workspace": display(workspace),
        "goal": goal.text if goal else None,
        "status": shown_status(goal.status if goal else None, bool(state.suspended), alive),
        "reason": (goal.reason if goal else "") or None,
        "verification": _verification(state) or None,
        "suspended": state.suspended or None,
        "waiting": state.waiting.model_dump() if state.waiting and alive else None,
        "stopped_by": state.stopped_by or None,
        "tool_calls": state.call_format or None,
        "backend": str(state.settings.get("backend") or "ollama"),
        "model": state.settings.get("model"),
        "settings": state.settings,
        "alive": alive,
        "pid": pid,
        **_position(state),
        "progress": counts(state),
        "rounds": state.rounds,
        "llm_calls": state.llm_calls,
        "tokens": {"prompt": state.tokens.prompt, "completion": state.tokens.completion},
        "pace": pace.figures(state.tokens, journal.tail(pace.RECORDS_READ)),
        "blocked": state.blocked_total,
        "blocked_signatures": state.blocked,
        "loops": state.loops_total,
        "records": state.seq,
        "last_activity": last_activity(journal),
        "archived": len(archived(journal)),
        "log": display(journal.log_path),
        "notes": journal.notes,
    }


def _position(state: Any) -> dict[str, Any]:
    """The task and subtask the goal is at (each null when there is none)."""
    here = current(state)
    if state.goal is None or here is None:
        return {"task": None, "subtask": None}
    return {
        "task": {
            "index": state.task_index + 1,
            "of": len(state.goal.tasks),
            "description": here[0].description,
        },
        "subtask": {
            "index": state.subtask_index + 1,
            "of": len(here[0].subtasks),
            "description": here[1].description,
        },
    }


def _verification(state: Any) -> str:
    """verified, partial, unverified or failed once a goal ended; while its checks run,
    "verifying"; otherwise empty."""
    if state.verification:
        return str(state.verification)
    if state.verifying is not None or (
        state.verdict is not None and state.verdict.then != "replan"
    ):
        return "verifying"
    return ""


def final_verification(journal: Journal) -> str:
    """How an ended goal was verified, from the end of its history (cheap, for `list`)."""
    for record in reversed(journal.tail(3)):
        if record["type"] in ("goal_completed", "goal_failed"):
            return str(record.get("verification", ""))
    return ""


def _process(info: dict[str, Any]) -> str:
    if not info["alive"]:
        return "not running"
    return f"running (pid {info['pid']})" if info["pid"] else "running"


def _tools(chosen: Any) -> str:
    if not chosen:
        return "the default set"
    return ", ".join(map(str, chosen)) if isinstance(chosen, list) else str(chosen)


def format_status(info: dict[str, Any]) -> str:
    status = info["status"] or "no goal"
    if info.get("verification") and info["status"] in ("completed", "failed"):
        status += f", {info['verification']}"
    if info["reason"]:
        status += f" ({info['reason']})"
    rows = [
        ("workspace", info["workspace"]),
        ("goal", info["goal"] or "-"),
        ("status", status),
        ("process", _process(info)),
    ]
    if info.get("model"):
        rows.append(("model", f"{info['model']} ({info['backend']} backend)"))
    if info.get("suspended"):
        then = f"once it answers, {resume_hint(info['workspace'])}"
        rows.append(("suspended", f"{info['suspended']}; {then}"))
    if info.get("waiting"):
        since, why = local_time(info["waiting"]["since"]), info["waiting"]["reason"]
        rows.append(("waiting", f"for the model server since {since} ({why})"))
    if info.get("status") == "stopped" and info.get("stopped_by"):
        rows.append(("stopped by", info["stopped_by"]))
    if info.get("tool_calls"):
        how = info["tool_calls"]
        rows.append(("tool calls", how if how == "native" else f"written as text ({how} format)"))
    if info.get("settings"):
        rows.append(("profile", str(info["settings"].get("profile") or "auto")))
        rows.append(("tools", _tools(info["settings"].get("tools"))))
        rows.append(("commands", status_line(info["settings"])))
    for key in ("task", "subtask"):
        item = info[key]
        if item:
            rows.append((key, f"{item['index']}/{item['of']} {item['description']}"))
    p = info["progress"]
    rows += [
        ("progress", f"{p['completed']}/{p['subtasks']} subtasks done, {p['failed']} failed"),
        ("rounds", str(info["rounds"])),
        (
            "tokens",
            f"{info['tokens']['prompt']:,} prompt, {info['tokens']['completion']:,} "
            f"completion ({info['llm_calls']} model calls)",
        ),
        ("blocked", f"{info['blocked']} actions, {info['loops']} loops"),
        ("activity", f"last at {local_datetime(info.get('last_activity'))}"),
        ("log", info["log"]),
    ]
    if count := info.get("archived"):
        earlier = "1 earlier goal" if count == 1 else f"{count} earlier goals"
        see = f"localagent history --archive N -w {info['workspace']} (1: the latest)"
        rows.append(("archived", f"{earlier}; see one with: {see}"))
    rows += [("note", note) for note in info["notes"]]
    return "\n".join(f"{k:<10} {visible(v)}" for k, v in rows)


# ---- history ---------------------------------------------------------------------------


def short(value: Any, limit: int = 70) -> str:
    text = visible(" ".join((value if isinstance(value, str) else _REPR.repr(value)).split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _args(args: Any) -> str:
    if not isinstance(args, dict):
        return short(args, 80)
    shown = {str(k): v for k, v in args.items() if k != "content"}
    if "content" in args:
        shown["content"] = f"<{len(str(args['content']))} chars>"
    return short(", ".join(f"{k}={_REPR.repr(v)}" for k, v in shown.items()), 80)


def _number(value: Any) -> float:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else 0


def _plan(rec: dict[str, Any]) -> str:
    tasks = rec.get("tasks")
    if not isinstance(tasks, list):
        return "(no tasks)"
    subs = sum(
        len(t["subtasks"])
        for t in tasks
        if isinstance(t, dict) and isinstance(t.get("subtasks"), list)
    )
    return f"{len(tasks)} tasks, {subs} subtasks"


def _detail(kind: str, rec: dict[str, Any]) -> str:
    if kind in ACTIONS:
        detail = f"{short(rec.get('tool', '?'), 40)}({_args(rec.get('args', {}))})"
        if kind == "action_finished":
            outcome = "ok" if rec.get("ok") is True else "error"
            detail += f" -> {outcome}: {short(rec.get('result', ''), 60)}"
        if kind == "action_blocked":
            detail += f" -> {short(rec.get('pattern', 'blocked'), 30)}"
        return detail
    if kind == "llm_call":
        return (
            f"{short(rec.get('purpose', ''), 20)} {_number(rec.get('prompt_tokens')):.0f}+"
            f"{_number(rec.get('completion_tokens')):.0f} tokens, "
            f"{_number(rec.get('duration_ms')):.0f} ms"
        )
    if kind == "plan":
        return _plan(rec)
    for key in ("goal", "reason", "text", "signature"):
        if rec.get(key):
            return short(rec[key])
    return ""


def format_record(rec: dict[str, Any]) -> str:
    """One line per record; any dict formats (a good checksum does not make a body good)."""
    kind = short(rec.get("type", "?"), 30)
    ts = rec.get("ts")
    clock = visible(ts[11:19]) if isinstance(ts, str) else ""
    seq = rec.get("seq")
    head = f"{seq if isinstance(seq, int) else '?':>6} {clock:<8} {kind:<17}"
    detail = _detail(kind, rec)
    return f"{head} {detail}" if detail else head


def local_time(ts: str) -> str:
    """A record's time (UTC, ISO 8601) as the user's wall clock, HH:MM."""
    try:
        return datetime.fromisoformat(ts).astimezone().strftime("%H:%M")
    except ValueError:
        return "?"


def local_datetime(ts: Any) -> str:
    """A record's time (UTC, ISO 8601) as the user's wall clock, YYYY-MM-DD HH:MM; "-"
    when there is none."""
    if not isinstance(ts, str):
        return "-"
    try:
        return datetime.fromisoformat(ts).astimezone().strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return "?"
