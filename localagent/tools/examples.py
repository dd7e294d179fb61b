"""The example call the format feedback shows: a real call of this run, never a placeholder.

Qwen2.5-Coder-0.5B copied the example `{"name": "TOOL_NAME", "arguments": {...}}` back
word for word for nine rounds: a small model copies the example it is shown. So the
example names the tool the model most likely wants next (one its reply named, else one
its subtask names or implies) with that tool's own required arguments, and the file the
subtask names as the path: copied as it is, it is a call that runs. Other values are
`<name>` placeholders: copied, they are plainly not work (written into a program they do
not compile, so the completion gate refuses it).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from localagent.textcalls.base import PLACEHOLDER, fold_name
from localagent.tools.readings import call_arguments
from localagent.tools.registry import ToolRegistry

_WORD = re.compile(r"[A-Za-z][\w\-]*")
# The first of these words in a subtask says which tool it needs.
_VERBS = {
    "write": "write_file",
    "create": "write_file",
    "add": "write_file",
    "save": "write_file",
    "implement": "write_file",
    "fix": "replace_in_file",
    "change": "replace_in_file",
    "replace": "replace_in_file",
    "update": "replace_in_file",
    "run": "run_cmd",
    "execute": "run_cmd",
    "test": "run_cmd",
    "install": "run_cmd",
    "read": "read_file",
    "open": "read_file",
    "show": "read_file",
    "find": "search_files",
    "search": "search_files",
    "locate": "search_files",
    "list": "list_dir",
}


@dataclass(frozen=True)
class Example:
    tool: str
    text: str  # the call as JSON text

    def fill(self, problem: str) -> str:
        """`problem` with the placeholder in its format description ("That format is
        exactly: ...") named as the example's tool."""
        said, shown, exactly = problem.partition("exactly: ")
        return said + shown + exactly.replace(PLACEHOLDER, self.tool)


def example_call(tools: ToolRegistry, subtask: str, reply: str) -> Example:
    """The call to show a model whose reply held no usable one."""
    name = likely_tool(tools, subtask, reply)
    arguments = _arguments(tools, name, subtask)
    return Example(name, json.dumps({"name": name, "arguments": arguments}))


def likely_tool(tools: ToolRegistry, subtask: str, reply: str) -> str:
    """The tool a reply named, else the one its subtask names, else the one the subtask's
    first telling verb implies, else the run's first tool."""
    names = tools.names()
    spelled = {fold_name(name): name for name in names}
    for text in (reply, subtask):
        named = [spelled[w] for w in map(fold_name, _WORD.findall(text)) if w in spelled]
        if named:
            return named[0]
    for word in _WORD.findall(subtask.lower()):
        if _VERBS.get(word) in names:
            return _VERBS[word]
    return names[0]


def _arguments(tools: ToolRegistry, name: str, subtask: str) -> dict[str, Any]:
    tool = tools.get(name)
    return call_arguments(tool, subtask) if tool else {}
