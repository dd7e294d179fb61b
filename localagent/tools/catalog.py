"""Every tool localagent has, in the fixed order of the prompt's tool list, with its policy."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Collection, Iterable, Sequence
from typing import Annotated, Any, Literal

from localagent.tools import commands, delegate, edits, files, git, outputs, runnotes, search
from localagent.tools.base import ToolContext, ToolResult
from localagent.tools.registry import ToolRegistry, make_tool
from localagent.tools.tool import Policy, Tool


def mark_subtask_complete(
    ctx: ToolContext,
    success: Annotated[bool, "true if the active subtask is done, false if it cannot be done."],
    reason: Annotated[str, "Why: the evidence that it is done, or what stands in the way."],
) -> ToolResult:
    """Declare the active subtask finished, successfully or not, and say why."""
    status = "completed" if success else "failed"
    said = ctx.prompts.render("subtask_marked", status=status, reason=reason)
    return ToolResult(True, said, verdict=(success, reason))


# Models under this size (billions of parameters) run the small profile unless the user
# chooses one: SMALL_MODEL_TOOLS unless the user names the tools (fewer, plainer tools are
# what small models call correctly), and the short prompts.
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
# The small profile's cap on a reply's tokens (a lower num_predict wins): a small model
# that runs away repeats itself until the cap, at 10-20 tokens a second on a CPU, and one
# file a small model writes well fits in it.
SMALL_MODEL_NUM_PREDICT = 1024
Profile = Literal["small", "full"]


def choose_profile(setting: str, billions: float | None) -> Profile:
    """The run's profile: the one set, or for "auto" small when the server says the model
    is under SMALL_MODEL_BILLIONS, full otherwise or when it does not say."""
    if setting == "small" or setting == "full":
        return setting
    small = billions is not None and 0 < billions < SMALL_MODEL_BILLIONS
    return "small" if small else "full"


def tools_for_profile(profile: str, named: Sequence[str] | None) -> tuple[str, ...] | None:
    """The tool names to set for this profile: the short set for the small one when the
    user named none, None (leave the setting as it is) otherwise."""
    return SMALL_MODEL_TOOLS if profile == "small" and named is None else None


def num_predict_for_profile(profile: str, num_predict: int) -> int:
    return min(num_predict, SMALL_MODEL_NUM_PREDICT) if profile == "small" else num_predict


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
            make_tool(edits.replace_in_file, dataclasses.replace(edit, guide="guide_edit")),
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
                    guide="guide_run_cmd",
                    blocked_note=runnotes.blocked_note,
                    repeat_with=runnotes.fed,
                ),
            ),
            make_tool(outputs.read_output),
            make_tool(outputs.search_output),
            make_tool(
                delegate.delegate,
                Policy(resume="never", changes=True, spawns=True, default=False),
            ),
            make_tool(mark_subtask_complete, Policy(control=True, guide="guide_complete")),
        ]
    )


def run_tools(
    names: Iterable[str] | None,
    delegates: Collection[str],
    extra: Sequence[Tool] = (),
    essential: bool = False,
) -> ToolRegistry:
    """The tools of one run: those named, or with no names the default ones and delegate
    when coding agents are configured; delegate's description names them. `extra` tools
    (an MCP server's) come last, as given. `essential`: each of ours shows only the
    arguments a call needs (the small profile)."""
    if names is None and delegates:
        names = [tool.name for tool in catalog() if tool.policy.default] + ["delegate"]
    chosen = catalog().select(names)
    chosen = chosen.described({"delegate": f"Configured agents: {', '.join(delegates)}."})
    if essential:
        chosen = ToolRegistry(_essential(tool) for tool in chosen)
    return ToolRegistry([*chosen, *extra]) if extra else chosen


# What the small profile's tools say they do, where the full description speaks of an
# argument the small one is not shown (read_file's max_bytes, replace_in_file's count) or
# says more than a call needs: the schemas are most of a small model's first prompt.
ESSENTIAL_DESCRIPTIONS = {
    "list_dir": "List a folder of the workspace: sub-folders end with '/'.",
    "read_file": "Read a text file of the workspace.",
    "search_files": "Search the workspace's text files for a regular expression.",
    "replace_in_file": "Replace exact text in a file; it must occur exactly once.",
    "run_cmd": "Run one allowed program in the workspace root, without a shell.",
    "read_output": "Read a long output that its observation showed only the head and tail of.",
}


def _essential(tool: Tool) -> Tool:
    """The tool with only its required and path arguments in its schema: a small model
    fills in what it is shown, and every optional knob is one more way to go wrong. The
    others keep their defaults and are still accepted."""
    params = tool.spec.parameters
    keep = set(params.get("required", ())) | set(tool.policy.paths)
    shown = {name: spec for name, spec in params["properties"].items() if name in keep}
    spec = dataclasses.replace(
        tool.spec,
        description=ESSENTIAL_DESCRIPTIONS.get(tool.name, tool.spec.description),
        parameters={**params, "properties": shown},
    )
    return dataclasses.replace(tool, spec=spec)
