"""Linux without systemd: an `@reboot` line in the user's crontab."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from localagent.daemon.autostart.system import (
    AutostartFailed,
    AutostartStatus,
    AutostartUnavailable,
    System,
    carried_env,
    check,
    env_note,
    resume_argv,
    shown,
)
from localagent.system.errors import AgentError

CRON_MARKER = "# localagent-resume"
NOTHING_HERE = (
    "neither a systemd user session nor crontab is available here, so nothing can run "
    "`localagent resume --all` at startup; run it by hand after each logon"
)


def cron_line(argv: Sequence[str]) -> str:
    """A crontab line that runs `argv` at boot, tagged so it can be found again."""
    if any(ch in arg for arg in argv for ch in "\r\n\0"):
        raise AgentError(f"Cannot put a path with a line break into a crontab: {argv!r}")
    # cron turns an unescaped % into a line break, inside shell quotes too.
    command = shlex.join(argv).replace("%", r"\%")
    return f"@reboot {command} {CRON_MARKER}"


def _is_ours(line: str) -> bool:
    return line.rstrip().endswith(CRON_MARKER)


def crontab_without_ours(crontab: str) -> str:
    kept = [line for line in crontab.splitlines() if not _is_ours(line)]
    return "".join(line + "\n" for line in kept)


def crontab_with(crontab: str, line: str) -> str:
    return crontab_without_ours(crontab) + line + "\n"


class Cron:
    name = "cron"

    def install(self, system: System) -> str:
        if system.which("crontab") is None:
            raise AutostartUnavailable(NOTHING_HERE)
        argv = resume_argv(system)
        env = carried_env(system.env)
        if env:  # cron starts commands with an almost empty environment
            argv = ["/usr/bin/env", *(f"{k}={v}" for k, v in env.items()), *argv]
        check(system, ["crontab", "-"], crontab_with(_read_crontab(system), cron_line(argv)))
        return (
            f"Added an @reboot line to your crontab: it runs `{shown(argv, system)}` at boot."
            + env_note(system.env)
        )

    def uninstall(self, system: System) -> str | None:
        crontab = _read_crontab(system) if system.which("crontab") else ""
        if not any(_is_ours(line) for line in crontab.splitlines()):
            return None
        check(system, ["crontab", "-"], crontab_without_ours(crontab))
        return "Removed the localagent @reboot line from your crontab."

    def status(self, system: System) -> AutostartStatus:
        if system.which("crontab") is None:
            return AutostartStatus(False, self.name, NOTHING_HERE, available=False)
        ours = [line for line in _read_crontab(system).splitlines() if _is_ours(line)]
        if ours:
            return AutostartStatus(True, self.name, f"Your crontab runs it at boot: {ours[0]}")
        return AutostartStatus(False, self.name, "Your crontab has no localagent line.")


def _read_crontab(system: System) -> str:
    result = system.run(["crontab", "-l"])
    if result.returncode == 0:
        return result.stdout
    if "no crontab" in result.output.lower():
        return ""
    raise AutostartFailed(["crontab", "-l"], result)
