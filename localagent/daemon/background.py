"""The background agent's entry point: `python -m localagent run-agent -w WS [--request]`.

`start`, `ask` and `resume` (and `resume --all` at logon) start it with `--request` and
hand it a `RunRequest` (the goal, the settings given for the run, how to start) as JSON
on its standard input: data, not options parsed again. Without `--request` it resumes
the workspace's goal with its journaled settings. It imports only what a run uses, not
the CLI's libraries, so that a resumed run reaches its first model call quickly (a run
killed again within half a second must still make progress).
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from localagent.config.runconfig import RunRequest, base_settings
from localagent.system.errors import UsageError
from localagent.system.exits import guarded


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # an exit code of ours, not argparse's
        raise UsageError(f"run-agent: {message}")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="localagent run-agent", add_help=False, allow_abbrev=False)
    parser.add_argument("-w", "--workspace", type=Path, default=Path("."))
    parser.add_argument("--request", action="store_true")  # a RunRequest on stdin
    return parser


def request(args: argparse.Namespace) -> RunRequest:
    """What to run: the starter's request on standard input (`--request`), or else the
    workspace's unfinished goal, resumed with its journaled settings."""
    if not args.request:
        return RunRequest(workspace=args.workspace)
    try:
        return RunRequest.model_validate_json(sys.stdin.buffer.read())
    except (ValidationError, OSError) as exc:
        said = f"run-agent: the run request on standard input is unreadable: {exc}"
        raise UsageError(said) from None


def _signal(workspace: Path, given: dict[str, Any]) -> Callable[[str], None]:
    """How the run tells `start`, which waits for it, that it passed its preflight."""
    from localagent.journal import QUESTIONS_DIR, Journal

    journal = Journal(workspace, part=QUESTIONS_DIR if given.get("mode") == "ask" else "")

    def signal(what: str) -> None:
        try:
            journal.signal_ready(what)
        except OSError as exc:  # the starter then says the run is still starting
            logging.getLogger("localagent").warning(
                "could not tell the starter the run is %s: %s", what, exc
            )

    return signal


def _run(argv: list[str]) -> None:
    from localagent.loop.runner import run
    from localagent.system.exits import conclude

    asked = request(_parser().parse_args(argv))
    workspace = asked.workspace.expanduser().resolve()
    outcome = run(
        workspace,
        asked.goal,
        base_settings(asked.given),
        asked.given,
        repair=asked.repair,
        preflight_deadline=asked.preflight_deadline,
        patient=asked.patient,
        on_ready=_signal(workspace, asked.given),
        adopt=asked.adopt,
        new=asked.new,
        allow_home=asked.allow_home,
    )
    conclude(outcome)


def main(argv: list[str]) -> None:
    guarded(lambda: _run(argv))
