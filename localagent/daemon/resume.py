"""`localagent resume --all`: every goal a crash, a logout or a reboot interrupted,
each resumed in its own background process, one after another.

What it will resume is said first (the wait for the model server can be long); the
exit code is 0 when every goal started, else the exit code of the first one that could
not (2: its journal was refused, 3: the model server or model, 4: another agent holds
the workspace, 1: anything else), so a script or a person sees that something is left.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from localagent.daemon.spawn import spawn
from localagent.errors import AgentError, ModelUnavailable, UsageError
from localagent.journal import Journal
from localagent.lock import owner
from localagent.names import display

SKIPPED_EXIT = UsageError.exit_code  # a journal that was read but refused


def resumable(notes: list[str]) -> tuple[list[tuple[Path, str]], int]:
    """Workspaces (with their goals) whose goal is unfinished and was not stopped by the
    user: the agent died, was suspended waiting for the server, or was ended by a logout
    or shutdown. Also the exit code owed for those skipped with a note (0: none)."""
    from localagent.registry import workspaces

    found: list[tuple[Path, str]] = []
    code = 0
    for path in workspaces(notes):
        workspace = Path(path)
        journal = Journal(workspace)
        try:
            if not journal.exists() or owner(journal.dir) is not None:
                continue
            state = journal.load(repair=False)
        except AgentError as exc:
            notes.append(f"skipped {display(workspace)}: {exc.message}")
            code = code or exc.exit_code
            continue
        except (OSError, ValueError) as exc:
            notes.append(f"skipped {display(workspace)}: cannot read its journal ({exc})")
            code = code or SKIPPED_EXIT
            continue
        if state.goal is None:
            continue
        if journal.foreign:
            notes.append(
                f"skipped {display(workspace)}: its journal was not written by this user's "
                f"agent ({journal.foreign}); see what it would run with: localagent resume "
                f"-w {display(workspace)}"
            )
            code = code or SKIPPED_EXIT
            continue
        if state.goal.status == "in_progress" or (
            state.goal.status == "stopped" and state.stopped_by != "user"
        ):
            found.append((workspace, state.goal.text))
    return found, code


def resume_all(
    settings: Any, flags: dict[str, Any], tell: Callable[[str], None], wait: Any = time.sleep
) -> int:
    """Resume every goal a crash or reboot interrupted, each in its own background
    process; `tell` gets each line as it is known. Returns the exit code (see above)."""
    from localagent.models import make_model

    notes: list[str] = []
    targets, code = resumable(notes)
    for note in notes:
        tell(note)
    if not targets:
        tell("nothing to resume")
        return code
    tell(f"resuming {_goals(len(targets))}:")
    for workspace, goal in targets:
        tell(f"  {display(workspace)}: {goal[:100]}")
    try:
        make_model(settings, wait=wait).wait_for_server()
    except ModelUnavailable as exc:
        raise ModelUnavailable(f"{exc.message}; then run again: localagent resume --all") from None
    # One after another: each waits until its agent has passed the preflight, so the
    # server is not asked to load a model for every goal at the same moment.
    for workspace, _ in targets:
        try:
            started = spawn(workspace, None, flags, preflight_wait=None)
            tell(started.replace("\n", "; "))
        except AgentError as exc:
            tell(f"{display(workspace)}: could not start: {exc.message}")
            code = code or exc.exit_code
    return code


def _goals(count: int) -> str:
    return "1 goal" if count == 1 else f"{count} goals"
