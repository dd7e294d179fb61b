"""What the Windows logon task runs: `resume --all`, logged to a file, then a wait.

Task Scheduler runs the action in a job of its own; when the action ends, the task ends,
and what the task started may end with it. So this process stays until the agents it
resumed have finished, waiting on their workspace locks. Started by `pythonw.exe` it has
no console and no standard streams, so everything it has to say goes to `autostart.log`
in localagent's data folder.
"""

from __future__ import annotations

import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterable
from pathlib import Path

LOG_NAME = "autostart.log"
POLL_SECONDS = 30.0
MAX_LOG_BYTES = 256_000


def log_path() -> Path:
    try:
        from localagent.system.userdirs import user_data_dir

        return user_data_dir() / LOG_NAME
    except Exception:  # even a broken install (pydantic missing) must leave a trace
        return Path(tempfile.gettempdir()) / f"localagent-{LOG_NAME}"


def write_log(text: str, path: Path | None = None) -> None:
    """Appends a time-stamped entry; starts the file over when it grows past its bound."""
    path = path or log_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and path.stat().st_size > MAX_LOG_BYTES:
            path.replace(path.with_suffix(".log.1"))
        stamp = time.strftime("%Y-%m-%d %H:%M:%S")
        with path.open("a", encoding="utf-8", errors="replace") as handle:
            handle.write(f"{stamp} {text.rstrip()}\n")
    except OSError:
        pass  # nowhere to say it; the journal of each workspace still tells


def running_agents(workspaces: Iterable[str]) -> list[str]:
    """The workspaces whose lock some process holds right now."""
    from localagent.journal import CONTEXT_DIR
    from localagent.system.lock import held

    return [path for path in workspaces if held(Path(path) / CONTEXT_DIR)]


def wait_for_agents(
    workspaces: Iterable[str],
    poll: float = POLL_SECONDS,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Returns once no agent holds any of these workspaces."""
    pending = list(workspaces)
    while pending := running_agents(pending):
        sleep(poll)


def run_at_logon(poll: float = POLL_SECONDS) -> int:
    """Resume every unfinished goal, log what happened, wait for the agents; the exit code."""
    try:
        from localagent.config.userconfig import load_settings
        from localagent.daemon.resume import resume_all
        from localagent.journal.registry import workspaces
        from localagent.system.errors import AgentError

        write_log("resuming unfinished goals")
        try:
            code = resume_all(load_settings(), {"model": None, "max_rounds": None}, write_log)
        except AgentError as exc:
            write_log(f"localagent: {exc.message}")
            return exc.exit_code
        wait_for_agents(workspaces(), poll)
        write_log("no agent runs any more; the logon task ends")
        return code
    except Exception:  # the log is the only place anyone will see it
        write_log("internal error:\n" + traceback.format_exc())
        return 1


if __name__ == "__main__":
    sys.exit(run_at_logon())
