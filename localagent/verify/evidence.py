"""The completion gate: a subtask's "done" is checked against journal evidence.

No model call: the ledger says what was written, read and checked in the subtask, and
the workspace says whether the named outputs exist and the Python written compiles.
Hard failures refuse the claim; soft ones (a stale check, writes nobody looked at) get
one "not accepted yet".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from localagent.verify.ledger import Ledger, norm

OUTPUT_SUFFIXES = (
    "py|pyw|txt|md|rst|json|toml|yaml|yml|cfg|ini|csv|tsv|html|htm|css|js|ts|sh|bat|ps1|"
    "sql|xml|c|h|cpp|hpp|rs|go|java|kt|rb|php|lua|log|env"
)
_NAMED = re.compile(
    rf"(?<![\w/.\\-])((?:[\w.-]+[/\\])*[\w-][\w.-]*\.(?:{OUTPUT_SUFFIXES}))(?![\w/\\-])", re.I
)
# A subtask about removing or moving files names files that need not exist afterwards.
_REMOVES = re.compile(r"\b(delete|remove|rename|move|clean|drop|erase|uninstall)", re.I)
# Files that run: written and never run or read, nothing shows they work. A data or text
# file's content is exactly what the write said it wrote.
RUNNABLE = (".py", ".pyw", ".sh", ".bash", ".ps1", ".bat", ".js", ".mjs", ".ts", ".rb", ".pl")
MAX_NAMED = 12
MAX_SOURCE_BYTES = 2_000_000


@dataclass
class Gate:
    hard: list[str] = field(default_factory=list)
    soft: list[str] = field(default_factory=list)
    evidence: list[int] = field(default_factory=list)  # seqs of the records it relied on
    confirmed: list[str] = field(default_factory=list)  # named outputs found in place


def named_files(text: str) -> list[str]:
    """File names a subtask or a completion reason names, e.g. `game.py`, `src/x.toml`."""
    if _REMOVES.search(text):
        return []
    names = []
    for found in _NAMED.finditer(text):
        name = norm(found[1].rstrip("."))
        fine = name and not name.startswith("..") and not Path(name).is_absolute()
        if fine and name not in names:
            names.append(name)
    return names[:MAX_NAMED]


def syntax_problem(path: Path) -> str | None:
    """Why a Python file does not compile, or None (also when it cannot be read)."""
    try:
        if path.stat().st_size > MAX_SOURCE_BYTES:
            return None
        source = path.read_bytes()
    except OSError:
        return None
    try:
        compile(source, str(path.name), "exec", dont_inherit=True)
    except SyntaxError as exc:
        return f"syntax error at line {exc.lineno}: {exc.msg}"
    except ValueError as exc:
        return f"not Python source: {exc}"
    return None


def _exists(root: Path, name: str) -> str | None:
    target = root / name
    try:
        if target.is_dir():
            return None
        if not target.is_file():
            return f"{name} does not exist"
        if target.stat().st_size == 0:
            return f"{name} is empty"
    except OSError as exc:
        return f"{name} cannot be read ({exc.strerror})"
    return None


def gate(ledger: Ledger, root: Path, texts: list[str], scope: int | None = None) -> Gate:
    """The evidence for a completion claim: the subtask `scope` (default: the active one),
    or the whole goal with `scope=0`."""
    scope = ledger.subtask if scope is None else scope

    def mine(serial: int) -> bool:
        return scope == 0 or serial == scope

    result = Gate()
    names = dict.fromkeys(name for text in texts for name in named_files(text))
    for name in names:
        if name in ledger.removed:  # the agent deleted or moved it on purpose
            continue
        if problem := _exists(root, name):
            result.hard.append(problem)
        else:
            result.confirmed.append(name)
    writes = {path: w for path, w in ledger.writes.items() if mine(w.subtask)}
    for path, write in writes.items():
        target = root / path
        if path.endswith((".py", ".pyw")) and (problem := syntax_problem(target)):
            result.hard.append(f"{path}: {problem}")
            result.evidence.append(write.seq)
    for check in ledger.checks.values():
        if not mine(check.subtask):
            continue
        result.evidence.append(check.seq)
        later = [p for p, w in writes.items() if w.seq > check.seq]
        if later:
            result.soft.append(
                f"`{check.cmd}` ran before the last change to {', '.join(later[:3])}: run it again"
            )
        elif check.passed is False:
            result.hard.append(f"`{check.cmd}` did not pass ({check.summary})")
    for path, write in writes.items():
        if not path.lower().endswith(RUNNABLE):
            continue
        if ledger.seen.get(path, 0) < write.seq and (root / path).is_file():
            result.soft.append(f"{path} was written but never run or read")
    return result
