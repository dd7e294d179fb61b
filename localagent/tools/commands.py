"""run_cmd: one allowed program, no shell, in the workspace's own environment (SPEC §8)."""

from __future__ import annotations

import contextlib
import json
import shlex
from typing import Annotated, Any

from localagent.journal.outputstore import OutputWriter, Stored
from localagent.system import sandbox, workspace_env
from localagent.system.process import LaunchError, ProcessResult, run_process
from localagent.system.safefs import UnsafeFile
from localagent.system.workspace_env import WorkspaceEnvError
from localagent.tools import notests, pyscript, ruffnotes, runas, runproof
from localagent.tools.asserted import wrong_values
from localagent.tools.base import WORDS, ToolContext, ToolError, ToolResult, describe
from localagent.tools.cmdline import (
    PYTHON_OPTIONS,
    check_command,
    runs_pip,
    split_command,
)
from localagent.tools.loaderror import NO_MODULE, file_as_text_note, located
from localagent.tools.nameerrors import undefined_note
from localagent.tools.outputs import not_stored
from localagent.tools.outtrim import for_model
from localagent.tools.paths import relative
from localagent.tools.pkgexports import script_note, unexported_note
from localagent.tools.pkgimports import module_imports_note
from localagent.tools.raisedtests import raise_expected_note, unraised_note

__all__ = ["command_argv", "run_cmd", "split_command"]

_EOF = "EOFError: EOF when reading a line"  # Python's input() found no input
_TRACEBACK = "Traceback (most recent call last)"
VENV_TIMEOUT = 300.0  # creating the workspace's .venv for pip, ensurepip included


def run_cmd(
    ctx: ToolContext,
    cmd: Annotated[str, "One program and its arguments, e.g. 'python -m pytest -q'.", WORDS],
    timeout_sec: Annotated[int, "Seconds before the program and its children are killed."] = 60,
    stdin: Annotated[str, "Input the program reads, e.g. answers to its prompts, one a line."] = "",
) -> ToolResult:
    """Run one allowed program in the workspace root, without a shell (no pipes,
    redirections or chaining), and return its exit code and output."""
    cmd, said = runas.meant(ctx, cmd)
    argv = command_argv(ctx, cmd)
    timeout = min(max(float(timeout_sec), 1.0), ctx.max_timeout)
    # Leave room for the status line and the stored output's note: the final cap rarely cuts.
    limit = max(ctx.output_limit - 400, 200)
    policy = ctx.commands
    online = policy.network == "on" or (policy.network == "pip" and runs_pip(cmd))
    with contextlib.ExitStack() as stack:
        spill, problem = _spill(ctx, stack)
        try:
            env = workspace_env.command_env(ctx.root, policy.pass_env)
            argv = sandbox.confine(argv, ctx.root, policy, online, env)
            write = spill.write if spill is not None else None
            given = stdin.encode("utf-8", errors="replace") if stdin else None
            result = run_process(
                argv, ctx.root, timeout, limit, ctx.cancelled, None, env, write, ctx.marker, given
            )
        except LaunchError as exc:
            raise ToolError.of("cannot_run", cmd=describe(cmd), problem=exc) from exc
        stored, problem = _kept(ctx, spill, result, problem)
    ok = result.returncode == 0
    offline = "" if ok or result.cancelled else sandbox.offline_note(policy, online, result.output)
    output = for_model(ctx.root, result.output) if result.output.strip() else "(no output)"
    waited = ""
    if _EOF in result.output and not stdin:
        waited = _with_input(ctx, cmd, result.output)
    if ok and not result.output.strip() and (idle := _idle_script(ctx, cmd)):
        waited = ctx.prompts.render("printed_nothing", script=idle[0], fix=idle[1])
    if not ok and (unfound := _not_on_path(ctx, cmd, result.output)):
        waited = ctx.prompts.render("not_on_path", module=unfound[0], cmd=unfound[1])
    empty = [] if ok else notests.empty_files(ctx.root, cmd, result.returncode, result.output)
    program = bool(runproof.script_words(cmd))
    broken = located(ctx.root, result.output, program) if not (ok or result.cancelled) else None
    if not ok and not waited:
        waited = (
            notests.run_note(empty)
            or notests.absent_note(ctx.root, result.output)
            or _not_found(ctx, cmd, result.output)
            or module_imports_note(ctx.root, result.output)
            or unexported_note(ctx.root, result.output)
            or script_note(ctx.root, " ".join(runproof.script_words(cmd)[:1]), result.output)
            or undefined_note(ctx.root, result.output)
            or raise_expected_note(ctx.root, result.output, ctx.prompts)
            or unraised_note(ctx.root, result.output, ctx.prompts)
            or file_as_text_note(broken if program else located(ctx.root, result.output, True))
            or ruffnotes.note(ctx, cmd, result.output)
        )
    unproven, note = _unproven(ctx, cmd, result, stdin) if ok and not waited else ("", "")
    waited = waited or note
    text = "\n".join(
        filter(None, [_status(result, timeout), output, problem, offline, waited, said])
    )
    fed = bool(stdin) and _answered(ctx, cmd, result.output)
    facts = {"ran": [cmd], "fed": [cmd] if fed else [], "unproven": [unproven] if unproven else []}
    if broken:
        facts["broken"] = [f"{broken[0]}: {broken[1]}"]
    if empty:  # the tests ran none because of these files: a failure, in the first one
        facts["empty"] = empty
        facts["broken"] = [f"{empty[0]}: {notests.NONE_DEFINED}, so no test ran"]
    if not ok and not result.cancelled and (wrong := wrong_values(result.output)):
        facts["wrong"] = wrong
    return ToolResult(ok, text, returncode=result.returncode, facts=facts, output=stored)


def _unproven(ctx: ToolContext, cmd: str, result: ProcessResult, stdin: str) -> tuple[str, str]:
    """Why a script's successful run shows nothing about whether it works, and the note
    that says so with what to do ("", "" when it shows something, or is no script)."""
    words = runproof.script_words(cmd)
    if not words:
        return "", ""
    path = words[0].replace("\\", "/")
    script = pyscript.read(ctx.root, path)
    if missing := runproof.missing_inputs(ctx.root, words):
        files = ", ".join(missing)
        return f"{files} does not exist, so it read no input", _missing_note(ctx, cmd, missing)
    if runproof.usage_only(words, result.output):
        return "it printed only its usage", ctx.prompts.render("usage_only", script=words[0])
    if script is not None and (given := runproof.unopened(ctx.root, words, script)):
        how = " (it reads sys.stdin, which this run left empty)" if script.stdin else ""
        why = f"{runproof.NEVER_OPENS} {given[0]}, the file it was given"
        note = ctx.prompts.render("file_unread", script=words[0], file=given[0], how=how)
        return why, note
    fix = runproof.fix_text(path, script)
    if not result.output.strip():
        return "", ctx.prompts.render("dropped_result", script=words[0], fix=fix) if fix else ""
    shown = runproof.own_output(result.output, script) if script is not None else "-"
    if stdin and script is not None and script.prompts and not shown.strip():
        why = "it printed only its input prompts, no result"
        return why, ctx.prompts.render("prompts_only", script=words[0], fix=fix)
    return "", ""


def _missing_note(ctx: ToolContext, cmd: str, missing: list[str]) -> str:
    """The `missing_input` note: the files a script was given that do not exist, the
    write of a sample ready to copy, and the run on it. Qwen2.5-Coder-1.5B ran `python
    wordcount.py test.txt` six times on an H100, told each time test.txt did not exist."""
    path, content = runproof.sample_file(missing[0])
    call = {"name": "write_file", "arguments": {"path": path, "content": content}}
    then = runproof.on_samples(cmd, missing[:1])
    return ctx.prompts.render(
        "missing_input", files=", ".join(missing), call=json.dumps(call), cmd=then
    )


def _not_found(ctx: ToolContext, cmd: str, output: str) -> str:
    """For a script that stopped on a file it was given that does not exist, the
    `missing_input` note ("" otherwise)."""
    if "FileNotFoundError" not in output:
        return ""
    words = runproof.script_words(cmd)
    missing = runproof.missing_inputs(ctx.root, words) if words else []
    return _missing_note(ctx, cmd, missing) if missing else ""


def blocked_note(ctx: ToolContext, args: dict[str, object]) -> str:
    """A blocked repeat of `python X.py` for an X.py that calls nothing says so again,
    with its fix (Qwen2.5-Coder-1.5B ran such a game until three strikes, and the note
    was no longer the latest thing it read). (A run without stdin of an X.py that reads
    input is never blocked: sent again, it runs given some, see `fed`.)"""
    cmd = args.get("cmd")
    if not isinstance(cmd, str):
        return ""
    if (idle := _idle_script(ctx, cmd)) is not None:
        return ctx.prompts.render("printed_nothing", script=idle[0], fix=idle[1])
    return ""


def fed(ctx: ToolContext, args: dict[str, Any]) -> tuple[dict[str, Any], str] | None:
    """A run without stdin of a script whose code acts and reads input, as the run given
    an answer to each of its input() prompts, and the `fed_repeat` line; None for any
    other run. Qwen2.5-Coder-1.5B ran its game without stdin three times more after the
    note that gave it the call with input, and the strikes failed the step (the CPU)."""
    cmd = args.get("cmd")
    if not isinstance(cmd, str) or args.get("stdin"):
        return None
    found = _script(ctx, cmd)
    if found is None or not (found[1].acts and found[1].reads_input):
        return None
    stdin = runproof.sample_answers(found[1].prompts)
    return {**args, "stdin": stdin}, ctx.prompts.render("fed_repeat", stdin=json.dumps(stdin))


def _with_input(ctx: ToolContext, cmd: str, output: str) -> str:
    """The `waited_for_input` note: `cmd` again, given an answer to each input() prompt
    of its script (else to the prompt its `output` ended on). Told to send "rock", the
    1.5B sent it to a game that asks two players, which died at the second prompt."""
    found = _script(ctx, cmd)
    if found is not None and found[1].prompts:
        stdin = runproof.sample_answers(found[1].prompts)
    else:
        stdin = runproof.sample_input(output)
    call = {"name": "run_cmd", "arguments": {"cmd": cmd, "stdin": stdin}}
    return ctx.prompts.render("waited_for_input", call=json.dumps(call))


def _not_on_path(ctx: ToolContext, cmd: str, output: str) -> tuple[str, str] | None:
    """A `pytest ...` that could not import a module the workspace holds (the workspace
    is not on the path of pytest started as a program, with tests in a folder without
    `__init__.py`): the module, and the command that imports it. Qwen2.5-Coder-1.5B's
    plan said `run pytest tests/test_mathx.py`, and it ran that until three strikes."""
    try:
        words = split_command(cmd)
    except ValueError:
        return None
    found = NO_MODULE.search(output)
    if not words or words[0] not in ("pytest", "py.test") or found is None:
        return None
    top = found[1].split(".")[0]
    if not ((ctx.root / top).is_dir() or (ctx.root / f"{top}.py").is_file()):
        return None
    return top, shlex.join(["python", "-m", "pytest", *words[1:]])


def _answered(ctx: ToolContext, cmd: str, output: str) -> bool:
    """Whether a program given input printed a line of its own after it read the first
    of it: after the first of its input() prompts that the output shows, a line ends.
    The 1.5B fed one move to a game that asks two players in turn: it printed its
    welcome, both prompts, then died reading the second move, and no result; that run
    proves nothing. Where no prompt is known (none in the source, or none shown), the
    input is taken as answered."""
    found = _script(ctx, cmd)
    before = output.split(_TRACEBACK, 1)[0]
    shown = [(before.find(p), p) for p in found[1].prompts if p in before] if found else []
    if not shown:
        return True
    at, prompt = min(shown)
    return "\n" in before[at + len(prompt) :]


def _script(ctx: ToolContext, cmd: str) -> tuple[str, pyscript.Script] | None:
    """The Python script `python X.py` runs (as named, and as read), or None."""
    words = runproof.script_words(cmd)
    script = pyscript.read(ctx.root, words[0].replace("\\", "/")) if words else None
    return (words[0], script) if script is not None else None


def _idle_script(ctx: ToolContext, cmd: str) -> tuple[str, str] | None:
    """The script `python X.py` ran when its code calls nothing at its top level, and the
    call that makes it call its entry function, ready to copy ("" when none is clear)."""
    found = _script(ctx, cmd)
    if found is None or found[1].acts:
        return None
    name, script = found
    path = name.replace("\\", "/")
    call = pyscript.call_entry(path, script)
    said = f"{script.entry}(parser.parse_args())" if script.parsing else f"{script.entry}()"
    fix = f" To call {said} when it runs, send: {json.dumps(call)}" if call else ""
    return name, fix


def _status(result: ProcessResult, timeout: float) -> str:
    if result.cancelled:
        return "stopped: the agent was asked to stop; the process tree was killed; partial output:"
    if result.timed_out:
        return f"timed out after {timeout:g}s; the process tree was killed; partial output:"
    if result.returncode is not None and result.returncode < 0:
        return f"exit code {result.returncode} (killed by signal {-result.returncode})"
    return f"exit code {result.returncode}"


def _spill(ctx: ToolContext, stack: contextlib.ExitStack) -> tuple[OutputWriter | None, str]:
    """Where the whole output goes as it streams (when this context stores outputs), or
    why it cannot; a spill not kept is removed when `stack` closes."""
    if ctx.outputs is None or ctx.output_id is None:
        return None, ""
    try:
        return stack.enter_context(ctx.outputs.writer(ctx.output_id)), ""
    except (OSError, UnsafeFile) as exc:
        return None, not_stored(ctx, exc)


def _kept(
    ctx: ToolContext, spill: OutputWriter | None, result: ProcessResult, problem: str
) -> tuple[Stored | None, str]:
    """The stored output when the observation had to be cut, else None (and the spill is
    dropped), with why it could not be stored."""
    if spill is None or not result.truncated_bytes:
        return None, problem if result.truncated_bytes else ""
    try:
        return spill.keep(), ""
    except (OSError, UnsafeFile) as exc:
        return None, not_stored(ctx, exc)


def command_argv(ctx: ToolContext, cmd: str) -> list[str]:
    """The argv that cmd runs as, or ToolError saying why the command is refused."""
    command = check_command(ctx.root, ctx.allowed_commands, cmd)
    if command.script is not None and not command.script.is_file():
        shown = relative(ctx.root, command.script)
        raise ToolError.of("no_such_script", path=describe(shown))
    try:
        return _resolved_argv(ctx, command.key, command.args)
    except WorkspaceEnvError as exc:
        raise ToolError.of("cannot_run", cmd=describe(cmd), problem=exc) from None


def _resolved_argv(ctx: ToolContext, key: str, args: list[str]) -> list[str]:
    """The argv for an allowed program: the workspace's environment, never localagent's."""
    venv_timeout = min(VENV_TIMEOUT, ctx.max_timeout)
    if key == "pip":
        return [workspace_env.pip_python(ctx.root, venv_timeout, ctx.cancelled), "-m", "pip", *args]
    if key != "python":
        return [*workspace_env.program_argv(ctx.root, key), *args]
    if _module_of(args) == "pip":
        return [workspace_env.pip_python(ctx.root, venv_timeout, ctx.cancelled), *args]
    return [*workspace_env.program_argv(ctx.root, "python"), *args]


def _module_of(args: list[str]) -> str | None:
    """The module that checked python arguments run with -m, if any."""
    rest = [arg for arg in args if arg not in PYTHON_OPTIONS]
    if not rest or not rest[0].startswith("-m"):
        return None
    return rest[0][2:] or rest[1]


def respaced(cmd: str) -> str:
    try:
        return shlex.join(split_command(cmd))
    except ValueError:
        return cmd
