"""Archived goals (`.agent_context/archive/<timestamp>/`) as `history --archive N` shows
them: read where they lie, never moved back or changed."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from localagent.journal import ARCHIVE_DIR, Journal
from localagent.journal.archive import archived
from localagent.journal.reading import History
from localagent.observe.report import short
from localagent.system.errors import UsageError
from localagent.system.names import display

SHOWN = 10  # archived goals named when the one asked for does not exist


def put_away_at(name: str) -> str:
    """An archive folder's name (its UTC timestamp) as the user's wall clock."""
    try:
        when = datetime.strptime(name, "%Y%m%dT%H%M%S%fZ").replace(tzinfo=UTC)
    except ValueError:
        return name
    return when.astimezone().strftime("%Y-%m-%d %H:%M")


def _describe(history: History) -> str:
    try:
        text, status = history.peek()
    except Exception as exc:  # a damaged archive is still listed, as damaged
        return f"(cannot be read: {getattr(exc, 'message', None) or exc!r})"
    return f"{short(text or '-', 60)} ({status or 'no goal'})"


def open_archive(workspace: Path, n: int) -> tuple[History, str]:
    """Archived goal `n` (1: the latest) and a line that says which it is; a UsageError
    that lists the archived goals when there is no such one."""
    names = archived(Journal(workspace))
    views = [History(workspace, part=f"{ARCHIVE_DIR}/{name}") for name in names]
    if 1 <= n <= len(names):
        head = f"archived goal {n} of {len(names)}, put away {put_away_at(names[n - 1])}"
        return views[n - 1], f"{head}: {_describe(views[n - 1])}"
    where = display(workspace)
    if not names:
        raise UsageError(f"no archived goals in {where}")
    shown = "; ".join(
        f"{i} ({put_away_at(name)}) {_describe(view)}"
        for i, (name, view) in enumerate(zip(names[:SHOWN], views, strict=False), start=1)
    )
    more = f"; and {len(names) - SHOWN} older" if len(names) > SHOWN else ""
    count = "1 archived goal" if len(names) == 1 else f"{len(names)} archived goals"
    raise UsageError(f"{where} has {count}: {shown}{more}; choose one with --archive N")
