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
)


WorkspaceOpt = Annotated[
    Path,
    typer.Option(
        "--workspace", "-w", help="Workspace folder (default: current folder).", file_okay=False
    ),
]


def _workspace(path: Path) -> Path:
    return path.expanduser().resolve()


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
    from localagent.errors import UsageError

    return UsageError(message)
