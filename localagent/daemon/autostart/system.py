"""What every autostart mechanism shares: the machine (`System`, the only place that runs
programs or touches files), the command registered, the settings carried into it."""

from __future__ import annotations

import codecs
import getpass
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple, Protocol

from localagent.system.errors import AgentError, UsageError

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


class AutostartUnavailable(UsageError):
    """Nothing on this machine can run a command at logon (exit 2: not a failed goal, and
    nothing to retry until the machine changes)."""


@dataclass(frozen=True)
class AutostartStatus:
    installed: bool
    mechanism: str  # "schtasks", "systemd", "cron" or "launchd"
    detail: str
    available: bool = True  # whether `install` can use the mechanism on this machine


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


def shown(argv: Sequence[str], system: System) -> str:
    if system.platform == "win32":
        return subprocess.list2cmdline(argv)
    return shlex.join(argv)


def check(system: System, argv: list[str], input: str | None = None, hint: str = "") -> None:
    result = system.run(argv, input)
    if result.returncode != 0:
        raise AutostartFailed(argv, result, hint)


class Mechanism(Protocol):
    name: str

    def install(self, system: System) -> str: ...

    def uninstall(self, system: System) -> str | None: ...

    def status(self, system: System) -> AutostartStatus: ...
