"""Running goals: start, resume, the background agent, stop."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from localagent.cli.app import (
    BackendOpt,
    CheckOpt,
    ForegroundOpt,
    ModelOpt,
    NoVerifyOpt,
    PromptsOpt,
    RepairOpt,
    RoundsOpt,
    ToolsOpt,
    WorkspaceOpt,
    _usage,
    _workspace,
    app,
)
from localagent.errors import AgentError


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
    prompts: PromptsOpt = None,
) -> None:
    """Start work on GOAL (or resume it if the workspace holds it unfinished)."""
    if not goal.strip():
        raise _usage("the goal is empty; say what to achieve")
    verification = _run_flags(check, no_verify, tools, backend)
    _run(
        workspace,
        goal.strip(),
        model,
        max_rounds,
        foreground,
        verification=verification,
        prompts=prompts,
    )


def _run_flags(
    check: list[str] | None, no_verify: bool, tools: str | None, backend: str | None
) -> dict[str, Any]:
    from localagent.daemon.background import setting_flags

    return setting_flags(check, no_verify, tools, backend)


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
    prompts: PromptsOpt = None,
) -> None:
    """Resume the unfinished goal of the workspace (--all: of every workspace).

    A flag given here (--model, --max-rounds, --tools, --backend, --prompts) changes the
    run's journaled setting.
    """
    if all_ and prompts is not None:
        raise _usage("--prompts applies to one workspace; it cannot be given with --all")
    given = {k: v for k, v in _run_flags(None, False, tools, backend).items() if v is not None}
    if all_:
        from localagent.daemon.resume import resume_all
        from localagent.settings import load_settings

        flags = {"model": model, "max_rounds": max_rounds, **given}
        typer.echo(resume_all(load_settings(**flags), flags))
        return
    _run(workspace, None, model, max_rounds, foreground, repair, given, prompts=prompts)


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="A question about the workspace's code.")],
    workspace: WorkspaceOpt = Path("."),
    model: ModelOpt = None,
    foreground: ForegroundOpt = False,
) -> None:
    """Research a question about the code; the answer (saved under .agent_context/answers/)
    cites the code it read, and never changes the workspace."""
    from localagent.settings import load_settings

    ws = _workspace(workspace)
    if not question.strip():
        raise _usage("the question is empty; ask something about the code")
    if not ws.is_dir():
        raise _usage(f"the workspace {ws} is not a folder")
    flags = {"model": model, "mode": "ask"}
    settings = load_settings(**flags)
    if not foreground:
        from localagent.daemon.spawn import spawn

        typer.echo(spawn(ws, question, flags, settings))
        return
    from localagent.journal import Journal
    from localagent.research.answer import saved_answer
    from localagent.runner import run

    run(ws, question, settings, flags, progress=True)
    typer.echo(saved_answer(Journal(ws)) or "")


@app.command()
def stop(
    workspace: WorkspaceOpt = Path("."),
    grace: Annotated[
        float, typer.Option("--grace", help="Seconds to wait before forcing.", min=0)
    ] = 15.0,
) -> None:
    """Stop the running agent after its current step; the goal stays resumable."""
    from localagent.daemon.stop import stop as stop_agent

    typer.echo(stop_agent(_workspace(workspace), grace))


def _run(
    workspace: Path,
    goal: str | None,
    model: str | None,
    max_rounds: int | None,
    foreground: bool,
    repair: bool = False,
    verification: dict[str, Any] | None = None,
    prompts: Path | None = None,
) -> None:
    from localagent.settings import load_settings

    folder = prompts.expanduser().resolve() if prompts else None
    flags = {"model": model, "max_rounds": max_rounds, **(verification or {})}
    flags.update(_prompt_flags(folder))
    settings = load_settings(**flags)
    if goal is not None or folder is not None:
        _warn_prompts(settings.prompts)
    ws = _workspace(workspace)
    if goal is not None and not ws.exists():
        try:
            ws.mkdir(parents=True)
        except OSError as exc:
            raise _usage(f"cannot create the workspace {ws}: {exc.strerror}") from None
    if not ws.is_dir():
        raise _usage(f"the workspace {ws} is not a folder")
    if foreground:
        from localagent.runner import run

        outcome = run(ws, goal, settings, flags, progress=True, repair=repair)
        typer.echo(f"\ngoal {outcome}{_verified(ws)}: {ws}", err=True)
        return
    from localagent.daemon.spawn import spawn

    typer.echo(spawn(ws, goal, {**flags, "prompts_dir": folder}, settings, repair=repair))


def _prompt_flags(folder: Path | None) -> dict[str, Any]:
    """`--prompts DIR` as the `prompts` setting: the folder's prompts, checked."""
    if folder is None:
        return {"prompts": None}
    from localagent.promptset import load_folder

    return {"prompts": load_folder(folder)}


def _warn_prompts(texts: dict[str, str]) -> None:
    from localagent.promptset import warnings

    for line in warnings(texts):
        typer.echo(f"localagent: {line}", err=True)


def _verified(workspace: Path) -> str:
    """ " (verified)" and the like, for the last line of a foreground run."""
    from localagent.journal import Journal
    from localagent.report import final_verification

    try:
        found = final_verification(Journal(workspace))
    except (AgentError, OSError):
        return ""
    return f" ({found})" if found else ""
