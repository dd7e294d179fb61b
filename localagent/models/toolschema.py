"""A tool's parameters as a backend sends them: flat.

Ollama's client drops `anyOf`, `$ref`, nested `properties`, `default` and similar keywords
from tool schemas, and many models read only a parameter's type and description. So each
top-level parameter is sent as a plain type, and what a backend would drop (the shape of
a nested object or list, a default) is written into its description, where the model
still sees it. A `ToolSpec` keeps its full (resolved) schema; only the wire is flat.
"""

from __future__ import annotations

from typing import Any

import orjson

MAX_SHAPE = 600  # characters of one parameter's shape in its description
PRIMITIVES = ("string", "integer", "number", "boolean")


def flat_parameters(schema: dict[str, Any]) -> dict[str, Any]:
    """A resolved object schema as a backend sends it: each property one flat parameter,
    its `type` absent when it has no one JSON type (e.g. `str | int`)."""
    resolved = simplify(schema)
    props = resolved.get("properties") if isinstance(resolved.get("properties"), dict) else {}
    required = [r for r in resolved.get("required") or [] if r in props]
    properties = {key: _flat(sub) for key, sub in props.items()}
    return {"type": "object", "properties": properties, "required": required}


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


def kind(schema: dict[str, Any]) -> str | None:
    """The one JSON type a simplified schema has (object or array when it only says
    `properties` or `items`), or None."""
    found = schema.get("type")
    if isinstance(found, str):
        return found
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
    found = kind(s)
    if found == "object":
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
    if found == "array":
        return "[" + shape(s.get("items") or {}, depth + 1) + "]"
    if isinstance(s.get("type"), list):
        return " | ".join(map(str, s["type"]))
    return found or "any"


def _flat(schema: Any) -> dict[str, Any]:
    """One top-level parameter as the model is sent it: a plain type, its description
    holding what the backend would drop."""
    s = simplify(schema)
    found = kind(s)
    out: dict[str, Any] = {"type": found} if found else {}
    notes = [str(s.get("description") or "").strip()]  # a title is a pydantic class name
    if found == "array" and kind(simplify(s.get("items") or {})) in PRIMITIVES:
        out["items"] = {"type": kind(simplify(s["items"]))}
    elif found in ("object", "array") or found is None:
        picture = shape(s)
        if picture not in ("object", "any"):
            notes.append(f"Shape: {cut(picture, MAX_SHAPE)}")
    if isinstance(s.get("enum"), list) and found in PRIMITIVES:
        out["enum"] = s["enum"]
    if "default" in s:
        notes.append(f"Default: {cut(orjson.dumps(s['default']).decode(), 200)}.")
    out["description"] = " ".join(note for note in notes if note)
    return out


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
