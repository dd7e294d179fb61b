"""ruff commands as a small model writes them: `ruff FILE`, which ruff refuses, runs as
`ruff check FILE`; a `ruff check` that found what ruff fixes itself gets the same command
with `--fix`."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from localagent.tools.base import ToolContext
from localagent.tools.cmdline import split_command

FIXABLE = re.compile(r"\[\*\] \d+ fixable with (?:the )?`--fix`")
_TOP_OPTIONS = {"-h", "--help", "-V", "--version"}  # ruff's own, with no command


def check_command(cmd: str, root: Path | None = None) -> str:
    """`ruff FILE ...` or `ruff --fix FILE` as `ruff check ...`, the command ruff ran for
    them before 0.5, and `ruff` alone as `ruff check`, which checks the folder (any other
    command as it is: a first word that is neither an option nor a path, `ruff chek`, is
    ruff's to refuse). A path is a word with `.`, `/` or `\\` in it, or the name of a file
    or folder in the workspace `root` that is no command of ruff's (`ruff tests`: sent
    until blocked by the 1.5B's mathx, the CPU).

    Qwen2.5-Coder-1.5B ran `ruff tests/test_mathx.py`, then gave the subtask up; told that
    ruff refuses it and to run `ruff check tests/test_mathx.py --fix`, it sent `ruff
    tests/test_mathx.py --fix` again until the round limit (the CPU). Another run sent
    `ruff` alone, which prints ruff's usage, 12 times through a replan."""
    try:
        words = split_command(cmd)
    except ValueError:
        return cmd
    if words == ["ruff"]:
        return "ruff check"
    if len(words) < 2 or words[0] != "ruff" or words[1] in _TOP_OPTIONS:
        return cmd
    first = words[1]
    if not (first.startswith("-") or any(c in first for c in "./\\") or _here(root, first)):
        return cmd
    return shlex.join(["ruff", "check", *words[1:]])


_COMMANDS = {"check", "format", "rule", "config", "linter", "clean", "version", "help", "server"}


def _here(root: Path | None, word: str) -> bool:
    """Whether a word names a file or folder of the workspace, and no command of ruff's."""
    if root is None or word in _COMMANDS or not re.fullmatch(r"[\w-]+", word):
        return False
    try:
        return (root / word).exists()
    except OSError:
        return False


def fix_command(cmd: str, output: str) -> str:
    """`ruff check --fix ARGS` for a `ruff check ARGS` (no `--fix`) whose output, or its
    summary, says ruff fixes what it found ("[*] 4 fixable with `--fix`."); "" else."""
    try:
        words = split_command(cmd)
    except ValueError:
        return ""
    if words[:2] != ["ruff", "check"] or "--fix" in words or not FIXABLE.search(output):
        return ""
    return shlex.join(["ruff", "check", "--fix", *words[2:]])


def note(ctx: ToolContext, cmd: str, output: str) -> str:
    """A `ruff check` that found what ruff fixes itself: the same command with `--fix`."""
    if fix := fix_command(cmd, output):
        # Qwen2.5-Coder-1.5B's tests began `import mathx` with one blank line after it:
        # ruff's import-order rule failed them, and ruff fixes that itself. Told only the
        # command, it sent ruff's message as an edit's old text (the CPU): the call to copy.
        call = json.dumps({"name": "run_cmd", "arguments": {"cmd": fix}})
        return ctx.prompts.render("ruff_fix", cmd=fix, call=call)
    return ""
