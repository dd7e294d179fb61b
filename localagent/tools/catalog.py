"""Every tool localagent has, in the fixed order of the prompt's tool list, with its policy."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Collection, Iterable, Sequence
from typing import Annotated, Any

from localagent.tools import commands, delegate, edits, files, git, outputs, search
from localagent.tools.base import ToolContext, ToolResult
from localagent.tools.registry import Policy, Tool, ToolRegistry, make_tool

RUN_CMD_GUIDE = """\
- run_cmd runs one program without a shell: no pipes, redirections, `&&` or `;`.
  Allowed programs: {allowed}. `python` runs scripts in the workspace
  (`python app.py`) or `python -m pytest|pip|ruff|unittest`."""

COMPLETE_GUIDE = """\
- When the active subtask is done, call mark_subtask_complete(success=true, reason=...).
  If it cannot be done, call mark_subtask_complete(success=false, reason=...)."""

EDIT_GUIDE = """\
- To change part of a file, prefer replace_in_file with the exact old text over
  rewriting the whole file."""


def mark_subtask_complete(
    ctx: ToolContext,
    success: Annotated[bool, "true if the active subtask is done, false if it cannot be done."],
    reason: Annotated[str, "Why: the evidence that it is done, or what stands in the way."],
) -> ToolResult:
    """Declare the active subtask finished, successfully or not, and say why."""
    outcome = "completed" if success else "failed"
    return ToolResult(True, f"subtask marked {outcome}: {reason}", verdict=(success, reason))


# Models under this size (billions of parameters) get SMALL_MODEL_TOOLS unless the user
# names the tools: fewer, plainer tools are what small models call correctly.
SMALL_MODEL_BILLIONS = 8.0
SMALL_MODEL_TOOLS = (
    "list_dir",
    "read_file",
    "search_files",
    "write_file",
    "replace_in_file",
    "run_cmd",
    "read_output",
)


def tools_for_size(billions: float | None) -> tuple[str, ...] | None:
    """The tool names for a model of this size when the user named none: the short set
    for a small model, None (the default set) otherwise or when the size is unknown."""
    small = billions is not None and 0 < billions < SMALL_MODEL_BILLIONS
    return SMALL_MODEL_TOOLS if small else None


def _respaced(values: dict[str, Any]) -> dict[str, Any]:
    return {**values, "cmd": commands.respaced(values["cmd"])}


@functools.cache
def catalog() -> ToolRegistry:
    """All tools, each built once; a run uses `run_tools(...)`, a selection of them."""
    path = ("path",)
    edit = Policy(resume="check", changes=True, paths=path)
    git_read = Policy(spawns=True)
    return ToolRegistry(
        [
            make_tool(files.list_dir, Policy(paths=path)),
            make_tool(files.read_file, Policy(paths=path)),
            make_tool(search.search_files, Policy(paths=path)),
            make_tool(search.find_files, Policy(paths=path)),
            make_tool(files.write_file, Policy(changes=True, paths=path)),
            make_tool(edits.replace_in_file, dataclasses.replace(edit, guide=EDIT_GUIDE)),
            make_tool(edits.append_file, edit),
            make_tool(edits.delete_file, edit),
            make_tool(edits.move_file, Policy(resume="check", changes=True, paths=("src", "dst"))),
            make_tool(git.git_status, git_read),
            make_tool(git.git_diff, dataclasses.replace(git_read, paths=path)),
            make_tool(git.git_log, git_read),
            make_tool(git.git_commit, Policy(resume="never", changes=True, spawns=True)),
            make_tool(
                commands.run_cmd,
                Policy(
                    resume="never",
                    changes=True,
                    spawns=True,
                    canonical=_respaced,
                    guide=RUN_CMD_GUIDE,
                ),
            ),
            make_tool(outputs.read_output),
            make_tool(outputs.search_output),
            make_tool(
                delegate.delegate,
                Policy(resume="never", changes=True, spawns=True, default=False),
            ),
            make_tool(mark_subtask_complete, Policy(control=True, guide=COMPLETE_GUIDE)),
        ]
    )


def run_tools(
    names: Iterable[str] | None, delegates: Collection[str], extra: Sequence[Tool] = ()
) -> ToolRegistry:
    """The tools of one run: those named, or with no names the default ones and delegate
    when coding agents are configured; delegate's description names them. `extra` tools
    (an MCP server's) come last, as given."""
    if names is None and delegates:
        names = [tool.name for tool in catalog() if tool.policy.default] + ["delegate"]
    chosen = catalog().select(names)
    chosen = chosen.described({"delegate": f"Configured agents: {', '.join(delegates)}."})
    return ToolRegistry([*chosen, *extra]) if extra else chosen
