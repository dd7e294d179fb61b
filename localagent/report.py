"""What `status` and `history` show (and `list`, in `observe/listing.py`), built from
the journal without touching it.

Every text that came from a model, a tool or a file is shown with its control
characters escaped (`\\x1b` rather than a live terminal escape), and formatting never
fails on a record of an unexpected shape.
"""

from __future__ import annotations

import re
import reprlib
from datetime import datetime
from pathlib import Path
from typing import Any

from localagent.errors import UsageError
from localagent.journal import Journal
from localagent.lock import held, owner
from localagent.names import display
from localagent.state import counts, current

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother = 3, 200, 200
ACTIONS = ("action_started", "action_finished", "action_blocked")


def visible(value: Any) -> str:
    """`value` as text that cannot drive a terminal: controls shown as escapes."""
    text = value if isinstance(value, str) else _REPR.repr(value)
    return _CONTROL.sub(
        lambda m: f"\\x{ord(m[0]):02x}" if ord(m[0]) < 256 else f"\\u{ord(m[0]):04x}", text
    )


def open_journal(workspace: Path) -> Journal:
    journal = Journal(workspace)
    if not journal.exists():
        raise UsageError(
            f"no goal in {display(workspace)} (no .agent_context/ there); "
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


def status_info(workspace: Path) -> dict[str, Any]:
    journal = open_journal(workspace)
    state = journal.load(repair=False)
    alive, pid = running(journal)
    here = current(state)
    goal = state.goal
    task = subtask = None
    if goal is not None and here is not None:
        task = {
            "index": state.task_index + 1,
            "of": len(goal.tasks),
            "description": here[0].description,
        }
        subtask = {
            "index": state.subtask_index + 1,
            "of": len(here[0].subtasks),
            "description": here[1].description,
        }
    return {
        "workspace": display(workspace),
        "goal": goal.text if goal else None,
        "status": goal.status if goal else None,
        "reason": goal.reason if goal else "",
        "verification": _verification(state),
        "suspended": state.suspended,
        "waiting": state.waiting.model_dump() if state.waiting and alive else None,
        "stopped_by": state.stopped_by,
        "tool_calls": state.call_format,
        "backend": str(state.settings.get("backend") or "ollama"),
        "model": state.settings.get("model"),
        "settings": state.settings,
        "alive": alive,
        "pid": pid,
        "task": task,
        "subtask": subtask,
        "progress": counts(state),
        "rounds": state.rounds,
        "llm_calls": state.llm_calls,
        "tokens": {"prompt": state.tokens.prompt, "completion": state.tokens.completion},
        "blocked": state.blocked_total,
        "blocked_signatures": state.blocked,
        "loops": state.loops_total,
        "records": state.seq,
        "log": display(journal.log_path),
        "notes": journal.notes,
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
        rows.append(("suspended", f"{info['suspended']}; run `localagent resume`"))
    if info.get("waiting"):
        since, why = local_time(info["waiting"]["since"]), info["waiting"]["reason"]
        rows.append(("waiting", f"for the model server since {since} ({why})"))
    if info.get("status") == "stopped" and info.get("stopped_by"):
        rows.append(("stopped by", info["stopped_by"]))
    if info.get("tool_calls"):
        how = info["tool_calls"]
        rows.append(("tool calls", how if how == "native" else f"written as text ({how} format)"))
    if info.get("settings"):
        chosen = info["settings"].get("tools")
        rows.append(("tools", ", ".join(chosen) if chosen else "the default set"))
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
        ("log", info["log"]),
    ]
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
