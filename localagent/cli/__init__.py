"""The command line. The only place that turns errors into messages and exit codes.

Commands import what they need when they run, so `localagent --help` stays fast. The
modules register their commands on `app` in the order `--help` lists them.
"""

from __future__ import annotations

import sys

from localagent.cli import run, setup, undo, views  # noqa: F401  (they register the commands)
from localagent.cli.app import app
from localagent.system.exits import guarded


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app; `exits.guarded` maps every outcome to an exit code."""
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["run-agent"]:
        from localagent.daemon.background import main as background

        background(args[1:])
        return
    guarded(lambda: app(args=argv, prog_name="localagent"))
