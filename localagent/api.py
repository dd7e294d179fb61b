"""Driving localagent from Python: start or resume a goal, get a result object.

    from localagent import run_goal

    result = run_goal("Write hello.py that prints Hello", workspace="proj", model="qwen3:8b")
    print(result.status, result.verification, result.files_written)

    from localagent.api import diff, rewind  # (`localagent.rewind` is the package)

    for step in diff("proj"):  # what each step changed, as unified diffs
        print(step["seq"], step["tool"], [f["path"] for f in step["files"]])
    rewind("proj", last=True)  # undo the last step; run_goal() then resumes

The run is the CLI's foreground run (the same settings model, journal, workspace lock and
loop), made safe to embed: callable from any thread, no signal handlers unless asked,
and whatever it changed in the process (log handlers and level) is restored. A goal that
fails, is stopped or finds no model server comes back as a `RunResult`; what the caller
must fix (bad settings, a busy or damaged workspace) raises `localagent.system.errors.AgentError`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Event = dict[str, Any]


@dataclass(frozen=True)
class RunResult:
    """How a run ended: `status` is completed, failed, stopped or suspended (no model
    server or model; resumable), with the goal's `reason` and `verification`."""

    status: str
    reason: str
    workspace: Path
    goal: str = ""
    verification: str = ""
    rounds: int = 0
    tokens: dict[str, int] = field(default_factory=dict)
    files_written: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status == "completed"


def run_goal(
    goal: str | None = None,
    workspace: str | Path = ".",
    *,
    on_event: Callable[[Event], None] | None = None,
    signals: bool = False,
    **settings: Any,
) -> RunResult:
    """Start `goal` in `workspace` (or resume its unfinished goal when `goal` is None) and
    work until it ends. `settings` are the settings of the config file (`model=...`,
    `max_rounds=...`, `checks=[...]`, `tools=[...]`), over the config file and the
    environment as CLI flags are. `on_event` receives each journal record just after it
    is written durably, on the calling thread; an exception it raises is logged and the
    run goes on. `signals=True` installs Ctrl-C/SIGTERM handlers (main thread only) for
    the run and restores the previous ones after."""
    from localagent.config.userconfig import load_settings
    from localagent.journal import Journal
    from localagent.loop.runner import run

    root = Path(workspace).expanduser().resolve()
    flags = {key: value for key, value in settings.items() if value is not None}
    base = load_settings(**flags)
    outcome = run(root, goal, base, flags, signals=signals, on_event=on_event)
    state = Journal(root).load()
    assert state.goal is not None
    return RunResult(
        status=outcome.status,
        reason=outcome.reason,
        workspace=root,
        goal=state.goal.text,
        verification=state.verification,
        rounds=state.rounds,
        tokens={"prompt": state.tokens.prompt, "completion": state.tokens.completion},
        files_written=sorted(state.ledger.writes),
    )


def request_stop(workspace: str | Path = ".") -> None:
    """Ask the run in `workspace` (in this process or another) to stop after its current
    step, as `localagent stop` does; the goal stays resumable."""
    from localagent.journal import Journal

    Journal(Path(workspace).expanduser().resolve()).request_stop()


@dataclass(frozen=True)
class RewindResult:
    """What a rewind did: `to` is the step (seq) the workspace is back to just before;
    `restored` and `removed` the files put back; `left` those left as they were (their
    content was not kept, or they changed meanwhile); `finished` when it was a rewind a
    kill had cut short, finished."""

    to: int
    restored: list[str]
    removed: list[str]
    left: list[str]
    finished: bool = False


def diff(
    workspace: str | Path = ".", *, round: int | None = None, since: int | None = None
) -> list[dict[str, Any]]:
    """The steps that changed files (all, those of round `round`, or from seq `since`):
    each a dict with `seq`, `kind` (agent, outside or rewind), `round`, `tool`, `what`,
    `undone_by` and `files`, each file with `path`, `before`, `after` (content ids) and
    `text` (its unified diff), as `localagent diff` shows them. UsageError if none ran."""
    from localagent.rewind.diff import as_dicts

    return as_dicts(Path(workspace).expanduser().resolve(), round, since)


def rewind(
    workspace: str | Path = ".",
    *,
    to: int | str | None = None,
    last: bool = False,
    force: bool = False,
) -> RewindResult:
    """Put the workspace back as it was just before round `to` (an int), step `to` ("s57")
    or, with `last`, the agent's last step, as `localagent rewind` does. A refusal (the
    user changed a file since, unless `force`) raises UsageError; an agent running in the
    workspace, WorkspaceBusy."""
    from localagent.rewind.command import rewind as rewind_to

    where = None if to is None else str(to)
    done = rewind_to(Path(workspace).expanduser().resolve(), where, last, force)
    return RewindResult(
        to=done.to,
        restored=[path for path, _, want in done.files if want is not None],
        removed=[path for path, _, want in done.files if want is None],
        left=list(done.left),
        finished=done.finished is not None,
    )
