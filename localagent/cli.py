"""The command line. The only place that turns errors into messages and exit codes.

Commands import what they need when they run, so `localagent --help` stays fast.
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path
from typing import Annotated

import typer

from localagent.errors import AgentError

app = typer.Typer(
    name="localagent",
    help="A local-first autonomous coding agent driven by an Ollama model.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)

WorkspaceOpt = Annotated[
    Path,
    typer.Option(
        "--workspace", "-w", help="Workspace folder (default: current folder).", file_okay=False
    ),
]


def _workspace(path: Path) -> Path:
    return path.expanduser().resolve()


ModelOpt = Annotated[str | None, typer.Option("--model", help="Ollama model name.")]
RoundsOpt = Annotated[
    int | None, typer.Option("--max-rounds", help="Stop after N model rounds.", min=1)
]
ForegroundOpt = Annotated[
    bool, typer.Option("--foreground", help="Run attached; the exit code is the outcome.")
]


def _run(
    workspace: Path, goal: str | None, model: str | None, max_rounds: int | None, foreground: bool
) -> None:
    from localagent.settings import load_settings

    settings = load_settings(model=model, max_rounds=max_rounds)
    ws = _workspace(workspace)
    if not ws.is_dir():
        raise _usage(f"the workspace {ws} is not a folder")
    if foreground:
        from localagent.runner import run

        outcome = run(ws, goal, settings, progress=True)
        typer.echo(f"\ngoal {outcome}: {ws}", err=True)
        return
    from localagent.daemon import spawn

    typer.echo(spawn(ws, goal, settings))


def _usage(message: str) -> Exception:
    from localagent.errors import UsageError

    return UsageError(message)


@app.command()
def start(
    goal: Annotated[str, typer.Argument(help="What to achieve, in plain words.")],
    workspace: WorkspaceOpt = Path("."),
    model: ModelOpt = None,
    max_rounds: RoundsOpt = None,
    foreground: ForegroundOpt = False,
) -> None:
    """Start work on GOAL (or resume it if the workspace holds it unfinished)."""
    if not goal.strip():
        raise _usage("the goal is empty; say what to achieve")
    _run(workspace, goal.strip(), model, max_rounds, foreground)


@app.command()
def resume(
    workspace: WorkspaceOpt = Path("."),
    all_: Annotated[
        bool, typer.Option("--all", help="Resume every unfinished goal of this user.")
    ] = False,
    model: ModelOpt = None,
    max_rounds: RoundsOpt = None,
    foreground: ForegroundOpt = False,
) -> None:
    """Resume the unfinished goal of the workspace."""
    if all_:
        from localagent.daemon import resume_all
        from localagent.settings import load_settings

        typer.echo(resume_all(load_settings(model=model, max_rounds=max_rounds)))
        return
    _run(workspace, None, model, max_rounds, foreground)


@app.command()
def status(
    workspace: WorkspaceOpt = Path("."),
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Goal, status, current task/subtask, rounds, tokens, blocked actions, liveness."""
    from localagent.report import format_status, status_info

    info = status_info(_workspace(workspace))
    if as_json:
        import orjson

        typer.echo(orjson.dumps(info).decode())
    else:
        typer.echo(format_status(info))


@app.command()
def history(
    workspace: WorkspaceOpt = Path("."),
    n: Annotated[int, typer.Option("-n", help="Show the last N records (0: all).", min=0)] = 50,
) -> None:
    """The action history, human-readable."""
    from localagent.report import format_record, open_journal

    journal = open_journal(_workspace(workspace))
    records = journal.tail(n) if n else journal.records()
    for record in records:
        typer.echo(format_record(record))


def _crash_report(exc: BaseException) -> str:
    """Save the traceback of one of our own bugs where the user can find it."""
    from localagent.settings import user_data_dir

    try:
        path = user_data_dir() / "crash.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as fh:
            fh.write("".join(traceback.format_exception(exc)) + "\n")
        return f" (details in {path})"
    except OSError:
        return ""


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app and map every outcome to an exit code.

    Typer handles usage errors (exit 2) and `--help` itself by raising SystemExit;
    everything else that escapes a command ends here.
    """
    try:
        app(args=argv, prog_name="localagent")
    except AgentError as exc:
        typer.echo(f"localagent: {exc.message}", err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        typer.echo("localagent: interrupted", err=True)
        sys.exit(130)
    except Exception as exc:
        typer.echo(f"localagent: internal error: {exc!r}{_crash_report(exc)}", err=True)
        sys.exit(1)
