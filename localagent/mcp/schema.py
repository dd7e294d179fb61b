"""MCP tool schemas made into what a model backend keeps, and arguments checked against
the original.

Ollama's client drops `anyOf`, `$ref`, nested `properties`, `default` and similar keywords
from tool schemas, and schemas made by pydantic are full of them. So each schema is
resolved (`$ref` replaced by its target), nullable unions collapsed to their type, and
each top-level parameter sent flat: nested objects and their fields are written into its
description, so the model still sees their shape. The model's arguments are validated
against the server's original schema.

A `$ref` is expanded at every place that names it, so a definition shared by many
places, each naming others, grows exponentially: the expansion is counted, and one past
MAX_VALUES values or MAX_NESTING levels is refused (SchemaTooLarge) before it is built.
"""

from __future__ import annotations

from typing import Any

import orjson

from localagent.models.protocol import ToolSpec

MAX_REF_DEPTH = 8  # a recursive schema is cut here
MAX_VALUES = 20_000  # of a schema with its references expanded: real tools have hundreds
MAX_NESTING = 64  # levels of objects and lists
MAX_SHAPE = 600  # characters of one parameter's shape in its description
MAX_DESCRIPTION = 1200  # characters of a tool's own description
PRIMITIVES = ("string", "integer", "number", "boolean")


class SchemaTooLarge(ValueError):
    """A schema whose expansion passes MAX_VALUES values or MAX_NESTING levels."""


def resolve(schema: Any, root: Any = None) -> Any:
    """The schema with every local `$ref` replaced by what it points to; SchemaTooLarge
    when that is past the bounds."""
    return _Expansion(schema if root is None else root).expand(schema, 0, 0)


class _Expansion:
    def __init__(self, root: Any) -> None:
        self.root = root
        self.values = 0

    def expand(self, schema: Any, refs: int, nesting: int) -> Any:
        self.values += 1
        if self.values > MAX_VALUES:
            raise SchemaTooLarge(f"its references expand past {MAX_VALUES:,} values")
        if nesting > MAX_NESTING:
            raise SchemaTooLarge(f"it is nested deeper than {MAX_NESTING} levels")
        if isinstance(schema, list):
            return [self.expand(item, refs, nesting + 1) for item in schema]
        if not isinstance(schema, dict):
            return schema
        if isinstance(schema.get("$ref"), str):
            rest = {k: v for k, v in schema.items() if k != "$ref"}
            target = _pointer(self.root, schema["$ref"])
            if target is None or refs >= MAX_REF_DEPTH:
                return self.expand(rest, refs, nesting) if rest else {}
            return self.expand({**target, **rest}, refs + 1, nesting)
        return {
            key: self.expand(value, refs, nesting + 1)
            for key, value in schema.items()
            if key not in ("$defs", "definitions")
        }


def _pointer(root: Any, ref: str) -> dict[str, Any] | None:
    if not ref.startswith("#"):
        return None  # a remote reference: not followed
    node = root
    for part in ref[1:].split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node if isinstance(node, dict) else None


def simplify(schema: Any) -> dict[str, Any]:
    """A resolved schema with `X | null` unions and one-item `allOf` collapsed to X."""
    if not isinstance(schema, dict):
        return {}
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list):
            real = [o for o in options if not (isinstance(o, dict) and o.get("type") == "null")]
            if len(real) == 1 and isinstance(real[0], dict):
                rest = {k: v for k, v in schema.items() if k != key}
                return simplify({**real[0], **rest})
    if isinstance(schema.get("allOf"), list) and len(schema["allOf"]) == 1:
        rest = {k: v for k, v in schema.items() if k != "allOf"}
        return simplify({**schema["allOf"][0], **rest})
    kind = schema.get("type")
    if isinstance(kind, list):
        real = [k for k in kind if k != "null"]
        schema = {**schema, "type": real[0] if len(real) == 1 else real}
    return schema


def _kind(schema: dict[str, Any]) -> str | None:
    kind = schema.get("type")
    if isinstance(kind, str):
        return kind
    if "properties" in schema:
        return "object"
    if "items" in schema:
        return "array"
    return None


def shape(schema: Any, depth: int = 0) -> str:
    """A compact picture of a schema: `{title: string, tags?: [string]}`."""
    s = simplify(schema)
    if depth > 4:
        return "..."
    if "enum" in s and isinstance(s["enum"], list):
        return " | ".join(orjson.dumps(v).decode() for v in s["enum"][:12])
    if "const" in s:
        return orjson.dumps(s["const"]).decode()
    options = s.get("anyOf") or s.get("oneOf")
    if isinstance(options, list):
        return " | ".join(shape(o, depth + 1) for o in options)
    kind = _kind(s)
    if kind == "object":
        props = s.get("properties")
        if isinstance(props, dict) and props:
            required = set(s.get("required") or [])
            fields = [
                f"{name}{'' if name in required else '?'}: {shape(sub, depth + 1)}"
                for name, sub in props.items()
            ]
            return "{" + ", ".join(fields) + "}"
        extra = s.get("additionalProperties")
        return "{string: " + shape(extra, depth + 1) + "}" if isinstance(extra, dict) else "object"
    if kind == "array":
        return "[" + shape(s.get("items") or {}, depth + 1) + "]"
    if isinstance(s.get("type"), list):
        return " | ".join(map(str, s["type"]))
    return kind or "any"


def _flat(schema: Any) -> dict[str, Any]:
    """One top-level parameter as the model is sent it: a plain type, its description
    holding what the backend would drop."""
    s = simplify(schema)
    kind = _kind(s)
    out: dict[str, Any] = {"type": kind} if kind else {}
    notes = [str(s.get("description") or "").strip()]  # a title is a pydantic class name
    if kind == "array" and _kind(simplify(s.get("items") or {})) in PRIMITIVES:
        out["items"] = {"type": _kind(simplify(s["items"]))}
    elif kind in ("object", "array") or kind is None:
        picture = shape(s)
        if picture not in ("object", "any"):
            notes.append(f"Shape: {_cut(picture, MAX_SHAPE)}")
    if isinstance(s.get("enum"), list) and kind in PRIMITIVES:
        out["enum"] = s["enum"]
    if "default" in s:
        notes.append(f"Default: {_cut(orjson.dumps(s['default']).decode(), 200)}.")
    out["description"] = " ".join(note for note in notes if note)
    return out


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def for_model(name: str, description: str, input_schema: Any) -> tuple[ToolSpec, str]:
    """The tool as a model is told of it (its parameters flat), and its signature."""
    resolved = simplify(resolve(input_schema if isinstance(input_schema, dict) else {}))
    props = resolved.get("properties") if isinstance(resolved.get("properties"), dict) else {}
    required = [r for r in resolved.get("required") or [] if r in props]
    properties = {key: _flat(sub) for key, sub in props.items()}
    shown = [
        f"{key}{'' if key in required else '?'}: {_cut(shape(sub), 200)}"
        for key, sub in props.items()
    ]
    text = " ".join(description.split()) or f"The MCP tool {name}."
    parameters = {"type": "object", "properties": properties, "required": required}
    spec = ToolSpec(name, _cut(text, MAX_DESCRIPTION), parameters)
    return spec, f"{name}({', '.join(shown)})"


def coerce(input_schema: Any, args: dict[str, Any]) -> dict[str, Any]:
    """Arguments with an object or list the model sent as JSON text decoded (small models
    often do); everything else as given."""
    resolved = simplify(resolve(input_schema if isinstance(input_schema, dict) else {}))
    props = resolved.get("properties") if isinstance(resolved.get("properties"), dict) else {}
    fixed = dict(args)
    for key, value in args.items():
        want = _kind(simplify(props.get(key)))
        if want in ("object", "array") and isinstance(value, str):
            try:
                decoded = orjson.loads(value)
            except orjson.JSONDecodeError:
                continue
            if isinstance(decoded, dict if want == "object" else list):
                fixed[key] = decoded
    return fixed


def problems(input_schema: Any, args: dict[str, Any], limit: int = 5) -> list[str]:
    """What is wrong with `args` under the server's own schema (empty: nothing)."""
    import jsonschema

    if not isinstance(input_schema, dict):
        return []
    try:
        cls = jsonschema.validators.validator_for(input_schema, jsonschema.Draft202012Validator)
        cls.check_schema(input_schema)
    except jsonschema.SchemaError:
        return []  # a schema we cannot read: the server judges the arguments itself
    found: list[str] = []
    for error in cls(input_schema).iter_errors(args):
        for leaf in _leaves(error):
            where = ".".join(str(part) for part in leaf.absolute_path)
            found.append(f"{where}: {leaf.message}" if where else leaf.message)
    return sorted(dict.fromkeys(found))[:limit]


def _leaves(error: Any) -> list[Any]:
    """An anyOf/oneOf error as what its branches that are not `null` wanted."""
    branches = [e for e in error.context or [] if "'null'" not in e.message]
    if not branches:
        return [error]
    return [leaf for branch in branches for leaf in _leaves(branch)]
