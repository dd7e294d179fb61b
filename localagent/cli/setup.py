"""Setting up: doctor, autostart, prompts, demo."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from localagent.cli.app import BackendOpt, ModelOpt, WorkspaceOpt, _workspace, app
from localagent.system.console import say

CheckedUrlOpt = Annotated[
    str | None,
    typer.Option(
        "--base-url",
        metavar="URL",
        help="The server to check: Ollama's address, or the OpenAI-compatible server's "
        "base URL with --backend openai (the config is not changed).",
    ),
]


@app.command()
def doctor(
    workspace: WorkspaceOpt = Path("."),
    model: ModelOpt = None,
    backend: BackendOpt = None,
    base_url: CheckedUrlOpt = None,
) -> None:
    """Check the model server, the model, tool calling, context size, the workspace."""
    from localagent.cli import doctor as checks
    from localagent.config.runconfig import base_settings

    settings = base_settings({"model": model, "backend": backend, "server": base_url})
    found = checks.run_checks(settings, _workspace(workspace))
    say(checks.render(found))
    raise typer.Exit(checks.exit_code(found))


autostart_app = typer.Typer(help="Resume unfinished goals at logon.", no_args_is_help=True)
app.add_typer(autostart_app, name="autostart")


@autostart_app.command("install")
def autostart_install() -> None:
    """Run `localagent resume --all` at every logon of this user."""
    from localagent.daemon import autostart

    say(autostart.install())


@autostart_app.command("uninstall")
def autostart_uninstall() -> None:
    """Remove the logon registration."""
    from localagent.daemon import autostart

    say(autostart.uninstall())


@autostart_app.command("status")
def autostart_status() -> None:
    """Whether the logon registration is in place."""
    from localagent.daemon import autostart

    found = autostart.status()
    state = "installed" if found.installed else "not installed"
    say(f"{state} ({found.mechanism}) {found.detail}".rstrip())


prompts_app = typer.Typer(
    help="The prompts localagent sends: list them, show the defaults, check your own.",
    no_args_is_help=True,
)
app.add_typer(prompts_app, name="prompts")


@prompts_app.command("list")
def prompts_list() -> None:
    """Every prompt by name, what it is for, and its placeholders."""
    from localagent.prompts import promptset

    say(promptset.listing())


@prompts_app.command("show")
def prompts_show(name: Annotated[str, typer.Argument(help="A name from `prompts list`.")]) -> None:
    """The default text of prompt NAME, to copy into NAME.txt and change."""
    from localagent.prompts import promptset

    say(promptset.show(name))


@prompts_app.command("check")
def prompts_check(
    folder: Annotated[
        Path | None,
        typer.Argument(help="A folder of prompt files (default: the config file's [prompts])."),
    ] = None,
) -> None:
    """Check prompts as a run would, naming every problem with its file and line; exit 2
    when there are problems."""
    from localagent.config.userconfig import config_path, prompts_table
    from localagent.prompts import promptset

    table = prompts_table(config_path()) if folder is None else None
    report, code = promptset.check_report(folder, config_path(), table)
    say(report)
    raise typer.Exit(code)


@app.command()
def demo(
    workspace: Annotated[
        Path | None, typer.Option("--workspace", "-w", help="Folder (default: a new one).")
    ] = None,
) -> None:
    """Run a scripted goal end to end against the bundled fake model server."""
    from localagent.cli.demo import run_demo
    from localagent.system.exits import conclude

    shown, outcome = run_demo(workspace)
    say(shown)
    conclude(outcome)
