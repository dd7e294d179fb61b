"""delegate: hand a task to another coding agent the user configured.

The user names each agent's command line in the config file (`[delegates.NAME] command
= ["aider", "--message", "{task}", "--yes"]`); the task replaces `{task}` inside the
arguments, never through a shell. It runs in the workspace like run_cmd, in the run's
sandbox, with the same short list of environment variables plus the ones its section
names: its process tree is killed at its timeout or when the agent is asked to stop.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path
from typing import Annotated

from localagent.system import sandbox, workspace_env
from localagent.system.process import LaunchError, run_process
from localagent.tools.base import ToolContext, ToolError, ToolResult

PLACEHOLDER = "{task}"


def delegate(
    ctx: ToolContext,
    agent: Annotated[str, "The name of a configured coding agent."],
    task: Annotated[str, "The task in plain words, complete: the agent sees nothing else."],
) -> ToolResult:
    """Hand a self-contained task to another coding agent, which works in the workspace;
    its exit code and output come back."""
    name = agent.strip()
    if name not in ctx.delegates:
        known = ", ".join(ctx.delegates) or ToolError.of("no_agents")
        raise ToolError.of("no_such_agent", agent=repr(agent), agents=known)
    spec = ctx.delegates[name]
    timeout = spec.timeout_sec
    argv = _argv(spec.command, task, ctx.root)
    # The run's sandbox (unless this agent is configured out of it), with its own network.
    policy = dataclasses.replace(
        ctx.commands,
        sandbox=ctx.commands.sandbox if spec.sandbox else "off",
        pass_env=(*ctx.commands.pass_env, *spec.pass_env),
    )
    try:
        limit = max(ctx.output_limit - 200, 200)
        env = workspace_env.command_env(ctx.root, policy.pass_env)
        argv = sandbox.confine(argv, ctx.root, policy, spec.network, env)
        result = run_process(
            argv, ctx.root, timeout, limit, ctx.cancelled, env=env, marker=ctx.marker
        )
    except LaunchError as exc:
        raise ToolError.of("agent_unrunnable", agent=repr(name), problem=exc) from exc
    if result.cancelled:
        status = "stopped: the agent was asked to stop; the process tree was killed; output:"
    elif result.timed_out:
        status = f"timed out after {timeout:g}s; the process tree was killed; partial output:"
    else:
        status = f"exit code {result.returncode}"
    output = result.output if result.output.strip() else "(no output)"
    ok = result.returncode == 0
    return ToolResult(ok, f"{name}: {status}\n{output}", returncode=result.returncode)


def _argv(command: tuple[str, ...], task: str, root: Path) -> list[str]:
    """The command with the task in place of each `{task}`, or ToolError for a bad task."""
    if not task.strip():
        raise ToolError.of("task_empty")
    if "\x00" in task:
        raise ToolError.of("task_nul")
    if task.lstrip().startswith("-") and PLACEHOLDER in command:
        raise ToolError.of("task_dash")
    argv = [part.replace(PLACEHOLDER, task) for part in command]
    program = _program(argv[0], root)
    if program is None:
        raise ToolError.of("agent_program_missing", program=repr(argv[0]))
    if sys.platform == "win32" and Path(program).suffix.lower() in (".bat", ".cmd"):
        # cmd.exe would read the task's quotes and metacharacters: no safe quoting exists.
        raise ToolError.of("agent_batch_file", program=program)
    return [program, *argv[1:]]


def _program(name: str, root: Path) -> str | None:
    """The configured program: an absolute path as it is, a name only on PATH's absolute
    entries outside the workspace and the current folder (a planted `aider` never runs)."""
    if Path(name).is_absolute():
        return name if Path(name).is_file() and os.access(name, os.X_OK) else None
    if sys.platform == "win32":
        name = name.removesuffix(".exe").removesuffix(".EXE")
    return workspace_env.which(name, root)
