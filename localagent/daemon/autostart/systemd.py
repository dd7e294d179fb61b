"""Linux with systemd: a user unit that runs `resume --all` when the user manager starts."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from localagent.daemon.autostart.cron import Cron
from localagent.daemon.autostart.system import (
    AutostartStatus,
    System,
    carried_env,
    check,
    env_note,
    resume_argv,
    shown,
)

UNIT_NAME = "localagent-resume.service"
# sd_booted(3): this directory exists only when systemd is the running init system.
SYSTEMD_BOOTED_MARKER = Path("/run/systemd/system")
_SYSTEMD_PLAIN = re.compile(r"[^\s\"'\\;\x00-\x1f\x7f]+")
_SYSTEMD_ESCAPED = re.compile(r"[\\\"\x00-\x1f\x7f]")
# systemd refuses quotes, backslashes and control characters in the program path, and
# older versions do not expand `%` specifiers there.
_SYSTEMD_PROGRAM = re.compile(r"/[^\"'\\%\x00-\x1f\x7f]*")


def systemd_quote(arg: str, program: bool = False) -> str:
    """One word of an Exec line, read back by systemd exactly as given.

    `%` specifiers are expanded even inside quotes, and so are `$` variables in the
    arguments (not in the program path), so both are doubled.
    """
    arg = arg.replace("%", "%%") if program else arg.replace("%", "%%").replace("$", "$$")
    if _SYSTEMD_PLAIN.fullmatch(arg):
        return arg
    return '"' + _SYSTEMD_ESCAPED.sub(_c_escape, arg) + '"'


def _c_escape(match: re.Match[str]) -> str:
    char = match[0]
    return "\\" + char if char in '\\"' else f"\\x{ord(char):02x}"


def systemd_exec(argv: Sequence[str]) -> str:
    """The value of ExecStart= that runs `argv`."""
    program, args = argv[0], list(argv[1:])
    if not _SYSTEMD_PROGRAM.fullmatch(program):
        # A program path systemd cannot take goes through a shell as $0, untouched.
        program, args = "/bin/sh", ["-c", 'exec "$0" "$@"', program, *args]
    return " ".join([systemd_quote(program, program=True), *map(systemd_quote, args)])


def systemd_environment(name: str, value: str) -> str:
    """An Environment= line that systemd reads back as exactly `name=value`.

    `%` specifiers are expanded there too (doubled); `$` is not expanded in
    Environment=, so it stays as it is; quotes, backslashes and controls are C-escaped.
    """
    text = f"{name}={value}".replace("%", "%%")
    return 'Environment="' + _SYSTEMD_ESCAPED.sub(_c_escape, text) + '"'


def systemd_unit(argv: Sequence[str], env: Mapping[str, str] | None = None) -> str:
    """A systemd user unit that runs `argv` once each time the user manager starts,
    with `env` (settings variables) in its environment."""
    environment = "".join(systemd_environment(k, v) + "\n" for k, v in (env or {}).items())
    return f"""\
[Unit]
Description=Resume unfinished localagent goals
After=network-online.target

[Service]
Type=simple
ExecStart={systemd_exec(argv)}
{environment}WorkingDirectory=%h
# `resume --all` starts each agent detached and exits; only its own process may be
# stopped with it, the agents it started must keep running.
KillMode=process
Restart=on-failure
RestartSec=30
# 2 is bad usage or nothing to resume, 4 a workspace already running: retrying cannot help.
RestartPreventExitStatus=2 4

[Install]
WantedBy=default.target
"""


def systemd_available(system: System) -> bool:
    """Whether a systemd user manager is running and reachable from this session."""
    if system.which("systemctl") is None or not system.exists(SYSTEMD_BOOTED_MARKER):
        return False
    return system.run(["systemctl", "--user", "show-environment"]).returncode == 0


def unit_path(system: System) -> Path:
    config_home = system.env.get("XDG_CONFIG_HOME", "")
    base = Path(config_home) if os.path.isabs(config_home) else system.home / ".config"
    return base / "systemd" / "user" / UNIT_NAME


class SystemdUnit:
    name = "systemd"

    def install(self, system: System) -> str:
        argv, path = resume_argv(system), unit_path(system)
        system.write(path, systemd_unit(argv, carried_env(system.env)).encode("utf-8"))
        check(system, ["systemctl", "--user", "daemon-reload"])
        check(system, ["systemctl", "--user", "enable", UNIT_NAME])
        # A line left by an install made while systemd was absent would run it a second time.
        replaced = Cron().uninstall(system)
        return (
            f"Installed and enabled the systemd user unit {path}: it runs "
            f"`{shown(argv, system)}` when you log in. To have it run at boot before "
            "you log in, also run `loginctl enable-linger`."
            + env_note(system.env)
            + (f"\n{replaced}" if replaced else "")
        )

    def uninstall(self, system: System) -> str | None:
        path = unit_path(system)
        if not system.exists(path):
            return None
        if systemd_available(system):
            check(system, ["systemctl", "--user", "disable", UNIT_NAME])
            system.remove(path)
            check(system, ["systemctl", "--user", "daemon-reload"])
        else:
            # No manager to ask: remove the unit and the link `enable` made by hand.
            system.remove(path.parent / "default.target.wants" / UNIT_NAME)
            system.remove(path)
        return f"Disabled and removed the systemd user unit {path}."

    def status(self, system: System) -> AutostartStatus:
        path = unit_path(system)
        if not system.exists(path):
            return AutostartStatus(False, self.name, f"There is no systemd user unit at {path}.")
        if not systemd_available(system):
            detail = f"The unit {path} exists, but no systemd user session answers here."
            return AutostartStatus(False, self.name, detail)
        result = system.run(["systemctl", "--user", "is-enabled", UNIT_NAME])
        if result.returncode == 0:
            return AutostartStatus(True, self.name, f"The systemd user unit {path} is enabled.")
        state = result.output or "not enabled"
        detail = f"The unit {path} exists but is {state}; run `localagent autostart install`."
        return AutostartStatus(False, self.name, detail)
