"""Starting and resuming a goal in this process: lock, journal, model, agent, outcome.

`run` is what both `start --foreground` and the background process execute.
"""

from __future__ import annotations

import logging
import sys
from logging.handlers import RotatingFileHandler
from pathlib import Path

from localagent.agent import Agent
from localagent.errors import GoalFailed, Interrupted, UsageError
from localagent.journal import Disk, Journal
from localagent.lock import WorkspaceLock
from localagent.model import OllamaModel
from localagent.registry import remember
from localagent.settings import Settings
from localagent.state import State, counts, current
from localagent.stopping import StopRequested, StopSignal
from localagent.tools import ToolContext

log = logging.getLogger("localagent")


def resume_mode(journal: Journal, state: State) -> str:
    """ "resume", or the final status of a goal that is over; nothing at all is bad usage."""
    if state.goal is None:
        raise UsageError(
            f'nothing to resume in {journal.workspace}; start a goal with: localagent start "GOAL"'
        )
    if state.goal.status in ("completed", "failed"):
        return state.goal.status
    return "resume"


def prepare(journal: Journal, goal: str | None) -> str:
    """Load or create the goal; returns "new", "resume", or the final status if it is over."""
    state = journal.load()
    if goal is None:
        return resume_mode(journal, state)
    if (
        state.goal is not None
        and state.goal.text == goal
        and state.goal.status in ("in_progress", "stopped")
    ):
        return "resume"
    if journal.exists():
        target = journal.archive()
        if target is not None:
            log.info("archived the previous goal to %s", target)
    return "new"


def _logging(journal: Journal, verbose: bool) -> logging.Handler:
    journal.dir.mkdir(parents=True, exist_ok=True)
    handler = RotatingFileHandler(
        journal.log_path, maxBytes=1_000_000, backupCount=3, encoding="utf-8"
    )
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger("localagent")
    root.setLevel(logging.INFO)
    root.addHandler(handler)
    if verbose:
        console = logging.StreamHandler(sys.stderr)
        console.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
        console.setLevel(logging.WARNING)
        root.addHandler(console)
    return handler


def run(
    workspace: Path,
    goal: str | None,
    settings: Settings,
    *,
    progress: bool = False,
    disk: Disk | None = None,
) -> str:
    """Run the goal to its end in this process; returns the final goal status.

    Raises GoalFailed (exit 1), Interrupted (exit 130) and the errors of the pieces.
    """
    journal = Journal(workspace, disk)
    lock = WorkspaceLock(journal.dir)
    lock.acquire(journal.log_path)
    stop = StopSignal(journal.stop_requested)
    stop.install()
    handler = None
    try:
        journal.clear_stop()
        mode = prepare(journal, goal)
        handler = _logging(journal, verbose=progress)
        for note in journal.notes:
            log.warning("%s", note)
        if mode in ("completed", "failed"):
            return over(journal.state)
        remember(workspace, journal.state.goal.text if journal.state.goal else goal or "")
        if mode == "new":
            journal.append("goal_started", goal=goal, model=settings.model)
        else:
            journal.append("resumed", model=settings.model)
        log.info("%s goal: %s", mode, journal.state.goal.text)
        model = OllamaModel(settings, wait=stop.wait)
        ctx = ToolContext(
            root=workspace,
            allowed_commands=settings.allowed_commands,
            cancelled=lambda: stop.requested() is not None,
        )
        agent = Agent(
            journal,
            model,
            settings,
            ctx,
            stop,
            on_progress=Progress(settings).show if progress else lambda s: None,
        )
        try:
            with stop.abandonable():
                model.preflight()
            if not journal.state.goal.tasks:
                with stop.abandonable():
                    agent.plan()
            outcome = agent.run()
        except StopRequested:
            journal.append("stopped", reason=stop.reason or "stopped")
            outcome = "stopped"
        journal.finish()
        return _finish(journal, outcome)
    finally:
        journal.finish(best_effort=True)
        if handler is not None:
            logging.getLogger("localagent").removeHandler(handler)
            handler.close()
        lock.release()


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
            f"stopped ({goal.reason}); continue with: localagent resume -w {journal.workspace}"
        )
    return outcome


class Progress:
    """A live line on stderr: round, task, subtask, tokens."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.tty = sys.stderr.isatty()
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
        if self.tty:
            sys.stderr.write("\r\x1b[2K" + line)
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()
