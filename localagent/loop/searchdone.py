"""A search subtask ends with its search.

Qwen2.5-Coder-1.5B's refactor plan on the CPU had the step "search_files shapes.py to
find the area formulas". It searched shapes.py for "area formulas" (no matches), searched
again, and the third search was blocked; three blocks failed the subtask, and the replan
gave the step back, searched for "area" (4 matches) twice and blocked again, through two
more replans: 12 of its 20 rounds. For a subtask that only says to search one named file
(`subtasks.search_of`), the search is the work, whatever it finds: in the small-model
profile its first search of that file (or of a folder holding it) ends the subtask,
through the normal `subtask_completed` record (`by: "search"`), owed by the search's
`action_finished`, so a crash between the two still ends it on resume.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localagent.loop import writedone
from localagent.loop.subtasks import search_of
from localagent.prompts.promptset import PromptSet
from localagent.state import State, current
from localagent.state.checkruns import norm
from localagent.textcalls import arguments_object

# search_files's closing count: "no matches for 'x' (...)", "4 matches in 1 file (...)".
_SUMMARY = re.compile(r"^(?:no matches for .+|\d+ match(?:es)? in \d+ files? \(.+)$", re.M)


@dataclass(frozen=True)
class Finished:
    """A search that ends its subtask: the file, and why."""

    path: str
    reason: str

    def owed(self) -> dict[str, str]:
        return {"by": "search", "path": self.path, "reason": self.reason}


def finished(
    state: State, facts: dict[str, list[str]], text: str, small: bool, prompts: PromptSet
) -> Finished | None:
    """Whether the call with these `facts` and result `text`, just run, ends the active
    search subtask."""
    here = current(state)
    target = search_of(here[1].description) if here is not None and small else ""
    for path in map(norm, facts.get("searched", []) if target else []):
        if _covers(path, target):
            counts = _SUMMARY.findall(text)
            summary = counts[-1] if counts else "done"
            return Finished(target, prompts.render("done_by_search", path=target, summary=summary))
    return None


def asked(state: State, name: str, args: Any) -> bool:
    """Whether a call is a search of the file the active search subtask names. The loop
    guard lets it through: it ends the subtask at once, so it cannot loop (the same reason
    as `readdone.asked`: a replan gives the step back while the searches before it are
    still counted)."""
    here = current(state)
    target = search_of(here[1].description) if here is not None else ""
    given = arguments_object(args) if name == "search_files" else {}
    path = given.get("path", ".")
    return bool(target and given) and isinstance(path, str) and _covers(norm(path), target)


def _covers(searched: str, target: str) -> bool:
    return searched in (target, ".", "") or target.startswith(searched.rstrip("/") + "/")


def note(state: State, done: Finished, prompts: PromptSet) -> str:
    """What the search's observation adds: the subtask is complete, and what comes next."""
    return writedone.completes(state, "search_completes", done.reason, prompts)


def completion(state: State, root: Path, owed: dict[str, Any]) -> dict[str, Any]:
    """The `subtask_completed` record's fields for a completion a search owes: the
    search itself (the latest action) is its evidence."""
    searches = [a.seq for a in state.recent_actions if a.tool == "search_files"]
    return writedone.completed(state, root, owed, "search", searches[-1] if searches else None)
