"""A call made as the active step says, where the model's call says it otherwise.

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

So for a write of a file that only holds functions the step or the goal names and the
file does not define ("write_file shapes.py to move the formulas into a function
area(kind, size)": `def area(kind, size): ...` alone, refused three times on the CPU for
dropping what the tests import): they are added above the file's first function, the
rest kept (`as_merged_write`). A write of some of the file's own functions, and
not all, changes those where they stand. A function no one named (`def stats(): ...` written over
stats.py without reading it) is still refused, and the refusal shows the file.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

from localagent.state import State, current
from localagent.system import safefs
from localagent.system.textcap import listed
from localagent.textcalls.base import given_arguments
from localagent.tools import pywrite
from localagent.tools.mends import mend_note, nested
from localagent.tools.pkgimports import lost_users
from localagent.verify.named import missing, named_functions

MAX_BYTES = 200_000
_ADD = re.compile(r"after the line `(?P<kept>[^`]+)` add the line `(?P<added>[^`]+)`")
_CHANGE = re.compile(r"change `(?P<line>[^`]+)` right after `(?P<kept>[^`]+)` to `(?P<new>[^`]+)`")
_IDENTIFIER = re.compile(r"([A-Za-z_]\w*)")
_CALL = re.compile(r"([A-Za-z_]\w*)\s*\([^()]*\)")
_HEADER = re.compile(r"(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\([^()]*\)\s*(?:->[^:]+)?:")


def as_said(state: State, root: Path, name: str, args: dict[str, Any]) -> tuple[dict, str] | None:
    """The arguments the call runs with instead, and the note that says why; None to run it
    as it was sent."""
    return (
        as_added(state, root, name, args)
        or as_merged_write(state, root, name, args)
        or renamed(state, root, name, args)
    )


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
    lines = [t for t in _text(root, path).splitlines() if t.strip() == line]
    if len(lines) != 1:
        return None
    return lines[0][: len(lines[0]) - len(lines[0].lstrip())]


def as_merged_write(
    state: State, root: Path, name: str, args: dict[str, Any]
) -> tuple[dict, str] | None:
    """For a write_file call whose content is only functions (or classes) that stand for
    some of a Python file's own but not all, or that the active step or the goal names
    (`verify.named`: `area(kind, size)`) and the file does not define, over a file whose
    names other files import or whose other functions the content calls: the arguments
    that write the file with its own replaced where they stand and the new ones added
    above its first function, and the note that says so; None for any other call (it
    runs as it was sent)."""
    here = current(state)
    given = given_arguments(args)
    if name != "write_file" or here is None or not isinstance(given, dict):
        return None
    path, content = given.get("path"), given.get("content")
    if not isinstance(path, str) or not isinstance(content, str) or not path.endswith(".py"):
        return None
    source = _text(root, path)
    made = pywrite.merged(source, content) if source else None
    fixes = ""
    if made is None and source and (fixed := pywrite.mended(content, path)):
        # The 1.5B's write of report alone sent its `'\n'` as a line break in the JSON:
        # not parsed, it was taken as shapes.py whole and refused until blocked (the CPU).
        content = fixed[-1][2]
        made = pywrite.merged(source, content)
        fixes = "".join(mend_note(line, new) for line, new, _ in fixed)
    if made is None or nested.lifted(root, path, content) is not None:
        return None  # functions written inside another: the write's own mend lifts them
    text, replaced, added, above = made
    said = " ".join([here[1].description, state.goal.text if state.goal else ""])
    if not set(added) <= set(named_functions(said)):
        return None
    had = pywrite.defined(source)
    kept = [n for n in had if n not in replaced]
    # Written whole, it would drop what other files import, or what the content calls
    # itself: the 1.5B's `def total_area(shapes): return area(shapes)` and two more, with
    # no `def area`, was written whole over shapes.py, area lost (the CPU).
    users = lost_users(root, path, had, replaced + added)
    # Or a function the step or the goal names: asked to write total_area alone, calling
    # area, the 1.5B wrote total_area, largest and report as they were, and area was lost
    # with the file's docstring (the CPU).
    if not users and not set(kept) & (_called(content) | set(named_functions(said))):
        return None
    shown = listed(kept)
    if not replaced:
        note = (
            f"(made as an addition: {', '.join(added)} went above {above}, and "
            f"{users or 'the rest of ' + path}, stay as they were; change them next so that "
            f"they use {added[0]})"
        )
    else:
        note = (
            f"(made as a change of {listed(replaced)} where {_them(replaced)} stood in "
            f"{path}"
            + (f", with {', '.join(added)} added above {above}" if added else "")
            + f"; {shown} {'stays as it was' if len(kept) == 1 else 'stay as they were'})"
        )
    return {**given, "content": text}, f"{note[:-1]}{fixes})"


def _called(content: str) -> set[str]:
    """The names Python content calls by name."""
    try:
        tree = ast.parse(content)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    return {
        n.func.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
    }


def _them(names: list[str]) -> str:
    return "it" if len(names) == 1 else "they"


def renamed(state: State, root: Path, name: str, args: dict[str, Any]) -> tuple[dict, str] | None:
    """For a replace_in_file call of one name or one `def` line for another (or for the
    same), which the edit refuses, while a function the step or the goal names is defined
    nowhere yet: the call as it was sent, and the note that says how to add that function
    (`as_merged_write` makes that write). Qwen2.5-Coder-1.5B, asked to move shapes.py's
    formulas into one function area(kind, size), renamed total_area, largest and report in
    turn (in other runs with `"new": "area(kind, size)"`, or `"old": "def
    total_area(shapes):", "new": "def area(kind, size):"`, and `def area(kind, size):`
    for itself), each refused and then blocked, for 19 rounds (the CPU); told only to
    keep those names."""
    here = current(state)
    given = given_arguments(args)
    if name != "replace_in_file" or here is None or not isinstance(given, dict):
        return None
    old, new, path = given.get("old"), given.get("new"), given.get("path")
    if not all(isinstance(x, str) for x in (old, new, path)) or not path.endswith(".py"):
        return None
    was, now = _one_name(old), _one_name(new)
    if was is None or now is None:
        return None
    source = _text(root, path)
    had = pywrite.defined(source)
    same = old.strip() == new.strip() and old not in source
    if not had or not (same or (was in had and lost_users(root, path, had, [*set(had) - {was}]))):
        return None
    said = " ".join([here[1].description, state.goal.text if state.goal else ""])
    wanted = missing(said, root)
    if not wanted:
        return None
    header = header_of(wanted[0], said)
    note = (
        f"NOTE: {wanted[0]}, which the {'step' if wanted[0] in here[1].description else 'goal'}"
        f" names, is defined nowhere yet, and this edit does not add it. Add it first: "
        f"write_file {path} with only `def {header}:` and its code as the content; it goes "
        f"above {had[0]}, and the rest of {path} stays."
    )
    return given, note


def header_of(name: str, text: str) -> str:
    """The function as the text writes it with its parameters (`area(kind, size)`), else
    `name(...)`."""
    shown = re.search(rf"\b{re.escape(name)}\s*\([^()]*\)", text)
    return shown[0] if shown else f"{name}(...)"


def _one_name(text: str) -> str | None:
    """The name a text of one name (`total_area`), one name with its parameters
    (`area(kind, size)`) or one `def` line (`def area(kind, size):`) holds; None for
    anything else."""
    text = text.strip()
    found = _IDENTIFIER.fullmatch(text) or _HEADER.fullmatch(text) or _CALL.fullmatch(text)
    return found[1] if found else None


def _text(root: Path, path: str) -> str:
    """The text of a workspace file ("" when it cannot be read)."""
    try:
        data = safefs.read_inside(root, root / path, MAX_BYTES)
    except (OSError, safefs.UnsafeFile):
        return ""
    return data.decode("utf-8", "replace")
