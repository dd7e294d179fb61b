"""The per-user registry of workspaces (`list`, `resume --all`).

A small JSON file in the user data dir, guarded by a file lock so concurrent agents
never lose each other's entries. A damaged file is moved aside, never trusted.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
from filelock import FileLock

from localagent.journal import now_iso
from localagent.settings import user_data_dir


def registry_path() -> Path:
    return user_data_dir() / "workspaces.json"


def _lock() -> FileLock:
    path = registry_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    return FileLock(str(path) + ".lock", timeout=10)


def _read(notes: list[str] | None = None) -> dict[str, Any]:
    path = registry_path()
    try:
        data = orjson.loads(path.read_bytes())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError):
        data = None
    if not isinstance(data, dict) or not isinstance(data.get("workspaces"), dict):
        broken = path.with_name(path.name + ".broken")
        os.replace(path, broken)
        if notes is not None:
            notes.append(
                f"the registry {path} was damaged; moved to {broken.name} and "
                f"started afresh (workspaces reappear when they run again)"
            )
        return {}
    return data["workspaces"]


def _write(entries: dict[str, Any]) -> None:
    path = registry_path()
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(orjson.dumps({"workspaces": entries}, option=orjson.OPT_INDENT_2))
    os.replace(tmp, path)


def remember(workspace: Path, goal: str) -> None:
    with _lock():
        entries = _read()
        entries[str(workspace)] = {"goal": goal, "updated": now_iso()}
        _write(entries)


def workspaces(notes: list[str] | None = None) -> dict[str, Any]:
    with _lock():
        return _read(notes)
