"""The background agent's entry point: `python -m localagent run-agent -w WS [...]`.

`start`, `ask` and `resume` (and `resume --all` at logon) start it with the command
line `spawn.child_argv` builds. It parses that with argparse and imports only what a
run uses, not the CLI's libraries, so that a resumed run reaches its first model call
quickly (a run killed again within half a second must still make progress).
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from localagent.errors import UsageError
from localagent.exits import guarded


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # an exit code of ours, not argparse's
        raise UsageError(f"run-agent: {message}")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="localagent run-agent", add_help=False, allow_abbrev=False)
    parser.add_argument("-w", "--workspace", type=Path, default=Path("."))
    parser.add_argument("--goal")
    parser.add_argument("--model")
    parser.add_argument("--max-rounds", type=int)
    parser.add_argument("--repair", action="store_true")
    parser.add_argument("--preflight-deadline", type=float)
    parser.add_argument("--wait-for-server", action="store_true")
    parser.add_argument("--check", action="append")
    parser.add_argument("--no-verify", action="store_true")
    parser.add_argument("--tools")
    parser.add_argument("--backend")
    parser.add_argument("--profile")
    parser.add_argument("--prompts", type=Path)
    parser.add_argument("--ask", action="store_true")
    parser.add_argument("--adopt", action="store_true")
    parser.add_argument("--new", action="store_true")
    parser.add_argument("--allow-home", action="store_true")
    return parser


def setting_flags(
    check: list[str] | None, no_verify: bool, tools: str | None, backend: str | None
) -> dict[str, Any]:
    """`--check`, `--no-verify`, `--tools` and `--backend` as setting flags (None: not
    given); the CLI's commands read them the same way."""
    if check and not all(c.strip() for c in check):
        raise UsageError('--check needs a command, e.g. --check "python -m pytest -q"')
    names = tuple(n.strip() for n in (tools or "").split(",") if n.strip())
    if tools is not None and not names:
        raise UsageError("--tools needs tool names, e.g. --tools read_file,write_file,run_cmd")
    return {
        "checks": tuple(c.strip() for c in check) if check else None,
        "verify": False if no_verify else None,
        "tools": names or None,
        "backend": backend,
    }


def flags(args: argparse.Namespace) -> dict[str, Any]:
    """The command line as setting flags (None: not given)."""
    if args.max_rounds is not None and args.max_rounds < 1:
        raise UsageError("--max-rounds must be at least 1")
    prompts = None
    if args.prompts is not None:
        from localagent.promptset import load_folder

        prompts = load_folder(args.prompts)
    return {
        "model": args.model,
        "max_rounds": args.max_rounds,
        **setting_flags(args.check, args.no_verify, args.tools, args.backend),
        "profile": args.profile,
        "prompts": prompts,
        "mode": "ask" if args.ask else None,
    }


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
    from localagent.exits import conclude
    from localagent.runner import run
    from localagent.settings import load_settings

    args = _parser().parse_args(argv)
    given = flags(args)
    settings = load_settings(**given)
    workspace = args.workspace.expanduser().resolve()
    outcome = run(
        workspace,
        args.goal,
        settings,
        given,
        repair=args.repair,
        preflight_deadline=args.preflight_deadline,
        patient=args.wait_for_server,
        on_ready=_signal(workspace, given),
        adopt=args.adopt,
        new=args.new,
        allow_home=args.allow_home,
    )
    conclude(outcome)


def main(argv: list[str]) -> None:
    guarded(lambda: _run(argv))
