"""Where a file a goal or a subtask names is in the workspace.

Models and users name files loosely: a goal says `utils.py` for `pkg/utils.py`. A name
is its exact path when that exists, else the one file whose path ends with it; none or
several such files and the name is missing (a guess between two would be a lie).
"""

from __future__ import annotations

import os
from pathlib import Path

SKIPPED_DIRS = frozenset(
    {".agent_context", ".git", ".venv", "venv", "env", "node_modules", "__pycache__", "build"}
)
SCAN_LIMIT = 5000  # files looked at, at most, so a huge workspace costs little


def locate(root: Path, name: str) -> str | None:
    """The workspace path (relative, '/' separators) `name` stands for, or None."""
    try:
        if (root / name).is_file():
            return name
    except (OSError, ValueError):  # a name too long for the file system, say
        return None
    tail = "/" + name.strip("/")
    found: list[str] = []
    seen = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.startswith("."))
        where = Path(folder).relative_to(root).as_posix()
        for file in files:
            seen += 1
            path = file if where == "." else f"{where}/{file}"
            if ("/" + path).endswith(tail):
                found.append(path)
        if len(found) > 1 or seen > SCAN_LIMIT:
            return None
    return found[0] if found else None


def is_folder(root: Path, name: str) -> bool:
    try:
        return (root / name).is_dir()
    except (OSError, ValueError):
        return False
