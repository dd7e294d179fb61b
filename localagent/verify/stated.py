"""What a goal states of its program, checked against the runs the journal has: the exit
status without arguments, and the command lines it states (see `unrun_forms`).

"Write greet.py: python greet.py NAME prints Hello, NAME! and exits 0; run without
arguments it prints a usage message and exits with status 2": Qwen2.5-Coder-1.5B's
greet.py printed its usage and exited 0; the run was a fact, its status never compared
with the goal's, and the small verifier said VERIFIED (2 runs of 7, on an H100 and on the
CPU). A run of `python greet.py` after the script's last change whose status is not the
one the goal states is a hard finding: the goal is not verified. When no such run
followed the last change, the verification makes it (`unchecked`): on an H100, two of six
greet.py runs were "completed (verified)" with a script that exits 0 without arguments,
one never run that way, one run so only by the verification, whose result nothing read.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from localagent.state.checkruns import key, split_result
from localagent.state.ledger import latest_tests, script_runs
from localagent.verify.evidence import named_files

_NO_ARGS = r"(?:when\s+)?(?:it\s+is\s+)?(?:run\s+)?(?:without|with\s+no)\s+(?:any\s+)?arguments?"
_STATUS = r"exits?\s+(?:with\s+)?(?:(?:exit\s+)?(?:status|code)\s+)?(\d{1,3})\b"
_STATED = (
    re.compile(rf"\b{_NO_ARGS}\b[^.;]{{0,80}}?\b{_STATUS}", re.I),
    re.compile(rf"\b{_STATUS}\s+{_NO_ARGS}\b", re.I),
)
_EXIT = re.compile(r"exit code (-?\d+)")
# "python greet.py NAME prints Hello, NAME! and exits 0": the script, its placeholders,
# what it prints, the status (`outputs`, `counts`).
PRINTS = re.compile(
    r"\bpython3?\s+([\w./-]+\.py)((?:\s+[A-Z][A-Z_0-9]*\b)+)\s+prints\s+(.+?)"
    r"(?:\s+and\s+exits?\s+(?:with\s+)?(?:(?:exit\s+)?(?:status|code)\s+)?(\d{1,3})\b)?"
    r"(?=\s*(?:;|$|\.\s|\.$|,\s+(?:and|but|run|with|without)\b))"
)
# "ruff check must be clean", "lint it with ruff": the linter the goal names is a check.
_RUFF = re.compile(r"\bruff\b", re.I)
RUFF_CHECK = "ruff check ."


def stated_checks(goal: str) -> list[str]:
    """The goal checks the goal's own words call for: `ruff check .` when it names ruff.
    Qwen2.5-Coder-1.5B's mathx ended "completed (verified)" on its tests alone; ruff, which
    the goal names, was never run, and flagged its test file's imports."""
    return [RUFF_CHECK] if _RUFF.search(goal) else []


def stated_status(goal: str) -> int | None:
    """The exit status the goal states for a run without arguments, or None."""
    for pattern in _STATED:
        if found := pattern.search(goal):
            return int(found[1])
    return None


def stated_script(goal: str) -> tuple[str, int] | None:
    """The goal's script and the status it states for it run without arguments."""
    wanted = stated_status(goal)
    scripts = [name for name in named_files(goal) if name.endswith(".py")]
    return (scripts[0], wanted) if wanted is not None and scripts else None


def _runs(script: str, ledger: Any) -> list[Any]:
    """The ledger's runs of the script without arguments since its last change."""
    write = ledger.writes.get(script)
    found = []
    for cmd in _bare(script):
        check = ledger.checks.get(key(cmd))
        if check is not None and (write is None or write.seq < check.seq):
            found.append(check)
    return found


def off_status(goal: str, cmd: str, text: str) -> str:
    """What is wrong with the run of `cmd` whose observation is `text`, when it runs the
    goal's script without arguments and exits with a status other than the one the goal
    states ("" otherwise): such a run does not end a run subtask."""
    stated = stated_script(goal)
    code, output = split_result(text)
    if stated is None or code is None or key(cmd) not in _bare(stated[0]) or code == stated[1]:
        return ""
    last = next((line.strip() for line in reversed(output.splitlines()) if line.strip()), "")
    summary = f"exit code {code}" + (f": {last[:80]}" if last else "")
    return _said(stated[0], stated[1], key(cmd), str(code), summary)


def _bare(script: str) -> tuple[str, str]:
    return f"python {script}", f"python3 {script}"


def status_said(goal: str) -> str:
    """How each finding of `mismatches` and `off_status` begins ("" when the goal states
    no status): "the goal says greet.py run without arguments exits with status 2"."""
    stated = stated_script(goal)
    return "" if stated is None else _prefix(*stated)


def _prefix(script: str, wanted: int) -> str:
    return f"the goal says {script} run without arguments exits with status {wanted}"


def _said(script: str, wanted: int, cmd: str, code: str, summary: str) -> str:
    return (
        f"{_prefix(script, wanted)}; `{cmd}` exited {code} ({summary[:80]}); without "
        f"arguments it must end with `sys.exit({wanted})`"
    )


def unchecked(goal: str, ledger: Any) -> str | None:
    """`python SCRIPT` when the goal states its status without arguments and no run of
    it without arguments followed its last change: the verification runs it."""
    stated = stated_script(goal)
    return f"python {stated[0]}" if stated and not _runs(stated[0], ledger) else None


def mismatches(goal: str, ledger: Any, results: Iterable[dict[str, Any]] = ()) -> list[str]:
    """Each run of the goal's script without arguments, after its last change (the
    verification's own `results` too), whose exit status is not the one the goal states."""
    stated = stated_script(goal)
    if stated is None:
        return []
    script, wanted = stated
    runs = [(c.cmd, c.summary, _EXIT.match(c.summary)) for c in _runs(script, ledger)]
    for result in results:
        cmd, code = result.get("cmd"), result.get("returncode")
        if cmd in _bare(script) and type(code) is int:
            runs.append((cmd, str(result.get("summary") or ""), _EXIT.match(f"exit code {code}")))
    return [
        _said(script, wanted, cmd, got[1], summary)
        for cmd, summary, got in runs
        if got is not None and int(got[1]) != wanted
    ]


# A command line the goal states: "python wordcount.py FILE prints ...", its flags and
# its placeholders (words in capitals: FILE, NAME); "with --lines it prints ..." states
# the same command with that flag.
_FORM = re.compile(r"\bpython3?\s+([\w./-]+\.py)((?:\s+(?:--?[a-z][\w-]*|[A-Z][A-Z_0-9]*\b))*)")
_WITH_FLAG = re.compile(r"\bwith\s+(?:the\s+)?(--?[a-z][\w-]*)\b")
_WORDS = re.compile(r"\S+")


def stated_forms(goal: str) -> list[tuple[str, tuple[str, ...], int]]:
    """The command lines the goal states for its script: (script, its flags, how many
    arguments besides them), the plain form first; [] when it states none."""
    found = _FORM.search(goal)
    if found is None:
        return []
    words = _WORDS.findall(found[2])
    flags = tuple(sorted(w for w in words if w.startswith("-")))
    forms = [(found[1], flags, len(words) - len(flags))]
    for flag in dict.fromkeys(_WITH_FLAG.findall(goal)):
        more = tuple(sorted({*flags, flag}))
        if (found[1], more, forms[0][2]) not in forms:
            forms.append((found[1], more, forms[0][2]))
    return forms if len(forms) > 1 or forms[0][1] or forms[0][2] else []


def _placeholders(goal: str) -> list[str]:
    """The placeholders of the command line the goal states, in order ("FILE")."""
    found = _FORM.search(goal)
    words = _WORDS.findall(found[2]) if found else []
    return [w for w in words if not w.startswith("-")]


def _given(cmd: str, script: str) -> tuple[tuple[str, ...], list[str]] | None:
    """A run's flags and other arguments, when it runs `script` with python; else None."""
    words = _WORDS.findall(cmd)
    if len(words) < 2 or words[1] != script or not words[0].startswith("python"):
        return None
    flags = tuple(sorted(w for w in words[2:] if w.startswith("-")))
    return flags, [w for w in words[2:] if not w.startswith("-")]


# A script's run that ended with another status than 0: a fact to its run subtask, no
# form the goal states shown to work (the goal's check of that form must exit 0).
_NON_ZERO = re.compile(r"exit code (?!0\b)-?\d+")


def _uncovered(goal: str, ledger: Any) -> list[tuple[str, tuple[str, ...], int, list[Any]]]:
    """Each command line the goal states that no successful run since the script's last
    change made (one that exited 0, or proved something without an exit status):
    (script, flags, other arguments, the flags and other arguments of each run of the
    script, before the change too, the successful ones last, else oldest first: the
    files the model gave it are still the ones to give it)."""
    found = []
    for script, flags, count in stated_forms(goal):
        write = ledger.writes.get(script)
        checks = sorted(ledger.checks.values(), key=lambda c: (c.passed is True, c.seq))
        runs = [(c, given) for c in checks if (given := _given(c.cmd, script)) is not None]
        since = [
            given
            for c, given in runs
            if c.passed is True
            and not _NON_ZERO.match(c.summary)
            and (write is None or c.seq > write.seq)
        ]
        if not any(f == flags and len(args) == count for f, args in since):
            found.append((script, flags, count, [given for _, given in runs]))
    return found


def unrun_forms(goal: str, ledger: Any) -> list[str]:
    """The command lines the goal states that no run since the script's last change made
    with success: its flags, and as many other arguments (the verification's own run of
    it, `form_checks`, shows only its exit status: a small verifier's word on its output
    is no evidence). Qwen2.5-Coder-1.5B's wordcount.py, which the goal says prints lines,
    words and characters and, with --lines, only the lines, was run only as `python
    wordcount.py --lines sample.txt`; it printed no line count without --lines, and the
    small verifier said VERIFIED (the CPU). Each is named with the goal's own
    placeholders ("python wordcount.py FILE"): the small verifier copies the line into
    what is unmet, and a replan made "run python wordcount.py ARG" of it, run as such."""
    holders = _placeholders(goal)
    return [
        " ".join(["python", script, *flags, *(holders + ["ARG"] * count)[:count]])
        for script, flags, count, _ in _uncovered(goal, ledger)
    ]


def form_checks(goal: str, ledger: Any) -> list[str]:
    """The command lines the goal states that no successful run made, made runnable:
    its flags with the other arguments of the latest successful run of the script that
    had as many (the file the model gave it), else of the latest run that had as many,
    whatever it gave. The verification runs each; it must exit 0.
    Qwen2.5-Coder-1.5B's wordcount.py lost its --lines in a rewrite, ran as `python
    wordcount.py sample.txt`, and three of six runs ended "completed (unverified)" with a
    program that answers `--lines` with "unrecognized arguments" (the H200). Another's
    runs with sample.txt read stdin, then crashed; its last rewrite was never run, and the
    goal ended "completed (unverified)" with 51 characters counted for 57 (the CPU)."""
    found = []
    for script, flags, count, runs in _uncovered(goal, ledger):
        args = next((args for _, args in reversed(runs) if len(args) == count), None)
        if args is not None:
            found.append(" ".join(["python", script, *flags, *args]))
    return found


# A number as a program prints it: "21", "-3", "2.5", not the 2 of "utf8" or "v2".
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w])")


def computed(
    goal: str, ledger: Any, checked: Callable[[str, str], bool] = lambda cmd, shown: False
) -> list[str]:
    """Each run of a script since its last change that printed numbers neither the goal
    nor the command line states, "`cmd` printed `its last line`", when no test run
    passed since the last change and `checked` (the command, that line) does not vouch for
    them: values nothing checked. Qwen2.5-Coder-1.5B's wordcount.py counted words as its
    lines, printed "lines: 21, words: 21, chars: 745" for its own source, and the small
    verifier said VERIFIED (two of six runs, the H200)."""
    last = max((w.seq for w in ledger.writes.values()), default=0)
    tests = latest_tests(ledger)
    if tests is not None and tests.passed and tests.seq > last:
        return []
    stated = set(NUMBER.findall(goal))
    found = []
    for check, _, shown in script_runs(ledger):
        if check.passed is not True or not shown or checked(check.cmd, shown):
            continue
        if set(NUMBER.findall(shown)) - stated - set(NUMBER.findall(check.cmd)):
            found.append(f"`{check.cmd}` printed `{shown[:80]}`")
    return found


def args_of(cmd: str, script: str) -> list[str] | None:
    """The arguments a run of the script gives it; None for another command, or one
    with flags (another form than the one the goal states)."""
    words = cmd.split()
    if len(words) < 2 or not words[0].startswith("python") or words[1] != script:
        return None
    if any(w.startswith("-") for w in words[2:]):
        return None
    return [w.strip("'\"") for w in words[2:]]


def makes(form: str, cmd: str) -> bool:
    """Whether `cmd` is a run of the stated `form` ("python wordcount.py --lines ARG"):
    the same script, the same flags, as many other arguments."""
    have, want = cmd.split(), form.split()
    if len(have) < 2 or len(want) < 2 or have[:2] != want[:2]:
        return False
    flags = [{w for w in words[2:] if w.startswith("-")} for words in (have, want)]
    return flags[0] == flags[1] and len(have) == len(want)
