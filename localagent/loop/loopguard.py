"""LoopGuard: refuses actions that repeat without progress (SPEC §7).

The guard's memory is `state.guard` (part of the snapshot, rebuilt by replaying the
history), so a resumed run blocks exactly what the crashed run would have blocked.
A change to the workspace (seen in the workspace itself, whichever tool made it)
starts a new epoch: repeats across epochs are progress (`pytest`, edit, `pytest`
again), repeats within one are a loop. Two rules look at observations instead, so a
command that touches a file on every run cannot hide a loop: the same action with the
same observation four times in a row, and A-B-A-B-A-B with identical observations; and
one file's tool refused alike four times in a row with nothing changed, whatever its other
arguments (an edit's text made new each time).

Failure claims are remembered across subtasks and replans: a model that answers every
new subtask with the claim it made before is in a loop no replan can end.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from localagent.journal.codec import signature
from localagent.prompts.promptset import DEFAULT, PromptSet
from localagent.state import Attempt, GuardState
from localagent.textcalls import given_arguments
from localagent.verify.claims import words

if TYPE_CHECKING:
    from localagent.tools import ToolRegistry

REPEAT_LIMIT = 3
SAME_OBSERVATION_LIMIT = 4
CYCLES = 3
WINDOW = 10
CLAIM_LIMIT = 3  # identical failure claims, spanning subtasks, before the goal gives up


def sign(tools: ToolRegistry, name: str, args: dict[str, Any]) -> str:
    """The signature of what a call runs. Arguments the model client kept as unparsed
    text are read as the tool reads them, not signed as that text: every spelling of one
    call signs alike, and one the tool would run cannot hide behind a new spelling."""
    return signature(*tools.canonical(name, given_arguments(args)))


def claim_signature(reason: str) -> str:
    """One failure claim's signature: its words, so "..." or spacing do not tell two apart."""
    return signature("mark_subtask_complete", {"success": False, "reason": words(reason)})


def check_claim(guard: GuardState, sig: str, subtask: int) -> Block | None:
    """The block for making failure claim `sig` once more in subtask number `subtask`, or
    None. Repeats within one subtask are the completion gate's to refuse; a claim that
    follows the model from subtask to subtask is a loop."""
    seen = guard.claims.get(sig)
    if seen is None or seen.first == subtask or seen.count < CLAIM_LIMIT - 1:
        return None
    return Block(sig, "repeat", seen.count + 1)


@dataclass(frozen=True)
class Block:
    signature: str
    pattern: str  # "repeat" or "alternating"
    count: int
    other: str = ""  # the other signature of an alternating pair


def ran(guard: GuardState, sig: str) -> bool:
    """Whether `sig` was attempted since the workspace last changed (within the window)."""
    return any(a.sig == sig and a.epoch == guard.epoch for a in guard.window[-WINDOW:])


def repeating(guard: GuardState) -> bool:
    """Whether the model's latest two calls are one call: it is copying its own reply, and
    the next is sampled hotter (see `Settings.repeat_temperature`)."""
    last = guard.window[-2:]
    return len(last) == 2 and last[0].sig == last[1].sig


def check(guard: GuardState, sig: str) -> Block | None:
    """The block for attempting `sig` now, or None when it may run."""
    window = guard.window[-WINDOW:]
    same_epoch = [a.sig for a in window if a.epoch == guard.epoch]
    seen = same_epoch.count(sig)
    if seen >= REPEAT_LIMIT - 1:
        return Block(sig, "repeat", seen + 1)
    if len(same_epoch) >= 3:
        a, b, c = same_epoch[-3:]
        if b == sig and a == c != sig:
            return Block(sig, "alternating", 4, other=a)
    return _same_observations(window, sig, guard.epoch)


def _same_observations(window: list[Attempt], sig: str, epoch: int) -> Block | None:
    last = window[-(SAME_OBSERVATION_LIMIT - 1) :]
    if len(last) == SAME_OBSERVATION_LIMIT - 1 and _identical(last, sig):
        return Block(sig, "repeat", SAME_OBSERVATION_LIMIT)
    if (
        len(last) == SAME_OBSERVATION_LIMIT - 1
        and all(a.epoch == epoch for a in last)
        and _identical(last, sig, by=_target)
    ):
        # One file's tool refused alike, its arguments new each time, nothing changed: the
        # 1.5B sent pytest's "Failed: DID NOT RAISE ValueError" as the text to replace,
        # then that text with ": 0" added, again and again (14 rounds, the CPU).
        return Block(sig, "repeat", SAME_OBSERVATION_LIMIT)
    cycle = window[-(2 * CYCLES - 1) :]
    full = len(cycle) == 2 * CYCLES - 1 and cycle[-1].sig != sig
    if full and _identical(cycle[1::2], sig) and _identical(cycle[0::2], cycle[0].sig):
        return Block(sig, "alternating", 2 * CYCLES, other=cycle[0].sig)
    return None


def _identical(attempts: list[Attempt], sig: str, by: Callable[[str], str] = str) -> bool:
    """All are `sig` (or, `by` a key of signatures, alike) with one and the same (known)
    observation."""
    return all(by(a.sig) == by(sig) and a.obs and a.obs == attempts[0].obs for a in attempts)


def _target(sig: str) -> str:
    """What a call acts on: its tool and the file or folder it names (its `path`), else
    its whole signature."""
    tool, _, args = sig.partition(" ")
    try:
        path = orjson.loads(args).get("path")
    except (orjson.JSONDecodeError, AttributeError):
        return sig
    return f"{tool} {path}" if isinstance(path, str) else sig


def explain(block: Block, prompts: PromptSet = DEFAULT) -> str:
    """The observation the model receives instead of the blocked action's result."""
    tool = block.signature.split(" ", 1)[0]
    if block.pattern == "alternating":
        return prompts.render("blocked_alternating", tool=tool, other=block.other.split(" ", 1)[0])
    return prompts.render("blocked_repeat", tool=tool, seen=block.count - 1)
