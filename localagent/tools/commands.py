"""run_cmd: one allowed program, no shell, in the workspace's own environment (SPEC §8)."""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import sys
import typing
from pathlib import Path, PurePath, PureWindowsPath
from typing import Annotated

from localagent import workspace_env
from localagent.filenames import is_device_name
from localagent.outputstore import OutputWriter, Stored
from localagent.process import LaunchError, ProcessResult, run_process
from localagent.safefs import UnsafeFile
from localagent.tools.base import JOURNAL_DIR, ToolContext, ToolError, ToolResult, describe
from localagent.tools.outputs import not_stored
from localagent.tools.paths import relative, resolve_in_workspace, touches_journal
from localagent.workspace_env import WorkspaceEnvError

VENV_TIMEOUT = 300.0  # creating the workspace's .venv for pip, ensurepip included
PYTHON_MODULES = frozenset({"pytest", "pip", "ruff", "unittest"})
PYTHON_OPTIONS = frozenset({"-u", "-B"})
PIP_OUTSIDE = frozenset(
    {("config", "set"), ("config", "unset"), ("config", "edit"), ("cache", "purge")}
    | {("cache", "remove")}
)
SHELL_OPERATORS = (";", "&&", "||", "|", ">", "<", "`", "$(", "\n", "\r")
_PYTHON_NAME = re.compile(r"python(3(\.\d+)?)?|py")
_PYTHON_FORMS = (
    "use 'python [-u] [-B] SCRIPT.py ...' with a script in the workspace, or "
    f"'python -m MODULE ...' with MODULE one of {', '.join(sorted(PYTHON_MODULES))}"
)


def run_cmd(
    ctx: ToolContext,
    cmd: Annotated[str, "One program and its arguments, e.g. 'python -m pytest -q'."],
    timeout_sec: Annotated[int, "Seconds before the program and its children are killed."] = 60,
) -> ToolResult:
    """Run one allowed program in the workspace root, without a shell (no pipes,
    redirections or chaining), and return its exit code and output."""
    argv = command_argv(ctx, cmd)
    timeout = min(max(float(timeout_sec), 1.0), ctx.max_timeout)
    # Leave room for the status line and the stored output's note: the final cap rarely cuts.
    limit = max(ctx.output_limit - 400, 200)
    with contextlib.ExitStack() as stack:
        spill, problem = _spill(ctx, stack)
        try:
            env = workspace_env.command_env(ctx.root)
            write = spill.write if spill is not None else None
            result = run_process(
                argv, ctx.root, timeout, limit, ctx.cancelled, ctx.on_launch, env, write
            )
        except LaunchError as exc:
            raise ToolError(f"cannot run {describe(cmd)}: {exc}") from exc
        stored, problem = _kept(spill, result, problem)
    if result.cancelled:
        status = (
            "stopped: the agent was asked to stop; the process tree was killed; partial output:"
        )
    elif result.timed_out:
        status = f"timed out after {timeout:g}s; the process tree was killed; partial output:"
    elif result.returncode is not None and result.returncode < 0:
        status = f"exit code {result.returncode} (killed by signal {-result.returncode})"
    else:
        status = f"exit code {result.returncode}"
    output = result.output if result.output.strip() else "(no output)"
    ok = result.returncode == 0
    text = f"{status}\n{output}" + (f"\n{problem}" if problem else "")
    return ToolResult(ok, text, returncode=result.returncode, facts={"ran": [cmd]}, output=stored)


def _spill(ctx: ToolContext, stack: contextlib.ExitStack) -> tuple[OutputWriter | None, str]:
    """Where the whole output goes as it streams (when this context stores outputs), or
    why it cannot; a spill not kept is removed when `stack` closes."""
    if ctx.outputs is None or ctx.output_id is None:
        return None, ""
    try:
        return stack.enter_context(ctx.outputs.writer(ctx.output_id)), ""
    except (OSError, UnsafeFile) as exc:
        return None, not_stored(exc)


def _kept(
    spill: OutputWriter | None, result: ProcessResult, problem: str
) -> tuple[Stored | None, str]:
    """The stored output when the observation had to be cut, else None (and the spill is
    dropped), with why it could not be stored."""
    if spill is None or not result.truncated_bytes:
        return None, problem if result.truncated_bytes else ""
    try:
        return spill.keep(), ""
    except (OSError, UnsafeFile) as exc:
        return None, not_stored(exc)


def _program_name(token: str) -> str:
    return PurePath(token.replace("\\", "/")).name.casefold().removesuffix(".exe")


def split_command(cmd: str) -> list[str]:
    """The words of cmd: split at spaces, '...' and "..." quote, and a backslash is a plain
    character on every platform (`python src\\main.py` names src\\main.py, as on Windows),
    so a command means the same whichever system runs it. ValueError if a quote is open."""
    lexer = shlex.shlex(cmd, posix=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    lexer.escape = ""
    return list(lexer)


def command_argv(ctx: ToolContext, cmd: str) -> list[str]:
    """The argv that cmd runs as, or ToolError saying why the command is refused."""
    for operator in SHELL_OPERATORS:
        if operator in cmd:
            _refuse_shell(operator)
    try:
        tokens = split_command(cmd)
    except ValueError as exc:
        raise ToolError(f"cannot parse command {describe(cmd)}: {exc}") from exc
    if not tokens:
        raise ToolError("the command is empty; give one program and its arguments")
    if "&" in tokens:
        _refuse_shell("&")
    # Any python spelling on the list stands for the python rule, shown as 'python'.
    names = (_program_name(c) for c in ctx.allowed_commands)
    allowed = list(dict.fromkeys("python" if _PYTHON_NAME.fullmatch(c) else c for c in names))
    name = _program_name(tokens[0])
    key = "python" if _PYTHON_NAME.fullmatch(name) else name
    if key not in allowed:
        raise ToolError(
            f"program {tokens[0]!r} is not allowed; allowed programs: {', '.join(allowed)}"
        )
    if name != tokens[0].casefold().removesuffix(".exe"):
        raise ToolError(f"give the program by name ({name!r}), not as a path")
    _check_arguments(ctx.root, tokens[1:])
    _check_pip_subcommand(key, tokens[1:])
    try:
        return _resolved_argv(ctx, key, tokens[1:])
    except WorkspaceEnvError as exc:
        raise ToolError(f"cannot run {describe(cmd)}: {exc}") from None


def _resolved_argv(ctx: ToolContext, key: str, args: list[str]) -> list[str]:
    """The argv for an allowed program: the workspace's environment, never localagent's."""
    venv_timeout = min(VENV_TIMEOUT, ctx.max_timeout)
    if key == "pip":
        return [workspace_env.pip_python(ctx.root, venv_timeout, ctx.cancelled), "-m", "pip", *args]
    if key != "python":
        return [*workspace_env.program_argv(ctx.root, key), *args]
    args = _python_args(ctx, args)
    if _module_of(args) == "pip":
        return [workspace_env.pip_python(ctx.root, venv_timeout, ctx.cancelled), *args]
    return [*workspace_env.program_argv(ctx.root, "python"), *args]


def _module_of(args: list[str]) -> str | None:
    """The module that checked python arguments run with -m, if any."""
    rest = [arg for arg in args if arg not in PYTHON_OPTIONS]
    if not rest or not rest[0].startswith("-m"):
        return None
    return rest[0][2:] or rest[1]


def _check_arguments(root: Path, args: list[str]) -> None:
    """Refuses arguments naming a path outside the workspace or inside a journal.

    Any argument, and the value after '=' (`--target=../x`) or after a one-letter option
    (`-c../x`), counts as a path if it is absolute, climbs out with '..' or resolves
    through a link to outside; other words (`requests`, `-k name`) stay inside and pass.
    """
    for arg in args:
        for candidate in _path_candidates(arg):
            problem = _outside_problem(root, candidate)
            if problem is not None:
                raise ToolError(
                    f"argument {describe(arg)} names {problem}; commands may only name "
                    "files and folders inside the workspace, by paths relative to it"
                )


def _path_candidates(arg: str) -> list[str]:
    found = [] if arg.startswith("-") else [arg]
    if "=" in arg:
        found.append(arg.split("=", 1)[1])
    elif arg.startswith("-") and not arg.startswith("--"):
        found.append(arg[2:])
    # A file: URL (`pip install file:///x`, `pkg @ file:../x`) names a local path.
    return [text.split("file:", 1)[-1] if "file:" in text.casefold() else text for text in found]


def _outside_problem(root: Path, candidate: str) -> str | None:
    """What is wrong with candidate as a path (outside, journal), or None if it is fine."""
    normalized = candidate.replace("\\", "/").strip()
    if not normalized:
        return None
    drive = PureWindowsPath(normalized).drive
    if normalized.startswith("~") or (drive and sys.platform != "win32"):
        return "a path outside the workspace"
    path = root / normalized
    try:
        # Resolving a device name (`pytest CON`) would open the device on Windows.
        if any(is_device_name(part) for part in normalized.split("/")):
            raise ValueError(normalized)
        resolved = path.resolve()
    except (OSError, RuntimeError, ValueError):
        resolved = Path(os.path.normpath(path))
    if not resolved.is_relative_to(root) or not Path(os.path.normpath(path)).is_relative_to(root):
        return "a path outside the workspace"
    if touches_journal(resolved.relative_to(root).parts):
        return f"a path inside {JOURNAL_DIR}/, the agent's own journal"
    return None


def _check_pip_subcommand(key: str, args: list[str]) -> None:
    """Refuses pip subcommands that change pip's settings or cache outside the workspace."""
    pip_args = _pip_arguments(key, args)
    if pip_args is None:
        return
    action = tuple(arg for arg in pip_args if not arg.startswith("-"))[:2]
    if action in PIP_OUTSIDE and not (action[0] == "config" and "--site" in pip_args):
        raise ToolError(
            f"'pip {' '.join(action)}' changes pip's {action[0]} outside the workspace and is "
            "not allowed; pip may only change the workspace's own environment"
        )


def _pip_arguments(key: str, args: list[str]) -> list[str] | None:
    """pip's own arguments in `pip ARGS` or `python [-u] [-B] -m pip ARGS`, else None."""
    if key == "pip":
        return args
    for index, arg in enumerate(args):
        if arg == "-m":
            return args[index + 2 :] if args[index + 1 : index + 2] == ["pip"] else None
        if arg.startswith("-m"):
            return args[index + 1 :] if arg == "-mpip" else None
        if arg not in PYTHON_OPTIONS:
            return None
    return None


def _refuse_shell(operator: str) -> typing.NoReturn:
    shown = {"\n": "a line break", "\r": "a line break"}.get(operator, repr(operator))
    raise ToolError(
        f"shell syntax {shown} is not supported (there is no shell, even inside quotes); "
        "run one program per call without pipes, redirections, chaining or substitution"
    )


def _python_args(ctx: ToolContext, args: list[str]) -> list[str]:
    """Checks python's arguments against SPEC §8: workspace scripts and a few modules."""
    options: list[str] = []
    while args and args[0] in PYTHON_OPTIONS:
        options.append(args.pop(0))
    first = args[0] if args else ""
    if first.startswith("-m"):
        module = first[2:] or (args[1] if len(args) > 1 else "")
        if module not in PYTHON_MODULES:
            raise ToolError(f"python -m {module or '(nothing)'} is not allowed; {_PYTHON_FORMS}")
        return [*options, *args]
    if not first or first.startswith("-"):
        raise ToolError(_python_refusal(first))
    script = resolve_in_workspace(ctx.root, first)
    if not script.is_file():
        raise ToolError(f"script {describe(first)} does not exist; write it first or list_dir")
    return [*options, relative(ctx.root, script), *args[1:]]


def _python_refusal(first: str) -> str:
    if not first:
        return f"bare python is not allowed; {_PYTHON_FORMS}"
    if first == "-":
        return f"python reading a script from stdin ('python -') is not allowed; {_PYTHON_FORMS}"
    if first.startswith("-c"):
        return (
            "python -c is not allowed; write the code to a .py file in the workspace with "
            "write_file, then run 'python FILE.py'"
        )
    return f"python option {first!r} is not allowed; {_PYTHON_FORMS}"


def respaced(cmd: str) -> str:
    try:
        return shlex.join(split_command(cmd))
    except ValueError:
        return cmd
