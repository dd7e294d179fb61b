"""The tools the model may call, as typed plain functions in one registry.

Argument models and the schemas sent to the model are derived from the
signatures (`Annotated[type, description]`) and docstrings. Mistakes by the
model and failures of a tool come back as observations with `ok=False`.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import os
import re
import secrets
import shlex
import stat
import sys
import time
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePath, PureWindowsPath
from typing import Annotated, Any

import orjson
from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from localagent import workspace_env
from localagent.filenames import is_device_name, name_problem
from localagent.fingerprint import is_skipped
from localagent.process import LaunchError, run_process
from localagent.textcap import cap_text
from localagent.workspace_env import WorkspaceEnvError

JOURNAL_DIR = ".agent_context"
IDEMPOTENT_TOOLS: frozenset[str] = frozenset({"list_dir", "read_file", "write_file"})
MAX_LIST_ENTRIES = 200
READ_BYTES_RANGE = (1, 1_000_000)
BINARY_SNIFF_BYTES = 8192
REPLACE_RETRY_SECONDS = 2.0
MAX_NAME_SIZE = 255  # bytes (UTF-16 units on Windows) in one file or folder name
# Bytes in a whole path (UTF-16 units on Windows): under PATH_MAX (4096) on Linux, and the
# same limit on Windows so that a path means the same everywhere.
MAX_PATH_SIZE = 4000
STALE_TEMP_SECONDS = 60.0
TEMP_SCAN_LIMIT = 20_000  # entries looked at by clean_stale_temps
VENV_TIMEOUT = 300.0  # creating the workspace's .venv for pip, ensurepip included
PYTHON_MODULES = frozenset({"pytest", "pip", "ruff", "unittest"})
PYTHON_OPTIONS = frozenset({"-u", "-B"})
PIP_OUTSIDE = frozenset(
    {("config", "set"), ("config", "unset"), ("config", "edit"), ("cache", "purge")}
    | {("cache", "remove")}
)
SHELL_OPERATORS = (";", "&&", "||", "|", ">", "<", "`", "$(", "\n", "\r")
_TEMP_NAME = re.compile(r"\..+\.[0-9a-f]{8}\.tmp", re.DOTALL)
_PYTHON_NAME = re.compile(r"python(3(\.\d+)?)?|py")
_JSON_TYPES: dict[type, str] = {str: "string", int: "integer", bool: "boolean", float: "number"}


def _never() -> bool:
    return False


@dataclass(frozen=True)
class ToolContext:
    """Where tools act and within which limits; `output_limit` caps every observation."""

    root: Path
    allowed_commands: tuple[str, ...] = ("python", "pytest", "ruff", "pip")
    output_limit: int = 6000
    max_timeout: float = 600.0
    cancelled: Callable[[], bool] = _never  # true once the agent is asked to stop
    # Called with (pid, create_time) as soon as a command runs, so it can be journaled;
    # if it raises, the command is killed before it can act.
    on_launch: Callable[[int, float], None] | None = None

    def __post_init__(self) -> None:
        # Against an unresolved root, a workspace reached via a symlink would look like an escape.
        object.__setattr__(self, "root", Path(self.root).resolve())


@dataclass(frozen=True)
class ToolResult:
    """An observation for the model; `returncode` is set by run_cmd, `verdict` by
    mark_subtask_complete, `changed` when the workspace was modified."""

    ok: bool
    text: str
    changed: bool = False
    returncode: int | None = None
    verdict: tuple[bool, str] | None = None


class ToolError(Exception):
    """A mistake the model can correct; the message is the observation it reads."""


def _clean(text: str) -> str:
    # NUL and lone surrogates break JSON encoders and prompt templates downstream.
    text = text.replace("\x00", "\ufffd")
    return text.encode("utf-8", errors="replace").decode("utf-8")


def _describe(raw: str) -> str:
    return repr(raw) if len(raw) <= 120 else repr(raw[:117] + "...")


def resolve_in_workspace(root: Path, raw: str) -> Path:
    """The resolved path that raw names inside root, or ToolError if it would leave it.

    Backslashes count as separators on every platform, so a path means the same
    thing whichever system runs the agent.
    """
    if not raw.strip():
        raise ToolError("path is empty; use '.' for the workspace or a path relative to it")
    if "\x00" in raw:
        raise ToolError(f"path {_describe(raw)} contains a NUL character")
    normalized = raw.replace("\\", "/")
    outside = f"path {_describe(raw)} is outside the workspace; use a path relative to it"
    drive = PureWindowsPath(normalized).drive
    # `C:x` is relative to drive C's current folder, wherever that is.
    if drive and (sys.platform != "win32" or not PureWindowsPath(normalized).root):
        raise ToolError(outside)
    # Before anything touches the disk: on Windows, resolving `CON` opens the console.
    named = normalized[len(drive) :].split("/")
    if _touches_journal(tuple(named)):
        raise _journal_error(raw)
    _check_names(raw, named)
    _check_length(raw, normalized)
    try:
        resolved = (root / normalized).resolve()
    except (OSError, RuntimeError) as exc:
        raise ToolError(f"path {_describe(raw)} cannot be resolved: {exc}") from exc
    if not resolved.is_relative_to(root):
        raise ToolError(outside)
    parts = resolved.relative_to(root).parts
    if _touches_journal(parts):
        raise _journal_error(raw)
    _check_names(raw, parts)  # a link inside the workspace may lead to such a name
    return resolved


def _journal_error(raw: str) -> ToolError:
    # Nested ones too: a workspace inside this one has its own journal.
    return ToolError(
        f"path {_describe(raw)} is inside {JOURNAL_DIR}/, the agent's own journal; "
        "tools may not touch it"
    )


def _check_names(raw: str, parts: typing.Iterable[str]) -> None:
    for part in parts:
        problem = name_problem(part)
        if problem is not None:
            raise ToolError(f"path {_describe(raw)} {problem}")


def _name_size(name: str) -> int:
    """A file name's size as the file system counts it: UTF-16 units on Windows, else bytes."""
    if sys.platform == "win32":
        return len(name.encode("utf-16-le", "surrogatepass")) // 2
    return len(name.encode("utf-8", "surrogateescape"))


def _check_length(raw: str, normalized: str) -> None:
    longest = max(normalized.split("/"), key=_name_size)
    if _name_size(longest) > MAX_NAME_SIZE:
        raise ToolError(
            f"path {_describe(raw)} has a name of {_name_size(longest)} bytes "
            f"({_describe(longest)}); file and folder names may be at most {MAX_NAME_SIZE} "
            "bytes, use a shorter name"
        )
    if _name_size(normalized) > MAX_PATH_SIZE:
        raise ToolError(
            f"path {_describe(raw)} is {_name_size(normalized)} bytes long; paths may be at "
            f"most {MAX_PATH_SIZE} bytes, use a shorter one"
        )


def _relative(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix() if path != root else "."


def list_dir(
    ctx: ToolContext,
    path: Annotated[str, "Folder to list, relative to the workspace root."] = ".",
) -> ToolResult:
    """List a folder of the workspace: sub-folders end with '/', files show their size."""
    folder = resolve_in_workspace(ctx.root, path)
    if not folder.exists():
        raise ToolError(f"folder {_describe(path)} does not exist; list_dir('.') shows the root")
    if not folder.is_dir():
        raise ToolError(f"{_describe(path)} is a file, not a folder; use read_file to read it")
    with os.scandir(folder) as scan:
        entries = sorted(
            (e for e in scan if not _touches_journal((e.name,))),
            key=lambda e: (e.name.casefold(), e.name),
        )
    count = f"{len(entries)} entr{'y' if len(entries) == 1 else 'ies'}"
    lines = [f"{_relative(ctx.root, folder)}/ ({count})"]
    lines += [_entry_line(entry) for entry in entries[:MAX_LIST_ENTRIES]]
    if len(entries) > MAX_LIST_ENTRIES:
        lines.append(f"... {len(entries) - MAX_LIST_ENTRIES} more")
    if not entries:
        lines.append("(empty)")
    return ToolResult(True, "\n".join(lines))


def _entry_line(entry: os.DirEntry[str]) -> str:
    try:
        if entry.is_dir():
            return f"{entry.name}/"
        return f"{entry.name}  ({entry.stat().st_size} bytes)"
    except OSError:
        return f"{entry.name}  (unreadable or broken link)"


def read_file(
    ctx: ToolContext,
    path: Annotated[str, "File to read, relative to the workspace root."],
    max_bytes: Annotated[int, "Read at most this many bytes from the start of the file."] = 20000,
) -> ToolResult:
    """Read a text file of the workspace (UTF-8); long files are cut at max_bytes."""
    target = resolve_in_workspace(ctx.root, path)
    if not target.exists():
        raise ToolError(f"file {_describe(path)} does not exist; use list_dir to see what exists")
    if target.is_dir():
        raise ToolError(f"{_describe(path)} is a folder, not a file; use list_dir to list it")
    if not target.is_file():
        # Reading a FIFO or a device could block forever.
        raise ToolError(f"{_describe(path)} is not a regular file")
    limit = min(max(max_bytes, READ_BYTES_RANGE[0]), READ_BYTES_RANGE[1])
    size = target.stat().st_size
    with target.open("rb") as handle:
        data = handle.read(limit)
    if b"\x00" in data[:BINARY_SNIFF_BYTES]:
        return ToolResult(True, f"{_describe(path)} is a binary file ({size} bytes); not shown")
    text = data.decode("utf-8", errors="replace")
    if not data:
        text = f"({_describe(path)} is empty)"
    elif size > len(data):
        text += f"\n[... file is {size} bytes; only the first {len(data)} were read ...]"
    return ToolResult(True, text)


def write_file(
    ctx: ToolContext,
    path: Annotated[str, "File to write, relative to the workspace root."],
    content: Annotated[str, "The complete new content of the file (UTF-8 text)."],
    create_dirs: Annotated[bool, "Create missing parent folders."] = True,
) -> ToolResult:
    """Create or overwrite a file of the workspace with the given content.

    Writing the content a file already has succeeds with `changed=False`: the
    workspace did not change, so a repeat of it is not progress.
    """
    target = resolve_in_workspace(ctx.root, path)
    if target == ctx.root or target.is_dir():
        raise ToolError(f"{_describe(path)} is a folder; give the path of a file inside it")
    data = content.encode("utf-8", errors="replace")
    if target.is_file() and target.stat().st_size == len(data) and target.read_bytes() == data:
        return ToolResult(True, f"{_describe(path)} already has this content ({len(data)} bytes)")
    if not target.parent.is_dir():
        if not create_dirs:
            folder = _describe(_relative(ctx.root, target.parent))
            raise ToolError(f"folder {folder} does not exist; pass create_dirs=true to create it")
        target.parent.mkdir(parents=True, exist_ok=True)
    existed = target.exists()
    _write_atomically(target, data)
    how = "replaced" if existed else "created"
    text = f"wrote {len(data)} bytes to {_describe(path)} ({how})"
    if target.suffix.lower() in (".py", ".pyw"):
        problem = syntax_problem(content, _relative(ctx.root, target))
        text += f"; but {problem}: fix it before you run it" if problem else ""
    return ToolResult(True, text, changed=True)


def syntax_problem(source: str | bytes, name: str) -> str | None:
    """Why Python source does not compile ("syntax error at line 3: ..."), or None."""
    try:
        compile(source, name, "exec", dont_inherit=True)
    except SyntaxError as exc:
        where = f"line {exc.lineno}" if exc.lineno else "an unknown line"
        return f"syntax error at {where}: {exc.msg}"
    except ValueError as exc:  # null bytes
        return f"not Python source: {exc}"
    return None


def _temp_name(name: str) -> str:
    """`.NAME.1a2b3c4d.tmp`, with NAME shortened so that the whole stays a legal name."""
    room = MAX_NAME_SIZE - len(".." + "12345678" + ".tmp")
    while _name_size(name) > room:
        name = name[:-1]
    return f".{name}.{secrets.token_hex(4)}.tmp"


def _write_atomically(target: Path, data: bytes) -> None:
    temp = target.with_name(_temp_name(target.name))
    # 0o666 lets the umask decide, as for any new file; a replaced file keeps its mode.
    mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else 0o666
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        _replace_with_retry(temp, target)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def clean_stale_temps(root: Path, older_than: float = STALE_TEMP_SECONDS) -> int:
    """Removes write_file temp files (`.NAME.1a2b3c4d.tmp`) that a kill left behind.

    Only regular files older than `older_than` seconds, so a write in progress is never
    touched; links are not followed and the walk is bounded and skips caches, virtual
    environments and journals. Returns how many were removed; never raises.
    """
    deadline = time.time() - older_than
    removed = 0
    seen = 0
    pending = [root]
    while pending and seen < TEMP_SCAN_LIMIT:
        try:
            with os.scandir(pending.pop()) as scan:
                entries = list(scan)
        except OSError:
            continue
        seen += len(entries)
        for entry in entries:
            removed += _remove_if_stale(entry, deadline, pending)
    return removed


def _remove_if_stale(entry: os.DirEntry[str], deadline: float, pending: list[Path]) -> int:
    try:
        if entry.is_dir(follow_symlinks=False):
            if not is_skipped(entry.name, is_dir=True):
                pending.append(Path(entry.path))
            return 0
        if not _TEMP_NAME.fullmatch(entry.name) or not entry.is_file(follow_symlinks=False):
            return 0
        if entry.stat(follow_symlinks=False).st_mtime >= deadline:
            return 0
        os.unlink(entry.path)
    except OSError:
        return 0
    return 1


def _replace_with_retry(source: Path, target: Path) -> None:
    # Windows refuses to replace a file that an editor or a virus scanner holds open, briefly.
    deadline = time.monotonic() + REPLACE_RETRY_SECONDS
    while True:
        try:
            os.replace(source, target)
            return
        except PermissionError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.05)


def run_cmd(
    ctx: ToolContext,
    cmd: Annotated[str, "One program and its arguments, e.g. 'python -m pytest -q'."],
    timeout_sec: Annotated[int, "Seconds before the program and its children are killed."] = 60,
) -> ToolResult:
    """Run one allowed program in the workspace root, without a shell (no pipes,
    redirections or chaining), and return its exit code and output."""
    argv = command_argv(ctx, cmd)
    timeout = min(max(float(timeout_sec), 1.0), ctx.max_timeout)
    try:
        # Leave room for the status line so the final cap rarely cuts twice.
        limit = max(ctx.output_limit - 200, 200)
        env = workspace_env.command_env(ctx.root)
        result = run_process(argv, ctx.root, timeout, limit, ctx.cancelled, ctx.on_launch, env)
    except LaunchError as exc:
        raise ToolError(f"cannot run {_describe(cmd)}: {exc}") from exc
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
    return ToolResult(ok, f"{status}\n{output}", returncode=result.returncode)


def mark_subtask_complete(
    ctx: ToolContext,
    success: Annotated[bool, "true if the active subtask is done, false if it cannot be done."],
    reason: Annotated[str, "Why: the evidence that it is done, or what stands in the way."],
) -> ToolResult:
    """Declare the active subtask finished, successfully or not, and say why."""
    outcome = "completed" if success else "failed"
    return ToolResult(True, f"subtask marked {outcome}: {reason}", verdict=(success, reason))


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
        raise ToolError(f"cannot parse command {_describe(cmd)}: {exc}") from exc
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
        raise ToolError(f"cannot run {_describe(cmd)}: {exc}") from None


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
                    f"argument {_describe(arg)} names {problem}; commands may only name "
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
    if _touches_journal(resolved.relative_to(root).parts):
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


def _touches_journal(parts: tuple[str, ...]) -> bool:
    """Whether a path goes through a journal folder, this workspace's or a nested one's.

    Windows ignores trailing dots and spaces in names, so `.agent_context.` is the same.
    """
    return any(part.rstrip(" .").casefold() == JOURNAL_DIR for part in parts)


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
        raise ToolError(f"script {_describe(first)} does not exist; write it first or list_dir")
    return [*options, _relative(ctx.root, script), *args[1:]]


_PYTHON_FORMS = (
    "use 'python [-u] [-B] SCRIPT.py ...' with a script in the workspace, or "
    f"'python -m MODULE ...' with MODULE one of {', '.join(sorted(PYTHON_MODULES))}"
)


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


@dataclass(frozen=True)
class Tool:
    name: str
    function: Callable[..., ToolResult]
    arguments: type[BaseModel]
    schema: dict[str, Any]
    signature: str


def _parameter(annotation: object) -> tuple[type, str]:
    """The plain type and the description of an `Annotated[type, description]` hint."""
    if typing.get_origin(annotation) is not Annotated:
        raise TypeError(f"tool parameter needs Annotated[type, description], got {annotation}")
    base, *extras = typing.get_args(annotation)
    texts = [x if isinstance(x, str) else getattr(x, "description", None) for x in extras]
    texts = [text for text in texts if isinstance(text, str) and text]
    if base not in _JSON_TYPES or not texts:
        raise TypeError(f"tool parameter {annotation} needs a flat type and a description")
    return base, texts[0]


def _build_tool(function: Callable[..., ToolResult]) -> Tool:
    hints = typing.get_type_hints(function, include_extras=True)
    parameters = list(inspect.signature(function).parameters.values())[1:]
    fields: dict[str, Any] = {}
    properties: dict[str, dict[str, str]] = {}
    required: list[str] = []
    shown: list[str] = []
    for param in parameters:
        base, description = _parameter(hints[param.name])
        has_default = param.default is not inspect.Parameter.empty
        fields[param.name] = (hints[param.name], param.default if has_default else ...)
        properties[param.name] = {"type": _JSON_TYPES[base], "description": description}
        required += [] if has_default else [param.name]
        default = f" = {orjson.dumps(param.default).decode()}" if has_default else ""
        shown.append(f"{param.name}: {_JSON_TYPES[base]}{default}")
    description = " ".join(inspect.getdoc(function).split("\n\n")[0].split())  # type: ignore[union-attr]
    arguments = create_model(
        f"{function.__name__}_arguments", __config__=ConfigDict(extra="forbid"), **fields
    )
    parameters_schema = {"type": "object", "properties": properties, "required": required}
    header = {"name": function.__name__, "description": description}
    schema = {"type": "function", "function": {**header, "parameters": parameters_schema}}
    signature = f"{function.__name__}({', '.join(shown)})"
    return Tool(function.__name__, function, arguments, schema, signature)


@functools.cache
def _registry() -> dict[str, Tool]:
    functions = (list_dir, read_file, write_file, run_cmd, mark_subtask_complete)
    return {function.__name__: _build_tool(function) for function in functions}


def tool_names() -> list[str]:
    return list(_registry())


def tool_schemas() -> list[dict[str, Any]]:
    """The tool list in the shape Ollama's `tools=` expects; a fresh copy on every call."""
    return [orjson.loads(orjson.dumps(tool.schema)) for tool in _registry().values()]


def _parse_arguments(args: object) -> dict[str, Any]:
    if isinstance(args, str | bytes):
        text = args.strip()
        if not text:
            return {}
        try:
            args = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            raise ToolError(f"the arguments are not valid JSON ({exc})") from exc
    if args is None:
        return {}
    if not isinstance(args, Mapping):
        raise ToolError(f"the arguments must be a JSON object, got {type(args).__name__}")
    # Models often send null for an argument they mean to leave out.
    return {str(key): value for key, value in args.items() if value is not None}


def canonical_call(name: object, args: object) -> tuple[str, dict[str, Any]]:
    """The call as the loop guard should sign it: the trimmed tool name and its validated
    arguments with defaults filled, paths normalised and a command re-spaced, so that
    spellings of the same call compare equal. A call that does not validate comes back
    with its arguments as given (a dict, else `{"__raw__": repr(args)}`)."""
    stripped = name.strip() if isinstance(name, str) else repr(name)
    tool = _registry().get(stripped)
    try:
        if tool is None:
            raise ToolError(stripped)
        values = dict(tool.arguments.model_validate(_parse_arguments(args)))
    except (ToolError, ValidationError):
        raw = {str(k): v for k, v in args.items()} if isinstance(args, Mapping) else None
        return stripped, raw if raw is not None else {"__raw__": repr(args)}
    if isinstance(values.get("path"), str):
        values["path"] = normalize_path(values["path"])
    if tool.name == "run_cmd":
        values["cmd"] = _respaced(values["cmd"])
    return stripped, values


def normalize_path(raw: str) -> str:
    """`./a.py`, `a.py` and `.\\a.py` alike: '/' separators, no '.' or empty segments, no
    trailing '/'; leading slashes (absolute, UNC) are kept, and '..' is left alone."""
    text = raw.replace("\\", "/")
    lead = "/" * (len(text) - len(text.lstrip("/")))
    parts = [part for part in text.split("/") if part not in ("", ".")]
    return lead + "/".join(parts) if parts or lead else "."


def _respaced(cmd: str) -> str:
    try:
        return shlex.join(split_command(cmd))
    except ValueError:
        return cmd


def _explain(tool: Tool, error: ValidationError) -> str:
    problems = []
    for item in error.errors():
        where = ".".join(str(part) for part in item["loc"]) or "arguments"
        if item["type"] == "missing":
            problems.append(f"missing required parameter '{where}'")
        elif item["type"] == "extra_forbidden":
            problems.append(f"unknown parameter '{where}'")
        else:
            got = repr(item.get("input"))[:60]
            problems.append(f"parameter '{where}': {item['msg']} (got {got})")
    return f"invalid arguments for {tool.name}: {'; '.join(problems)}. Expected {tool.signature}"


def _os_error_text(ctx: ToolContext, name: str, error: OSError) -> str:
    where = ""
    if error.filename:
        path = Path(os.fsdecode(error.filename))
        shown = _relative(ctx.root, path) if path.is_relative_to(ctx.root) else path.name
        where = f" ({shown})"
    return f"{name} failed: {error.strerror or error}{where}"


def execute(ctx: ToolContext, name: str, args: object) -> ToolResult:
    """Runs tool `name` with the model's arguments and returns the observation; never raises."""
    try:
        tool = _registry().get(name.strip()) if isinstance(name, str) else None
        if tool is None:
            raise ToolError(f"unknown tool {name!r}; available tools: {', '.join(_registry())}")
        try:
            arguments = tool.arguments.model_validate(_parse_arguments(args))
        except ValidationError as exc:
            raise ToolError(_explain(tool, exc)) from exc
        except ToolError as exc:
            message = f"invalid arguments for {tool.name}: {exc}. Expected {tool.signature}"
            raise ToolError(message) from None
        result = tool.function(ctx, **dict(arguments))
    except ToolError as exc:
        result = ToolResult(False, str(exc))
    except OSError as exc:
        result = ToolResult(False, _os_error_text(ctx, str(name), exc))
    except Exception as exc:
        result = ToolResult(False, f"internal error in tool {name!r}: {type(exc).__name__}: {exc}")
    return dataclasses.replace(result, text=cap_text(_clean(result.text), ctx.output_limit))
