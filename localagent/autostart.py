"""`localagent autostart`: run `localagent resume --all` at logon, per user (SPEC §2).

Windows gets a Task Scheduler task, Linux a systemd user unit (or a cron `@reboot`
line where systemd is absent), macOS a LaunchAgent. The definitions and the exact
commands are built by pure functions; everything that touches the machine goes
through `System`, so every platform's flow runs in tests on any platform.
"""

from __future__ import annotations

import codecs
import getpass
import os
import plistlib
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple, Protocol

from localagent.errors import AgentError

TASK_NAME = "localagent-resume"
UNIT_NAME = "localagent-resume.service"
CRON_MARKER = "# localagent-resume"
LAUNCHD_LABEL = "io.localagent.resume"
TASK_NAMESPACE = "http://schemas.microsoft.com/windows/2004/02/mit/task"
# Gives Ollama, itself often started at logon, time to come up before the agents call it.
LOGON_DELAY = "PT30S"
# sd_booted(3): this directory exists only when systemd is the running init system.
SYSTEMD_BOOTED_MARKER = Path("/run/systemd/system")
# Settings set in the installing shell are carried into the definition, so the resumed
# agents talk to the same server with the same settings; secrets never go into a file.
CARRIED_PREFIXES = ("OLLAMA_", "LOCALAGENT_")
SECRET_NAMES = frozenset({"LOCALAGENT_API_KEY"})


class CommandResult(NamedTuple):
    returncode: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return "\n".join(part.strip() for part in (self.stdout, self.stderr) if part.strip())


class AutostartFailed(AgentError):
    """An OS command that registers or removes autostart failed; carries the command and output."""

    exit_code = 1

    def __init__(self, command: Sequence[str], result: CommandResult, hint: str = "") -> None:
        self.command = list(command)
        self.returncode = result.returncode
        self.output = result.output
        message = f"`{shlex.join(self.command)}` failed with exit code {self.returncode}"
        message += f": {self.output}" if self.output else " and printed nothing."
        super().__init__(f"{message}\n{hint}" if hint else message)


@dataclass(frozen=True)
class AutostartStatus:
    installed: bool
    mechanism: str  # "schtasks", "systemd", "cron" or "launchd"
    detail: str


@dataclass
class System:
    """The machine as autostart sees it: the only place that runs programs or touches files."""

    platform: str = field(default_factory=lambda: sys.platform)
    home: Path = field(default_factory=Path.home)
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    python: str = field(default_factory=lambda: sys.executable)
    temp_dir: Path = field(default_factory=lambda: Path(tempfile.gettempdir()))
    timeout: float = 60.0

    def run(self, argv: Sequence[str], input: str | None = None) -> CommandResult:
        try:
            done = subprocess.run(
                list(argv),
                input=None if input is None else input.encode("utf-8"),
                stdin=subprocess.DEVNULL if input is None else None,
                capture_output=True,
                timeout=self.timeout,
                check=False,
            )
        except FileNotFoundError:
            return CommandResult(127, "", f"{argv[0]}: command not found")
        except subprocess.TimeoutExpired:
            return CommandResult(124, "", f"{argv[0]}: no answer after {self.timeout:g} s")
        except OSError as exc:
            return CommandResult(126, "", f"{argv[0]}: {exc}")
        encoding = output_encoding()
        out, err = (data.decode(encoding, errors="replace") for data in (done.stdout, done.stderr))
        return CommandResult(done.returncode, out, err)

    def write(self, path: Path, data: bytes) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)

    def mkdir(self, path: Path) -> None:
        path.mkdir(parents=True, exist_ok=True)

    def remove(self, path: Path) -> None:
        path.unlink(missing_ok=True)

    def exists(self, path: Path) -> bool:
        return path.exists()

    def which(self, name: str) -> str | None:
        return shutil.which(name)

    def uid(self) -> int:
        return os.getuid()

    def user(self) -> str:
        return getpass.getuser()


def output_encoding() -> str:
    """How the programs autostart runs encode their output: UTF-8, except that Windows
    console programs (schtasks) write the console's code page, the OEM one (cp437, cp850)
    when there is no console, not UTF-8 nor the ANSI code page."""
    if sys.platform != "win32":
        return "utf-8"
    import ctypes

    kernel32 = ctypes.WinDLL("kernel32")  # type: ignore[attr-defined]
    encoding = f"cp{kernel32.GetConsoleOutputCP() or kernel32.GetOEMCP()}"
    try:
        codecs.lookup(encoding)
    except LookupError:
        return "utf-8"
    return encoding


def carried_env(env: Mapping[str, str]) -> dict[str, str]:
    """The settings variables of `env` that the autostart definition should set."""
    return {
        name: value
        for name, value in sorted(env.items())
        if name.startswith(CARRIED_PREFIXES) and name not in SECRET_NAMES and "\0" not in value
    }


def env_note(env: Mapping[str, str], carried: bool = True) -> str:
    """What the install message says about the environment the agents get."""
    names = list(carried_env(env))
    lines = []
    if names and carried:
        lines.append(f"It sets {', '.join(names)} as they are set now.")
    elif names:
        lines.append(
            f"{', '.join(names)} set in this shell are not carried: the task runs with "
            "your account's environment (set them there with `setx NAME VALUE`)."
        )
    for name in sorted(SECRET_NAMES & set(env)):
        lines.append(
            f"{name} is set but was not written into the definition (a secret never goes "
            "into a file); give the resumed agents the key yourself, where only you can "
            "read it."
        )
    return "".join("\n" + line for line in lines)


def resume_argv(system: System) -> list[str]:
    """The command autostart runs, as an argv list.

    `python -m localagent` rather than the `localagent` script: the interpreter path is
    always known. On Windows the task runs `localagent.logon` (`resume --all` that logs to
    a file and stays while the agents it resumed run, so that the end of the task cannot
    end them) with `pythonw.exe`, which opens no console window.
    """
    python = system.python
    if not python:
        raise AgentError("Cannot tell which Python runs localagent (sys.executable is empty).")
    if system.platform == "win32":
        pythonw = Path(python).with_name("pythonw.exe")
        if system.exists(pythonw):
            python = str(pythonw)
        return [python, "-m", "localagent.logon"]
    return [python, "-m", "localagent", "resume", "--all"]


def windows_user(env: Mapping[str, str]) -> str | None:
    name = env.get("USERNAME")
    if not name:
        return None
    domain = env.get("USERDOMAIN")
    return f"{domain}\\{name}" if domain else name


_TASK_SETTINGS = (
    ("MultipleInstancesPolicy", "IgnoreNew"),
    ("DisallowStartIfOnBatteries", "false"),
    ("StopIfGoingOnBatteries", "false"),
    ("StartWhenAvailable", "true"),
    ("Hidden", "true"),
    # PT0S lifts the default 72-hour limit, which would kill a long run.
    ("ExecutionTimeLimit", "PT0S"),
)


def windows_task_xml(argv: Sequence[str], workdir: str, user: str) -> str:
    """A Task Scheduler definition that runs `argv` shortly after `user` logs on."""
    task = ET.Element("Task", {"version": "1.2", "xmlns": TASK_NAMESPACE})
    info = _child(task, "RegistrationInfo")
    _child(info, "Author", user)
    _child(info, "Description", "Resumes unfinished localagent goals after you log on.")
    _child(info, "URI", "\\" + TASK_NAME)
    trigger = _child(_child(task, "Triggers"), "LogonTrigger")
    # Without a UserId the trigger fires at every user's logon, which only an
    # administrator may register.
    _child(trigger, "UserId", user)
    _child(trigger, "Delay", LOGON_DELAY)
    principal = _child(_child(task, "Principals"), "Principal", id="Author")
    _child(principal, "UserId", user)
    # InteractiveToken runs in the user's session without storing a password, which also
    # lets an unprivileged user register the task.
    _child(principal, "LogonType", "InteractiveToken")
    _child(principal, "RunLevel", "LeastPrivilege")
    settings = _child(task, "Settings")
    for name, value in _TASK_SETTINGS:
        _child(settings, name, value)
    restart = _child(settings, "RestartOnFailure")
    _child(restart, "Interval", "PT1M")
    _child(restart, "Count", "3")
    action = _child(_child(task, "Actions", Context="Author"), "Exec")
    _child(action, "Command", argv[0])
    _child(action, "Arguments", subprocess.list2cmdline(argv[1:]))
    _child(action, "WorkingDirectory", workdir)
    ET.indent(task)
    return '<?xml version="1.0" encoding="UTF-16"?>\n' + ET.tostring(task, "unicode") + "\n"


def _child(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
    element = ET.SubElement(parent, tag, attrs)
    element.text = text
    return element


def windows_task_file(xml: str) -> bytes:
    """The bytes schtasks expects for /XML: UTF-16 little-endian with a byte-order mark."""
    return codecs.BOM_UTF16_LE + xml.encode("utf-16-le")


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


def shown(argv: Sequence[str], system: System) -> str:
    if system.platform == "win32":
        return subprocess.list2cmdline(argv)
    return shlex.join(argv)


def _check(system: System, argv: list[str], input: str | None = None, hint: str = "") -> None:
    result = system.run(argv, input)
    if result.returncode != 0:
        raise AutostartFailed(argv, result, hint)


class Mechanism(Protocol):
    name: str

    def install(self, system: System) -> str: ...

    def uninstall(self, system: System) -> str | None: ...

    def status(self, system: System) -> AutostartStatus: ...


class TaskScheduler:
    name = "schtasks"

    def install(self, system: System) -> str:
        argv = resume_argv(system)
        user = windows_user(system.env) or system.user()
        path = system.temp_dir / f"{TASK_NAME}.xml"
        system.write(path, windows_task_file(windows_task_xml(argv, str(system.home), user)))
        try:
            _check(system, ["schtasks", "/Create", "/TN", TASK_NAME, "/XML", str(path), "/F"])
        finally:
            system.remove(path)
        return (
            f"Registered the task {TASK_NAME}: it runs `{shown(argv, system)}` at logon, "
            "which resumes unfinished goals and stays while their agents run (its log: "
            "autostart.log in localagent's data folder)." + env_note(system.env, carried=False)
        )

    def uninstall(self, system: System) -> str | None:
        if not self._registered(system):
            return None
        _check(system, ["schtasks", "/Delete", "/TN", TASK_NAME, "/F"])
        return f"Removed the scheduled task {TASK_NAME}."

    def status(self, system: System) -> AutostartStatus:
        if self._registered(system):
            return AutostartStatus(True, self.name, f"The task {TASK_NAME} is registered.")
        return AutostartStatus(False, self.name, f"There is no scheduled task {TASK_NAME}.")

    def _registered(self, system: System) -> bool:
        return system.run(["schtasks", "/Query", "/TN", TASK_NAME]).returncode == 0


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
        _check(system, ["systemctl", "--user", "daemon-reload"])
        _check(system, ["systemctl", "--user", "enable", UNIT_NAME])
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
            _check(system, ["systemctl", "--user", "disable", UNIT_NAME])
            system.remove(path)
            _check(system, ["systemctl", "--user", "daemon-reload"])
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


class Cron:
    name = "cron"

    def install(self, system: System) -> str:
        if system.which("crontab") is None:
            raise AgentError(
                "Neither a systemd user session nor crontab is available, so nothing can "
                "run `localagent resume --all` at startup. Run it by hand after a reboot."
            )
        argv = resume_argv(system)
        env = carried_env(system.env)
        if env:  # cron starts commands with an almost empty environment
            argv = ["/usr/bin/env", *(f"{k}={v}" for k, v in env.items()), *argv]
        _check(system, ["crontab", "-"], crontab_with(_read_crontab(system), cron_line(argv)))
        return (
            f"Added an @reboot line to your crontab: it runs `{shown(argv, system)}` at boot."
            + env_note(system.env)
        )

    def uninstall(self, system: System) -> str | None:
        crontab = _read_crontab(system) if system.which("crontab") else ""
        if not any(_is_ours(line) for line in crontab.splitlines()):
            return None
        _check(system, ["crontab", "-"], crontab_without_ours(crontab))
        return "Removed the localagent @reboot line from your crontab."

    def status(self, system: System) -> AutostartStatus:
        if system.which("crontab") is None:
            return AutostartStatus(False, self.name, "crontab is not available here.")
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
            _check(system, ["launchctl", "load", "-w", str(path)], hint=hint)
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
