"""The model stands by its code: the run's own test goes back to the edit (small profile).

Qwen2.5-Coder-1.5B's mathx tests on the CPU held the row `(5, 0, -5)` for subtract.
Asked alone what `subtract(5, 0)` returns, the model answered -5, the test's value, so
the hand-back went to mathx/subtract.py (`testback`), which was right; asked for the
function fixed (`rewrite`), it gave `return a - b` back unchanged, and then the same
function as a code block, no call, every round until the round limit (twice in 18 runs).

The function given back unchanged is the model's answer too: asked to fix it against
the test, it says the code is right. So that round's facts name the function
(`rewrite.STOOD`), the edit subtask fails at the next step, and its replan is the edit
of the test's expected values of that function's calls (`testback.expected_tasks`, the
model's answers for them the code's values), then the rest of the task: the run of the
tests. Only while the test run that failed is the latest, nothing changed since, and
only for a test file this run wrote.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from localagent.loop import testback
from localagent.loop.rewrite import STOOD
from localagent.prompts.promptset import PromptSet
from localagent.state import ReplanDue, State
from localagent.state.ledger import latest_tests


def reason(state: State, prompts: PromptSet) -> str:
    """Why the active subtask fails now ("" when it does not): its latest round gave back
    unchanged the function the run's own test shows wrong."""
    name = _stood(state)
    if not name or not _wrongs(state, name):
        return ""
    return prompts.render("stood_by", name=name)


def _stood(state: State, active: bool = True) -> str:
    """The function the latest round gave back unchanged, or "": of the active subtask,
    or (not `active`, its replan due) the round that made the failed one fail."""
    rounds = state.exchanges
    if active:
        rounds = [e for e in rounds if e.subtask == state.ledger.subtask]
    return str(rounds[-1].probe.get(STOOD) or "") if rounds and rounds[-1].probe else ""


def _wrongs(state: State, name: str) -> list[str]:
    """The latest test run's wrong values of `name`'s calls, while nothing changed since
    it failed, in a test file this run wrote."""
    last = latest_tests(state.ledger)
    if last is None or last.passed is not False or last.epoch != state.guard.epoch:
        return []
    if not testback.own_test_file(state):
        return []
    found = dict.fromkeys([last.wrong, *last.wrongs])
    return [
        w
        for w in found
        if (m := testback.WRONG.match(w)) and testback.function_of(m["call"]) == name
    ]


def tasks(
    state: State,
    due: ReplanDue,
    prompts: PromptSet,
    ask: Callable[[str], str] | None,
    root: Path,
) -> list[dict[str, Any]] | None:
    """The plan from the failed edit subtask on, without it: the read of the test file
    and the edit of the expected values the model stood by, then the rest; None when the
    failed subtask's latest round stood by no function, or its test run is not the latest."""
    name = _stood(state, active=False)
    wrongs = _wrongs(state, name) if name else []
    if not wrongs:
        return None
    codes = {m["call"]: m["got"] for w in wrongs if (m := testback.WRONG.match(w))}

    def answer(call: str) -> str:
        """The code's value for the calls of the function stood by; the model's for others."""
        if call in codes:
            return codes[call]
        return ask(call) if ask is not None else ""

    return testback.expected_tasks(state, due, wrongs[0], prompts, answer, root, failed=False)
