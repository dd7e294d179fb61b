"""Goal checks: the commands that show a goal is achieved, and running one.

The user's checks (`start --check`, `checks = [...]`) come first; then what the
workspace calls for: `python -m pytest -q` when it has tests, and `python main.py`
compared with `expected.txt` when both exist; without checks of the user's, each script
the goal wrote that nothing shows to work is run once (`source: program`): its exit code
and output are facts for the verdict, never a failure by themselves. Checks run through
the same guarded command runner as the model's commands (allow-list, timeout, workspace
environment, sandbox), and may run twice after a crash, so they must be idempotent.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from localagent import tools
from localagent.state.checkruns import check_kind, judge, key, split_result
from localagent.state.ledger import Ledger
from localagent.system import safefs
from localagent.tools import pyscript
from localagent.tools.cmdline import check_command
from localagent.tools.pkgimports import importers
from localagent.verify.counts import count_check
from localagent.verify.outputs import sample_run
from localagent.verify.stated import form_checks, stated_checks, unchecked

PYTEST = "python -m pytest -q"
EXPECTED_FILE = "expected.txt"
EXPECTED_PROGRAM = "main.py"
CHECK_TIMEOUT = 300
MAX_EXPECTED_BYTES = 1_000_000
OUTPUT_KEPT = 2000
SKIPPED_DIRS = frozenset(
    {".agent_context", ".git", ".venv", "venv", "env", "node_modules", "__pycache__", "build"}
)
SCAN_LIMIT = 5000
PROGRAMS = 2  # scripts the verification runs itself, at most
NOT_SCRIPTS = frozenset({"__init__.py", "__main__.py", "conftest.py", "setup.py"})
_SCRIPT_PATH = re.compile(r"[\w.-]+(?:/[\w.-]+)*\.py")


def _has_tests(root: Path) -> bool:
    """Whether the workspace holds test_*.py or *_test.py files (a bounded walk)."""
    seen = 0
    for _folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS and not d.startswith(".")]
        for name in files:
            seen += 1
            if name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py")):
                return True
        if seen > SCAN_LIMIT:
            return False
    return False


def goal_checks(
    user_checks: tuple[str, ...] | list[str],
    root: Path,
    ledger: Ledger | None = None,
    goal: str = "",
) -> list[dict[str, Any]]:
    """The checks to run for a goal, each {id, cmd, source[, expected]}: the user's, the
    tests, what the goal's words call for (`ruff check .` when it names ruff), main.py
    against expected.txt, the latest run of the goal's counting script (`count_check`: all
    it prints is read), the run of the goal's script without arguments
    whose exit status the goal states (see `stated.unchecked`), and without checks of the
    user's, the programs the goal wrote that nothing shows to work (`unproven_programs`)."""
    found: list[dict[str, Any]] = [{"cmd": key(c), "source": "user"} for c in user_checks]
    given = {c["cmd"] for c in found}
    if _has_tests(root) and PYTEST not in given:
        found.append({"cmd": PYTEST, "source": "tests"})
    found += [{"cmd": c, "source": "goal"} for c in stated_checks(goal) if c not in given]
    if ledger is not None:
        given |= {c["cmd"] for c in found}
        found += [{"cmd": c, "source": "goal"} for c in form_checks(goal, ledger) if c not in given]
        if (counting := count_check(goal, ledger, root)) is not None and counting not in given:
            found.append({"cmd": counting, "source": "goal"})
    if (root / EXPECTED_FILE).is_file() and (root / EXPECTED_PROGRAM).is_file():
        found.append(
            {"cmd": f"python {EXPECTED_PROGRAM}", "source": "expected", "expected": EXPECTED_FILE}
        )
    programs = []
    if ledger is not None and (stated := unchecked(goal, ledger)):
        programs.append(stated)
    if ledger is not None and (sample := sample_run(goal)):
        programs.append(sample)
    if ledger is not None and not user_checks:
        programs += [f"python {p}" for p in unproven_programs(ledger, root, goal)]
    given |= {c["cmd"] for c in found}
    found += [{"cmd": c, "source": "program"} for c in dict.fromkeys(programs) if c not in given]
    return [{"id": f"c{i}", **check} for i, check in enumerate(found, 1)]


def unproven_programs(ledger: Ledger, root: Path, goal: str = "") -> list[str]:
    """The Python scripts the goal wrote that nothing shows to work (written, then never
    run or only read), which run on their own: the verification runs each once, so that
    a small verifier model has a fact to judge. Not tests, packages' modules or scripts
    that read input; at most `PROGRAMS`, the latest written. For a goal that asks for a
    program (`program_goal`), also a script that calls none of its code (`idle_program`):
    run, it shows that it does nothing."""
    found = []
    for path, write in sorted(ledger.writes.items(), key=lambda item: item[1].seq):
        name = path.rsplit("/", 1)[-1]
        if not _SCRIPT_PATH.fullmatch(path) or name in NOT_SCRIPTS or name.startswith("test_"):
            continue
        if ledger.shown.get(path, 0) > write.seq or ledger.blank.get(path, (0, ""))[0] > write.seq:
            continue  # a run since the change showed what it does, or that it shows nothing
        if _runs_alone(root, path) or (program_goal(goal) and idle_program(root, path)):
            found.append(path)
    return found[-PROGRAMS:]


def _runs_alone(root: Path, path: str) -> bool:
    """Whether the script does something when run without reading input."""
    script = pyscript.read(root, path)
    return script is not None and script.acts and not script.reads_input


_PROGRAM_GOAL = re.compile(r"\b(?:game|script|program|cli|command[- ]line|app|application)\b", re.I)
_LIBRARY_GOAL = re.compile(r"\b(?:package|library|module)\b", re.I)


def program_goal(goal: str) -> bool:
    """Whether the goal asks for a program someone runs, not for code others import."""
    return bool(_PROGRAM_GOAL.search(goal)) and not _LIBRARY_GOAL.search(goal)


def idle_program(root: Path, path: str) -> list[str]:
    """What a script defines when it calls none of it and no other file of the workspace
    imports it ([] otherwise). Qwen2.5-Coder-1.5B's rps_game.py defined `play_game` and
    called nothing; its replans had dropped the run, the verification ran only scripts
    that do something, and the goal ended "completed" with a game that never plays."""
    script = pyscript.read(root, path)
    if script is None or script.acts or not script.defines or "/" in path:
        return []
    return [] if importers(root, path, script.defines) else script.defines


def unrunnable(
    checks: Iterable[str], allowed_commands: Iterable[str], root: Path, flagged: Iterable[str] = ()
) -> str | None:
    """Why some of the user's checks could never run in root, naming each, or None.

    The checks are judged as run_cmd will judge them, leaving out only what the goal
    itself may change (a script it is to write), so a check refused here would end up
    `not_run` after the whole goal. `flagged` are the ones given as --check (the rest
    come from the config file)."""
    allowed, given = tuple(allowed_commands), set(flagged)
    problems = []
    for cmd in checks:
        try:
            check_command(root, allowed, cmd)
        except tools.ToolError as exc:
            source = "--check" if cmd in given else "the config file's check"
            why = str(exc)
            if exc.name == "program_not_allowed":
                why += " (the allowed_commands setting)"
            problems.append(f"{source} {cmd!r} can never run: {why}")
    return "; ".join(problems) or None


def _normal(text: str) -> list[str]:
    return [line.rstrip() for line in text.replace("\r\n", "\n").strip("\n").split("\n")]


def _compare(expected: str, output: str) -> str | None:
    """Where the output departs from the expected text, or None when it matches
    (trailing spaces and blank lines at either end do not count)."""
    want, got = _normal(expected), _normal(output)
    if want == got:
        return None
    for number, (a, b) in enumerate(zip(want, got, strict=False), 1):
        if a != b:
            return f"line {number}: expected {a[:80]!r}, got {b[:80]!r}"
    if len(got) < len(want):
        return f"the output ends after {len(got)} lines; expected {len(want)}"
    return f"the output has {len(got) - len(want)} more lines than expected"


def run_check(ctx: tools.ToolContext, check: dict[str, Any]) -> dict[str, Any]:
    """Run one goal check; {status: passed|failed|not_run, summary, returncode, output}."""
    expected_text = None
    limit = ctx.output_limit
    if check.get("expected"):
        try:
            raw = safefs.read_inside(ctx.root, ctx.root / check["expected"], MAX_EXPECTED_BYTES)
        except (OSError, safefs.UnsafeFile) as exc:
            return {"status": "not_run", "summary": f"cannot read {check['expected']}: {exc}"}
        expected_text = raw.decode("utf-8", errors="replace")
        limit = max(limit, 2 * len(raw) + 1000)
    runner = dataclasses.replace(ctx, output_limit=limit)
    result = tools.execute(runner, "run_cmd", {"cmd": check["cmd"], "timeout_sec": CHECK_TIMEOUT})
    if not result.text.startswith(("exit code", "timed out")):
        return {"status": "not_run", "summary": result.text.split("\n", 1)[0][:300]}
    returncode, output = split_result(result.text)
    if check["source"] == "program":  # a fact for the verdict, folded into the ledger
        _, summary = judge("script", returncode, output)
        return {
            "status": "ran",
            "summary": summary.removeprefix("inconclusive: "),
            "returncode": returncode,
            "output": output[-OUTPUT_KEPT:],
        }
    kind = check_kind(check["cmd"]) or "command"
    passed, summary = judge(kind, returncode, output)
    if kind in ("command", "script"):  # a goal check's exit code is its verdict
        passed = returncode == 0 and passed is not False
        if passed and summary.startswith("inconclusive"):
            summary = "exit code 0"
    unproven = result.facts.get("unproven", [])
    if passed and check["source"] == "goal" and unproven:
        # A command line the goal states, run by a program that never opens the file it
        # was given (it counts sys.stdin: "0 0 0" for any file), shows nothing: the
        # 1.5B's rewritten wordcount.py passed so on the CPU.
        passed, summary = False, unproven[0]
    if passed and expected_text is not None:
        difference = _compare(expected_text, output)
        if difference:
            passed, summary = False, f"the output differs from {check['expected']}: {difference}"
        else:
            summary = f"the output matches {check['expected']}"
    status = "passed" if passed else "failed"
    if passed is None:  # a goal check that proves nothing did not pass
        status = "failed"
    return {
        "status": status,
        "summary": summary,
        "returncode": returncode,
        "output": output[-OUTPUT_KEPT:],
    }
