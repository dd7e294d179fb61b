"""The model's arguments as a tool takes them: read from JSON, renamed from the names
models use for them, reshaped where they came in the other obvious shape, validated
against the tool's argument model, and explained when they still do not fit.

Reshaping is driven by the tool's schema, never by its name: a list for a parameter that
holds several words (`git_commit(paths=["a.txt"])`), one item in a list for a single
value, a number given as text or text given as a number."""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import orjson
from pydantic import ValidationError

from localagent.prompts.promptset import DEFAULT, PromptSet
from localagent.textcalls.base import BESIDE
from localagent.textcalls.literals import NotLiteral, literal
from localagent.tools.aliases import renamed
from localagent.tools.base import ToolError, Words

if TYPE_CHECKING:
    from localagent.tools.tool import Tool

_INTEGER = re.compile(r"\s*[-+]?\d+\s*")
_BOOLEANS = {"true": True, "false": False}
_SCHEMA_WORDS = frozenset({"required", "type", "properties", "additionalProperties", "$schema"})


def validated(
    tool: Tool,
    args: object,
    implied: Mapping[str, Any] | None = None,
    prompts: PromptSet = DEFAULT,
) -> tuple[dict[str, Any], list[str]]:
    """The arguments the tool runs with, and what was read under another name (for the
    observation); ToolError with the problems and the expected signature otherwise."""
    try:
        given, notes = prepared(tool, args, implied)
        return dict(tool.arguments.model_validate(given)), notes
    except ValidationError as exc:
        raise ToolError(explain(tool, exc, prompts)) from exc
    except ToolError as exc:
        raise ToolError(_invalid(tool, exc.text(prompts), prompts)) from None


def _invalid(tool: Tool, problems: str, prompts: PromptSet) -> str:
    return prompts.render(
        "invalid_arguments", tool=tool.name, problems=problems, signature=tool.signature
    )


def prepared(
    tool: Tool, args: object, implied: Mapping[str, Any] | None = None
) -> tuple[dict[str, Any], list[str]]:
    """The model's arguments renamed and reshaped for the tool, not yet validated."""
    given = {**(implied or {}), **parse_arguments(args)}
    beside = given.pop(BESIDE, None)
    properties = tool.spec.flat.get("properties") or {}
    # Words of the tool's JSON schema sent as arguments: Qwen2.5-Coder-0.5B sent run_cmd
    # `{"cmd": "python hello_world.py", "required": []}` until blocked (the CPU).
    schema = [key for key in given if key in _SCHEMA_WORDS and key not in properties]
    given = {key: value for key, value in given.items() if key not in schema}
    names = renamed(given, properties)
    given = {names.get(key, key): value for key, value in given.items()}
    # Keys the call had beside its arguments: those naming a parameter it left out.
    beside = beside if isinstance(beside, Mapping) else {}
    took = [k for k, v in beside.items() if k in properties and k not in given and v is not None]
    given.update({key: beside[key] for key in took})
    words = {key for key, field in tool.arguments.model_fields.items() if _words(field.metadata)}
    for key, spec in properties.items():
        if key in given and isinstance(spec, Mapping):
            given[key] = _shaped(given[key], spec.get("type"), key in words)
    outside = [f"{key} from outside the arguments" for key in took]
    outside += [f"{key} left out (a word of the tool's schema)" for key in schema]
    return given, [f"{old} as {new}" for old, new in names.items()] + outside


def _words(metadata: list[Any]) -> bool:
    return any(isinstance(item, Words) for item in metadata)


def _shaped(value: Any, wanted: object, words: bool) -> Any:
    """`value` in the shape `wanted` (a JSON schema type) where that shape is obvious."""
    if not isinstance(wanted, str):
        return value  # a union of types (an MCP server's schema): any of them may be meant
    if words and isinstance(value, str):
        value = _listed(value) or value
    if isinstance(value, list) and wanted != "array":
        if words and value and all(_scalar(item) for item in value):
            return shlex.join(str(item) for item in value)
        if len(value) != 1:
            return value
        value = value[0]
    if wanted == "array" and not isinstance(value, list):
        return _listed(value) if isinstance(value, str) and _listed(value) else [value]
    if wanted == "string" and _scalar(value):
        return str(value)
    if isinstance(value, str):
        return _from_text(value, wanted)
    return value


def _scalar(value: Any) -> bool:
    return isinstance(value, str | int | float) and not isinstance(value, bool)


def _listed(text: str) -> list[Any] | None:
    """A JSON or Python list of plain values written as text (`["a.txt", "b.txt"]`)."""
    stripped = text.strip()
    if not (stripped.startswith("[") and stripped.endswith("]")):
        return None
    try:
        value = literal(stripped)
    except NotLiteral:
        return None
    return value if isinstance(value, list) and all(_scalar(v) for v in value) else None


def _from_text(text: str, wanted: object) -> Any:
    if wanted == "integer" and _INTEGER.fullmatch(text):
        return int(text)
    if wanted == "number":
        try:
            return float(text)
        except ValueError:
            return text
    if wanted == "boolean":
        return _BOOLEANS.get(text.strip().lower(), text)
    return text


def parse_arguments(args: object) -> dict[str, Any]:
    """The arguments as an object: decoded when they came as JSON text; nulls left out."""
    if isinstance(args, str | bytes):
        text = args.strip()
        if not text:
            return {}
        try:
            args = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            raise ToolError.of("arguments_not_json", problem=exc) from exc
    if args is None:
        return {}
    if not isinstance(args, Mapping):
        raise ToolError.of("arguments_not_object", kind=type(args).__name__)
    # Models often send null for an argument they mean to leave out.
    return {str(key): value for key, value in args.items() if value is not None}


def explain(tool: Tool, error: ValidationError, prompts: PromptSet = DEFAULT) -> str:
    problems = []
    for item in error.errors():
        where = ".".join(str(part) for part in item["loc"]) or "arguments"
        if item["type"] == "missing":
            problems.append(prompts.render("missing_parameter", parameter=where))
        elif item["type"] == "extra_forbidden":
            problems.append(prompts.render("unknown_parameter", parameter=where))
        else:
            got = repr(item.get("input"))[:60]
            said = prompts.render("bad_parameter", parameter=where, problem=item["msg"], value=got)
            problems.append(said)
    return _invalid(tool, "; ".join(problems), prompts)
