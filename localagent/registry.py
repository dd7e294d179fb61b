"""The per-user registry of workspaces (`list`, `resume --all`).

A small JSON file in the user data dir, guarded by a file lock so concurrent agents
never lose each other's entries. A damaged file is moved aside, never trusted; a damaged
entry is left out with a note, so one bad entry never hides the others.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

import orjson
from filelock import FileLock, Timeout

from localagent import safefs
from localagent.errors import AgentError
from localagent.journal import now_iso
from localagent.settings import user_data_dir

LOCK_WAIT = 10.0


def registry_path() -> Path:
    return user_data_dir() / "workspaces.json"


def _lock() -> FileLock:
    path = registry_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    return FileLock(str(path) + ".lock", timeout=LOCK_WAIT)


def _busy(path: Path) -> AgentError:
    return AgentError(
        f"the registry lock {path}.lock has been held by another process for "
        f"{LOCK_WAIT:g} s; try again, or remove that file if no localagent is running"
    )


def _read(notes: list[str] | None = None, move_damaged: bool = True) -> dict[str, Any]:
    path = registry_path()
    try:
        data = orjson.loads(safefs.read_bytes(path))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, safefs.UnsafeFile):
        data = None
    if not isinstance(data, dict) or not isinstance(data.get("workspaces"), dict):
        broken = path.with_name(path.name + ".broken")
        moved = False
        if move_damaged:
            with contextlib.suppress(OSError):
                safefs.replace(path, broken)
                moved = True
        if notes is not None:
            where = f"moved to {broken.name} and started afresh" if moved else "ignored"
            notes.append(
                f"the registry {path} was damaged; {where} (workspaces reappear when they "
                f"run again)"
            )
        return {}
    return data["workspaces"]


def _write(entries: dict[str, Any]) -> None:
    safefs.write_atomic(
        registry_path(), orjson.dumps({"workspaces": entries}, option=orjson.OPT_INDENT_2)
    )


def remember(workspace: Path, goal: str) -> None:
    lock = _lock()
    try:
        with lock:
            entries = _read()
            entries[str(workspace)] = {"goal": goal, "updated": now_iso()}
            _write(entries)
    except Timeout:
        raise _busy(registry_path()) from None


def _usable(path: str, entry: Any) -> str | None:
    """Why an entry cannot be used, or None when it can."""
    if not path or "\0" in path or not os.path.isabs(path):
        return "its path is not an absolute folder path"
    if not isinstance(entry, dict):
        return "it is not an object"
    return None


def workspaces(notes: list[str] | None = None) -> dict[str, dict[str, Any]]:
    """The registered workspaces, path -> {"goal": str, ...}; damaged entries are left
    out (with a note). A registry lock held too long is read past, never waited on."""
    try:
        with _lock():
            entries = _read(notes)
    except Timeout:
        entries = _read(notes, move_damaged=False)
    found: dict[str, dict[str, Any]] = {}
    for path, entry in entries.items():
        if (why := _usable(path, entry)) is not None:
            if notes is not None:
                notes.append(f"skipped a damaged registry entry {path[:200]!r}: {why}")
            continue
        goal = entry.get("goal")
        found[path] = {**entry, "goal": goal if isinstance(goal, str) else ""}
    return found
