"""Commands as a small model writes them, run as the command it means, the result saying
so: `ruff FILE`, which ruff refuses since 0.5, as `ruff check FILE`; `pytest ...`, which
cannot import the workspace's own package from tests in a folder, as `python -m pytest
...`. Anything else runs as it is written."""

from __future__ import annotations

import shlex

from localagent.tools.base import ToolContext, ToolError
from localagent.tools.cmdline import check_command as judged
from localagent.tools.cmdline import split_command
from localagent.tools.ruffnotes import check_command


def meant(ctx: ToolContext, cmd: str) -> tuple[str, str]:
    """The command `cmd` runs as, and the note that says so ("" when it runs as written).
    A command refused as written stays as written, to be refused for what it is."""
    try:
        judged(ctx.root, ctx.allowed_commands, cmd)
    except ToolError:
        return cmd, ""
    if (checked := check_command(cmd, ctx.root)) != cmd:
        return checked, ctx.prompts.render("ruff_check", called=cmd, cmd=checked)
    if (module := _pytest_module(ctx, cmd)) != cmd:
        return module, ctx.prompts.render("pytest_module", called=cmd, cmd=module)
    return cmd, ""


def _pytest_module(ctx: ToolContext, cmd: str) -> str:
    """`pytest ...` as `python -m pytest ...` where python may run. pytest started as a
    program puts a test's own folder on the import path, not the workspace: the 1.5B's
    `pytest tests/test_mathx.py` failed on `import mathx` until three strikes, and told
    to run `python -m pytest`, a later run still spent a round on it (the CPU)."""
    try:
        words = split_command(cmd)
    except ValueError:
        return cmd
    if not words or words[0] not in ("pytest", "py.test") or "python" not in ctx.allowed_commands:
        return cmd
    return shlex.join(["python", "-m", "pytest", *words[1:]])
