"""Snapshots written by older versions, brought to the current schema."""

from __future__ import annotations

from typing import Any

from localagent.state.model import SCHEMA_VERSION


def _v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    """Guard attempts became objects; calls gained ids (a v1 snapshot has none to settle)."""
    guard = data.get("guard") or {}
    guard["window"] = [
        {"sig": item[0], "epoch": item[1]} if isinstance(item, list | tuple) else item
        for item in guard.get("window", [])
    ]
    data["guard"] = guard
    for exchange in data.get("exchanges", []):
        for i, call in enumerate(exchange.get("tool_calls", [])):
            call.setdefault("id", f"{exchange.get('round', 0)}.{i + 1}")
        done = len(exchange.get("results", []))
        exchange["settled"] = [c["id"] for c in exchange.get("tool_calls", [])[:done]]
    return data


def _v2_to_v3(data: dict[str, Any]) -> dict[str, Any]:
    """Each call's result names it: a v2 result without a call id answered the settled
    call at its position; a settled call without a result was skipped."""
    for exchange in data.get("exchanges", []):
        settled = [str(i) for i in exchange.get("settled", [])]
        answered = {r["call"] for r in exchange.get("results", []) if r.get("call")}
        unanswered = [i for i in settled if i not in answered]
        for result in exchange.get("results", []):
            if not result.get("call") and unanswered and result.get("tool") != "format":
                result["call"] = unanswered.pop(0)
        names = {str(c.get("id")): str(c.get("name", "")) for c in exchange.get("tool_calls", [])}
        exchange.setdefault("results", []).extend(
            {"tool": names.get(i, ""), "content": "", "call": i, "status": "skipped"}
            for i in unanswered
        )
    return data


# Append-only: MIGRATIONS[n] turns a schema-n snapshot dict into schema n+1.
MIGRATIONS: list[Any] = [lambda data: data, _v1_to_v2, _v2_to_v3]


def migrate(data: Any) -> dict[str, Any]:
    """A snapshot brought to the current schema; ValueError if it is not one at all."""
    if not isinstance(data, dict):
        raise ValueError(f"a snapshot is a JSON object, not {type(data).__name__}")
    version = data.get("schema_version", 0)
    if isinstance(version, bool) or not isinstance(version, int) or version < 0:
        raise ValueError(f"schema_version {version!r} is not a version number")
    if version > SCHEMA_VERSION:
        raise ValueError(
            f"schema_version {version} is newer than this localagent understands ({SCHEMA_VERSION})"
        )
    for step in MIGRATIONS[version:SCHEMA_VERSION]:
        data = step(data)
    data["schema_version"] = SCHEMA_VERSION
    return data
