"""`localagent resume --all`: every goal a crash, a logout or a reboot interrupted,
each resumed in its own background process, one after another, on the server its
journal names (its backend and address), each distinct server waited for at once.

What it will resume is said first (the wait for a model server can be long); the
exit code is 0 when every goal started, else the exit code of the first one that could
not (2: its journal was refused, 3: the model server or model, 4: another agent holds
the workspace, 1: anything else), so a script or a person sees that something is left.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from localagent.config.runconfig import for_run
from localagent.config.settings import Settings
from localagent.daemon.spawn import spawn
from localagent.journal import Journal
from localagent.models.config import ModelConfig
from localagent.system.errors import AgentError, ModelUnavailable, UsageError
from localagent.system.lock import owner
from localagent.system.names import display

SKIPPED_EXIT = UsageError.exit_code  # a journal that was read but refused
Goal = tuple[Path, str, dict[str, Any]]  # workspace, goal text, journaled settings
Servers = dict[tuple[str, str], tuple[ModelConfig, list[Path]]]  # by (backend, address)


def resumable(notes: list[str]) -> tuple[list[Goal], int]:
    """Workspaces (with their goals and journaled settings) whose goal is unfinished and
    was not stopped by the user: the agent died, was suspended waiting for the server,
    or was ended by a logout or shutdown. Also the exit code owed for those skipped with
    a note (0: none)."""
    from localagent.journal.registry import workspaces

    found: list[Goal] = []
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
            found.append((workspace, state.goal.text, dict(state.settings)))
    return found, code


def resume_all(
    base: Settings, flags: dict[str, Any], tell: Callable[[str], None], wait: Any = time.sleep
) -> int:
    """Resume every goal a crash or reboot interrupted, each in its own background
    process and on its own journaled server; `tell` gets each line as it is known.
    Returns the exit code (see above); raises ModelUnavailable naming each server that
    did not answer and the goals left waiting for it, after starting the others."""
    notes: list[str] = []
    targets, code = resumable(notes)
    for note in notes:
        tell(note)
    if not targets:
        tell("nothing to resume")
        return code
    tell(f"resuming {_goals(len(targets))}:")
    for workspace, goal, _ in targets:
        tell(f"  {display(workspace)}: {goal[:100]}")
    servers, code = _by_server(base, flags, targets, tell, code)
    down = _wait_for(servers, wait)
    # One after another: each waits until its agent has passed the preflight, so a
    # server is not asked to load a model for every goal at the same moment.
    for host, (_, goals) in servers.items():
        for workspace in [] if host in down else goals:
            try:
                tell(spawn(workspace, None, flags, preflight_wait=None).replace("\n", "; "))
            except AgentError as exc:
                tell(f"{display(workspace)}: could not start: {exc.message}")
                code = code or exc.exit_code
    if down:
        said = "; ".join(
            f"{why} (waiting: {', '.join(display(ws) for ws in servers[host][1])})"
            for host, why in down.items()
        )
        error = ModelUnavailable(f"{said}; then run again: localagent resume --all")
        error.exit_code = code or ModelUnavailable.exit_code
        raise error
    return code


def _by_server(
    base: Settings,
    flags: dict[str, Any],
    targets: list[Goal],
    tell: Callable[[str], None],
    code: int,
) -> tuple[dict[tuple[str, str], tuple[ModelConfig, list[Path]]], int]:
    """The goals grouped by the server each resumes on: its journaled backend and
    address, unless the command line or the environment says otherwise."""
    from localagent.config.userconfig import environment_fields
    from localagent.models import make_model

    servers: Servers = {}
    outside = environment_fields()
    for workspace, _, recorded in targets:
        try:
            settings, _ = for_run(base, recorded, flags, outside)
        except AgentError as exc:
            tell(f"skipped {display(workspace)}: {exc.message}")
            code = code or exc.exit_code
            continue
        except ValidationError as exc:
            tell(f"skipped {display(workspace)}: its settings with these flags: {exc}")
            code = code or SKIPPED_EXIT
            continue
        config = ModelConfig.of(settings)
        key = (config.backend, make_model(config).host)
        servers.setdefault(key, (config, []))[1].append(workspace)
    return servers, code


def _wait_for(servers: Servers, wait: Any) -> dict[tuple[str, str], str]:
    """Wait for every server at once (one down must not hold up the others); why each
    that never answered did not, by server."""
    from localagent.models import make_model

    def answer(config: ModelConfig) -> str:
        try:
            make_model(config, wait=wait).wait_for_server()
        except ModelUnavailable as exc:
            return exc.message
        return ""

    with ThreadPoolExecutor(max_workers=max(1, len(servers))) as pool:
        said = dict(zip(servers, pool.map(answer, [c for c, _ in servers.values()]), strict=True))
    return {host: why for host, why in said.items() if why}


def _goals(count: int) -> str:
    return "1 goal" if count == 1 else f"{count} goals"
