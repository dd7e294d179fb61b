"""ruff commands as a small model writes them: `ruff FILE`, which ruff refuses, runs as
`ruff check FILE`; a `ruff check` that found what ruff fixes itself gets the same command
with `--fix`, and one that found a function defined twice the edit that renames it."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from localagent.tools.base import ToolContext
from localagent.tools.cmdline import split_command
from localagent.tools.pkgimports import text_of

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
    words = _words(cmd)
    if words[:2] != ["ruff", "check"] or "--fix" in words or not FIXABLE.search(output):
        return ""
    return shlex.join(["ruff", "check", "--fix", *words[2:]])


def note(ctx: ToolContext, cmd: str, output: str) -> str:
    """A `ruff check` that found what ruff fixes itself: the same command with `--fix`;
    one that found a function defined twice: the edit that renames the second."""
    if fix := fix_command(cmd, output):
        # Qwen2.5-Coder-1.5B's tests began `import mathx` with one blank line after it:
        # ruff's import-order rule failed them, and ruff fixes that itself. Told only the
        # command, it sent ruff's message as an edit's old text (the CPU): the call to copy.
        call = json.dumps({"name": "run_cmd", "arguments": {"cmd": fix}})
        return ctx.prompts.render("ruff_fix", cmd=fix, call=call)
    return redefined_note(ctx, output) if _words(cmd)[:2] == ["ruff", "check"] else ""


def _words(cmd: str) -> list[str]:
    try:
        return split_command(cmd)
    except ValueError:
        return []


# ruff's F811 as 0.5 and later print it, and as earlier versions did (one line).
_REDEFINED = (
    re.compile(r"F811 Redefinition of unused `(?P<name>\w+)` from line (?P<first>\d+)\s*\n"
               r"\s*--> (?P<path>[^\s:]+):(?P<line>\d+):\d+"),
    re.compile(r"(?P<path>[^\s:]+):(?P<line>\d+):\d+: F811 Redefinition of unused "
               r"`(?P<name>\w+)` from line (?P<first>\d+)"),
)  # fmt: skip


def redefined_note(ctx: ToolContext, output: str) -> str:
    """For ruff's "Redefinition of unused `test_divide` from line 19" at a `def` line, the
    note with the edit that renames that second definition (`test_divide_2`), its text
    taken with the line before or after it where the line alone is written twice; ""
    when there is none. ruff does not fix it (its fix removes only imports); Qwen2.5-
    Coder-1.5B's mathx sent `ruff check --fix` again until it was blocked, through a
    replan, until the round limit (the CPU): the first `test_divide` never ran."""
    for pattern in _REDEFINED:
        for found in pattern.finditer(output):
            edit = _rename(ctx.root, found["path"], found["name"], int(found["line"]))
            if edit is not None:
                call = {"name": "replace_in_file", "arguments": edit}
                return ctx.prompts.render(
                    "ruff_redefined", path=found["path"], name=found["name"],
                    first=found["first"], line=found["line"], call=json.dumps(call),
                )  # fmt: skip
    return ""


def _rename(root: Path, path: str, name: str, number: int) -> dict[str, str] | None:
    source = text_of(root, path)
    lines = source.splitlines() if source else []
    at = number - 1
    if not 0 <= at < len(lines) or not _DEF.match(lines[at].strip()) or f"{name}(" not in lines[at]:
        return None
    new_name = next(f"{name}_{n}" for n in range(2, 100) if f"{name}_{n}" not in source)
    for before, after in ((0, 0), (1, 0), (0, 1), (1, 1)):
        if at - before < 0 or at + after >= len(lines):
            continue
        old = "\n".join(lines[at - before : at + after + 1])
        if source.count(old) == 1:
            renamed = lines[at].replace(f"def {name}(", f"def {new_name}(", 1)
            new = "\n".join([*lines[at - before : at], renamed, *lines[at + 1 : at + after + 1]])
            return {"path": path, "old": old, "new": new}
    return None


_DEF = re.compile(r"(?:async\s+)?def\s")
