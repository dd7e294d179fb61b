"""An edit that the active step spells out, made as the step says.

The hand-back for a script that exits with the wrong status names its one line
(`verify/statusfix`): "replace_in_file greet.py so that, without arguments, it exits with
status 2: after the line `print('Usage: python greet.py NAME')` add the line `raise
SystemExit(2)`". Qwen2.5-Coder-1.5B sent `{"old": "print('Usage: python greet.py
NAME')", "new": "raise SystemExit(2)"}`: the usage message was gone, the run printed
nothing, and the model's replans never got it back (greet on the CPU, 20 rounds, failed).
A call that replaces the line the step says to keep with the line it says to add is made
as the addition (with the step "change `sys.exit(1)` right after `print(...)` to
`sys.exit(2)`", as that change), and its result says so; any other call runs as it was
sent.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from localagent.state import State, current
from localagent.system import safefs
from localagent.textcalls.base import given_arguments

MAX_BYTES = 200_000
_ADD = re.compile(r"after the line `(?P<kept>[^`]+)` add the line `(?P<added>[^`]+)`")
_CHANGE = re.compile(r"change `(?P<line>[^`]+)` right after `(?P<kept>[^`]+)` to `(?P<new>[^`]+)`")


def as_added(state: State, root: Path, name: str, args: dict[str, Any]) -> tuple[dict, str] | None:
    """For a replace_in_file call that puts the line the active step says to add in place
    of the line it says to keep, the arguments that add it after that line, and the note
    that says so; None for any other call."""
    here = current(state)
    given = given_arguments(args)
    if name != "replace_in_file" or here is None or not isinstance(given, dict):
        return None
    old, new, path = given.get("old"), given.get("new"), given.get("path")
    if not all(isinstance(x, str) for x in (old, new, path)):
        return None
    step = here[1].description
    if (changed := _CHANGE.search(step)) is not None:  # the line after it, changed
        if old.strip() != changed["kept"] or new.strip() != changed["new"]:
            return None
        said = (
            f"(made on `{changed['line']}`: the step says to change it, and `{old.strip()}` stays)"
        )
        return {**given, "old": changed["line"], "new": changed["new"]}, said
    found = _ADD.search(step)
    if found is None:
        return None
    kept, added = found["kept"], found["added"]
    if old.strip() != kept or new.strip() != added:
        return None
    indent = _indent(root, path, kept)
    if indent is None:
        return None
    said = f"(made as an addition: the step says to add `{added}` after `{kept}`, which stays)"
    return {**given, "old": old, "new": f"{old.rstrip()}\n{indent}{added}"}, said


def _indent(root: Path, path: str, line: str) -> str | None:
    """The indentation of the one line of the file that holds `line`; None when the file
    cannot be read or holds it other than once."""
    try:
        data = safefs.read_inside(root, root / path, MAX_BYTES)
    except (OSError, safefs.UnsafeFile):
        return None
    lines = [t for t in data.decode("utf-8", "replace").splitlines() if t.strip() == line]
    if len(lines) != 1:
        return None
    return lines[0][: len(lines[0]) - len(lines[0].lstrip())]
