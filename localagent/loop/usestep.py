"""The hand-back's write of a file whole, its functions changed to call the function it
added (`addback`), ends its step only when they call it. Asked for shapes.py whole with
total_area, largest and report calling area, Qwen2.5-Coder-1.5B wrote them as they were
(the CPU); the write ended the step, the tests passed as they did before any change, and
only the verdict found area unused, a replan later."""

from __future__ import annotations

import re
from pathlib import Path

from localagent.loop.subtasks import edited_file, written_file
from localagent.prompts.promptset import PromptSet
from localagent.state import State, current
from localagent.state.checkruns import norm
from localagent.system.textcap import listed
from localagent.tools import pycalls, pywrite
from localagent.tools.pkgimports import text_of, tree_of
from localagent.verify.named import named_functions, said_where

# The step as `prompts.feedback.HANDBACK_USE` words it (a prompt set that words it
# otherwise has no such check).
_STEP = re.compile(
    r"write_file (?P<path>\S+) whole: (?P<name>\w+) as it is, and (?P<users>.+?) changed so "
    r"that they call (?P=name)\b"
)
# `HANDBACK_USE_EACH`: the first function alone, then the rest the same way.
_EACH = re.compile(
    r"write_file (?P<path>\S+) with only `def (?P<first>\w+)\([^`]*\):` and its code changed "
    r"to call (?P<name>\w+) as the content \(it takes the place of the one \S+ has, and the "
    r"rest of \S+ stays\); then (?P<users>.+?) the same way, one at a time"
)
_ALL = "the functions of "


def asked(step: str) -> tuple[str, str, list[str]] | None:
    """(the file, the function, the functions to call it: [] for all of the file's) for
    such a step; None for any other."""
    found = _STEP.match(step) or _EACH.match(step)
    if found is None:
        return None
    users = found["users"]
    names = [] if users.startswith(_ALL) else re.split(r",\s*|\s+and\s+", users)
    first = [found["first"]] if "first" in found.re.groupindex else []
    return found["path"], found["name"], [n for n in first + names if n.isidentifier()]


def not_calling(root: Path, path: str, name: str, users: list[str]) -> list[str]:
    """The functions of the Python file at `path` (those in `users`, or all but `name`)
    whose code calls no `name`, all of them when it no longer defines `name`; [] when it
    cannot be read or parsed."""
    tree = tree_of(text_of(root, path))
    if tree is None:
        return []
    if name not in (functions := pycalls.functions(tree)):
        return [u for u in users if u in functions] if users else list(functions)
    return pycalls.not_calling(tree, name, users)


# A plan's write step that says its file's code is to call a function: "write_file
# shapes.py to add the new function area(kind, size), and replace_in_file shapes.py to
# replace the repeated area formulas with calls to area(kind, size)" (the 1.5B's refactor
# plan on the CPU, verbatim): its write of area alone ended it, and so did the same step
# the verdict's replan gave back, until the round limit.
# Or: "... to replace the area formulas with the area function" (the same plan's step in
# another run, ended the same way).
_USES = re.compile(
    r"\b(?:calls?\s+to|call|calling|use|uses|using|replace\s+[^,;]+?\s+with)\s+"
    r"(?:calls?\s+to\s+)?(?:the\s+)?(?:new\s+)?(?:function\s+)?`?([A-Za-z_]\w*)\b"
)


def said(step: str, goal: str, root: Path, later: str = "") -> tuple[str, str, list[str]] | None:
    """For a write or edit step of one Python file that says to call or use one of its
    functions, or that names one the goal says where to use ("move them into one function
    area(kind, size)", the goal's "and use it in all three"): (the file, the function, the
    file's other functions that the step or the goal names); None for any other step, or
    when they name none. The 1.5B's edit step of that wording was ended by its edit that
    added area, the three unchanged, in three CPU runs; only the verdict found area unused.
    A step whose function a `later` step of the plan names too is not held to the goal's
    use of it: that later step is (the hand-back's write of area alone, then of each of
    its callers)."""
    path = written_file(step) or edited_file(step)
    if not path.endswith(".py"):
        return None
    tree = tree_of(text_of(root, path))
    if tree is None:
        return None
    by_goal = False
    if (found := _USES.search(step)) is not None:
        name = found[1]
    else:
        wanted = (
            n
            for n in named_functions(goal)
            if re.search(rf"\b{n}\b", step) and not re.search(rf"\b{n}\b", later)
        )
        name = next((n for n in wanted if said_where(goal, n)), "")
        by_goal = bool(name)  # held to it even where the file no longer defines it
    text = f"{step}\n{goal}"
    functions = list(pycalls.functions(tree))
    users = [f for f in functions if f != name and re.search(rf"\b{re.escape(f)}\b", text)]
    return (path, name, users) if (name in functions or by_goal) and users else None


def unmet(state: State, root: Path, facts: dict[str, list[str]]) -> tuple[str, str, list[str]]:
    """For a write, in such a step, of its file: (the file, the function, those that do
    not call it yet); ("", "", []) when it is no such write or they all call it."""
    here = current(state)
    if here is None:
        return "", "", []
    goal = state.goal.text if state.goal is not None else ""
    tasks = state.goal.tasks if state.goal is not None else []
    later = "\n".join(s.description for t in tasks for s in t.subtasks if s.status == "pending")
    step = asked(here[1].description) or said(here[1].description, goal, root, later)
    if step is None:
        return "", "", []
    path, name, users = step
    if path not in map(norm, facts.get("wrote", []) + facts.get("unchanged", [])):
        return "", "", []
    return path, name, not_calling(root, path, name, users)


def note(state: State, root: Path, facts: dict[str, list[str]], prompts: PromptSet) -> str:
    """What such a write's result adds while they do not call it: "" when they do."""
    path, name, missing = unmet(state, root, facts)
    if not missing:
        return ""
    users = listed(missing)
    source = text_of(root, path)
    if (tree := tree_of(source)) is not None and name not in pycalls.functions(tree):
        # The 1.5B's edit put total_area's old code where it had just written area (the
        # CPU): area was gone, the tests passed as before any change, and the step ended.
        goal = state.goal.text if state.goal is not None else ""
        given = re.search(rf"\b{re.escape(name)}\([^()]*\)", goal)
        header = f"def {given[0] if given else name + '(...)'}"
        return prompts.render("use_lost", path=path, name=name, users=users, header=header)
    verb = "does" if len(missing) == 1 else "do"
    header = pywrite.header(source, missing[0])
    return prompts.render("use_unmet", path=path, name=name, users=users, verb=verb, header=header)
