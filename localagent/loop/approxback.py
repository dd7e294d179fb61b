"""A test of this run's that compares a float with `==` and fails by float rounding alone
goes back to that test: its comparison made with `pytest.approx` (small profile).

Qwen2.5-Coder-1.5B's mathx test asserted `mathx.add(1.1, 2.2) == 3.3`, and pytest said
"mathx.add(1.1, 2.2) must return 3.3 (it returned 3.3000000000000003)". Asked alone what
the call returns, the model answered 3.3, so the hand-back went to the code; asked for
add fixed, it gave it back unchanged, and the replans ran the tests and asked again until
the round limit (the CPU). Neither value is wrong: the comparison is.
"""

from __future__ import annotations

import ast
import math
import re
from pathlib import Path
from typing import Any

from localagent.loop.planfrom import from_failed
from localagent.loop.subtasks import TESTS, edited_file, ran_by, read_file_of
from localagent.loop.testback import WRONG, own_test_file
from localagent.loop.testrows import approx_edit
from localagent.prompts.promptset import PromptSet
from localagent.state import ReplanDue, State
from localagent.state.ledger import latest_tests
from localagent.tools.pkgimports import text_of

_IMPORTS_PYTEST = re.compile(r"^import pytest\b", re.M)


def rounded(expected: str, got: str) -> bool:
    """Whether two values as Python writes them are floats that differ by rounding alone:
    "3.3" and "3.3000000000000003"."""
    try:
        want, given = ast.literal_eval(expected.strip()), ast.literal_eval(got.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False
    floats = isinstance(want, float) or isinstance(given, float)
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (want, given))
    return floats and numbers and want != given and math.isclose(want, given, rel_tol=1e-12)


def tasks(
    state: State, due: ReplanDue, prompts: PromptSet, root: Path
) -> list[dict[str, Any]] | None:
    """When the failed test run's first wrong value differs from its test's by rounding
    alone, in a test file this run wrote that imports pytest: the plan from it on, a
    read of that file, the edit of its comparison, then the run again."""
    last = latest_tests(state.ledger)
    if ran_by(due.subtask) != TESTS or last is None or last.passed is not False:
        return None
    if last.epoch != state.guard.epoch or not (test := own_test_file(state)):
        return None
    wrong = next((m for m in map(WRONG.match, [last.wrong, *last.wrongs]) if m), None)
    if wrong is None or not rounded(wrong["expected"], wrong["got"]):
        return None
    source = text_of(root, test) or ""
    found = approx_edit(source, wrong["call"], wrong["got"], wrong["expected"])
    if found is None or not _IMPORTS_PYTEST.search(source):
        return None
    old, new = (text.replace("\n", "\\n") for text in found)
    said = {"call": wrong["call"], "got": wrong["got"], "expected": wrong["expected"]}
    edit = prompts.render("handback_approx", path=test, old=old, new=new, **said)
    read = prompts.render("handback_read", path=test)
    if edited_file(edit) != test or read_file_of(read) != test:
        return None
    return from_failed(state, due, read, edit)
