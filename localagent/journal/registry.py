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

from localagent.journal.codec import now_iso
from localagent.journal.files import CONTEXT_DIR
from localagent.system import fsretry, safefs
from localagent.system.errors import AgentError
from localagent.system.names import clean_text, display
from localagent.system.userdirs import user_data_dir

LOCK_WAIT = 10.0
READ_WAIT = 0.5  # `list` and `resume --all` read past a lock held longer than this


def registry_path() -> Path:
    return user_data_dir() / "workspaces.json"


def _lock(wait: float) -> FileLock:
    path = registry_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    return FileLock(str(path) + ".lock", timeout=wait)


def _busy(path: Path, wait: float) -> AgentError:
    return AgentError(
        f"the registry lock {path}.lock has been held by another process for {wait:g} s, "
        f"so this workspace is not in the registry yet (`localagent list` and `resume "
        f"--all` miss it until it runs again); if no localagent is running, find and end "
        f"the process that holds that file"
    )


def _unwritable(path: Path, exc: OSError) -> AgentError:
    return AgentError(
        f"cannot update the registry {path}: {exc.strerror or exc}, so `localagent list` "
        f"and `resume --all` miss this workspace; make {path.parent} writable (or free "
        f"space on its disk)"
    )


def _read(notes: list[str] | None = None, move_damaged: bool = True) -> dict[str, Any]:
    path = registry_path()
    try:
        data = orjson.loads(fsretry.retry(lambda: safefs.read_bytes(path)))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, safefs.UnsafeFile):
        data = None
    if not isinstance(data, dict) or not isinstance(data.get("workspaces"), dict):
        broken = path.with_name(path.name + ".broken")
        moved = False
        if move_damaged:
            with contextlib.suppress(OSError):
                fsretry.replace(path, broken)
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
    data = orjson.dumps({"workspaces": entries}, option=orjson.OPT_INDENT_2)
    fsretry.retry(lambda: safefs.write_atomic(registry_path(), data))


def remember(workspace: Path, goal: str, wait: float = LOCK_WAIT) -> None:
    """Add or update the workspace's entry; AgentError, with the fix, when the registry
    is locked by another process for `wait` seconds or cannot be written."""
    path = registry_path()
    try:
        with _lock(wait):
            entries = _read()
            entries[display(workspace)] = _entry(workspace, goal)
            _write(entries)
    except Timeout:
        raise _busy(path, wait) from None
    except OSError as exc:
        raise _unwritable(path, exc) from None


def _entry(workspace: Path, goal: str) -> dict[str, Any]:
    """The registry entry; a path that is not UTF-8 text also keeps its exact bytes, so
    `resume --all` finds the very folder again (the key is only its display form)."""
    entry: dict[str, Any] = {"goal": clean_text(goal), "updated": now_iso()}
    if display(workspace) != str(workspace):
        entry["path_bytes"] = os.fsencode(workspace).hex()
    return entry


def _real_path(key: str, entry: Any) -> str:
    raw = entry.get("path_bytes") if isinstance(entry, dict) else None
    if isinstance(raw, str):
        try:
            return os.fsdecode(bytes.fromhex(raw))
        except ValueError:
            pass
    return key


def _usable(path: str, entry: Any) -> str | None:
    """Why an entry cannot be used, or None when it can."""
    if not path or "\0" in path or not os.path.isabs(path):
        return "its path is not an absolute folder path"
    if not isinstance(entry, dict):
        return "it is not an object"
    return None


def workspaces(notes: list[str] | None = None) -> dict[str, dict[str, Any]]:
    """The registered workspaces, path -> {"goal": str, ...}; damaged entries are left
    out (with a note). A registry lock held longer than READ_WAIT is read past. Each
    path is the folder's real name (with surrogate escapes where it is not UTF-8): show
    it with `display`."""
    try:
        with _lock(READ_WAIT):
            entries = _read(notes)
    except (Timeout, OSError):
        if notes is not None:
            notes.append(
                f"the registry lock {registry_path()}.lock is held or unusable; read without it"
            )
        entries = _read(notes, move_damaged=False)
    found: dict[str, dict[str, Any]] = {}
    for key, entry in entries.items():
        path = _real_path(key, entry)
        if (why := _usable(path, entry)) is not None:
            if notes is not None:
                notes.append(f"skipped a damaged registry entry {display(path)[:200]!r}: {why}")
            continue
        goal = entry.get("goal")
        found[path] = {**entry, "goal": goal if isinstance(goal, str) else ""}
    return found


def _vanished(path: str, entry: Any) -> bool:
    """An entry `list` can show nothing for: unusable, its folder gone, or no journal
    left in it."""
    if _usable(path, entry) is not None:
        return True
    return not os.path.isdir(path) or not os.path.lexists(os.path.join(path, CONTEXT_DIR))


def prune() -> list[str]:
    """Remove the entries whose folders vanished (or hold no `.agent_context/` any
    more, or cannot be used at all); their display paths. AgentError, with the fix, when
    the registry stays locked or cannot be written."""
    path = registry_path()
    try:
        with _lock(LOCK_WAIT):
            entries = _read()
            gone = [
                key for key, entry in entries.items() if _vanished(_real_path(key, entry), entry)
            ]
            if gone:
                _write({k: v for k, v in entries.items() if k not in gone})
    except Timeout:
        raise AgentError(
            f"the registry lock {path}.lock has been held by another process for "
            f"{LOCK_WAIT:g} s, so nothing was pruned; try again in a moment"
        ) from None
    except OSError as exc:
        raise AgentError(
            f"cannot update the registry {path}: {exc.strerror or exc}, so nothing was "
            f"pruned; make {path.parent} writable (or free space on its disk)"
        ) from None
    return [display(_real_path(key, entries[key]))[:300] for key in gone]
