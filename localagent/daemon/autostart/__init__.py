"""`localagent autostart`: run `localagent resume --all` at logon, per user (SPEC §2).

Windows gets a Task Scheduler task (`windows`), Linux a systemd user unit (`systemd`) or a
cron `@reboot` line where systemd is absent (`cron`), macOS a LaunchAgent (`launchd`).
The definitions and the exact commands are built by pure functions; everything that
touches the machine goes through `System` (`system`), so every platform's flow runs in
tests on any platform.
"""

from __future__ import annotations

from localagent.daemon.autostart.cron import (
    CRON_MARKER,
    Cron,
    cron_line,
    crontab_with,
    crontab_without_ours,
)
from localagent.daemon.autostart.launchd import (
    LAUNCHD_LABEL,
    LaunchAgent,
    launchd_log_dir,
    launchd_plist,
    plist_path,
)
from localagent.daemon.autostart.system import (
    CARRIED_PREFIXES,
    SECRET_NAMES,
    AutostartFailed,
    AutostartStatus,
    AutostartUnavailable,
    CommandResult,
    Mechanism,
    System,
    carried_env,
    env_note,
    output_encoding,
    resume_argv,
    shown,
)
from localagent.daemon.autostart.systemd import (
    SYSTEMD_BOOTED_MARKER,
    UNIT_NAME,
    SystemdUnit,
    systemd_available,
    systemd_environment,
    systemd_exec,
    systemd_quote,
    systemd_unit,
    unit_path,
)
from localagent.daemon.autostart.windows import (
    LOGON_DELAY,
    TASK_NAME,
    TASK_NAMESPACE,
    TaskScheduler,
    windows_task_file,
    windows_task_xml,
    windows_user,
)

__all__ = [
    "CARRIED_PREFIXES",
    "CRON_MARKER",
    "LAUNCHD_LABEL",
    "LOGON_DELAY",
    "SECRET_NAMES",
    "SYSTEMD_BOOTED_MARKER",
    "TASK_NAME",
    "TASK_NAMESPACE",
    "UNIT_NAME",
    "AutostartFailed",
    "AutostartStatus",
    "AutostartUnavailable",
    "CommandResult",
    "Cron",
    "LaunchAgent",
    "Mechanism",
    "System",
    "SystemdUnit",
    "TaskScheduler",
    "carried_env",
    "cron_line",
    "crontab_with",
    "crontab_without_ours",
    "env_note",
    "install",
    "launchd_log_dir",
    "launchd_plist",
    "output_encoding",
    "plist_path",
    "resume_argv",
    "shown",
    "status",
    "systemd_available",
    "systemd_environment",
    "systemd_exec",
    "systemd_quote",
    "systemd_unit",
    "uninstall",
    "unit_path",
    "windows_task_file",
    "windows_task_xml",
    "windows_user",
]


def _candidates(system: System) -> list[Mechanism]:
    if system.platform == "win32":
        return [TaskScheduler()]
    if system.platform == "darwin":
        return [LaunchAgent()]
    return [SystemdUnit(), Cron()]


def _preferred(system: System) -> Mechanism:
    candidates = _candidates(system)
    if len(candidates) > 1 and not systemd_available(system):
        return Cron()
    return candidates[0]


def install(system: System | None = None) -> str:
    """Registers `resume --all` at logon; running it again replaces the registration."""
    system = system or System()
    return _preferred(system).install(system)


def uninstall(system: System | None = None) -> str:
    """Removes every registration this module may have made; finding none is not an error."""
    system = system or System()
    removed = [message for m in _candidates(system) if (message := m.uninstall(system))]
    return "\n".join(removed) or "Autostart was not installed; there was nothing to remove."


def status(system: System | None = None) -> AutostartStatus:
    """The registration in place, or else what `install` would use and why it is absent."""
    system = system or System()
    found = {mechanism.name: mechanism.status(system) for mechanism in _candidates(system)}
    installed = [each for each in found.values() if each.installed]
    return installed[0] if installed else found[_preferred(system).name]
