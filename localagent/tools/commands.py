"""run_cmd: one allowed program, no shell, in the workspace's own environment (SPEC §8)."""

from __future__ import annotations

import contextlib
import shlex
from typing import Annotated

from localagent.journal.outputstore import OutputWriter, Stored
from localagent.system import sandbox, workspace_env
from localagent.system.process import LaunchError, ProcessResult, run_process
from localagent.system.safefs import UnsafeFile
from localagent.system.workspace_env import WorkspaceEnvError
from localagent.tools import notests, raisedtests, runas, runnotes, runproof
from localagent.tools.asserted import wrong_values
from localagent.tools.base import WORDS, ToolContext, ToolError, ToolResult, describe
from localagent.tools.cmdline import (
    PYTHON_OPTIONS,
    check_command,
    runs_pip,
    split_command,
)
from localagent.tools.loaderror import located
from localagent.tools.outputs import not_stored
from localagent.tools.outtrim import for_model
from localagent.tools.paths import relative

__all__ = ["command_argv", "run_cmd", "split_command"]

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
    empty = [] if ok else notests.empty_files(ctx.root, cmd, result.returncode, result.output)
    program = bool(runproof.script_words(cmd))
    broken = located(ctx.root, result.output, program) if not (ok or result.cancelled) else None
    waited, unproven = runnotes.note(ctx, cmd, result, stdin, empty, broken)
    text = "\n".join(
        filter(None, [_status(result, timeout), output, problem, offline, waited, said])
    )
    fed = bool(stdin) and runnotes.answered(ctx, cmd, result.output)
    facts = {"ran": [cmd], "fed": [cmd] if fed else [], "unproven": [unproven] if unproven else []}
    if broken:
        facts["broken"] = [f"{broken[0]}: {broken[1]}"]
    if empty:  # the tests ran none because of these files: a failure, in the first one
        facts["empty"] = empty
        facts["broken"] = [f"{empty[0]}: {notests.NONE_DEFINED}, so no test ran"]
    whole = spill.head() if spill is not None and result.truncated_bytes else result.output
    if not ok and not result.cancelled and (wrong := wrong_values(whole)):
        facts["wrong"] = wrong
    if not ok and not result.cancelled and (edit := raisedtests.test_edit(ctx.root, whole)):
        facts["test_edit"] = [edit["path"], edit["old"], edit["new"]]
    return ToolResult(ok, text, returncode=result.returncode, facts=facts, output=stored)


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
