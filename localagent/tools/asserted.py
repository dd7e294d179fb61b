"""What a failing test's assertion says a call returned, and what it had to return.

Qwen2.5-Coder-1.5B's fixtest runs: the edit of `stats.py` did not fix `median`, the tests
failed with `assert 3 == 2.5`, and the edit it went back to ("replace_in_file stats.py to
fix the failing test: assert 3 == 2.5") had the model send `{"old": "assert 3 == 2.5",
"new": "assert 3 == 3"}` for stats.py until the round limit: the assertion was the only
code it was shown. pytest says which call gave the value (`+  where 3 = median([4, 1, 3,
2])`): "median([4, 1, 3, 2]) must return 2.5 (it returned 3)" names the function to fix.

A test that failed on an exception a workspace file raised is named by where: the 1.5B's
refactor gave `area` no case for a triangle, and pytest's summary line, all the handback
had, ends where pytest cuts it ("TypeError: unsupported operand type(..."). "total_area()
raised TypeError: unsupported operand type(s) for +=: 'float' and 'NoneType' at
shapes.py:12 (`total += area(kind, size)`)" names the function, the line and the cause.
"""

from __future__ import annotations

import re

from localagent.tools.pyscript import TEST_FILE

__all__ = ["wrong_value", "wrong_values"]

_RAISED = re.compile(r"^E\s+([A-Za-z_][\w.]*): (.+?)\s*$")
_WHERE_RAISED = re.compile(r"^([\w./\\-]+\.py):(\d+): ([A-Za-z_][\w.]*)\s*$")
_DEF = re.compile(r"^\s*(?:async\s+)?def\s+(\w+)\s*\(")
_FRAME_START = re.compile(r"^(?:_ )+_?\s*$|^_{3,}")  # pytest's lines between frames and tests
_ASSERT = re.compile(r"^E\s+(?:AssertionError: )?assert (.+?) == (.+?)\s*$")
_WHERE = re.compile(r"^E\s+\+\s+where (.+?) = (\w[\w.]*\(.*\))\s*$")
_FUNCTION = re.compile(r"<function (\w+) at 0x[0-9a-fA-F]+>(?=\()")
_NAMED = re.compile(r"^E\s+\+\s+where (<function \w+ at 0x[0-9a-fA-F]+>) = (\w[\w.]*)\s*$")
WRONG_CHARS = 160
# Failures a test run's facts keep: the 1.5B's mathx tables on the CPU expected wrong
# values of three functions, twelve rows; the first four were subtract's, and each
# hand-back fixed one function's table until the round limit.
MOST_WRONG = 12
RAISED_CHARS = 200  # the ledger keeps a run's fact up to this (`state.ledger.FACT_CHARS`)


def wrong_value(output: str) -> str:
    """What the first failure of pytest's output says went wrong: for an assertion that
    compares a call's value with `==` and says which call, "CALL must return EXPECTED (it
    returned GOT)"; else for an exception raised in a workspace file (not a test),
    "FUNCTION() raised ERROR at FILE:LINE (`the line`)"; "" when neither."""
    lines = output.splitlines()
    return _compared(lines) or _raised(lines)


def wrong_values(output: str, most: int = MOST_WRONG) -> list[str]:
    """`wrong_value` first, then, when it is a call's value, the other failures that say
    what a call returned against what it had to, each once, at most `most` in all. The
    1.5B's mathx tables had nine wrong rows; its hand-back could name one."""
    first = wrong_value(output)
    if " must return " not in first:
        return [first] if first else []
    lines, found = output.splitlines(), [first]
    for at in range(len(lines)):
        if len(found) >= most:
            break
        if (said := _compared_at(lines, at)) and said not in found:
            found.append(said)
    return found


def _compared(lines: list[str]) -> str:
    at = next((n for n, line in enumerate(lines) if _ASSERT.match(line)), None)
    return "" if at is None else _compared_at(lines, at)


def _compared_at(lines: list[str], at: int) -> str:
    """The call's value against the assertion's, for an `assert X == Y` line at `at`."""
    if not (compared := _ASSERT.match(lines[at])):
        return ""
    left, right = compared[1], compared[2]
    follows = lines[at + 1 : at + 5]
    for n, follow in enumerate(follows):
        if not (where := _WHERE.match(_named(follow, follows[n + 1 : n + 2]))):
            continue
        got, call = where[1], where[2]
        expected = right if got == left else left if got == right else ""
        if expected:
            return f"{call} must return {expected} (it returned {got})"[:WRONG_CHARS]
    return ""


def _named(line: str, after: list[str]) -> str:
    """`line` with pytest's repr of a function, `<function divide at 0x7f...>(0, 2)`, as
    the name the next line gives it (`where <function divide at 0x7f...> = mathx.divide`),
    or as its own name. The 1.5B's tests asserted `mathx.divide(0, 2) == 'Error: ...'`."""
    found = _FUNCTION.search(line)
    if found is None:
        return line
    named = _NAMED.match(after[0]) if after else None
    name = named[2] if named and named[1] == found[0] else found[1]
    return line[: found.start()] + name + line[found.end() :]


def _raised(lines: list[str]) -> str:
    """The first exception pytest shows raised in a file that is not a test's."""
    for at, line in enumerate(lines):
        if not (error := _RAISED.match(line)) or error[1] == "assert":
            continue
        where = next(
            (m for follow in lines[at + 1 : at + 4] if (m := _WHERE_RAISED.match(follow))), None
        )
        if where is None or where[3] != error[1].rsplit(".", 1)[-1]:
            return ""
        if TEST_FILE.search(where[1]):
            return ""
        code, function = "", ""
        for back in reversed(lines[:at]):
            if _FRAME_START.match(back):
                break
            if not code and back.lstrip().startswith(">"):
                code = back.lstrip()[1:].strip()
            elif code and (defined := _DEF.match(back)):
                function = defined[1]
                break
        said = f"{function}() raised " if function else "raised "
        said += f"{error[1]}: {error[2]} at {where[1]}:{where[2]}"
        return (said + (f" (`{code}`)" if code else ""))[:RAISED_CHARS]
    return ""
