"""The one place that turns what escapes a command, or how its run ended (`Outcome`),
into a message and an exit code.

Shared by the CLI and the background agent's entry point, which does not load the
CLI's libraries (typer, rich) so that a resumed run reaches its model quickly.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from localagent.system.console import printable, utf8_streams
from localagent.system.errors import AgentError

Ending = Literal["completed", "failed", "stopped", "suspended"]


@dataclass(frozen=True)
class Outcome:
    """How a run ended. `by` says who stopped it (user or system); a suspended run
    either found no server or model (`unavailable`) or had a request refused. `said`
    is the one line that tells the user the ending and how to go on."""

    status: Ending
    reason: str
    verification: str = ""
    by: str = ""
    unavailable: bool = False
    said: str = ""


def _crash_report(exc: BaseException) -> str:
    """Save the traceback of one of our own bugs where the user can find it."""
    try:
        import platform
        from datetime import UTC, datetime

        from localagent import __version__
        from localagent.system.userdirs import user_data_dir

        path = user_data_dir() / "crash.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        when = datetime.now(UTC).isoformat(timespec="seconds")
        head = f"{when} localagent {__version__}, Python {platform.python_version()}, "
        head += f"{platform.platform()}\n"
        with path.open("a", encoding="utf-8") as fh:
            fh.write(head + "".join(traceback.format_exception(exc)) + "\n")
        return f" (details in {path})"
    except Exception:  # a broken install (pydantic missing) must not crash the crash report
        return ""


def guarded(body: Callable[[], object]) -> None:
    """Run `body` and map every outcome to an exit code.

    Usage errors and `--help` of the CLI arrive as SystemExit and pass through;
    everything else that escapes ends here."""
    utf8_streams()
    try:
        body()
    except AgentError as exc:
        print(f"localagent: {printable(exc.message)}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        print("localagent: interrupted", file=sys.stderr)
        sys.exit(130)
    except Exception as exc:
        what = printable(f"{exc!r}{_crash_report(exc)}")
        print(f"localagent: internal error: {what}", file=sys.stderr)
        sys.exit(1)


def exit_code(outcome: Outcome) -> int:
    """The exit code of how a run ended (SPEC §2): a suspended run found no server or
    model (3), or had a request refused (1)."""
    if outcome.status == "suspended":
        return 3 if outcome.unavailable else 1
    return {"completed": 0, "failed": 1, "stopped": 130}[outcome.status]


def conclude(outcome: Outcome) -> None:
    """End the command as the run ended: its line (unless it completed) and its code."""
    if outcome.status != "completed":
        print(f"localagent: {printable(outcome.said or outcome.reason)}", file=sys.stderr)
    code = exit_code(outcome)
    if code:
        sys.exit(code)
