"""Which earlier failed checks a passing one settles: the ledger keeps each command's
latest run, so a failure spelled differently from the run that later passed would stay
the latest news of its command.

Qwen2.5-Coder-1.5B's mathx on the CPU: `pytest tests/test_mathx.py` could not import
mathx (pytest started as a program does not put the workspace on the path), then
`python -m pytest tests/test_mathx.py` passed, and the goal's own `python -m pytest -q`
passed too; the verdict still named the first run's failure as unmet, and its replan
rewrote the tests that worked into ones that failed.
"""

from __future__ import annotations

from typing import Protocol

# Options that run only some of the tests: a run with them settles nothing.
_SELECTS = ("-k", "--lf", "--last-failed", "--deselect", "--sw", "--stepwise", "-k=", "--co")
# Options that take the next word as their value.
_VALUED = {"-p", "-c", "-o", "-n", "-W", "-r", "--tb", "--rootdir", "--maxfail", "--durations"}
_RUNNERS = {"pytest", "py.test"}


class Check(Protocol):
    cmd: str
    kind: str
    seq: int
    passed: bool | None


def targets(cmd: str) -> tuple[str, ...] | None:
    """What a test run runs: the paths (and node ids) it names, () for all of them; None
    for a run that selects some of the tests (`-k`, `-m` after the runner, `--lf`, ...)
    or one not read as a test runner's."""
    words = cmd.replace('"', " ").replace("'", " ").split()
    while words and not _runner(words):
        words = words[1:]
    if not words:
        return None
    rest = words[1:] if words[0].rsplit("/", 1)[-1] in _RUNNERS else words[3:]
    named: list[str] = []
    skip = False
    for word in rest:
        if skip:
            skip = False
        elif word.startswith(_SELECTS) or word == "-m":
            return None
        elif word.startswith("-"):
            skip = word in _VALUED
        else:
            named.append(word.rstrip("/").removeprefix("./"))
    return tuple(sorted(set(named)))


def _runner(words: list[str]) -> bool:
    first = words[0].rsplit("/", 1)[-1].rsplit("\\", 1)[-1].lower().removesuffix(".exe")
    if first in _RUNNERS:
        return True
    return len(words) >= 3 and words[1] == "-m" and words[2] in ("pytest", "unittest")


def settled(passing: Check, earlier: Check) -> bool:
    """Whether `passing`, a test run that passed, settles `earlier`, a failed one before
    it: the same runner's kind, and every test the earlier run ran, it ran (all of them,
    or the same paths, however the runner was spelled)."""
    if earlier.passed is not False or earlier.seq >= passing.seq or earlier.kind != passing.kind:
        return False
    if passing.kind not in ("pytest", "unittest") or not passing.passed:
        return False
    ran, asked = targets(passing.cmd), targets(earlier.cmd)
    if ran is None or asked is None:
        return False
    return ran == () or (asked != () and set(asked) <= set(ran))
