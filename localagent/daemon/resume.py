"""`localagent resume --all`: every goal a crash, a logout or a reboot interrupted,
each resumed in its own background process, one after another."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from localagent.daemon.spawn import spawn
from localagent.errors import AgentError
from localagent.journal import Journal
from localagent.lock import owner
from localagent.names import display


def resumable(notes: list[str]) -> list[Path]:
    """Workspaces whose goal is unfinished and was not stopped by the user: the agent
    died, was suspended waiting for the server, or was ended by a logout or shutdown."""
    from localagent.registry import workspaces

    found = []
    for path in workspaces(notes):
        workspace = Path(path)
        journal = Journal(workspace)
        try:
            if not journal.exists() or owner(journal.dir) is not None:
                continue
            state = journal.load(repair=False)
        except AgentError as exc:
            notes.append(f"skipped {display(workspace)}: {exc.message}")
            continue
        except (OSError, ValueError) as exc:
            notes.append(f"skipped {display(workspace)}: cannot read its journal ({exc})")
            continue
        if state.goal is None:
            continue
        if state.goal.status == "in_progress" or (
            state.goal.status == "stopped" and state.stopped_by != "user"
        ):
            found.append(workspace)
    return found


def resume_all(settings: Any, flags: dict[str, Any], wait: Any = time.sleep) -> str:
    """Resume every goal a crash or reboot interrupted, each in its own background process."""
    from localagent.models import make_model

    notes: list[str] = []
    targets = resumable(notes)
    if not targets:
        return "\n".join([*notes, "nothing to resume"])
    make_model(settings, wait=wait).wait_for_server()
    lines = list(notes)
    # One after another: each waits until its agent has passed the preflight, so the
    # server is not asked to load a model for every goal at the same moment.
    for workspace in targets:
        try:
            started = spawn(workspace, None, flags, preflight_wait=None)
            lines.append(started.replace("\n", "; "))
        except AgentError as exc:
            lines.append(f"{display(workspace)}: {exc.message}")
    return "\n".join(lines)
