"""What one run of a command shows: whether it is a check (pytest, unittest, ruff, a
script), whether it passed, and its one-line summary, from the exit code and the output
as `run_cmd` observed them. The ledger (`state.ledger`) folds these into its evidence;
the verification reads the same judgements of its own runs.
"""

from __future__ import annotations

import itertools
import posixpath
import re

SUMMARY_CHARS = 160
CHECK_KINDS = ("pytest", "unittest", "ruff", "script")
_PYTHON = re.compile(r"(?:.*[/\\])?(?:python(?:3(?:\.\d+)?)?|py)(?:\.exe)?", re.I)
# Failure summaries a test runner prints even when a wrapper exits 0.
_FAILED = re.compile(r"\b([1-9]\d*) failed\b|^FAILED \(|^FAILED\b", re.M)
_ERRORS = re.compile(r"\b([1-9]\d*) errors?\b|^ERROR\b", re.M | re.I)
_TRACEBACK = "Traceback (most recent call last)"
_UNCOMPILED = re.compile(r"^(?:SyntaxError|IndentationError|TabError): ", re.M)
# argparse's answer to a command line with words the program does not take.
_UNRECOGNIZED = re.compile(r"^\S+: error: unrecognized arguments: .*$", re.M)
_UNKNOWN_OPTION = re.compile(r"\berror: unrecognized arguments: (?:\S+ )*?(--?[a-z][\w-]*)\b")


def refused_option(text: str) -> str:
    """The first option argparse refused in `text` ("--lines" of "error: unrecognized
    arguments: --lines"), or ""."""
    found = _UNKNOWN_OPTION.search(text)
    return found[1] if found else ""


_NO_TESTS = re.compile(r"\bno tests ran\b|^Ran 0 tests\b|^NO TESTS RAN", re.M | re.I)
NO_OUTPUT = "(no output)"  # what run_cmd shows for a program that printed nothing
_PASSED = re.compile(
    r"\b\d+ passed\b[^\n]*|^OK\b[^\n]*|^Ran \d+ tests?[^\n]*|All checks passed!?", re.M
)


def norm(path: str) -> str:
    """One spelling per workspace path: '/' separators, no '.' segments."""
    text = posixpath.normpath(str(path).replace("\\", "/"))
    return "" if text in (".", "") else text


def command_words(cmd: str) -> list[str]:
    return cmd.replace('"', " ").replace("'", " ").split()


def check_kind(cmd: str) -> str | None:
    """Whether a command is a check, and which: pytest, unittest, ruff or a script run."""
    words = command_words(cmd)
    if not words:
        return None
    first = words[0].rsplit("/", 1)[-1].rsplit("\\", 1)[-1].lower().removesuffix(".exe")
    if first in ("pytest", "py.test"):
        return "pytest"
    if first == "ruff":
        return "ruff" if len(words) > 1 and words[1] in ("check", "format") else None
    if not _PYTHON.fullmatch(words[0]):
        return None
    rest = [w for w in words[1:] if w not in ("-u", "-B")]
    if len(rest) >= 2 and rest[0] == "-m":
        return {"pytest": "pytest", "unittest": "unittest", "ruff": "ruff"}.get(rest[1])
    if rest and rest[0].lower().endswith(".py"):
        return "script"
    return None


def key(cmd: str) -> str:
    return " ".join(cmd.split())


def judge(
    kind: str, returncode: int | None, output: str, fed: bool = False
) -> tuple[bool | None, str]:
    """Did a check pass? From the exit code and from the summary it printed.

    A wrapper that exits 0 while printing "1 failed" did not pass. A script that died
    waiting for input (EOFError), ran out of time or printed nothing with exit code 0
    proves nothing either way; one that was given input (`fed`), printed something and
    then asked for more (a game loop) did what that input asked. A script's own exit
    code is a fact, not a verdict ("exits with status 2 without arguments" may be the
    goal): only a traceback fails it, or argparse's "unrecognized arguments" (no goal
    asks for a command line its program refuses).
    """
    found = _FAILED.search(output) or (_ERRORS.search(output) if kind != "script" else None)
    if kind == "script" and "EOFError" in output and _TRACEBACK in output:
        printed = [line for line in output[: output.find(_TRACEBACK)].splitlines() if line.strip()]
        if fed and len(printed) >= 2:  # a game loop asks again after the moves it was given
            return True, f"it read all its input, then asked for more; before: {printed[-2][:80]}"
        return None, "inconclusive: it waited for input (run it again with stdin)"
    if kind in ("pytest", "unittest") and (returncode == 5 or _NO_TESTS.search(output)):
        return None, "inconclusive: no tests ran"
    if returncode is None:
        if kind == "script":
            return None, "inconclusive: it was still running at the time limit"
        return False, "timed out"
    if kind == "ruff":  # its exit code is its verdict: "Found 1 error (1 fixed, 0 remaining)."
        said = _last_line(_NOTES.sub("", output))  # ruff's, not run_cmd's notes after it
        return returncode == 0, f"exit code {returncode}: {said}".removesuffix(": ")
    if found:
        return False, _bare(_line(output, found.start()))
    if kind == "script":
        return _script(returncode, output)
    if returncode != 0:
        said = f": {_bare(_last_line(output))}" if output else ""
        return False, f"exit code {returncode}{said}"
    passed = list(_PASSED.finditer(output))
    return True, _bare(passed[-1][0].strip()[:SUMMARY_CHARS]) if passed else "exit code 0"


def _script(returncode: int, output: str) -> tuple[bool | None, str]:
    # Python reports a file that does not compile without a traceback's first line.
    if _TRACEBACK in output or (returncode != 0 and _UNCOMPILED.search(output)):
        return False, _last_line(output)
    if returncode == 2 and (unknown := _UNRECOGNIZED.search(output)):
        # The program does not take its command line: Qwen2.5-Coder-1.5B's wordcount.py,
        # written again without --lines, answered `--lines` so, and that run was its
        # --lines form's success to the run subtask and to the verification (the CPU).
        return False, f"exit code 2: {unknown[0].strip()}"
    # run_cmd's notes (e.g. printed_nothing) follow its "(no output)": not the program's
    last = "" if output.lstrip().startswith(NO_OUTPUT) else _last_line(output)
    if returncode == 0 and not last:
        return None, "inconclusive: it printed nothing (a program that only defines functions)"
    return True, f"exit code {returncode}" + (f": {last}" if last else "")


# run_cmd's notes after a run's output, one line each ("NOTE: ruff fixes the problems...").
_NOTES = re.compile(r"(?:\n+NOTE: [^\n]*)+\s*\Z")


def _line(text: str, at: int) -> str:
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    return text[start : end if end >= 0 else len(text)].strip()[:SUMMARY_CHARS]


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:SUMMARY_CHARS] if lines else ""


# pytest's bars around its last line: `===== 2 failed, 1 passed in 0.08s =====`
_BARS = re.compile(r"^=+ +(?=\S)|(?<=\S) +=+$")


def _bare(summary: str) -> str:
    """A test run's summary without pytest's bars around it, which each reader of it (the
    facts, the subtask's end, a verdict's evidence, `status`) read again: 20 tokens of
    a failing run's. A script's last line stays as it printed it."""
    return _BARS.sub("", summary)


_SUMMARY = re.compile(r"exit code (-?\d+)(?:: (.*))?", re.S)


def summary_parts(summary: str) -> tuple[int, str] | None:
    """A script run's summary ("exit code N: its last line") taken apart; None for one
    with no exit code (cut short, inconclusive)."""
    shown = _SUMMARY.fullmatch(summary)
    return (int(shown[1]), shown[2] or "") if shown else None


def split_result(text: str) -> tuple[int | None, str]:
    """run_cmd's observation ("exit code N" line, then the output) taken apart."""
    head, _, output = _own(text).partition("\n")
    found = re.fullmatch(r"exit code (-?\d+).*", head.strip())
    return (int(found[1]) if found else None), output


def _own(text: str) -> str:
    """run_cmd's own observation, without the notes the registry puts first ("(run python
    is not a tool; it ran as ...)"): a run the model named with a sentence is evidence too."""
    while text.startswith("(") and (line := text.partition("\n")[0]).endswith(")"):
        text = text[len(line) + 1 :]
    return text


def outcome(
    cmd: str, result: str, fed: bool = False, unproven: str = "", empty: str = "", off: str = ""
) -> tuple[bool | None, str] | None:
    """Whether a run of `cmd` with this observation passed (None: inconclusive), and its
    summary; None when it did not run to an end (refused, stopped): no evidence at all.
    `fed`: the run was given input (stdin); `unproven`: why run_cmd found that its
    output shows nothing (only its input prompts; an input file that does not exist);
    `empty`: the test file that made a test run run nothing, defining no test (that
    run failed: the tests are not written yet); `off`: what the goal states that a run
    which succeeded did not show (`run_off`): it failed."""
    if not _own(result).startswith(("exit code", "timed out")):
        return None
    if unproven:
        return None, f"inconclusive: {unproven}"
    kind = check_kind(cmd) or "script"
    passed, summary = judge(kind, *split_result(result), fed=fed)
    if empty and passed is None and kind in ("pytest", "unittest"):
        return False, f"no tests ran: {empty} defines no test function"
    if off and passed:
        return False, summary  # the summary is the run's own, as every reader parses it
    return passed, summary


def run_off(facts: dict[str, list[str]], cmd: str) -> str:
    """From a run_cmd call's facts: what the goal states of `cmd`'s run that it did not
    show (its output, status or counts, `verify.outputs.off_run`), "" when nothing.
    Qwen2.5-Coder-1.5B's wordcount.py printed `Number of lines: 2` for the lines, words
    and characters: its run subtask failed on that, and yet the run, exit code 0, was a
    success to the replan that carried the step as done and to the verification, which
    did not run that form again: "completed (unverified)", broken (the CPU)."""
    off = facts.get("off", []) if cmd in facts.get("ran", []) else []
    return off[0] if off else ""


def run_facts(facts: dict[str, list[str]], cmd: str) -> tuple[bool, str]:
    """From a run_cmd call's facts: whether `cmd` was given input it answered, and why
    its run shows nothing ("" when it may show something)."""
    unproven = facts.get("unproven", []) if cmd in facts.get("ran", []) else []
    return cmd in facts.get("fed", []), unproven[0] if unproven else ""


def mentioned(cmd: str) -> list[str]:
    """Workspace files a command runs or reads: `x.py`, `-m pkg.mod` as pkg/mod.py."""
    words = command_words(cmd)
    found = [norm(w) for w in words[1:] if "." in w.rsplit("/", 1)[-1] and not w.startswith("-")]
    for flag, module in itertools.pairwise(words):
        if flag == "-m":
            found.append(module.replace(".", "/") + ".py")
    return [path for path in found if path]
