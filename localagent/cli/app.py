"""The command line's application object, its shared options and helpers."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(
    name="localagent",
    help="A local-first autonomous coding agent driven by a local model (Ollama or an "
    "OpenAI-compatible server).",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        from localagent import __version__

        typer.echo(f"localagent {__version__}")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", "-V", help="Print the version and exit.", callback=_version, is_eager=True
        ),
    ] = False,
) -> None:
    """A local-first autonomous coding agent driven by a local model (Ollama or an
    OpenAI-compatible server)."""


WorkspaceOpt = Annotated[
    Path,
    typer.Option(
        "--workspace", "-w", help="Workspace folder (default: current folder).", file_okay=False
    ),
]


def _workspace(path: Path) -> Path:
    return path.expanduser().resolve()


def _need_folder(workspace: Path) -> None:
    """A usage error unless the (resolved) workspace is an existing folder."""
    if not workspace.exists():
        raise _usage(f"the workspace {workspace} does not exist")
    if not workspace.is_dir():
        raise _usage(f"the workspace {workspace} is not a folder")


ModelOpt = Annotated[str | None, typer.Option("--model", help="Model name on the server.")]
RoundsOpt = Annotated[
    int | None, typer.Option("--max-rounds", help="Stop after N model rounds.", min=1)
]
CheckOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--check",
        metavar="CMD",
        help="A command that must pass before the goal counts as achieved (repeatable).",
    ),
]
NoVerifyOpt = Annotated[
    bool,
    typer.Option("--no-verify", help="Do not verify the goal at the end (subtasks still are)."),
]
ToolsOpt = Annotated[
    str | None,
    typer.Option(
        "--tools",
        metavar="NAMES",
        help="Comma-separated tools to enable (default: every default tool).",
    ),
]
BackendOpt = Annotated[
    str | None,
    typer.Option(
        "--backend",
        help="The model server's API: ollama or openai (an OpenAI-compatible server).",
    ),
]
BaseUrlOpt = Annotated[
    str | None,
    typer.Option(
        "--base-url",
        metavar="URL",
        help="The model server: Ollama's address, or the OpenAI-compatible server's base URL "
        "with --backend openai (journaled with the goal; the config is not changed).",
    ),
]
ProfileOpt = Annotated[
    str | None,
    typer.Option(
        "--profile",
        metavar="auto|small|full",
        help="small: the short tool set and prompts for a small model; auto (the default): "
        "small when the server says the model has under 8B parameters.",
    ),
]
PromptsOpt = Annotated[
    Path | None,
    typer.Option(
        "--prompts",
        metavar="DIR",
        help="A folder of prompt files (NAME.txt or NAME.md) that replace the defaults; "
        "see `localagent prompts list`.",
    ),
]
ForegroundOpt = Annotated[
    bool, typer.Option("--foreground", help="Run attached; the exit code is the outcome.")
]


RepairOpt = Annotated[
    bool,
    typer.Option(
        "--repair",
        help="Accept a damaged history: rebuild from what is left and say what was lost.",
    ),
]


def _usage(message: str) -> Exception:
    from localagent.system.errors import UsageError

    return UsageError(message)
