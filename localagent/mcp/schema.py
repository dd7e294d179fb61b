"""MCP tool schemas made into our own `ToolSpec`, and arguments checked against the
original.

Each schema is resolved (`$ref` replaced by its target) and its nullable unions collapsed
to their type; the backends send it flat (`models.toolschema`). The model's arguments are
validated against the server's original schema.

A `$ref` is expanded at every place that names it, so a definition shared by many
places, each naming others, grows exponentially: the expansion is counted, and one past
MAX_VALUES values or MAX_NESTING levels is refused (SchemaTooLarge) before it is built.
"""

from __future__ import annotations

from typing import Any

import orjson

from localagent.models.protocol import ToolSpec
from localagent.models.toolschema import cut, kind, shape, simplify

MAX_REF_DEPTH = 8  # a recursive schema is cut here
MAX_VALUES = 20_000  # of a schema with its references expanded: real tools have hundreds
MAX_NESTING = 64  # levels of objects and lists
MAX_DESCRIPTION = 1200  # characters of a tool's own description


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


def for_model(name: str, description: str, input_schema: Any) -> tuple[ToolSpec, str]:
    """The tool as a model is told of it (its schema resolved), and its signature;
    SchemaTooLarge for one past the bounds."""
    resolved = simplify(resolve(input_schema if isinstance(input_schema, dict) else {}))
    props = resolved.get("properties") if isinstance(resolved.get("properties"), dict) else {}
    required = set(resolved.get("required") or [])
    shown = [
        f"{key}{'' if key in required else '?'}: {cut(shape(sub), 200)}"
        for key, sub in props.items()
    ]
    text = " ".join(description.split()) or f"The MCP tool {name}."
    spec = ToolSpec(name, cut(text, MAX_DESCRIPTION), resolved)
    return spec, f"{name}({', '.join(shown)})"


def coerce(input_schema: Any, args: dict[str, Any]) -> dict[str, Any]:
    """Arguments with an object or list the model sent as JSON text decoded (small models
    often do); everything else as given."""
    resolved = simplify(resolve(input_schema if isinstance(input_schema, dict) else {}))
    props = resolved.get("properties") if isinstance(resolved.get("properties"), dict) else {}
    fixed = dict(args)
    for key, value in args.items():
        want = kind(simplify(props.get(key)))
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
