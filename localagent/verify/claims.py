"""Failure claims need evidence too (SPEC §11): "it cannot be done" is accepted only
when something was tried in this subtask, and its reason is not just what an earlier
subtask saw or claimed.

A small model that once saw `unknown tool 'create_dir'` will claim exactly that for every
later subtask without trying anything; each such claim would fail the subtask and cost a
replan. No model call: the ledger counts this subtask's attempts and the journal's
exchanges say what each subtask was told.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from typing import Any

RESTATED = 0.95  # a text's likeness to the goal's that makes it the goal again
MIN_WORDS = 3  # a reason this short ("failed", "not possible") repeats nothing in particular
_WORD = re.compile(r"\w+")


def words(text: str) -> str:
    """The text's words, lowercased, one space apart: punctuation and "..." do not count."""
    return " ".join(_WORD.findall(text.lower()))


def restates(text: str, goal: str) -> bool:
    """Whether a text is the goal's own again (give or take a comma or a full stop): a
    small model's one-task plan repeats it (60 tokens of the mathx goal in every round's
    prompt twice), and a small verifier names it as what is unmet."""
    a, b = (" ".join(t.lower().rstrip(". ").split()) for t in (text, goal))
    return len(a) > 40 and difflib.SequenceMatcher(None, a, b).ratio() >= RESTATED


def names_step(text: str, steps: Iterable[str]) -> bool:
    """Whether a text is one of the plan's own task or subtask texts again: the 1.5B
    verifier named "Write the game logic in rps_game.py", the task its plan had just
    done, as all that was unmet of a game that played (two runs on the H200), and the
    replans for it wrote the game over with a stub."""
    a = " ".join(text.lower().rstrip(". ").split())
    for step in steps:
        b = " ".join(step.lower().rstrip(". ").split())
        if a and difflib.SequenceMatcher(None, a, b).ratio() >= RESTATED:
            return True
    return False


def refusal(state: Any, reason: str) -> str | None:
    """Why a failure claim is not accepted: "untried" (nothing was tried in this
    subtask), "repeated" (its reason only repeats an earlier subtask's observation or
    claim), or None."""
    if not state.ledger.tried:
        return "untried"
    said = words(reason)
    if len(said.split()) < MIN_WORDS:
        return None
    now, before = _texts(state)
    if any(said in text for text in now):
        return None  # this subtask saw it too: a fresh fact, not a parroted one
    return "repeated" if any(said in text for text in before) else None


def _texts(state: Any) -> tuple[list[str], list[str]]:
    """What this subtask was told, and what earlier subtasks were told or claimed."""
    serial = state.ledger.subtask
    now, before = [], []
    for exchange in state.exchanges:
        shown = [words(result["content"]) for result in exchange.results]
        (now if exchange.subtask == serial else before).extend(shown)
    goal = state.goal
    if goal is not None:
        tasks = goal.tasks
        before += [words(s.reason) for t in tasks for s in t.subtasks if s.status == "failed"]
    return now, before
