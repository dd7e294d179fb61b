"""What `status` and `history` show, built from the journal without touching it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from localagent.errors import UsageError
from localagent.journal import Journal
from localagent.lock import owner
from localagent.state import counts, current


def open_journal(workspace: Path) -> Journal:
    journal = Journal(workspace)
    if not journal.exists():
        raise UsageError(
            f"no goal in {workspace} (no .agent_context/ there); "
            f'start one with: localagent start "GOAL" -w {workspace}'
        )
    return journal


def status_info(workspace: Path) -> dict[str, Any]:
    journal = open_journal(workspace)
    state = journal.load(repair=False)
    live = owner(journal.dir)
    here = current(state)
    goal = state.goal
    task = subtask = None
    if goal is not None and here is not None:
        task_list = goal.tasks
        task = {
            "index": state.task_index + 1,
            "of": len(task_list),
            "description": here[0].description,
        }
        subtask = {
            "index": state.subtask_index + 1,
            "of": len(here[0].subtasks),
            "description": here[1].description,
        }
    return {
        "workspace": str(workspace),
        "goal": goal.text if goal else None,
        "status": goal.status if goal else None,
        "reason": goal.reason if goal else "",
        "alive": live is not None,
        "pid": live["pid"] if live else None,
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
        "log": str(journal.log_path),
        "notes": journal.notes,
    }


def format_status(info: dict[str, Any]) -> str:
    alive = f"running (pid {info['pid']})" if info["alive"] else "not running"
    status = info["status"] or "no goal"
    if info["reason"]:
        status += f" ({info['reason']})"
    rows = [
        ("workspace", info["workspace"]),
        ("goal", info["goal"] or "-"),
        ("status", status),
        ("process", alive),
    ]
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
    return "\n".join(f"{k:<10} {v}" for k, v in rows)


def _short(value: Any, limit: int = 70) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _args(args: dict[str, Any]) -> str:
    shown = {k: v for k, v in args.items() if k != "content"}
    if "content" in args:
        shown["content"] = f"<{len(str(args['content']))} chars>"
    return _short(", ".join(f"{k}={v!r}" for k, v in shown.items()), 80)


def format_record(rec: dict[str, Any]) -> str:
    kind = rec["type"]
    head = f"{rec['seq']:>6} {rec['ts'][11:19]} {kind:<17}"
    if kind in ("action_started", "action_finished", "action_blocked"):
        detail = f"{rec['tool']}({_args(rec['args'])})"
        if kind == "action_finished":
            detail += f" -> {'ok' if rec['ok'] else 'error'}: {_short(rec['result'], 60)}"
        if kind == "action_blocked":
            detail += f" -> {rec.get('pattern', 'blocked')}"
        return f"{head} {detail}"
    if kind == "llm_call":
        return (
            f"{head} {rec.get('purpose', '')} {rec.get('prompt_tokens', 0)}+"
            f"{rec.get('completion_tokens', 0)} tokens, {rec.get('duration_ms', 0):.0f} ms"
        )
    if kind == "plan":
        subs = sum(len(t["subtasks"]) for t in rec["tasks"])
        return f"{head} {len(rec['tasks'])} tasks, {subs} subtasks"
    for key in ("goal", "reason", "text", "signature"):
        if rec.get(key):
            return f"{head} {_short(rec[key])}"
    return head


def listing() -> tuple[list[dict[str, Any]], list[str]]:
    """One row per registered workspace; vanished or damaged ones are shown as such."""
    from localagent.errors import AgentError
    from localagent.registry import workspaces

    notes: list[str] = []
    rows = []
    for path, entry in sorted(workspaces(notes).items()):
        row: dict[str, Any] = {
            "workspace": path,
            "goal": entry.get("goal", ""),
            "status": None,
            "alive": False,
            "pid": None,
        }
        workspace = Path(path)
        if not workspace.is_dir():
            row["status"] = "missing"
        elif not Journal(workspace).exists():
            row["status"] = "no journal"
        else:
            try:
                info = status_info(workspace)
                row.update({k: info[k] for k in ("goal", "status", "alive", "pid")})
            except AgentError as exc:
                row["status"] = "damaged"
                row["error"] = exc.message
        rows.append(row)
    return rows, notes


def format_listing(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return 'no workspaces yet; start a goal with: localagent start "GOAL"'
    lines = []
    for row in rows:
        status = row["status"] + (f" (running, pid {row['pid']})" if row["alive"] else "")
        lines.append(f"{status:<28} {row['workspace']}")
        lines.append(f"{'':<28} {_short(row.get('error') or row['goal'] or '-', 70)}")
    return "\n".join(lines)
