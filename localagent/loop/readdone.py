"""A read subtask ends with its read.

For "fix the bug in stats.py", Qwen2.5-Coder-1.5B's plan began with the subtask
"read_file stats.py" (the small plan prompt's own example). It read the file, never
called mark_subtask_complete, read it again, and the third read was blocked; three
blocks failed the subtask, and the replan gave the same read back: in 9 of 12 runs.
For a subtask that only says to read one named file (`subtasks.read_file_of`), the
read is the work: in the small-model profile its first successful read ends it, through
the normal `subtask_completed` record (`by: "read"`), owed by the read's
`action_finished`, so a crash between the two still ends it on resume.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localagent.loop import writedone
from localagent.loop.subtasks import read_file_of
from localagent.prompts.promptset import PromptSet
from localagent.state import State, current
from localagent.state.checkruns import norm
from localagent.textcalls import arguments_object


@dataclass(frozen=True)
class Finished:
    """A read that ends its subtask: the file, and why."""

    path: str
    reason: str

    def owed(self) -> dict[str, str]:
        return {"by": "read", "path": self.path, "reason": self.reason}


def finished(
    state: State, facts: dict[str, list[str]], small: bool, prompts: PromptSet
) -> Finished | None:
    """Whether the call with these `facts`, just run, ends the active read subtask."""
    here = current(state)
    target = read_file_of(here[1].description) if here is not None and small else ""
    for path in map(norm, facts.get("read", []) if target else []):
        if path == target or path.endswith("/" + target):
            return Finished(path, prompts.render("done_by_read", path=path))
    return None


def asked(state: State, name: str, args: Any) -> bool:
    """Whether a call is the read the active read subtask asks for, of its file. The loop
    guard lets it through: its read ends the subtask at once, so it cannot loop, and the
    reads before it are out of the window (a replan starts the window anew). After a
    replan gave back "read_file stats.py", Qwen2.5-Coder-1.5B's read of it was blocked,
    "already run 2 times since the workspace last changed", for 3-6 rounds, in 7 of 12
    fixtest and refactor runs (the H200)."""
    here = current(state)
    target = read_file_of(here[1].description) if here is not None else ""
    given = arguments_object(args) if name == "read_file" else {}
    path = given.get("path")
    return bool(target) and isinstance(path, str) and norm(path) == target


def note(state: State, done: Finished, prompts: PromptSet) -> str:
    """What the read's observation adds: the subtask is complete, and what comes next."""
    return writedone.completes(state, "read_completes", done.reason, prompts)


def completion(state: State, root: Path, owed: dict[str, Any]) -> dict[str, Any]:
    """The `subtask_completed` record's fields for a completion a read owes."""
    seq = state.ledger.seen.get(str(owed.get("path", "")))
    return writedone.completed(state, root, owed, "read", seq)
