"""Calls whose name is a sentence, not a tool's name: what they run, and the right call.

Qwen2.5-Coder-0.5B named its calls after its subtask: `"run python hello_world.py"` with
`{"cmd": "python hello_world.py"}`, then `"run python"`; both were refused as unknown and
the goal failed with the file written. A sentence's words say its tool
(`textcalls.names.sentence`), and the tool runs when the arguments say the same: they fit
it, and either the name is a sentence that starts with its verb or they fit no other tool
of the run (`execute_script` with only `cmd`; `write_fiel` may be append_file too). A
call with no arguments runs only when its name is a whole command for run_cmd (see
`command_in_name`). Anything else runs nothing, and the refusal shows the right call
built from what the model sent: a small model copies the example it is shown.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from localagent.textcalls.base import fold_name
from localagent.textcalls.names import Meaning, command_in_name, sentence
from localagent.tools.aliases import nearest
from localagent.tools.arguments import parse_arguments, prepared, validated
from localagent.tools.base import ToolError
from localagent.tools.tool import Tool

_PATH_WORD = ("path", "src")
_FILE = re.compile(r"\b[\w./-]*\w\.[A-Za-z]{1,5}\b")  # a file's name in a text


def read_name(tools: Mapping[str, Tool], name: str, args: object) -> Meaning | None:
    """The tool a sentence for a name runs with `args`, or None when it is not clear."""
    said = sentence(name)
    tool = tools.get(said.tool) if said else None
    given = _given(args)
    if said is None or tool is None or given is None or _names_another(tools, tool, name):
        return None
    if not given:
        command = command_in_name(name) if tool.name == "run_cmd" else None
        return Meaning(tool.name, {"cmd": command}, read=True) if command else None
    if not _fits(tool, given):
        return None
    if said.first or [other for other in tools.values() if _fits(other, given)] == [tool]:
        return Meaning(tool.name, read=True)
    return None


def right_call(tool: Tool, name: str, args: object) -> str:
    """The call `tool` takes, as JSON text, built from the model's arguments and name."""
    try:
        given, _ = prepared(tool, args)
    except ToolError:
        given = {}
    values = call_arguments(tool, name, given)
    return json.dumps({"name": tool.name, "arguments": values}, ensure_ascii=False)


def call_arguments(tool: Tool, text: str, given: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Values for the arguments a call of `tool` needs: those `given` (the model's, under
    the tool's names), else a command or a file's name read from `text` (a call's name,
    a subtask), else `<param>` (copied back, plainly not work)."""
    given = given or {}
    schema = tool.spec.flat
    properties = schema.get("properties") or {}
    files = [*([given["path"]] if isinstance(given.get("path"), str) else []), *_FILE.findall(text)]
    values: dict[str, Any] = {}
    for key in schema.get("required") or list(properties)[:1]:
        kind = (properties.get(key) or {}).get("type")
        if key in given:
            values[key] = given[key]
        elif kind == "boolean":
            values[key] = True
        elif kind in ("integer", "number"):
            values[key] = 1
        elif key == "cmd" and (command := command_in_name(text) or _checker(text, files)):
            values[key] = command
        elif key == "cmd" and files and files[0].endswith(".py"):
            values[key] = f"python {files[0]}"
        elif key in _PATH_WORD and files:
            values[key] = files[0]
        else:
            values[key] = f"<{key}>"
    return values


def _checker(name: str, files: list[str]) -> str:
    """The check a name like `run_ruff_check` or `run_pytest` means, on the files it was
    given: Qwen2.5-Coder-1.5B called `run_ruff_check` for its mathx step "run ruff check",
    was shown `python tests/test_mathx.py` (its file run as a script), copied it and failed
    on the import."""
    words = set(re.split(r"[\W_]+", name.lower()))
    given = " ".join(f for f in files[:1] if f.endswith(".py"))
    if "ruff" in words:
        return f"ruff check {given or '.'}"
    if words & {"pytest", "tests", "test"}:
        return f"python -m pytest {given}".rstrip()
    return ""


def suggested(tools: Mapping[str, Tool], name: str, args: object) -> str:
    """The right call for a name that runs nothing: of the tool its sentence means, else
    of the nearest tool; "" when no tool is near."""
    said = sentence(name)
    near = [said.tool] if said and said.tool in tools else nearest(name, list(tools), 1)
    return right_call(tools[near[0]], name, args) if near else ""


def shown_call(tool: Tool, values: Mapping[str, Any]) -> str:
    """The call that ran, as the model should have written it: required arguments and
    those it gave other than their defaults."""
    fields = tool.arguments.model_fields
    required = set(tool.spec.flat.get("required") or [])
    kept = {
        key: value
        for key, value in values.items()
        if key in required or key not in fields or fields[key].default != value
    }
    return json.dumps({"name": tool.name, "arguments": kept}, ensure_ascii=False)


def _names_another(tools: Mapping[str, Tool], tool: Tool, name: str) -> bool:
    """Whether the sentence holds the name of another tool of the run: "search the web"
    with a server's tool `search` may mean that one, not search_files."""
    folded = f"_{fold_name(name)}_"
    return any(f"_{fold_name(other)}_" in folded for other in tools if other != tool.name)


def _given(args: object) -> dict[str, Any] | None:
    try:
        return parse_arguments(args)
    except ToolError:
        return None


def _fits(tool: Tool, given: dict[str, Any]) -> bool:
    try:
        validated(tool, given)
    except ToolError:
        return False
    return True
