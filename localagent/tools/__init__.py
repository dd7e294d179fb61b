"""The tools the model may call: one registry of typed functions, each with its policy.

`catalog()` holds every tool in the fixed order of the prompt's tool list; a run works
with `run_tools(names, delegates)`, a selection of them. `execute` and `canonical_call`
use the whole catalog.
"""

from __future__ import annotations

from typing import Any

from localagent.tools.base import JOURNAL_DIR, ToolContext, ToolError, ToolResult
from localagent.tools.catalog import catalog, run_tools
from localagent.tools.commands import command_argv, split_command
from localagent.tools.fileio import clean_stale_temps
from localagent.tools.files import syntax_problem
from localagent.tools.paths import normalize_path, resolve_in_workspace
from localagent.tools.registry import ToolRegistry, make_tool
from localagent.tools.tool import Policy, Tool

__all__ = [
    "JOURNAL_DIR",
    "Policy",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolRegistry",
    "ToolResult",
    "canonical_call",
    "catalog",
    "clean_stale_temps",
    "command_argv",
    "execute",
    "make_tool",
    "normalize_path",
    "resolve_in_workspace",
    "run_tools",
    "split_command",
    "syntax_problem",
]


def execute(ctx: ToolContext, name: object, args: object) -> ToolResult:
    """Runs a tool of the catalog with the model's arguments; never raises."""
    return catalog().execute(ctx, name, args)


def canonical_call(name: object, args: object) -> tuple[str, dict[str, Any]]:
    """The call as the loop guard signs it (see `ToolRegistry.canonical`)."""
    return catalog().canonical(name, args)
