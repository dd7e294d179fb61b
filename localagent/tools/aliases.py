"""The names models give arguments that are not ours, and what a call of a name that is
not ours is told.

Small models call `create_file`, `mkdir`, `bash` or `done` (the tools each such name means
are in `textcalls.names`), and pass `file_path` or `command`: names taken from the agents
they were trained on. A name that clearly means one of this run's tools runs that tool (the
observation says so); anything else is refused with the nearest names. The tables are data:
one entry per name seen in practice.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Mapping
from typing import Annotated, Any

from localagent.prompts.promptset import DEFAULT, PromptSet
from localagent.textcalls.base import fold_name
from localagent.textcalls.names import FOLDER_STEP, alias_table
from localagent.tools.base import ToolContext, ToolResult
from localagent.tools.paths import normalize_path, relative, resolve_in_workspace

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
    spellings.update({alias: tool for alias, tool in alias_table().items() if tool in tools})
    hinted = [tool for word in folded.split("_") for tool in HINTS.get(word, ())]
    inside = [tool for key, tool in spellings.items() if len(key) > 3 and key in folded]
    close = difflib.get_close_matches(folded, list(spellings), n=count * 3, cutoff=0.5)
    ranked = [*hinted, *inside, *(spellings[key] for key in close)]
    return [tool for tool in dict.fromkeys(ranked) if tool in tools][:count]


def unknown_tool(name: str, tools: Collection[str], prompts: PromptSet = DEFAULT) -> str:
    """The observation for a name that means no tool of the run."""
    near, listed = nearest(name, tools), ", ".join(tools)
    if not near:
        return prompts.render("unknown_tool_no_match", tool=repr(name), tools=listed)
    return prompts.render("unknown_tool", tool=repr(name), nearest=", ".join(near), tools=listed)


def said(called: str, ran: str, notes: list[str], prompts: PromptSet = DEFAULT) -> str:
    """What ran, when the model named it otherwise or gave arguments under other names:
    the first line of the observation, so its next call uses the real names."""
    told = (
        [] if ran in (called, FOLDER_STEP) else [prompts.render("ran_as", called=called, ran=ran)]
    )
    told += [prompts.render("arguments_read", renamed=", ".join(notes))] if notes else []
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
    told = "folder_exists" if existed else "folder_created"
    text = ctx.prompts.render(told, path=shown, example=repr(shown + "/main.py"))
    return ToolResult(True, text, changed=not existed, facts={"made": [normalize_path(path)]})
