"""A failed subtask whose latest ruff check found problems ruff fixes itself goes back to
ruff's own fix (small profile): `ruff check --fix` with the check's arguments, then the
subtask again.

Qwen2.5-Coder-1.5B's mathx tests began `import mathx` with one blank line after it, and
`ruff check tests/test_mathx.py` failed on its import order, which ruff fixes itself.
Told so, and given the call to send, the model sent `{"old": "I001 [*] Import block is
sorted and formatted", ...}` until blocked, twice, and the round limit came (the CPU);
another run sorted the imported names by hand, which was not the fix, three times."""

from __future__ import annotations

from typing import Any

from localagent.loop.planfrom import from_failed
from localagent.state import ReplanDue, State
from localagent.state.ledger import CheckRun
from localagent.tools.ruffnotes import fix_command


def tasks(state: State, due: ReplanDue) -> list[dict[str, Any]] | None:
    """The plan from the failed subtask on, ruff's fix first, when the latest ruff check
    of the subtask failed on problems ruff fixes itself (its summary, ruff's last line,
    says how many), with nothing changed since; None otherwise."""
    found = fixable(state)
    return from_failed(state, due, f"run {found[1]}") if found is not None else None


def fixable(state: State) -> tuple[CheckRun, str] | None:
    """The active subtask's latest ruff check, when it failed on problems ruff fixes
    itself with nothing changed since, and the command that fixes them; None otherwise.
    Sent again, it could only find them again: the small profile's step fails at once
    (the 1.5B's mathx-1 sent `ruff check` twice more and was blocked three times)."""
    ledger = state.ledger
    runs = [c for c in ledger.checks.values() if c.kind == "ruff" and c.subtask == ledger.subtask]
    last = max(runs, key=lambda c: c.seq, default=None)
    if last is None or last.passed is not False or last.epoch != state.guard.epoch:
        return None
    fix = fix_command(last.cmd, last.summary)
    return (last, fix) if fix else None
