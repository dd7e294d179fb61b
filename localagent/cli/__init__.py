"""The command line. The only place that turns errors into messages and exit codes.

Commands import what they need when they run, so `localagent --help` stays fast. The
modules register their commands on `app` in the order `--help` lists them.
"""

from __future__ import annotations

import sys
import traceback

import typer

from localagent.cli import run, setup, views  # noqa: F401  (they register the commands)
from localagent.cli.app import app
from localagent.console import utf8_streams
from localagent.errors import AgentError


def _crash_report(exc: BaseException) -> str:
    """Save the traceback of one of our own bugs where the user can find it."""
    try:
        from localagent.settings import user_data_dir

        path = user_data_dir() / "crash.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as fh:
            fh.write("".join(traceback.format_exception(exc)) + "\n")
        return f" (details in {path})"
    except Exception:  # a broken install (pydantic missing) must not crash the crash report
        return ""


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app and map every outcome to an exit code.

    Typer handles usage errors (exit 2) and `--help` itself by raising SystemExit;
    everything else that escapes a command ends here.
    """
    utf8_streams()
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
