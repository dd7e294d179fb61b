"""A command line as run_cmd reads it (SPEC §8): split without a shell, and checked
against the allow-list, the forms of python that may run, and arguments that would name
a path outside the workspace.

`check_command` is the one judge of a command: run_cmd asks it before every run, and
`start` asks it about the goal's checks before the goal begins.
"""

from __future__ import annotations

import os
import re
import shlex
import string
import sys
import typing
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePath, PureWindowsPath

from localagent.system.filenames import is_device_name
from localagent.tools.base import JOURNAL_DIR, ToolError, describe
from localagent.tools.paths import relative, resolve_in_workspace, touches_journal

PYTHON_MODULES = frozenset({"pytest", "pip", "ruff", "unittest"})
PYTHON_OPTIONS = frozenset({"-u", "-B"})
PIP_OUTSIDE = frozenset(
    {("config", "set"), ("config", "unset"), ("config", "edit"), ("cache", "purge")}
    | {("cache", "remove")}
)
OPTION_LETTERS = string.ascii_letters + string.digits
# Outside quotes only: with no shell, a quoted ';' is a plain character.
SHELL_OPERATORS = (";", "&&", "||", "|", "&", ">", "<", "`", "$(")
LINE_BREAKS = ("\n", "\r")  # refused even inside quotes: a command is one line
_PYTHON_NAME = re.compile(r"python(3(\.\d+)?)?|py")
# The end of each python refusal: how python may run.
_FORMS = ToolError.of("python_forms", modules=", ".join(sorted(PYTHON_MODULES)))


def is_python(program: str) -> bool:
    """Whether a command's first word runs Python (`python`, `python3.12`, `py.exe`)."""
    name = program.replace("\\", "/").rsplit("/", 1)[-1].lower().removesuffix(".exe")
    return bool(_PYTHON_NAME.fullmatch(name))


@dataclass(frozen=True)
class Command:
    """A command that passed every check that does not depend on the workspace's files."""

    key: str  # the program's name on the allow-list ('python' for any python spelling)
    args: list[str]
    script: Path | None = None  # the workspace script that `python` runs, if any


def check_command(root: Path, allowed_commands: Iterable[str], cmd: str) -> Command:
    """cmd as run_cmd would run it in root, or ToolError saying why it is refused.

    Only what cannot change while a goal runs is checked: shell syntax, the allow-list,
    the forms of python, arguments naming paths outside the workspace. A script that is
    still to be written passes, so a goal check can be judged before its goal starts.
    """
    operator = unquoted_operator(cmd)
    if operator is not None:
        _refuse_shell(operator)
    try:
        tokens = split_command(cmd)
    except ValueError as exc:
        raise ToolError.of("command_unparsable", cmd=describe(cmd), problem=exc) from exc
    if not tokens:
        raise ToolError.of("command_empty")
    # Any python spelling on the list stands for the python rule, shown as 'python'.
    names = (_program_name(c) for c in allowed_commands)
    allowed = list(dict.fromkeys("python" if _PYTHON_NAME.fullmatch(c) else c for c in names))
    name = _program_name(tokens[0])
    key = "python" if _PYTHON_NAME.fullmatch(name) else name
    if key not in allowed:
        raise ToolError.of(
            "program_not_allowed", program=repr(tokens[0]), allowed=", ".join(allowed)
        )
    if name != tokens[0].casefold().removesuffix(".exe"):
        raise ToolError.of("program_as_path", name=repr(name))
    _check_arguments(root, tokens[1:])
    _check_pip_subcommand(key, tokens[1:])
    if key != "python":
        return Command(key, tokens[1:])
    args, script = _python_args(root, tokens[1:])
    return Command(key, args, script)


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


def unquoted_operator(cmd: str) -> str | None:
    """The first shell operator outside quotes in cmd, or a line break anywhere; None when
    there is neither. Quotes are read as split_command reads them."""
    for line_break in LINE_BREAKS:
        if line_break in cmd:
            return line_break
    quote = ""
    for at, char in enumerate(cmd):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif found := next((op for op in SHELL_OPERATORS if cmd.startswith(op, at)), None):
            return found
    return None


def runs_pip(cmd: str) -> bool:
    """Whether an accepted command runs pip (`pip ...`, `python -m pip ...`)."""
    tokens = split_command(cmd)
    name = _program_name(tokens[0])
    key = "python" if _PYTHON_NAME.fullmatch(name) else name
    return _pip_arguments(key, tokens[1:]) is not None


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
                raise ToolError.of("argument_outside", argument=describe(arg), problem=problem)


def _path_candidates(arg: str) -> list[str]:
    """The texts in arg that may name a path: the argument itself, what follows each '='
    (`--target=../x`, `--config "cache-dir = '/abs'"`), and each place where a value may be
    glued to a cluster of one-letter options (`-c../x`, `-qt../x`, `-vs../tests`)."""
    found = [] if arg.startswith("-") else [arg]
    found += [arg[at + 1 :].strip().strip("'\"") for at, c in enumerate(arg) if c == "="]
    if arg.startswith("-") and not arg.startswith("--"):
        letters = len(arg) - 1 - len(arg[1:].lstrip(OPTION_LETTERS))
        found += [arg[at:] for at in range(2, letters + 2) if arg[at:]]
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
        raise ToolError.of("pip_outside", action=" ".join(action), what=action[0])


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
    if operator in LINE_BREAKS:
        raise ToolError.of("shell_line_break")
    raise ToolError.of("shell_operator", operator=repr(operator))


def _python_args(root: Path, args: list[str]) -> tuple[list[str], Path | None]:
    """Checks python's arguments against SPEC §8 (workspace scripts and a few modules);
    returns them and the script they run, if any."""
    options: list[str] = []
    while args and args[0] in PYTHON_OPTIONS:
        options.append(args.pop(0))
    first = args[0] if args else ""
    if first.startswith("-m"):
        module = first[2:] or (args[1] if len(args) > 1 else "")
        if module not in PYTHON_MODULES:
            raise ToolError.of("python_module", module=module or "(nothing)", forms=_FORMS)
        return [*options, *args], None
    if not first or first.startswith("-"):
        raise _python_refusal(first)
    script = resolve_in_workspace(root, first)
    return [*options, relative(root, script), *args[1:]], script


def _python_refusal(first: str) -> ToolError:
    if not first:
        return ToolError.of("python_bare", forms=_FORMS)
    if first == "-":
        return ToolError.of("python_stdin", forms=_FORMS)
    if first.startswith("-c"):
        return ToolError.of("python_c")
    return ToolError.of("python_option", option=repr(first), forms=_FORMS)
