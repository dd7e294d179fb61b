"""What a ruff command's result adds: `ruff FILE`, which ruff refuses, as `ruff check FILE`;
a `ruff check` that found what ruff fixes itself, the same command with `--fix`."""

from __future__ import annotations

import re
import shlex

from localagent.tools.base import ToolContext
from localagent.tools.cmdline import split_command

_FIXABLE = re.compile(r"\[\*\] \d+ fixable with (?:the )?`--fix`")
_RUFF_COMMANDS = {"check", "format", "rule", "config", "linter", "clean", "server", "version"}


def check_command(cmd: str) -> str:
    """`ruff FILE` as `ruff check FILE` (any other command as it is)."""
    try:
        words = split_command(cmd)
    except ValueError:
        return cmd
    if len(words) < 2 or words[0] != "ruff" or words[1] in _RUFF_COMMANDS:
        return cmd
    return shlex.join(["ruff", "check", *words[1:]])


def note(ctx: ToolContext, cmd: str, output: str) -> str:
    """`ruff FILE`, which ruff refuses ("unrecognized subcommand"): the command that checks
    it (Qwen2.5-Coder-1.5B ran `ruff tests/test_mathx.py`, then gave the subtask up); a
    `ruff check` that found what ruff fixes itself: the same command with `--fix`."""
    try:
        words = split_command(cmd)
    except ValueError:
        return ""
    if len(words) < 2 or words[0] != "ruff":
        return ""
    if "unrecognized subcommand" in output:
        return ctx.prompts.render("ruff_check", cmd=check_command(cmd))
    if words[1] == "check" and "--fix" not in words and _FIXABLE.search(output):
        # Qwen2.5-Coder-1.5B's tests began `import mathx` with one blank line after it:
        # ruff's import-order rule failed them, and ruff fixes that itself.
        return ctx.prompts.render(
            "ruff_fix", cmd=shlex.join(["ruff", "check", "--fix", *words[2:]])
        )
    return ""
