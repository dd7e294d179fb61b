"""Exit statuses a goal states for its program run without arguments, checked against
the runs the journal has.

"Write greet.py: python greet.py NAME prints Hello, NAME! and exits 0; run without
arguments it prints a usage message and exits with status 2": Qwen2.5-Coder-1.5B's
greet.py printed its usage and exited 0; the run was a fact, its status never compared
with the goal's, and the small verifier said VERIFIED (2 runs of 7, on an H100 and on the
CPU). A run of `python greet.py` after the script's last change whose status is not the
one the goal states is a hard finding: the goal is not verified.
"""

from __future__ import annotations

import re
from typing import Any

from localagent.state.ledger import key
from localagent.verify.evidence import named_files

_NO_ARGS = r"(?:when\s+)?(?:it\s+is\s+)?(?:run\s+)?(?:without|with\s+no)\s+(?:any\s+)?arguments?"
_STATUS = r"exits?\s+(?:with\s+)?(?:(?:exit\s+)?(?:status|code)\s+)?(\d{1,3})\b"
_STATED = (
    re.compile(rf"\b{_NO_ARGS}\b[^.;]{{0,80}}?\b{_STATUS}", re.I),
    re.compile(rf"\b{_STATUS}\s+{_NO_ARGS}\b", re.I),
)
_EXIT = re.compile(r"exit code (-?\d+)")


def stated_status(goal: str) -> int | None:
    """The exit status the goal states for a run without arguments, or None."""
    for pattern in _STATED:
        if found := pattern.search(goal):
            return int(found[1])
    return None


def mismatches(goal: str, ledger: Any) -> list[str]:
    """Each run of the goal's script without arguments, after its last change, whose
    exit status is not the one the goal states."""
    wanted = stated_status(goal)
    scripts = [name for name in named_files(goal) if name.endswith(".py")]
    if wanted is None or not scripts:
        return []
    script = scripts[0]
    found = []
    for cmd in (f"python {script}", f"python3 {script}"):
        check = ledger.checks.get(key(cmd))
        write = ledger.writes.get(script)
        if check is None or (write is not None and write.seq > check.seq):
            continue
        got = _EXIT.match(check.summary)
        if got is not None and int(got[1]) != wanted:
            found.append(
                f"the goal says {script} run without arguments exits with status {wanted}; "
                f"`{check.cmd}` exited {got[1]} ({check.summary[:80]})"
            )
    return found
