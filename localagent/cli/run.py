"""Running goals: start, resume, the background agent, stop."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from localagent.cli.app import (
    BackendOpt,
    BaseUrlOpt,
    CheckOpt,
    ForegroundOpt,
    ModelOpt,
    NoVerifyOpt,
    ProfileOpt,
    PromptsOpt,
    RepairOpt,
    RoundsOpt,
    ToolsOpt,
    WorkspaceOpt,
    _need_folder,
    _usage,
    _workspace,
    app,
)
from localagent.system.console import say
from localagent.system.errors import AgentError

if TYPE_CHECKING:
    from localagent.config.settings import Settings

AdoptOpt = Annotated[
    bool,
    typer.Option(
        "--adopt",
        help="Resume a journal this user's agent did not write (a cloned or copied "
        "workspace): its settings and owed calls run, and it counts as yours from then on.",
    ),
]
NewOpt = Annotated[
    bool,
    typer.Option(
        "--new",
        help="Start GOAL afresh even if the workspace holds an unfinished goal (that goal "
        "is put away in .agent_context/archive/; see `history --archive`).",
    ),
]
AllowHomeOpt = Annotated[
    bool,
    typer.Option(
        "--allow-home",
        help="Let the workspace be your home folder or the root of a drive (refused "
        "otherwise: a goal there may read and change all of it).",
    ),
]


@app.command()
def start(
    goal: Annotated[str, typer.Argument(help="What to achieve, in plain words.")],
    workspace: WorkspaceOpt = Path("."),
    model: ModelOpt = None,
    max_rounds: RoundsOpt = None,
    foreground: ForegroundOpt = False,
    check: CheckOpt = None,
    no_verify: NoVerifyOpt = False,
    tools: ToolsOpt = None,
    backend: BackendOpt = None,
    base_url: BaseUrlOpt = None,
    profile: ProfileOpt = None,
    prompts: PromptsOpt = None,
    adopt: AdoptOpt = False,
    new: NewOpt = False,
    allow_home: AllowHomeOpt = False,
) -> None:
    """Start work on GOAL (or resume it if the workspace holds it unfinished).

    A workspace that holds another unfinished goal is refused unless --new."""
    if not goal.strip():
        raise _usage("the goal is empty; say what to achieve")
    verification = {**_run_flags(check, no_verify, tools, backend), "profile": profile}
    verification["server"] = base_url
    _run(
        workspace,
        goal.strip(),
        model,
        max_rounds,
        foreground,
        verification=verification,
        prompts=prompts,
        adopt=adopt,
        new=new,
        allow_home=allow_home,
    )


def _run_flags(
    check: list[str] | None, no_verify: bool, tools: str | None, backend: str | None
) -> dict[str, Any]:
    """`--check`, `--no-verify`, `--tools` and `--backend` as setting flags (None: not
    given)."""
    if check and not all(c.strip() for c in check):
        raise _usage('--check needs a command, e.g. --check "python -m pytest -q"')
    names = tuple(n.strip() for n in (tools or "").split(",") if n.strip())
    if tools is not None and not names:
        raise _usage("--tools needs tool names, e.g. --tools read_file,write_file,run_cmd")
    return {
        "checks": tuple(c.strip() for c in check) if check else None,
        "verify": False if no_verify else None,
        "tools": names or None,
        "backend": backend,
    }


@app.command()
def resume(
    workspace: WorkspaceOpt = Path("."),
    all_: Annotated[
        bool, typer.Option("--all", help="Resume every unfinished goal of this user.")
    ] = False,
    model: ModelOpt = None,
    max_rounds: RoundsOpt = None,
    foreground: ForegroundOpt = False,
    repair: RepairOpt = False,
    tools: ToolsOpt = None,
    backend: BackendOpt = None,
    base_url: BaseUrlOpt = None,
    profile: ProfileOpt = None,
    prompts: PromptsOpt = None,
    adopt: AdoptOpt = False,
) -> None:
    """Resume the unfinished goal of the workspace (--all: of every workspace).

    A flag given here (--model, --max-rounds, --tools, --backend, --base-url, --profile,
    --prompts) changes the run's journaled setting.
    """
    if all_ and prompts is not None:
        raise _usage("--prompts applies to one workspace; it cannot be given with --all")
    if all_ and adopt:
        raise _usage("--adopt applies to one workspace, after reading what it would run")
    named = {**_run_flags(None, False, tools, backend), "profile": profile, "server": base_url}
    given = {k: v for k, v in named.items() if v is not None}
    if all_:
        from localagent.config.runconfig import base_settings
        from localagent.daemon.resume import resume_all

        flags = {"model": model, "max_rounds": max_rounds, **given}
        if code := resume_all(base_settings(flags), flags, say):
            raise typer.Exit(code)  # a goal could not start: the code of the first
        return
    _run(
        workspace, None, model, max_rounds, foreground, repair, given, prompts=prompts, adopt=adopt
    )


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="A question about the workspace's code.")],
    workspace: WorkspaceOpt = Path("."),
    model: ModelOpt = None,
    foreground: ForegroundOpt = False,
    allow_home: AllowHomeOpt = False,
) -> None:
    """Research a question about the code; the answer (saved under .agent_context/answers/)
    cites the code it read, and never changes the workspace. It keeps its own journal
    (.agent_context/ask/), so it runs beside the workspace's goal without touching it."""
    from localagent.config.runconfig import base_settings

    ws = _workspace(workspace)
    if not question.strip():
        raise _usage("the question is empty; ask something about the code")
    _need_folder(ws)
    flags = {"model": model, "mode": "ask"}
    settings = base_settings(flags)
    if not foreground:
        from localagent.daemon.spawn import spawn

        say(spawn(ws, question, flags, allow_home=allow_home))
        return
    from localagent.journal import QUESTIONS_DIR, Journal
    from localagent.loop.runner import run
    from localagent.research.answer import saved_answer
    from localagent.system.exits import conclude

    outcome = run(ws, question, settings, flags, progress=True, allow_home=allow_home)
    if outcome.status == "completed":
        say(saved_answer(Journal(ws, part=QUESTIONS_DIR)) or "")
    conclude(outcome)


@app.command()
def stop(
    workspace: WorkspaceOpt = Path("."),
    grace: Annotated[
        float, typer.Option("--grace", help="Seconds to wait before forcing.", min=0)
    ] = 15.0,
) -> None:
    """Stop the running agent after its current step; the goal stays resumable."""
    from localagent.daemon.stop import stop as stop_agent

    say(stop_agent(_workspace(workspace), grace))


def _run(
    workspace: Path,
    goal: str | None,
    model: str | None,
    max_rounds: int | None,
    foreground: bool,
    repair: bool = False,
    verification: dict[str, Any] | None = None,
    prompts: Path | None = None,
    adopt: bool = False,
    new: bool = False,
    allow_home: bool = False,
) -> None:
    from localagent.config.runconfig import base_settings

    folder = prompts.expanduser().resolve() if prompts else None
    flags = {"model": model, "max_rounds": max_rounds, **(verification or {})}
    flags.update(_prompt_flags(folder))
    settings = base_settings(flags)
    if goal is not None or folder is not None:
        _warn_prompts(settings.prompts)
    ws = _workspace(workspace)
    if goal is not None:
        _refuse_unrunnable_checks(settings, flags, ws)
    if goal is not None and not ws.exists():
        try:
            ws.mkdir(parents=True)
        except OSError as exc:
            raise _usage(f"cannot create the workspace {ws}: {exc.strerror}") from None
    _need_folder(ws)
    if foreground:
        from localagent.loop.runner import run
        from localagent.system.exits import conclude

        outcome = run(
            ws,
            goal,
            settings,
            flags,
            progress=True,
            repair=repair,
            adopt=adopt,
            new=new,
            allow_home=allow_home,
        )
        if outcome.status == "completed":
            say(f"\ngoal completed{_verified(ws)}: {ws}", err=True)
        conclude(outcome)
        return
    from localagent.daemon.spawn import spawn

    say(spawn(ws, goal, flags, repair=repair, adopt=adopt, new=new, allow_home=allow_home))


def _refuse_unrunnable_checks(settings: Settings, flags: dict[str, Any], workspace: Path) -> None:
    """Checks that could never run are found out now, not after the whole goal."""
    from localagent.verify.checks import unrunnable

    if settings.verify:
        given = flags.get("checks") or ()
        if why := unrunnable(settings.checks, settings.allowed_commands, workspace, given):
            raise _usage(why)


def _prompt_flags(folder: Path | None) -> dict[str, Any]:
    """`--prompts DIR` as the `prompts` setting: the folder's prompts, checked."""
    if folder is None:
        return {"prompts": None}
    from localagent.prompts.promptset import load_folder

    return {"prompts": load_folder(folder)}


def _warn_prompts(texts: dict[str, str]) -> None:
    from localagent.prompts.promptset import warnings

    for line in warnings(texts):
        say(f"localagent: {line}", err=True)


def _verified(workspace: Path) -> str:
    """ " (verified)" and the like, for the last line of a foreground run."""
    from localagent.journal import Journal
    from localagent.observe.report import final_verification

    try:
        found = final_verification(Journal(workspace))
    except (AgentError, OSError):
        return ""
    return f" ({found})" if found else ""
