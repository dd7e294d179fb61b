"""Commands in an OS sandbox, where one exists (bubblewrap on Linux).

The lexical checks of run_cmd see only the command line; a program can still write
wherever its user may, through a config file, a requirements file or its own code. In
the sandbox the workspace is the only writable place (its `.agent_context/` stays
read-only, so no command can forge the journal), `/tmp` is private, the rest of the file
system is read-only, localagent's own folders (its key, its config) are hidden, the
network is off unless allowed, and every process lives in a PID namespace that dies with
the command, so nothing it starts can outlive it. Where no sandbox works (Windows, macOS,
a Linux without user namespaces) commands run as before, under `localagent.system.subreaper` on
Linux, and the run says so once.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from localagent.system import subreaper

Mode = Literal["auto", "require", "off"]
Network = Literal["off", "pip", "on"]
BWRAP = "bwrap"
TRIAL_TIMEOUT = 10.0
JOURNAL_DIR = ".agent_context"
# What a program prints when it needed the network and had none.
OFFLINE_SIGNS = (
    "temporary failure in name resolution",
    "name or service not known",
    "network is unreachable",
    "no address associated with hostname",
    "nodename nor servname",
    "failed to establish a new connection",
    "could not resolve host",
    "getaddrinfo failed",
)


@dataclass(frozen=True)
class CommandPolicy:
    """How the model's commands run: `sandbox` (auto: where one works; require: never
    without; off), which of them reach the network, and which variables they get beyond
    the allow-list of `localagent.system.workspace_env`."""

    sandbox: Mode = "auto"
    network: Network = "pip"
    pass_env: tuple[str, ...] = ()


@dataclass(frozen=True)
class Support:
    """Whether commands can be sandboxed here: the bwrap program that works, or why not."""

    program: str | None
    reason: str = ""


def support(root: Path | None = None) -> Support:
    """bwrap found on PATH (never in root or through a relative entry) and a trial
    sandbox that runs; the trial is made once per process."""
    if not sys.platform.startswith("linux"):
        return Support(None, f"no sandbox exists for {sys.platform} here")
    from localagent.system.workspace_env import which

    program = which(BWRAP, root)
    if program is None:
        return Support(None, "bwrap was not found on PATH (install bubblewrap)")
    problem = _trial(program)
    return Support(None, problem) if problem else Support(program)


@functools.cache
def _trial(program: str) -> str:
    """Why a minimal sandbox fails here ("" when it works): a kernel without user
    namespaces, a container that forbids them, a broken install."""
    true = shutil.which("true") or sys.executable
    argv = [program, *_isolation(network=False), "--", true]
    try:
        done = subprocess.run(
            argv, capture_output=True, timeout=TRIAL_TIMEOUT, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bwrap cannot run: {exc}"
    if done.returncode == 0:
        return ""
    said = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
    return f"bwrap fails here ({said[0][:200]})"


def _isolation(network: bool) -> list[str]:
    """The namespaces and the read-only base every sandbox starts from."""
    base = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    # Sockets under /run (docker.sock, the D-Bus bus) would reach out of any sandbox.
    base += ["--tmpfs", "/run"]
    if network:  # the resolver's configuration, where /etc/resolv.conf points
        base += ["--ro-bind-try", "/run/systemd/resolve", "/run/systemd/resolve"]
    spaces = ["--unshare-pid", "--unshare-ipc", "--die-with-parent", "--cap-drop", "ALL"]
    return base + spaces + ([] if network else ["--unshare-net"])


def _hidden(root: Path) -> list[str]:
    """localagent's per-user folders (the secret key, the config), hidden by an empty tmpfs."""
    from localagent.system.userdirs import user_config_dir, user_data_dir

    found = []
    for folder in dict.fromkeys((user_config_dir(), user_data_dir())):
        try:
            where = folder.resolve()
        except OSError:
            continue
        if where.is_dir() and not root.is_relative_to(where) and not where.is_relative_to(root):
            found += ["--tmpfs", str(where)]
    return found


def confine(
    argv: list[str], root: Path, policy: CommandPolicy, network: bool, env: Mapping[str, str | None]
) -> list[str]:
    """The argv that runs `argv` in root's sandbox; where commands are not sandboxed, under
    the subreaper (Linux) or as it is. LaunchError when the policy requires a sandbox and
    none works here, or the program cannot be found.

    `env` is the environment the command gets (its PATH finds the program)."""
    from localagent.system.process import LaunchError

    found = support(root) if policy.sandbox != "off" else Support(None, "sandbox = off")
    if found.program is None and policy.sandbox == "require":
        raise LaunchError(f"commands must run in a sandbox (sandbox = require): {found.reason}")
    if not sys.platform.startswith("linux"):
        return argv  # Windows: the command's job object holds its whole tree
    program = _program(argv[0], env)
    if found.program is None:
        return subreaper.wrap([program, *argv[1:]])
    path = env.get("PATH") if "PATH" in env else os.environ.get("PATH")
    folders = [Path(program).parent, *(Path(p) for p in (path or "").split(os.pathsep) if p)]
    binds = [*_hidden(root), *_programs_in_tmp(folders, root), *_binds(root)]
    return [found.program, *_isolation(network), *binds, "--", program, *argv[1:]]


def _programs_in_tmp(folders: list[Path], root: Path) -> list[str]:
    """Read-only views of the program folders (PATH's, a virtual environment's) that lie
    under /tmp, which the sandbox's own /tmp would hide: a CI's venv lives there."""
    found: list[str] = []
    for folder in folders:
        if not folder.is_absolute() or not folder.is_relative_to("/tmp"):
            continue
        # A virtual environment's interpreter needs its whole environment.
        shown = folder.parent if (folder.parent / "pyvenv.cfg").is_file() else folder
        if shown == Path("/tmp") or root.is_relative_to(shown) or shown.is_relative_to(root):
            continue
        if shown.is_dir() and str(shown) not in found:
            found += ["--ro-bind", str(shown), str(shown)]
    return found


def _binds(root: Path) -> list[str]:
    """The workspace writable but for its journal, a /tmp of its own, and root as cwd."""
    journal = root / JOURNAL_DIR
    binds = ["--bind", str(root), str(root)]
    if journal.is_dir() and not journal.is_symlink():
        binds += ["--ro-bind", str(journal), str(journal)]
    temp = ["--setenv", "TMPDIR", "/tmp", "--unsetenv", "TEMP", "--unsetenv", "TMP"]
    return [*binds, *temp, "--chdir", str(root)]


def _program(name: str, env: Mapping[str, str | None]) -> str:
    """The program's full path, as the launch would find it, so a missing one is said
    plainly rather than by bwrap."""
    from localagent.system.process import LaunchError

    if not name:
        raise LaunchError("empty command")
    path = env.get("PATH") if "PATH" in env else os.environ.get("PATH")
    found = shutil.which(name, path=path or "")
    if found is None:
        raise LaunchError(f"program {name!r} was not found")
    return found


def sandboxed(policy: CommandPolicy) -> bool:
    return policy.sandbox != "off" and support().program is not None


def offline_note(policy: CommandPolicy, network: bool, output: str) -> str:
    """A line for the observation when a failed sandboxed command looks like it needed
    the network it did not have; "" otherwise."""
    if network or not sandboxed(policy):
        return ""
    lowered = output.casefold()
    if not any(sign in lowered for sign in OFFLINE_SIGNS):
        return ""
    allowed = "only pip may reach it" if policy.network == "pip" else "no command may reach it"
    return (
        f"note: this command ran without network access (network = {policy.network}: "
        f"{allowed}); it looks like it failed for that reason. Work offline, or ask the "
        'user to set network = "on" in the config file.'
    )


def describe(policy: CommandPolicy) -> tuple[bool, str]:
    """Whether commands are sandboxed here under this policy, and how, in one sentence."""
    if policy.sandbox == "off":
        return False, "not sandboxed (sandbox = off): only the command checks apply"
    found = support()
    if found.program is None:
        if policy.sandbox == "require":
            return False, f"refused: sandbox = require, and {found.reason}"
        return False, f"not sandboxed ({found.reason}): only the command checks apply"
    network = {"off": "no network", "pip": "network for pip only", "on": "network on"}
    return True, (
        f"sandboxed with bubblewrap ({found.program}): only the workspace is writable "
        f"(not {JOURNAL_DIR}/), a private /tmp, {network[policy.network]}"
    )


def run_start(policy: CommandPolicy) -> tuple[str, str]:
    """What a run journals about its commands, and the warning it gives once ("" when
    they are sandboxed or the user turned the sandbox off); UsageError when a sandbox is
    required and none works here."""
    from localagent.system.errors import UsageError

    sandboxed_, how = describe(policy)
    if not sandboxed_ and policy.sandbox == "require":
        raise UsageError(
            f"commands must run in a sandbox (sandbox = require) and none works here: "
            f'{support().reason}; install bubblewrap, or set sandbox = "auto"'
        )
    warning = "" if sandboxed_ or policy.sandbox == "off" else f"commands are {how}"
    return how, warning


def policy_of(settings: Mapping[str, object]) -> CommandPolicy:
    """The policy in a run's journaled settings (defaults for what an older run lacks)."""
    sandbox, network = settings.get("sandbox"), settings.get("network")
    return CommandPolicy(
        sandbox if sandbox in typing.get_args(Mode) else "auto",  # type: ignore[arg-type]
        network if network in typing.get_args(Network) else "pip",  # type: ignore[arg-type]
    )


def status_line(settings: Mapping[str, object]) -> str:
    """How this machine runs the commands of a run with these journaled settings (status)."""
    return describe(policy_of(settings))[1]
