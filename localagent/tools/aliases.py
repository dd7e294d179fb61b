"""The names models give tools and arguments that are not ours, and what they mean.

Small models call `create_file`, `mkdir`, `bash` or `done`, and pass `file_path` or
`command`: names taken from the agents they were trained on. A name that clearly means one
of this run's tools runs that tool (the observation says so); anything else is refused with
the nearest names. The tables are data: one entry per name seen in practice.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any

from localagent.textcalls.base import fold_name
from localagent.tools.base import ToolContext, ToolResult
from localagent.tools.paths import normalize_path, relative, resolve_in_workspace

# Tool -> the other names models call it by (compared folded: case, `-`, spaces, camelCase).
TOOL_ALIASES: dict[str, tuple[str, ...]] = {
    "write_file": (
        "create_file", "save_file", "new_file", "write", "writefile", "file_write",
        "write_to_file", "create", "make_file", "overwrite_file", "put_file", "save",
    ),
    "run_cmd": (
        "run", "shell", "bash", "execute", "run_command", "exec", "execute_command",
        "run_shell_command", "shell_command", "run_shell", "execute_bash", "terminal",
        "run_terminal_cmd", "cmd", "command", "sh",
    ),
    "read_file": (
        "read", "cat", "open_file", "view_file", "view", "get_file", "file_read",
        "show_file", "read_file_content", "get_file_contents", "read_text_file",
    ),
    "list_dir": (
        "ls", "list_files", "list_directory", "dir", "list_folder", "listdir",
        "list_dir_contents", "directory_tree",
    ),
    "search_files": ("grep", "search", "search_code", "grep_search", "find_in_files", "rg"),
    "find_files": ("find", "glob", "find_file", "file_search", "search_files_by_name"),
    "replace_in_file": (
        "str_replace", "replace", "replace_text", "search_replace", "replace_string_in_file",
    ),
    "append_file": ("append", "append_to_file", "add_to_file"),
    "delete_file": ("rm", "remove", "remove_file", "delete", "unlink"),
    "move_file": ("mv", "rename", "rename_file", "move"),
    "git_commit": ("commit",),
    "git_diff": ("diff",),
    "mark_subtask_complete": (
        "done", "finish", "complete", "task_complete", "finish_task", "mark_complete",
        "complete_subtask", "subtask_complete", "mark_task_complete", "attempt_completion",
        "submit", "task_done", "mark_done", "mark_subtask_done", "mark_subtask",
    ),
}  # fmt: skip

# Arguments the aliases imply when the model leaves them out: `done` means success.
ALIAS_ARGUMENTS: dict[str, dict[str, Any]] = {
    alias: {"success": True}
    for alias in TOOL_ALIASES["mark_subtask_complete"]
    if alias != "mark_subtask"
}

# A folder is made as part of writing a file: these run FOLDER_STEP while write_file is on.
FOLDER_ALIASES = (
    "create_dir", "mkdir", "make_dir", "create_directory", "create_folder", "make_directory",
    "makedirs", "mkdirs", "new_folder", "new_directory", "make_folder",
)  # fmt: skip
FOLDER_STEP = "make_folder"

# Parameter -> the other names models give it. A name is renamed only where the tool has
# exactly one of its meanings and was not also given that parameter by its own name.
ARGUMENT_ALIASES: dict[str, tuple[str, ...]] = {
    "path": (
        "file_path", "filepath", "filename", "file_name", "file", "dir", "directory",
        "folder", "dir_path", "directory_path", "target_file", "relative_path",
    ),
    "content": ("contents", "text", "code", "file_content", "file_contents", "data", "body"),
    "cmd": ("command", "cmdline", "command_line", "shell_command", "commands"),
    "old": ("old_str", "old_string", "old_text", "search", "find", "original"),
    "new": ("new_str", "new_string", "new_text", "replace", "replacement"),
    "reason": ("summary", "explanation", "result", "reasoning", "details", "message"),
    "message": ("msg", "commit_message"),
    "timeout_sec": ("timeout", "timeout_seconds", "timeout_s"),
    "pattern": ("query", "regex", "search_pattern"),
    "src": ("source", "from_path", "old_path"),
    "dst": ("destination", "to_path", "new_path"),
}  # fmt: skip


@dataclass(frozen=True)
class Meaning:
    """The tool a name runs, and the arguments its name implies."""

    tool: str
    implied: dict[str, Any] = field(default_factory=dict)


@functools.cache
def _table() -> dict[str, str]:
    return {fold_name(alias): tool for tool, names in TOOL_ALIASES.items() for alias in names}


def meaning(name: str, tools: Collection[str]) -> Meaning | None:
    """What `name` runs among `tools`: the tool of that name in any spelling, the tool an
    alias names, or the folder step; None when it means none of them."""
    if name in tools:
        return Meaning(name)
    folded = fold_name(name)
    spelled = [tool for tool in tools if fold_name(tool) == folded]
    if spelled:
        return Meaning(spelled[0]) if len(spelled) == 1 else None
    target = _table().get(folded)
    if target in tools:
        return Meaning(target, dict(ALIAS_ARGUMENTS.get(folded, {})))
    if "write_file" in tools and folded in FOLDER_ALIASES:
        return Meaning(FOLDER_STEP)
    return None


def meant(name: str, tools: Collection[str]) -> str | None:
    """The name of the tool `name` runs among `tools`, or None."""
    found = meaning(name, tools)
    return found.tool if found else None


# Words in a name that means no tool for sure, and the tools to suggest for them.
HINTS: dict[str, tuple[str, ...]] = {
    "edit": ("replace_in_file", "write_file"),
    "update": ("replace_in_file", "write_file"),
    "modify": ("replace_in_file", "write_file"),
    "patch": ("replace_in_file",),
    "insert": ("replace_in_file", "append_file"),
    "test": ("run_cmd",),
    "python": ("run_cmd",),
    "pytest": ("run_cmd",),
    "install": ("run_cmd",),
    "directory": ("list_dir", "write_file"),
    "folder": ("list_dir", "write_file"),
    "code": ("write_file",),
    "script": ("write_file", "run_cmd"),
    "generate": ("write_file",),
    "editor": ("write_file", "replace_in_file"),
    "print": ("run_cmd",),
}


def nearest(name: str, tools: Collection[str], count: int = 3) -> list[str]:
    """The tools closest to `name`, closest first: those its words hint at, those whose
    name it contains (`walk_directorywrite_file`), then the most alike names and aliases."""
    folded = fold_name(name)
    spellings = {fold_name(tool): tool for tool in tools}
    spellings.update({alias: tool for alias, tool in _table().items() if tool in tools})
    hinted = [tool for word in folded.split("_") for tool in HINTS.get(word, ())]
    inside = [tool for key, tool in spellings.items() if len(key) > 3 and key in folded]
    close = difflib.get_close_matches(folded, list(spellings), n=count * 3, cutoff=0.5)
    ranked = [*hinted, *inside, *(spellings[key] for key in close)]
    return [tool for tool in dict.fromkeys(ranked) if tool in tools][:count]


def unknown_tool(name: str, tools: Collection[str]) -> str:
    """The observation for a name that means no tool of the run."""
    near = nearest(name, tools)
    hint = f"; did you mean {', '.join(near)}?" if near else ""
    return f"unknown tool {name!r}{hint} Available tools: {', '.join(tools)}"


def said(called: str, ran: str, notes: list[str]) -> str:
    """What ran, when the model named it otherwise or gave arguments under other names:
    the first line of the observation, so its next call uses the real names."""
    told = [] if ran in (called, FOLDER_STEP) else [f"{called} ran as {ran}"]
    told += [f"arguments read: {', '.join(notes)}"] if notes else []
    return "; ".join(told)


def renamed(args: Mapping[str, Any], parameters: Collection[str]) -> dict[str, str]:
    """The model's argument names that mean one of `parameters`, each with that parameter."""
    found: dict[str, str] = {}
    for given in args:
        if given in parameters:
            continue
        meanings = [p for p, names in ARGUMENT_ALIASES.items() if given in names]
        present = [p for p in meanings if p in parameters and p not in args]
        if len(present) == 1 and present[0] not in found.values():
            found[given] = present[0]
    return found


def make_folder(
    ctx: ToolContext,
    path: Annotated[str, "Folder to create, relative to the workspace root."],
) -> ToolResult:
    """Create a folder (and its parents) in the workspace."""
    # A model that asks for a folder first is not wrong, only early: refusing it was a
    # dead end. An empty folder inside the workspace is harmless, and what the model
    # lists or writes next then finds what it expects.
    target = resolve_in_workspace(ctx.root, path)
    shown = relative(ctx.root, target)
    existed = target.is_dir()
    target.mkdir(parents=True, exist_ok=True)
    how = "already exists" if existed else "created"
    text = (
        f"folder {shown}/ {how}. write_file creates missing folders itself: next time "
        f"write the file directly, e.g. write_file(path={shown + '/main.py'!r}, ...)"
    )
    return ToolResult(True, text, changed=not existed, facts={"made": [normalize_path(path)]})
