"""`localagent list`: every registered workspace, read cheaply (the snapshot and the end
of the history, never all of it), one row each."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from localagent.journal import Journal
from localagent.names import display
from localagent.report import final_verification, local_time, running, short, visible


def _row(path: str, entry: dict[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = {
        "workspace": display(path),
        "goal": entry.get("goal", ""),
        "status": None,
        "verification": "",
        "alive": False,
        "pid": None,
    }
    workspace = Path(path)
    try:
        if not workspace.is_dir():
            row["status"] = "missing"
            return row
        journal = Journal(workspace)
        if not journal.exists():
            row["status"] = "no journal"
            return row
        text, status = journal.peek()
        row.update(goal=text or row["goal"], status=status or "no goal")
        if status in ("completed", "failed"):
            row["verification"] = final_verification(journal)
        row["alive"], row["pid"] = running(journal)
        if status == "in_progress":
            row["status"] = _in_progress(journal.tail(1), row["alive"])
    except Exception as exc:  # one unreadable workspace never hides the others
        row["status"] = "damaged"
        row["error"] = getattr(exc, "message", None) or f"cannot be read: {exc!r}"
    return row


def _in_progress(last: list[dict[str, Any]], alive: bool) -> str:
    """What a goal in progress is doing, from its last record: waiting for the model
    server (while its agent runs), suspended (when no agent does), or just working."""
    kind = last[0]["type"] if last else ""
    if kind == "waiting" and alive:
        return f"waiting for the model server since {local_time(str(last[0].get('ts', '')))}"
    if kind == "suspended" and not alive:
        return "suspended"
    return "in_progress"


def listing() -> tuple[list[dict[str, Any]], list[str]]:
    """One row per registered workspace; vanished or damaged ones are shown as such.

    Each is read cheaply: the snapshot and the end of the history, never all of it.
    """
    from localagent.registry import workspaces

    notes: list[str] = []
    rows = [_row(path, entry) for path, entry in sorted(workspaces(notes).items())]
    return rows, notes


def format_listing(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return 'no workspaces yet; start a goal with: localagent start "GOAL"'
    table = [("STATUS", "PROCESS", "WORKSPACE", "GOAL")]
    for row in rows:
        process = "-" if not row["alive"] else (f"pid {row['pid']}" if row["pid"] else "running")
        goal = short(row.get("error") or row["goal"] or "-", 60)
        status = row["status"] + (f", {row['verification']}" if row.get("verification") else "")
        table.append((visible(status), process, visible(row["workspace"]), goal))
    widths = [max(len(cells[i]) for cells in table) for i in range(3)]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(cells, widths, strict=False))
        + "  "
        + cells[3]
        for cells in table
    )
