"""`localagent list`: every registered workspace, read cheaply (the snapshot and the end
of the history, never all of it), one row each, the most recently active first.

A row's `status` is the word `status --json` uses for the same goal (see
`report.shown_status`), or "missing" (the folder is gone) or "damaged" (its journal
cannot be read; `error` says why); null when the folder holds no goal.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from localagent.journal import Journal
from localagent.journal.archive import archived
from localagent.observe.report import (
    JSON_SCHEMA,
    final_verification,
    last_activity,
    local_datetime,
    local_time,
    running,
    short,
    shown_status,
    visible,
)
from localagent.system.names import display


def _row(path: str, entry: dict[str, Any]) -> dict[str, Any]:
    updated = entry.get("updated")
    row: dict[str, Any] = {
        "workspace": display(path),
        "goal": entry.get("goal") or None,
        "status": None,
        "verification": None,
        "alive": False,
        "pid": None,
        "waiting": None,
        "last_activity": updated if isinstance(updated, str) else None,
        "archived": 0,
        "error": None,
    }
    workspace = Path(path)
    try:
        if not workspace.is_dir():
            row["status"] = "missing"
            return row
        journal = Journal(workspace)
        row["archived"] = len(archived(journal))
        if journal.exists():
            _read(journal, row)
    except Exception as exc:  # one unreadable workspace never hides the others
        row["status"] = "damaged"
        row["error"] = getattr(exc, "message", None) or f"cannot be read: {exc!r}"
    return row


def _read(journal: Journal, row: dict[str, Any]) -> None:
    """The goal's part of the row, from the snapshot and the end of the history."""
    text, status = journal.peek()
    row["goal"] = text or row["goal"]
    row["last_activity"] = last_activity(journal) or row["last_activity"]
    if status in ("completed", "failed"):
        row["verification"] = final_verification(journal) or None
    row["alive"], row["pid"] = running(journal)
    last = journal.tail(1)[-1:] if status == "in_progress" else []
    kind = last[0]["type"] if last else ""
    row["status"] = shown_status(status, kind == "suspended", row["alive"])
    if kind == "waiting" and row["alive"]:
        row["waiting"] = {"since": str(last[0].get("ts", "")), "reason": last[0].get("reason")}


def listing() -> tuple[list[dict[str, Any]], list[str]]:
    """One row per registered workspace, the most recently active first; vanished or
    damaged ones are shown as such. Each is read cheaply: the snapshot and the end of
    the history, never all of it."""
    from localagent.journal.registry import workspaces

    notes: list[str] = []
    rows = [_row(path, entry) for path, entry in workspaces(notes).items()]
    rows.sort(key=lambda row: (row["last_activity"] or "", row["workspace"]), reverse=True)
    return rows, notes


def as_json(rows: list[dict[str, Any]], notes: list[str]) -> dict[str, Any]:
    """What `list --json` prints."""
    return {"schema": JSON_SCHEMA, "workspaces": rows, "notes": notes}


def _status_text(row: dict[str, Any]) -> str:
    if row["waiting"]:
        return f"waiting for the model server since {local_time(row['waiting']['since'])}"
    status = row["status"] or "no goal"
    return status + (f", {row['verification']}" if row.get("verification") else "")


def format_listing(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return 'no workspaces yet; start a goal with: localagent start "GOAL"'
    table = [("LAST ACTIVE", "STATUS", "PROCESS", "WORKSPACE", "GOAL")]
    for row in rows:
        process = "-" if not row["alive"] else (f"pid {row['pid']}" if row["pid"] else "running")
        goal = short(row.get("error") or row["goal"] or "-", 60)
        if row["archived"]:
            goal += f" (+{row['archived']} archived)"
        when = local_datetime(row["last_activity"])
        table.append((when, visible(_status_text(row)), process, visible(row["workspace"]), goal))
    widths = [max(len(cells[i]) for cells in table) for i in range(4)]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(cells, widths, strict=False))
        + "  "
        + cells[4]
        for cells in table
    )
