"""macOS: a LaunchAgent that runs `resume --all` when the user's launchd session starts."""

from __future__ import annotations

import plistlib
from collections.abc import Mapping, Sequence
from pathlib import Path

from localagent.daemon.autostart.system import (
    AutostartStatus,
    System,
    carried_env,
    check,
    env_note,
    resume_argv,
    shown,
)

LAUNCHD_LABEL = "io.localagent.resume"


def launchd_plist(
    argv: Sequence[str], workdir: str, log_dir: Path, env: Mapping[str, str] | None = None
) -> bytes:
    """A LaunchAgent that runs `argv` when the user's launchd session starts."""
    log = str(log_dir / "autostart.log")
    agent: dict[str, object] = {
        "Label": LAUNCHD_LABEL,
        "ProgramArguments": list(argv),
        "RunAtLoad": True,
        "WorkingDirectory": workdir,
        "StandardOutPath": log,
        "StandardErrorPath": log,
        # launchd kills what is left of a job's process group when the job exits;
        # the agents `resume --all` starts must outlive it.
        "AbandonProcessGroup": True,
    }
    if env:
        agent["EnvironmentVariables"] = dict(env)
    return plistlib.dumps(agent, fmt=plistlib.FMT_XML)


def plist_path(system: System) -> Path:
    return system.home / "Library" / "LaunchAgents" / f"{LAUNCHD_LABEL}.plist"


def launchd_log_dir(system: System) -> Path:
    # Where platformdirs puts user logs on macOS, derived from `home` like every other path.
    return system.home / "Library" / "Logs" / "localagent"


class LaunchAgent:
    name = "launchd"

    def install(self, system: System) -> str:
        argv, path, log_dir = resume_argv(system), plist_path(system), launchd_log_dir(system)
        domain, replacing = f"gui/{system.uid()}", system.exists(path)
        system.mkdir(log_dir)
        system.write(path, launchd_plist(argv, str(system.home), log_dir, carried_env(system.env)))
        if replacing:
            # A loaded older definition would make bootstrap fail; none loaded is fine too.
            system.run(["launchctl", "bootout", domain, str(path)])
        bootstrap = system.run(["launchctl", "bootstrap", domain, str(path)])
        if bootstrap.returncode != 0:
            hint = f"`launchctl bootstrap {domain}` had failed first: {bootstrap.output}"
            check(system, ["launchctl", "load", "-w", str(path)], hint=hint)
        return (
            f"Installed the LaunchAgent {path}: it runs `{shown(argv, system)}` when you log "
            f"in, and launchd has just run it once. Its output goes to {log_dir}."
            + env_note(system.env)
        )

    def uninstall(self, system: System) -> str | None:
        path = plist_path(system)
        if not system.exists(path):
            return None
        # Fails when the agent is not loaded in this session, which leaves nothing to undo.
        system.run(["launchctl", "bootout", f"gui/{system.uid()}", str(path)])
        system.remove(path)
        return f"Unloaded and removed the LaunchAgent {path}."

    def status(self, system: System) -> AutostartStatus:
        path = plist_path(system)
        if not system.exists(path):
            return AutostartStatus(False, self.name, f"There is no LaunchAgent at {path}.")
        loaded = system.run(["launchctl", "print", f"gui/{system.uid()}/{LAUNCHD_LABEL}"])
        when = "is loaded" if loaded.returncode == 0 else "loads at your next login"
        return AutostartStatus(True, self.name, f"The LaunchAgent {path} {when}.")
