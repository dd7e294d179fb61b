"""The tool registry: typed functions made into tools, each with the policy the loop needs.

Argument models and the schemas sent to the model are derived from the signatures
(`Annotated[type, description]`) and docstrings. A tool's `Policy` says what the loop and
resume do with it, so neither ever dispatches on a tool's name: whether a call is an
action at all, whether it starts a process, what resume does when a crash interrupted it,
and which of its arguments are paths. Mistakes by the model and failures of a tool come
back as observations with `ok=False`; `execute` never raises.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import inspect
import os
import typing
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Annotated, Any

import orjson
from pydantic import ConfigDict, create_model

from localagent.models.protocol import ToolSpec
from localagent.system.textcap import cap_text
from localagent.textcalls.names import FOLDER_STEP, Meaning, meaning
from localagent.tools import aliases, readings
from localagent.tools.arguments import validated
from localagent.tools.base import ToolContext, ToolError, ToolResult, clean
from localagent.tools.outputs import store_text, stored_note
from localagent.tools.paths import normalize_path, relative, resolve_in_workspace
from localagent.tools.tool import Policy, Tool

_JSON_TYPES: dict[type, str] = {str: "string", int: "integer", bool: "boolean", float: "number"}
DIGEST_LIMIT = 64 * 1024 * 1024  # bytes hashed to tell an applied edit from one not made


def _parameter(annotation: object) -> tuple[type, str]:
    """The plain type and the description of an `Annotated[type, description]` hint."""
    if typing.get_origin(annotation) is not Annotated:
        raise TypeError(f"tool parameter needs Annotated[type, description], got {annotation}")
    base, *extras = typing.get_args(annotation)
    texts = [x if isinstance(x, str) else getattr(x, "description", None) for x in extras]
    texts = [text for text in texts if isinstance(text, str) and text]
    if base not in _JSON_TYPES or not texts:
        raise TypeError(f"tool parameter {annotation} needs a flat type and a description")
    return base, texts[0]


def make_tool(function: Callable[..., ToolResult], policy: Policy | None = None) -> Tool:
    """A tool from a typed function `f(ctx, name: Annotated[type, "what"] = default, ...)`."""
    hints = typing.get_type_hints(function, include_extras=True)
    parameters = list(inspect.signature(function).parameters.values())[1:]
    fields: dict[str, Any] = {}
    properties: dict[str, dict[str, str]] = {}
    required: list[str] = []
    shown: list[str] = []
    for param in parameters:
        base, description = _parameter(hints[param.name])
        has_default = param.default is not inspect.Parameter.empty
        fields[param.name] = (hints[param.name], param.default if has_default else ...)
        properties[param.name] = {"type": _JSON_TYPES[base], "description": description}
        required += [] if has_default else [param.name]
        default = f" = {orjson.dumps(param.default).decode()}" if has_default else ""
        shown.append(f"{param.name}: {_JSON_TYPES[base]}{default}")
    description = " ".join(inspect.getdoc(function).split("\n\n")[0].split())  # type: ignore[union-attr]
    arguments = create_model(
        f"{function.__name__}_arguments",
        __config__=ConfigDict(extra="forbid", defer_build=True),
        **fields,
    )
    parameters_schema = {"type": "object", "properties": properties, "required": required}
    spec = ToolSpec(function.__name__, description, parameters_schema)
    signature = f"{function.__name__}({', '.join(shown)})"
    return Tool(function.__name__, function, arguments, spec, signature, policy or Policy())


def schema_tool(
    name: str,
    function: Callable[..., ToolResult],
    spec: ToolSpec,
    signature: str,
    policy: Policy,
) -> Tool:
    """A tool described by a JSON schema rather than a typed function (an MCP server's):
    any JSON object passes as its arguments here; `function(ctx, **args)` checks them."""
    arguments = create_model(
        f"{name}_arguments", __config__=ConfigDict(extra="allow", defer_build=True)
    )
    return Tool(name, function, arguments, spec, signature, policy)


class ToolRegistry:
    """An ordered, fixed set of tools: the order is the order of the prompt's tool list."""

    def __init__(self, tools: Iterable[Tool]) -> None:
        self._tools = {tool.name: tool for tool in tools}

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.strip() in self._tools

    def __iter__(self) -> typing.Iterator[Tool]:
        return iter(self._tools.values())

    def get(self, name: object, args: object = None) -> Tool | None:
        """The tool `name` runs: this one, or the one it means (see `aliases`), or with
        `args` the one a sentence for a name means (see `readings`)."""
        found = self._meaning(name, args)
        return self._tool(found.tool) if found else None

    def _meaning(self, name: object, args: object = None) -> Meaning | None:
        if not isinstance(name, str):
            return None
        found = meaning(name.strip(), self._tools)
        if found is None and args is not None:
            found = readings.read_name(self._tools, name.strip(), args)
        return found

    def _tool(self, name: str) -> Tool:
        return _folder_step() if name == FOLDER_STEP else self._tools[name]

    def names(self) -> list[str]:
        return list(self._tools)

    def specs(self) -> list[ToolSpec]:
        """The tools as a model is told of them (its adapter writes its wire shape)."""
        return [tool.spec for tool in self]

    def select(self, names: Iterable[str] | None) -> ToolRegistry:
        """The tools named (all default ones for None), in registry order; control tools
        always stay. ValueError names any unknown tool."""
        wanted = None if names is None else list(dict.fromkeys(names))
        if wanted is not None and (unknown := [n for n in wanted if n not in self._tools]):
            raise ValueError(
                f"unknown tool {', '.join(map(repr, unknown))}; known tools: "
                f"{', '.join(self._tools)}"
            )
        return ToolRegistry(
            tool
            for tool in self
            if tool.policy.control
            or (tool.policy.default if wanted is None else tool.name in wanted)
        )

    def described(self, notes: Mapping[str, str]) -> ToolRegistry:
        """These tools with a run's own words added to their descriptions (the coding
        agents configured, say); like the list itself, fixed for the whole run."""
        return ToolRegistry(
            _described(tool, notes[tool.name]) if tool.name in notes else tool for tool in self
        )

    def canonical(self, name: object, args: object) -> tuple[str, dict[str, Any]]:
        """The call as the loop guard signs it: the tool it runs and its validated
        arguments with defaults filled, paths normalised and commands re-spaced, so that
        spellings of the same call compare equal (`create_file(file_path=...)` and
        `write_file(path=...)`). A call that does not validate comes back with its name
        trimmed and its arguments as given (a dict, else `{"__raw__": repr(args)}`)."""
        stripped = name.strip() if isinstance(name, str) else repr(name)
        found = self._meaning(stripped, args)
        try:
            if found is None:
                raise ToolError(stripped)
            tool = self._tool(found.tool)
            values, _ = validated(tool, args, found.implied)
        except ToolError:
            raw = {str(k): v for k, v in args.items()} if isinstance(args, Mapping) else None
            return stripped, raw if raw is not None else {"__raw__": repr(args)}
        for key in tool.policy.paths:
            if isinstance(values.get(key), str):
                values[key] = normalize_path(values[key])
        if tool.policy.canonical is not None:
            values = tool.policy.canonical(values)
        return tool.name, values

    def execute(self, ctx: ToolContext, name: object, args: object) -> ToolResult:
        """Runs the tool `name` means with the model's arguments; the observation (which
        says what ran when the model named it otherwise), never an exception."""
        said = ""
        try:
            found = self._meaning(name, args)
            if found is None:
                raise ToolError(self._unknown(ctx, str(name), args))
            tool = self._tool(found.tool)
            values, notes = validated(tool, args, found.implied, ctx.prompts)
            said = aliases.said(str(name).strip(), tool.name, notes, ctx.prompts)
            if found.read:
                call = readings.shown_call(tool, values)
                said = ctx.prompts.render("ran_as_call", called=str(name).strip(), call=call)
            result = tool.function(ctx, **values)
        except ToolError as exc:
            result = ToolResult(False, exc.text(ctx.prompts))
        except OSError as exc:
            result = ToolResult(False, _os_error_text(ctx, str(name), exc))
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            result = ToolResult(
                False, ctx.prompts.render("tool_crashed", tool=repr(name), error=error)
            )
        if said:
            result = dataclasses.replace(result, text=f"({said})\n{result.text}")
        return _observed(ctx, result)

    def _unknown(self, ctx: ToolContext, name: str, args: object) -> str:
        """The refusal of a name that means no tool: the nearest names, and the right
        call built from what the model sent."""
        said = aliases.unknown_tool(name, list(self._tools), ctx.prompts)
        example = readings.suggested(self._tools, name.strip(), args)
        return f"{said}\n{ctx.prompts.render('right_call', call=example)}" if example else said

    def digest(self, ctx: ToolContext, name: str, args: object) -> dict[str, str] | None:
        """For a tool resumed by checking: the state of each path it touches ("absent", a
        folder, or a hash of the content), recorded when it starts; None for other tools
        and for arguments that do not validate (the call will fail either way)."""
        found = self._meaning(name, args)
        tool = self._tool(found.tool) if found else None
        if found is None or tool is None or tool.policy.resume != "check":
            return None
        try:
            values, _ = validated(tool, args, found.implied)
            return {
                str(values[key]): _path_state(resolve_in_workspace(ctx.root, str(values[key])))
                for key in tool.policy.paths
            }
        except (ToolError, OSError):
            return None

    def applied(
        self, ctx: ToolContext, name: str, args: object, before: dict[str, str]
    ) -> ToolResult | None:
        """The outcome of an interrupted call whose paths changed since it started (so it
        was applied: these tools change them in one atomic step), else None (run it)."""
        now = self.digest(ctx, name, args)
        if now is None or now == before:
            return None
        written = [path for path, state in now.items() if state not in ("absent", before[path])]
        removed = [path for path, state in now.items() if state == "absent" != before.get(path)]
        text = ctx.prompts.render("applied_before", tool=name)
        facts = {"wrote": written, "removed": removed}
        return ToolResult(True, text, changed=True, facts={k: v for k, v in facts.items() if v})


@functools.cache
def _folder_step() -> Tool:
    return make_tool(aliases.make_folder, Policy(changes=True, paths=("path",)))


def _observed(ctx: ToolContext, result: ToolResult) -> ToolResult:
    """The result with its text within `ctx.output_limit`: a longer text is stored whole
    (when the context stores outputs) and shown as head and tail, with how to read on."""
    text = clean(result.text)
    stored, note = result.output, ""
    if stored is None and len(text) > ctx.output_limit:
        stored, note = store_text(ctx, text)
    if stored is not None:
        note = stored_note(ctx, stored)
    if not note:
        return dataclasses.replace(result, text=cap_text(text, ctx.output_limit))
    shown = cap_text(text, max(ctx.output_limit - len(note) - 1, 0))
    shown += "" if shown.endswith("\n") else "\n"
    return dataclasses.replace(result, text=shown + note, output=stored)


def _described(tool: Tool, note: str) -> Tool:
    described = f"{tool.spec.description} {note}"
    return dataclasses.replace(tool, spec=dataclasses.replace(tool.spec, description=described))


def _path_state(path: Path) -> str:
    try:
        info = path.stat()
    except FileNotFoundError:
        return "absent"
    if not path.is_file():
        return "folder" if path.is_dir() else "other"
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
            if handle.tell() >= DIGEST_LIMIT:
                break
    return f"{info.st_size}:{digest.hexdigest()[:32]}"


def _os_error_text(ctx: ToolContext, name: str, error: OSError) -> str:
    where = ""
    if error.filename:
        path = Path(os.fsdecode(error.filename))
        shown = relative(ctx.root, path) if path.is_relative_to(ctx.root) else path.name
        where = f" ({shown})"
    problem = error.strerror or error
    return ctx.prompts.render("tool_os_error", tool=name, problem=problem, where=where)
