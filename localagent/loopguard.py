"""LoopGuard: refuses actions that repeat without progress (SPEC §7).

The guard's memory is `state.guard` (part of the snapshot, rebuilt by replaying the
history), so a resumed run blocks exactly what the crashed run would have blocked.
A successful change to the workspace starts a new epoch: repeats across epochs are
progress (`pytest`, edit, `pytest` again), repeats within one are a loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from localagent.prompts import BLOCKED_ALTERNATING, BLOCKED_REPEAT, render
from localagent.state import GuardState

REPEAT_LIMIT = 3
WINDOW = 10


def signature(tool: str, args: dict[str, Any]) -> str:
    """Tool name plus canonical JSON of the arguments (sorted keys)."""
    return tool + " " + orjson.dumps(args, option=orjson.OPT_SORT_KEYS).decode()


@dataclass(frozen=True)
class Block:
    signature: str
    pattern: str  # "repeat" or "alternating"
    count: int
    other: str = ""  # the other signature of an alternating pair


def check(guard: GuardState, sig: str) -> Block | None:
    """The block for attempting `sig` now, or None when it may run."""
    same_epoch = [s for s, epoch in guard.window[-WINDOW:] if epoch == guard.epoch]
    seen = same_epoch.count(sig)
    if seen >= REPEAT_LIMIT - 1:
        return Block(sig, "repeat", seen + 1)
    if len(same_epoch) >= 3:
        a, b, c = same_epoch[-3:]
        if b == sig and a == c != sig:
            return Block(sig, "alternating", 4, other=a)
    return None


def explain(block: Block) -> str:
    """The observation the model receives instead of the blocked action's result."""
    tool = block.signature.split(" ", 1)[0]
    if block.pattern == "alternating":
        return render(BLOCKED_ALTERNATING, tool=tool, other=block.other.split(" ", 1)[0])
    return render(BLOCKED_REPEAT, tool=tool, seen=block.count - 1)
