"""`pattern` in an answer's JSON schema: sent while the server takes it.

llama.cpp (llama-server, and Ollama, which hands the schema to it) turns an anchored
`pattern` into grammar, so a small model cannot begin a tool call inside a plan's string.
A server that refuses the keyword gets the same schema without it, for the rest of the
run; what the model writes is checked after it comes all the same.
"""

from __future__ import annotations

from typing import Any


def has_patterns(schema: Any) -> bool:
    if isinstance(schema, dict):
        if isinstance(schema.get("pattern"), str):
            return True
        return any(has_patterns(value) for value in schema.values())
    if isinstance(schema, list):
        return any(has_patterns(value) for value in schema)
    return False


def without_patterns(schema: Any) -> Any:
    """A copy of `schema` with every string's `pattern` left out."""
    if isinstance(schema, dict):
        return {
            key: without_patterns(value)
            for key, value in schema.items()
            if not (key == "pattern" and isinstance(value, str))
        }
    if isinstance(schema, list):
        return [without_patterns(value) for value in schema]
    return schema
