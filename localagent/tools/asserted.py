"""What a failing test's assertion says a call returned, and what it had to return.

Qwen2.5-Coder-1.5B's fixtest runs: the edit of `stats.py` did not fix `median`, the tests
failed with `assert 3 == 2.5`, and the edit it went back to ("replace_in_file stats.py to
fix the failing test: assert 3 == 2.5") had the model send `{"old": "assert 3 == 2.5",
"new": "assert 3 == 3"}` for stats.py until the round limit: the assertion was the only
code it was shown. pytest says which call gave the value (`+  where 3 = median([4, 1, 3,
2])`): "median([4, 1, 3, 2]) must return 2.5 (it returned 3)" names the function to fix.
"""

from __future__ import annotations

import re

__all__ = ["wrong_value"]

_ASSERT = re.compile(r"^E\s+(?:AssertionError: )?assert (.+?) == (.+?)\s*$")
_WHERE = re.compile(r"^E\s+\+\s+where (.+?) = (\w[\w.]*\(.*\))\s*$")
WRONG_CHARS = 160


def wrong_value(output: str) -> str:
    """For the first assertion of pytest's output that compares a call's value with `==`
    and says which call: "CALL must return EXPECTED (it returned GOT)"; "" when none."""
    lines = output.splitlines()
    for at, line in enumerate(lines):
        if not (compared := _ASSERT.match(line)):
            continue
        left, right = compared[1], compared[2]
        for follow in lines[at + 1 : at + 4]:
            if not (where := _WHERE.match(follow)):
                continue
            got, call = where[1], where[2]
            expected = right if got == left else left if got == right else ""
            if expected:
                return f"{call} must return {expected} (it returned {got})"[:WRONG_CHARS]
        return ""
    return ""
