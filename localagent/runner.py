"""Starting and resuming a goal in this process.

`Run` (localagent.lifecycle) is the lifecycle around one run (the workspace lock, stop
signals installed and restored, the log); `run` loads or creates the goal, settles the
settings, passes the preflight and hands over to the agent loop, returning the outcome.
Only the CLI turns outcomes and errors into exit codes.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from localagent.console import live_line_supported
from localagent.errors import (
    AgentError,
    GoalFailed,
    Interrupted,
    JournalCorrupt,
    ModelUnavailable,
    UsageError,
)
from localagent.journal import CONTEXT_DIR, Disk, Journal
from localagent.lifecycle import Run, say
from localagent.names import clean_text, display
from localagent.settings import RUN_SETTINGS, Settings
from localagent.state import State, counts, current
from localagent.stopping import StopRequested

log = logging.getLogger("localagent")
REGISTER_WAIT = 1.0  # for the registry lock at the start; tried again at the end


def resume_mode(journal: Journal, state: State) -> str:
    """ "resume", or the final status of a goal that is over; nothing at all is bad usage."""
    if state.goal is None:
        raise UsageError(
            f"nothing to resume in {display(journal.workspace)}; start a goal with: "
            f'localagent start "GOAL"'
        )
    if state.goal.status in ("completed", "failed"):
        return state.goal.status
    return "resume"


def prepare(
    journal: Journal,
    goal: str | None,
    repair: bool = False,
    archiving: Callable[[], AbstractContextManager[None]] = contextlib.nullcontext,
) -> str:
    """Load or create the goal; returns "new", "resume", or the final status if it is over.

    A new goal moves the previous one's files to the archive, inside `archiving()`: the
    caller closes what it holds open among them (the log) and opens it anew after."""
    state = journal.load(accept_loss=repair) if repair else journal.load()
    if goal is None:
        return resume_mode(journal, state)
    if (
        state.goal is not None
        and state.goal.text == goal
        and state.goal.status in ("in_progress", "stopped")
    ):
        return "resume"
    if journal.exists():
        with archiving():
            target = journal.archive()
        if target is not None:
            log.info("archived the previous goal to %s", display(target))
    return "new"


def effective_settings(
    base: Settings, state: State, flags: dict[str, Any]
) -> tuple[Settings, dict[str, Any]]:
    """The run's settings: journaled ones win over the environment, flags over both.

    Returns them and the flags that changed a journaled value (journaled on resume).
    """
    given = {k: v for k, v in flags.items() if v is not None}
    journaled = {k: v for k, v in state.settings.items() if k in RUN_SETTINGS}
    merged = {**base.model_dump(), **journaled, **given}
    changed = {k: v for k, v in given.items() if journaled.get(k) != v}
    try:
        return Settings(**merged), changed
    except ValidationError as exc:
        error = exc.errors()[0]
        field = str(error["loc"][0]) if error["loc"] else "?"
        if field not in journaled or field in given:
            raise  # the environment and flags were checked when they were read
        raise JournalCorrupt(
            f"the run setting {field} journaled in {CONTEXT_DIR}/history.jsonl is invalid "
            f"({error['msg']}); give it on the command line to replace it (see `localagent "
            "resume --help`), or start the goal afresh"
        ) from None


def run_settings(settings: Settings) -> dict[str, Any]:
    return settings.model_dump(mode="json", include=set(RUN_SETTINGS))


def run(
    workspace: Path,
    goal: str | None,
    base: Settings,
    flags: dict[str, Any] | None = None,
    *,
    progress: bool = False,
    disk: Disk | None = None,
    repair: bool = False,
    signals: bool = True,
    preflight_deadline: float | None = None,
    on_event: Callable[[dict[str, Any]], None] | None = None,
) -> str:
    """Run the goal to its end in this process; returns the final goal status.

    Raises GoalFailed (exit 1), Interrupted (exit 130) and the errors of the pieces.
    """
    if goal is not None and (text := clean_text(goal)) != goal:
        say("the goal is not valid UTF-8 text; its undecodable bytes are read as \ufffd")
        goal = text
    with Run(workspace, disk, signals=signals, verbose=progress) as lifecycle:
        journal = lifecycle.journal
        journal.on_record = on_event
        mode = prepare(journal, goal, repair, archiving=lifecycle.log_closed)
        for note in journal.notes:
            log.warning("%s", note)
        if mode in ("completed", "failed"):
            return over(journal.state)
        settings, changed = effective_settings(base, journal.state, flags or {})
        text = journal.state.goal.text if journal.state.goal else goal or ""
        registered = _remember(workspace, text, REGISTER_WAIT)
        if mode == "new":
            journal.append(
                "goal_started", goal=goal, model=settings.model, settings=run_settings(settings)
            )
        log.info("%s goal: %s (model %s)", mode, journal.state.goal.text, settings.model)
        try:
            outcome = _work(lifecycle, settings, mode, changed, progress, preflight_deadline)
        finally:
            if not registered:  # a registry that was busy at the start may be free now
                _remember(workspace, text, 0.0, quiet=True)
        journal.finish()
        return _finish(journal, outcome)


def _remember(workspace: Path, goal: str, wait: float, quiet: bool = False) -> bool:
    """Register the workspace for `list` and `resume --all`; a registry that is busy or
    cannot be written is said, never the end of the run."""
    from localagent.registry import remember

    try:
        remember(workspace, goal, wait=wait)
    except AgentError as exc:
        if not quiet:
            log.warning("%s", exc.message)
            say(exc.message)
        return False
    return True


def _work(
    lifecycle: Run,
    settings: Settings,
    mode: str,
    changed: dict[str, Any],
    progress: bool,
    preflight_deadline: float | None,
) -> str:
    from localagent.agent import Agent
    from localagent.mcp import open_servers
    from localagent.models import make_model
    from localagent.tools import ToolContext, clean_stale_temps
    from localagent.tools.catalog import tools_for_size

    journal, stop = lifecycle.journal, lifecycle.stop
    model = make_model(settings, stop)
    # `status` says "waiting for the model server since HH:MM" until the next call ends.
    model.on_wait = lambda reason: journal.append("waiting", reason=reason)
    try:
        info = model.preflight(preflight_deadline)
    except ModelUnavailable as exc:
        log.error("suspended: %s", exc.message)
        journal.append("suspended", reason=exc.message)
        raise
    except StopRequested:
        journal.append("stopped", reason=stop.reason or "stopped", by=stop.by)
        return "stopped"
    sized = tools_for_size(info.parameters) if settings.tools is None else None
    if sized:
        settings = settings.model_copy(update={"tools": sized})
        log.info("a %.1fB model: the short tool set (%s)", info.parameters, ", ".join(sized))
    journal.append(
        "preflight",
        backend=model.backend,
        num_ctx=model.num_ctx,
        native_tools=model.native_tools,
        capabilities=info.capabilities,
        **({"parameters": round(info.parameters, 2)} if info.parameters else {}),
        **({"tools": list(sized)} if sized else {}),
    )
    if mode == "resume":
        journal.append("resumed", model=settings.model, settings=changed)
    removed = clean_stale_temps(journal.workspace)
    if removed:
        log.info("removed %d temporary files an interrupted write left behind", removed)
    ctx = ToolContext(
        root=journal.workspace,
        allowed_commands=settings.allowed_commands,
        cancelled=lambda: stop.requested() is not None,
        outputs=journal.output_store(settings.output_store_mb << 20),
        delegates={n: (d.command, d.timeout_sec) for n, d in settings.delegates.items()},
    )
    if settings.mode == "ask":
        from localagent.research.ask import Research

        return Research(journal, model, settings, ctx, stop).run()
    show = Progress(settings).show if progress else lambda state: None
    with open_servers(settings.mcp.servers, journal.workspace) as mcp:
        if mcp.records:
            journal.append("mcp_servers", servers=mcp.records)
        for problem in mcp.problems:
            say(problem.removeprefix("NOTE: "))
        agent = Agent(journal, model, settings, ctx, stop, on_progress=show, extra_tools=mcp.tools)
        notices = [agent.prompts.render("resumed_notice")] if mode == "resume" else []
        agent.notice = "\n".join(notices + mcp.problems)
        return agent.run()


def over(state: State) -> str:
    """The outcome of a goal that already ended: completed, or GoalFailed."""
    assert state.goal is not None
    if state.goal.status == "failed":
        raise GoalFailed(
            f"the goal already failed ({state.goal.reason}); to try again, run "
            f"localagent start with the same goal"
        )
    log.info("the goal is already completed; nothing to resume")
    return "completed"


def _finish(journal: Journal, outcome: str) -> str:
    goal = journal.state.goal
    assert goal is not None
    log.info("goal %s: %s", outcome, goal.reason)
    if outcome == "failed":
        raise GoalFailed(f"goal failed: {goal.reason}")
    if outcome == "stopped":
        raise Interrupted(
            f"stopped ({goal.reason}); continue with: localagent resume -w "
            f"{display(journal.workspace)}"
        )
    return outcome


class Progress:
    """A live line on stderr: round, task, subtask, tokens."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.tty = live_line_supported(sys.stderr)
        self.last = ""

    def show(self, state: State) -> None:
        here = current(state)
        c = counts(state)
        where = (
            (f"task {state.task_index + 1}/{len(state.goal.tasks)} · {here[1].description[:50]}")
            if here and state.goal
            else "finishing"
        )
        tokens = state.tokens.prompt + state.tokens.completion
        line = (
            f"round {state.rounds}/{self.settings.max_rounds} · {c['completed']}/"
            f"{c['subtasks']} done · {where} · {tokens:,} tokens"
        )
        if line == self.last:
            return
        self.last = line
        try:
            sys.stderr.write(("\r\x1b[2K" if self.tty else "") + line + ("" if self.tty else "\n"))
            sys.stderr.flush()
        except (OSError, ValueError):
            pass  # a closed terminal must not end the run
