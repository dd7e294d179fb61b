"""Goal checks: the commands that show a goal is achieved, and running one.

The user's checks (`start --check`, `checks = [...]`) come first; then what the
workspace calls for: `python -m pytest -q` when it has tests, and `python main.py`
compared with `expected.txt` when both exist. Checks run through the same guarded
command runner as the model's commands (allow-list, timeout, workspace environment),
and may run twice after a crash, so they must be idempotent.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

from localagent import tools
from localagent.verify.ledger import check_kind, judge, key, split_result

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


def goal_checks(user_checks: tuple[str, ...] | list[str], root: Path) -> list[dict[str, Any]]:
    """The checks to run for a goal, each {id, cmd, source[, expected]}."""
    found: list[dict[str, Any]] = [{"cmd": key(c), "source": "user"} for c in user_checks]
    given = {c["cmd"] for c in found}
    if _has_tests(root) and PYTEST not in given:
        found.append({"cmd": PYTEST, "source": "tests"})
    if (root / EXPECTED_FILE).is_file() and (root / EXPECTED_PROGRAM).is_file():
        found.append(
            {"cmd": f"python {EXPECTED_PROGRAM}", "source": "expected", "expected": EXPECTED_FILE}
        )
    return [{"id": f"c{i}", **check} for i, check in enumerate(found, 1)]


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
            raw = (ctx.root / check["expected"]).read_bytes()[:MAX_EXPECTED_BYTES]
        except OSError as exc:
            return {"status": "not_run", "summary": f"cannot read {check['expected']}: {exc}"}
        expected_text = raw.decode("utf-8", errors="replace")
        limit = max(limit, 2 * len(raw) + 1000)
    runner = dataclasses.replace(ctx, output_limit=limit, on_launch=None)
    result = tools.execute(runner, "run_cmd", {"cmd": check["cmd"], "timeout_sec": CHECK_TIMEOUT})
    if not result.text.startswith(("exit code", "timed out")):
        return {"status": "not_run", "summary": result.text.split("\n", 1)[0][:300]}
    returncode, output = split_result(result.text)
    kind = check_kind(check["cmd"]) or "command"
    passed, summary = judge(kind, returncode, output)
    if kind == "command":  # any other program: its exit code is the verdict
        passed = returncode == 0
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
