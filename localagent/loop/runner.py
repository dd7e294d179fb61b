"""Starting and resuming a goal in this process.

`Run` (localagent.loop.lifecycle) is the lifecycle around one run (the workspace lock, stop
signals installed and restored, the log); `run` loads or creates the goal, settles the
settings, passes the preflight and hands over to the agent loop, returning the outcome.
Only the CLI turns outcomes and errors into exit codes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from localagent.config.runconfig import for_run, journaled, server_moved
from localagent.config.settings import Settings
from localagent.journal import QUESTIONS_DIR, Disk, Journal
from localagent.loop.lifecycle import Outcome, Run, say
from localagent.loop.placement import keep_out_of_git, refuse_wide
from localagent.loop.prepare import over, prepare
from localagent.observe.liveline import LiveLine
from localagent.state import State
from localagent.system.errors import AgentError, ModelRefused, ModelUnavailable
from localagent.system.names import clean_text
from localagent.system.stopping import StopRequested

log = logging.getLogger("localagent")
REGISTER_WAIT = 1.0  # for the registry lock at the start; tried again at the end


def _configured(
    base: Settings, state: State, flags: dict[str, Any]
) -> tuple[Settings, dict[str, Any]]:
    """The run's settings and what a resume journals as changed (see runconfig)."""
    from localagent.config.userconfig import environment_fields

    settings, changed = for_run(base, state.settings, flags, environment_fields())
    return settings, {**changed, **server_moved(settings, state.settings)}


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
    patient: bool = False,
    on_ready: Callable[[str], None] | None = None,
    on_event: Callable[[dict[str, Any]], None] | None = None,
    adopt: bool = False,
    new: bool = False,
    allow_home: bool = False,
) -> Outcome:
    """Run the goal to its end in this process; returns how it ended, as journaled.

    `adopt` resumes a journal another agent wrote (otherwise refused: ForeignJournal);
    `new` puts an unfinished goal away for this one (otherwise refused); `allow_home`
    lets a goal work in the home folder or a drive root (otherwise refused). `patient`
    waits for a server that refuses connections (`resume --all` at logon, before the
    server is up); otherwise that ends the run in seconds. `on_ready` is told "preflight"
    once the server and model answered, or "suspended" when the run cannot go on. A question
    (`flags["mode"] == "ask"`) keeps its own journal, beside the goal's.
    Every ending (completed, failed, stopped, suspended) is an `Outcome`; what the caller
    must fix (bad settings, a busy or damaged workspace) raises an AgentError.
    """
    if goal is not None and (text := clean_text(goal)) != goal:
        say("the goal is not valid UTF-8 text; its undecodable bytes are read as \ufffd")
        goal = text
    if goal is not None and not allow_home:
        refuse_wide(workspace)
    part = QUESTIONS_DIR if (flags or {}).get("mode") == "ask" else ""
    with Run(workspace, disk, signals=signals, verbose=progress, part=part) as lifecycle:
        journal = lifecycle.journal
        journal.on_record = on_event
        mode = prepare(journal, goal, repair, lifecycle.log_closed, adopt=adopt, new=new)
        for note in journal.notes:
            log.warning("%s", note)
        if mode in ("completed", "failed"):
            return over(journal.state)
        keep_out_of_git(workspace)
        settings, changed = _configured(base, journal.state, flags or {})
        text = journal.state.goal.text if journal.state.goal else goal or ""
        with _registered(journal, text):
            if mode == "new":
                recorded = journaled(settings)
                journal.append("goal_started", goal=goal, model=settings.model, settings=recorded)
            log.info("%s goal: %s (model %s)", mode, journal.state.goal.text, settings.model)
            preflight = _Preflight(preflight_deadline, patient, on_ready or _nobody)
            outcome = _ending(
                lifecycle, lambda: _work(lifecycle, settings, mode, changed, progress, preflight)
            )
            lifecycle.end(outcome)
            if outcome.status == "suspended":
                preflight.on_ready("suspended")
        journal.finish()
        return outcome


def _ending(lifecycle: Run, work: Callable[[], Outcome]) -> Outcome:
    """How the work ended, whatever ended it: the goal's own end, a stop at any moment
    (the preflight, an index build, a model call), or a model server that is gone or
    refuses; with the line that says it and how to go on."""
    journal, stop = lifecycle.journal, lifecycle.stop
    try:
        outcome = work()
    except StopRequested:
        outcome = Outcome("stopped", stop.reason or "stopped", by=stop.by or "user")
    except (ModelUnavailable, ModelRefused) as exc:
        log.error("suspended: %s", exc.message)
        unavailable = isinstance(exc, ModelUnavailable)
        outcome = Outcome("suspended", exc.message, unavailable=unavailable)
    log.info("goal %s: %s", outcome.status, outcome.reason)
    return dataclasses.replace(outcome, said=_said(journal, outcome))


def _said(journal: Journal, outcome: Outcome) -> str:
    if outcome.status == "failed":
        return f"goal failed: {outcome.reason}"
    if outcome.status == "stopped":
        return f"stopped ({outcome.reason}); {journal.resume_hint()}"
    if outcome.status == "suspended":
        return f"{outcome.reason}; {journal.resume_hint()}"
    return ""


@contextlib.contextmanager
def _registered(journal: Journal, goal: str) -> Iterator[None]:
    """The workspace in the registry for `list` and `resume --all` (a question is no
    goal of theirs): a registry that was busy at the start is tried again at the end."""
    if journal.part == QUESTIONS_DIR:
        yield
        return
    registered = _remember(journal.workspace, goal, REGISTER_WAIT)
    try:
        yield
    finally:
        if not registered:
            _remember(journal.workspace, goal, 0.0, quiet=True)


class _Preflight(NamedTuple):
    deadline: float | None  # how long to wait for the server (None: the retry deadline)
    patient: bool
    on_ready: Callable[[str], None]


def _nobody(what: str) -> None:
    """Nobody waits for the run to pass its preflight (a foreground run)."""


def _remember(workspace: Path, goal: str, wait: float, quiet: bool = False) -> bool:
    """Register the workspace for `list` and `resume --all`; a registry that is busy or
    cannot be written is said, never the end of the run."""
    from localagent.journal.registry import remember

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
    preflight: _Preflight,
) -> Outcome:
    from localagent.loop.agent import Agent
    from localagent.mcp import open_servers
    from localagent.models import ModelConfig, make_model
    from localagent.system.sandbox import CommandPolicy, run_start
    from localagent.tools import ToolContext, clean_stale_temps

    journal, stop = lifecycle.journal, lifecycle.stop
    commands = CommandPolicy(settings.sandbox, settings.network, settings.pass_env)
    confined, warning = run_start(commands)  # UsageError when it is required and missing
    if warning:
        log.warning("%s", warning)
    model = make_model(ModelConfig.of(settings), stop)
    # `status` says "waiting for the model server since HH:MM" until the next call ends.
    model.on_wait = lambda reason: journal.append("waiting", reason=reason)
    info = model.preflight(preflight.deadline, preflight.patient)
    settings, sized = _profiled(settings, info.parameters)
    model.num_predict = settings.num_predict
    journal.append(
        "preflight",
        backend=model.backend,
        num_ctx=model.num_ctx,
        native_tools=model.native_tools,
        capabilities=info.capabilities,
        **({"parameters": round(info.parameters, 2)} if info.parameters else {}),
        **({"tools": list(sized)} if sized else {}),
        profile=settings.profile,
        sandbox=confined,
    )
    preflight.on_ready("preflight")
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
        delegates=settings.delegates,
        commands=commands,
        mend_syntax=settings.profile == "small",
    )
    if settings.mode == "ask":
        from localagent.research.ask import Research

        return Research(journal, model, settings, ctx, stop).run()
    with (
        _live(journal, settings, progress, model.received) as show,
        open_servers(settings.mcp.servers, journal.workspace) as mcp,
    ):
        if mcp.records:
            journal.append("mcp_servers", servers=mcp.records)
        for problem in mcp.problems:
            say(problem.removeprefix("NOTE: "))
        agent = Agent(journal, model, settings, ctx, stop, on_progress=show, extra_tools=mcp.tools)
        # Nothing about the restart itself: a resumed run's first prompt is the one the
        # crashed run would have sent, so the server's prompt cache still serves it.
        agent.notice = "\n".join(mcp.problems)
        return agent.run()


@contextlib.contextmanager
def _live(
    journal: Journal, settings: Settings, progress: bool, received: Callable[[], int]
) -> Iterator[Callable[[State], None]]:
    """The live line's update for the agent's steps, told every record as well (the
    step it starts); a no-op without `progress`."""
    if not progress:
        yield lambda state: None
        return
    line, told = LiveLine(settings, received), journal.on_record

    def record(rec: dict[str, Any]) -> None:
        if told is not None:
            told(rec)
        line.record(rec)

    journal.on_record = record
    try:
        yield line.show
    finally:
        journal.on_record = told
        line.close()


def _profiled(settings: Settings, billions: float | None) -> tuple[Settings, tuple[str, ...]]:
    """The settings with the run's profile chosen, its cap on a reply's tokens, and the
    short tool set when the small profile chose it (empty when it did not)."""
    from localagent.tools.catalog import choose_profile, num_predict_for_profile, tools_for_profile

    profile = choose_profile(settings.profile, billions)
    sized = tools_for_profile(profile, settings.tools) or ()
    size = f"{billions:.1f}B parameters" if billions else "no model size"
    log.info("the %s profile (the server says %s)", profile, size)
    update: dict[str, Any] = {"profile": profile, "tools": sized or settings.tools}
    update["num_predict"] = num_predict_for_profile(profile, settings.num_predict)
    return settings.model_copy(update=update), sized
