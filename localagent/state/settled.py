"""Which earlier failed checks a passing one settles (test runs, ruff): the ledger keeps
each command's latest run, so a failure spelled differently from the run that later
passed would stay the latest news of its command.

Qwen2.5-Coder-1.5B's mathx on the CPU: `pytest tests/test_mathx.py` could not import
mathx (pytest started as a program does not put the workspace on the path), then
`python -m pytest tests/test_mathx.py` passed, and the goal's own `python -m pytest -q`
passed too; the verdict still named the first run's failure as unmet, and its replan
rewrote the tests that worked into ones that failed.
"""

from __future__ import annotations

from typing import Protocol

# Options that run only some of the tests, or check less: a run with them settles nothing.
_SELECTS = (
    *("-k", "--lf", "--last-failed", "--deselect", "--sw", "--stepwise", "--co"),
    *("--select", "--ignore", "--extend-select", "--extend-ignore", "--exit-zero"),
)
# Options that take the next word as their value.
_VALUED = {"-p", "-c", "-o", "-n", "-W", "-r", "--tb", "--rootdir", "--maxfail", "--durations"}
_VALUED |= {"--config", "--target-version", "--line-length", "--output-format"}
_RUNNERS = {"pytest", "py.test", "ruff"}


class Check(Protocol):
    cmd: str
    kind: str
    seq: int
    passed: bool | None


def targets(cmd: str) -> tuple[str, tuple[str, ...]] | None:
    """What a check run covers: its checker (pytest, unittest, `ruff check`, `ruff
    format`) and the paths (and node ids) it names, () for all of them; None for a run
    that covers only some (`-k`, `-m` after pytest, `--lf`, ruff's `--select`, ...) or
    that is no checker's."""
    words = cmd.replace('"', " ").replace("'", " ").split()
    while words and not _runner(words):
        words = words[1:]
    if not words:
        return None
    bare = _name(words[0]) in _RUNNERS
    checker, rest = (_name(words[0]) if bare else words[2]), words[1 if bare else 3 :]
    if checker == "py.test":
        checker = "pytest"
    if checker == "ruff":
        verbs = [w for w in rest if not w.startswith("-")][:1]
        if verbs not in (["check"], ["format"]):
            return None
        checker, rest = f"ruff {verbs[0]}", [w for w in rest if w != verbs[0]]
    named: list[str] = []
    skip = False
    for word in rest:
        if skip:
            skip = False
        elif word.startswith(_SELECTS) or word == "-m":
            return None
        elif word.startswith("-"):
            skip = word in _VALUED
        elif (path := word.rstrip("/").removeprefix("./")) not in (".", ""):
            named.append(path)
    return checker, tuple(sorted(set(named)))


def _name(word: str) -> str:
    return word.rsplit("/", 1)[-1].rsplit("\\", 1)[-1].lower().removesuffix(".exe")


def _runner(words: list[str]) -> bool:
    if _name(words[0]) in _RUNNERS:
        return True
    return len(words) >= 3 and words[1] == "-m" and words[2] in ("pytest", "unittest", "ruff")


def settled(passing: Check, earlier: Check) -> bool:
    """Whether `passing`, a check run that passed, settles `earlier`, a failed one before
    it: the same checker, and everything the earlier run checked, it checked (all of it,
    or the same paths, however the runner was spelled)."""
    if earlier.passed is not False or earlier.seq >= passing.seq or not passing.passed:
        return False
    ran, asked = targets(passing.cmd), targets(earlier.cmd)
    if ran is None or asked is None or ran[0] != asked[0]:
        return False
    return ran[1] == () or (asked[1] != () and set(asked[1]) <= set(ran[1]))
