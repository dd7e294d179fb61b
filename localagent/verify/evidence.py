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

from localagent.state.checkruns import norm
from localagent.state.ledger import LOOKUPS, Ledger
from localagent.system import safefs
from localagent.tools import defects, pyscript
from localagent.verify.where import is_folder, locate

OUTPUT_SUFFIXES = (
    "py|pyw|txt|md|rst|json|toml|yaml|yml|cfg|ini|csv|tsv|html|htm|css|js|ts|sh|bat|ps1|"
    "sql|xml|c|h|cpp|hpp|rs|go|java|kt|rb|php|lua|log|env"
)
_NAMED = re.compile(
    rf"(?<![\w/.\\-])((?:[\w.-]+[/\\])*[\w-][\w.-]*\.(?:{OUTPUT_SUFFIXES}))(?![\w/\\-])", re.I
)
# A subtask about removing or moving files names files that need not exist afterwards:
# one where the verb's object is a file or a folder ("move utils.py into pkg/", "delete
# the build folder"), not code ("move the area formulas into one function": the 1.5B's
# refactor step, whose shapes.py must still be there).
_REMOVES = re.compile(
    r"\b(?:delete|remove|rename|move|clean|drop|erase)\w*\s+(?:up\s+)?(?:the\s+|all\s+)?"
    r"(?:(?:[\w-]+\s+)?(?:files?|folders?|director(?:y|ies))\b|[\w./\\-]+\.[A-Za-z0-9]{1,6}\b"
    r"|[\w.-]+[/\\])",
    re.I,
)
# A look-up subtask ("Find where X is defined", "Read README") starts with one of these
# and asks to make, change, run or test nothing: what it found is its work. A verb that
# asks for more counts where a clause starts ("Read main.py and fix it"), not as a name
# ("Find where add is defined"); running and testing count anywhere.
# A look-up tool's name counts as its verb ("read_file shapes.py", the small plan's form).
_LOOKS = re.compile(
    r"\s*(?:" + "|".join(sorted(LOOKUPS)) + r"|find|read|search|look|list|locate|inspect|"
    r"view|open|show|check|review|examine|explore|identify|understand|see|get|study|scan|"
    r"browse|determine)\b",
    re.I,
)
_MAKES = re.compile(
    r"(?:^|\b(?:and|then|to|also)\s+|[,;:.]\s*)(?:writ|wrote|creat|add|implement|fix|chang|"
    r"updat|modif|edit|replac|mak|sav|delet|remov|renam|mov|append|refactor|generat|build|"
    r"install|commit|print|set ?up|insert|convert|format|lint|initiali[sz]|defin)"
    r"(?:e|es|ed|ing|s|d|y|ies|ied|ion|ten)?\b"
    r"|\b(?:run|runs|running|ran|execut\w*|tests?|testing|pytest)\b",
    re.I,
)
# Files that run: written and never run or read, nothing shows they work. A data or text
# file's content is exactly what the write said it wrote.
RUNNABLE = (".py", ".pyw", ".sh", ".bash", ".ps1", ".bat", ".js", ".mjs", ".ts", ".rb", ".pl")
IDLE = (
    "nothing was changed or run in this subtask (rewriting a file with the content it "
    "already has is no progress): do the subtask's work, or run what shows it is done"
)
MAX_NAMED = 12
MAX_SOURCE_BYTES = 2_000_000


@dataclass
class Gate:
    hard: list[str] = field(default_factory=list)
    soft: list[str] = field(default_factory=list)
    evidence: list[int] = field(default_factory=list)  # seqs of the records it relied on
    confirmed: list[str] = field(default_factory=list)  # named outputs found in place
    unproven: list[str] = field(default_factory=list)  # programs nothing shows to work


def named_files(text: str) -> list[str]:
    """File names a subtask or a completion reason names, e.g. `game.py`, `src/x.toml`,
    that must be there afterwards (none, for a text about removing or moving files)."""
    return [] if _REMOVES.search(text) else file_names(text)


def file_names(text: str) -> list[str]:
    """File names a text names, whatever it says to do with them."""
    names = []
    for found in _NAMED.finditer(text):
        name = norm(found[1].rstrip("."))
        fine = name and not name.startswith("..") and not Path(name).is_absolute()
        if fine and name not in names:
            names.append(name)
    return names[:MAX_NAMED]


def syntax_problem(root: Path, path: Path) -> str | None:
    """Why a Python file does not compile, or None (also when it cannot be read, is
    a link out of the workspace, or is nested too deeply for the compiler to check)."""
    try:
        source = safefs.read_inside(root, path, MAX_SOURCE_BYTES + 1)
    except (OSError, safefs.UnsafeFile):
        return None
    if len(source) > MAX_SOURCE_BYTES:
        return None
    try:
        compile(source, str(path.name), "exec", dont_inherit=True)
    except SyntaxError as exc:
        return f"syntax error at line {exc.lineno}: {exc.msg}"
    except ValueError as exc:
        return f"not Python source: {exc}"
    except (RecursionError, MemoryError):
        return None
    return None


def _exists(root: Path, name: str) -> tuple[str | None, str]:
    """(why the named file is not there, or None; the path it was found at)."""
    found = locate(root, name)
    if found is None:
        return f"{name} does not exist", name
    target = root / found
    try:
        if target.stat().st_size == 0:
            return f"{found} is empty", found
    except OSError as exc:
        return f"{found} cannot be read ({exc.strerror})", found
    return None, found


# A step that changes a file: an edit ("replace_in_file stats.py to fix the bug"), or a
# file sent back to be written changed ("write_file wordcount.py again, changed so that
# it counts the words right"): the 1.5B ran the program instead and called it done, and
# the next run failed on the same count (the CPU).
REWRITE = re.compile(r"(?:write_file (\S+\.\w+) again, changed|replace_in_file (\S+\.\w+))\b")


def gate(ledger: Ledger, root: Path, texts: list[str], scope: int | None = None) -> Gate:
    """The evidence for a completion claim: the subtask `scope` (default: the active one),
    or the whole goal with `scope=0`."""
    scope = ledger.subtask if scope is None else scope

    def mine(serial: int) -> bool:
        return scope == 0 or serial == scope

    result = Gate()
    _named(result, ledger, root, texts)
    writes = {path: w for path, w in ledger.writes.items() if mine(w.subtask)}
    for path, write in writes.items():
        target = root / path
        if path.endswith((".py", ".pyw")) and (problem := syntax_problem(root, target)):
            result.hard.append(f"{path}: {problem}")
            result.evidence.append(write.seq)
        elif path.endswith((".py", ".pyw")) and (wrong := _defects(root, target, path)):
            result.hard += [f"{path}: {problem}" for problem in wrong]
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
        elif check.passed is None and check.kind == "script":
            why = check.summary.removeprefix("inconclusive: ")
            result.soft.append(f"`{check.cmd}` shows nothing yet: {why}")
    for path, write in writes.items():
        runnable = path.lower().endswith(RUNNABLE) and (root / path).is_file()
        if runnable and (problem := unproven(ledger, path, write.seq)):
            result.soft.append(problem)
            result.unproven.append(path)
    if scope != 0 and not ledger.worked and not (ledger.looked and is_lookup(texts[:1])):
        result.soft.append(IDLE)
    if scope != 0 and texts and (edit := REWRITE.match(texts[0])):
        path = edit[1] or edit[2]
        if path not in writes:
            result.hard.append(f"{path} is not written in this subtask, which asks to change it")
    return result


def _defects(root: Path, target: Path, path: str) -> list[str]:
    """What the written Python file's text shows is wrong (`tools.defects`)."""
    try:
        source = safefs.read_inside(root, target, pyscript.MAX_SOURCE_BYTES)
    except (OSError, safefs.UnsafeFile):
        return []
    return defects.found(source, path)


def is_lookup(texts: list[str]) -> bool:
    """Whether the subtask (its description, first of `texts`) only asks to look
    something up: it asks to make, change or run nothing."""
    # Its files are no verbs: "read_file tests/test_mathx.py" asks for no test run.
    return (
        bool(texts)
        and bool(_LOOKS.match(texts[0]))
        and not _MAKES.search(_NAMED.sub(" ", texts[0]))
    )


def _named(result: Gate, ledger: Ledger, root: Path, texts: list[str]) -> None:
    """The files the texts name: each must be in the workspace (found where it is)."""
    for name in dict.fromkeys(name for text in texts for name in named_files(text)):
        if name in ledger.removed or is_folder(root, name):  # deleted on purpose, or a folder
            continue
        problem, found = _exists(root, name)
        if problem:
            result.hard.append(problem)
        else:
            result.confirmed.append(found)


def unproven(ledger: Ledger, path: str, written: int) -> str | None:
    """Why nothing shows the program at `path` works since its last change, or None: it
    counts as checked once a run after the change showed something, or its tests passed."""
    if ledger.shown.get(path, 0) > written:
        return None
    seq, why = ledger.blank.get(path, (0, ""))
    if seq > written:
        return f"{path} ran after its last change but {why}: run it so that it shows it works"
    if ledger.seen.get(path, 0) > written:
        return f"{path} was only read; reading does not check a program: run it, or its tests"
    return f"{path} was written but never run or read"
