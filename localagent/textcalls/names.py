"""The names models give tools that are not ours, and which tool each one means.

Small models call `create_file`, `mkdir`, `bash` or `done`: names taken from the agents
they were trained on. Reading a call out of text needs to know them (is this word a tool's
name?) as much as running it does (`tools.aliases`), so the table lives here, below both.
The tables are data: one entry per name seen in practice.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from localagent.textcalls.base import fold_name

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


# Tool -> the verbs that start a sentence only it does: a name such as "run python
# hello_world.py" (Qwen2.5-Coder-0.5B named its call after its subtask) says its tool.
# Only these tools are read from a sentence: "delete_everything" with `{"path": "."}`
# must never delete, so a sentence that means delete_file or move_file means nothing.
SENTENCE_VERBS: dict[str, tuple[str, ...]] = {
    "run_cmd": ("run", "execute", "exec"),
    "write_file": ("write", "create", "save"),
    "read_file": ("read", "open", "cat", "show", "view"),
    "list_dir": ("list", "ls"),
    "search_files": ("search", "grep"),
    "find_files": ("find", "locate"),
}
_PATHLIKE = re.compile(r"[./\\]")  # a word of a name that is a file's name, not a verb
_SENTENCE = re.compile(r"[\w .\-/\\]+")  # words and file names; no markup, no control


@dataclass(frozen=True)
class Meaning:
    """The tool a name runs, and the arguments its name implies; `read` when the name
    is a sentence whose verb says the tool (the observation then shows the right call)."""

    tool: str
    implied: dict[str, Any] = field(default_factory=dict)
    read: bool = False


@dataclass(frozen=True)
class Sentence:
    """What a name that is not a tool's says: the one tool its words mean, and whether
    it is a sentence (words apart) whose first word is that tool's verb."""

    tool: str
    first: bool


@functools.cache
def alias_table() -> dict[str, str]:
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
    target = alias_table().get(folded)
    if target in tools:
        return Meaning(target, dict(ALIAS_ARGUMENTS.get(folded, {})))
    if "write_file" in tools and folded in FOLDER_ALIASES:
        return Meaning(FOLDER_STEP)
    return None


def meant(name: str, tools: Collection[str]) -> str | None:
    """The name of the tool `name` runs among `tools`, or None."""
    found = meaning(name, tools)
    return found.tool if found else None


def is_tool_name(name: str, known: Collection[str]) -> bool:
    """Whether `name` names a tool: a known one in any spelling, or one the registry runs
    under another name (`create_file` runs write_file)."""
    return meant(name, known) is not None


@functools.cache
def _verb_table() -> dict[str, str]:
    verbs = {verb: tool for tool, words in SENTENCE_VERBS.items() for verb in words}
    return {**alias_table(), **verbs}


def sentence(name: str) -> Sentence | None:
    """The tool a name's words mean when all of them that mean a tool mean the same one
    ("run python hello_world.py", "execute_script"); None when none does, or when two
    tools are meant ("write and run", "show_diff"): a wrong call must never run."""
    if not _SENTENCE.fullmatch(name):
        return None
    words = [
        word
        for token in name.split()
        if not _PATHLIKE.search(token)
        for word in fold_name(token).split("_")
        if word
    ]
    meant = [_verb_table()[word] for word in words if word in _verb_table()]
    if len(set(meant)) != 1 or meant[0] not in SENTENCE_VERBS:
        return None
    spoken = len(name.split()) > 1  # words apart: a sentence, not a misspelt name
    return Sentence(meant[0], spoken and _verb_table().get(words[0]) == meant[0])


def command_in_name(name: str) -> str | None:
    """The command a run verb's sentence names, when nothing else can be read in it:
    "run python hello_world.py" -> "python hello_world.py". Every word after the program
    is an option, a module after -m, or a file's name; "run the tests" names none.
    run_cmd then checks it as it checks any command."""
    verb, *rest = name.split() or [""]
    if fold_name(verb) not in SENTENCE_VERBS["run_cmd"] or len(rest) < 2:
        return None  # a program alone ("run python") is no command anyone asked for
    after_m = [rest[i - 1] == "-m" for i in range(len(rest))]
    if not all(
        word.startswith("-") or module or _PATHLIKE.search(word)
        for word, module in zip(rest[1:], after_m[1:], strict=True)
    ):
        return None
    return " ".join(rest)
