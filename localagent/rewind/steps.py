"""The journal read as steps that changed files: the agent's (a `changes` record, for the
action or goal check it names), changes made outside the agent (found by a `snapshot`
record), and rewinds (`rewound`). A step is `at` the seq of what made the change: the
action's `action_started` (or `check_started`) for the agent's, its own record otherwise.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from localagent.system.errors import UsageError


@dataclass
class Step:
    seq: int  # the record naming the files
    at: int  # the step: what made the change
    kind: str  # "agent", "outside" or "rewind"
    tool: str
    round: int
    what: str  # the command or path it was given
    files: list[list[Any]]  # [path, id before, id after]
    undone_by: int | None = None  # the rewind that undid it


@dataclass
class Timeline:
    steps: list[Step] = field(default_factory=list)
    rounds: int = 0
    goal: bool = False


def _what(tool: str, args: Any) -> str:
    if not isinstance(args, dict):
        return ""
    for key in ("cmd", "path", "src", "agent"):
        if isinstance(args.get(key), str):
            extra = (
                f" -> {args['dst']}" if key == "src" and isinstance(args.get("dst"), str) else ""
            )
            return args[key][:200] + extra
    return ""


def timeline(records: Iterable[dict[str, Any]]) -> Timeline:
    """The steps of the workspace's goal, in journal order."""
    line = Timeline()
    started: dict[int, str] = {}
    for rec in records:
        kind, seq = rec.get("type"), rec.get("seq", 0)
        if kind == "goal_started":
            line = Timeline(goal=True)
            started.clear()
        elif kind == "llm_call" and rec.get("purpose") == "round":
            line.rounds += 1
        elif kind == "action_started":
            started[seq] = _what(str(rec.get("tool")), rec.get("args"))
        elif kind == "check_started":
            started[seq] = str(rec.get("cmd", ""))[:200]
        elif kind == "changes" and rec.get("files"):
            at = rec["action"]
            step = Step(
                seq, at, "agent", rec["tool"], rec["round"], started.get(at, ""), rec["files"]
            )
            line.steps.append(step)
        elif kind == "snapshot" and rec.get("files"):
            step = Step(seq, seq, "outside", "", rec["round"], "", rec["files"])
            line.steps.append(step)
        elif kind == "rewound":
            step = Step(seq, seq, "rewind", "rewind", line.rounds, f"to s{rec['to']}", rec["files"])
            line.steps.append(step)
            for earlier in line.steps:
                if earlier.undone_by is None and rec["to"] <= earlier.at < seq:
                    earlier.undone_by = seq
    return line


def boundary(line: Timeline, to: str | None, last: bool) -> int:
    """The seq a rewind goes back to just before: `--last` (the latest step of the agent
    not undone yet), `--to N` (round N's first change) or `--to sN` (step N)."""
    agent = [s for s in line.steps if s.kind == "agent"]
    if last:
        live = [s.at for s in agent if s.undone_by is None]
        if not live:
            raise UsageError("nothing to rewind: no change of the agent is left to undo")
        return max(live)
    text = (to or "").strip().lower()
    try:
        if text.startswith("s"):
            seq = int(text[1:])
            if seq < 1:
                raise ValueError
            return seq
        number = int(text)
    except ValueError:
        raise UsageError(
            f"--to takes a round (3) or a step (s57, as `localagent diff` shows), not {to!r}"
        ) from None
    if not 1 <= number <= max(line.rounds, 1):
        raise UsageError(f"there is no round {number}: the run has {line.rounds} rounds")
    found = [s.at for s in agent if s.round >= number]
    if not found:
        raise UsageError(f"nothing to rewind: the agent changed no file in round {number} or after")
    return min(found)
