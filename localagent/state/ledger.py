"""The evidence ledger: what the journal shows was written, read, run and checked.

It is part of the journaled state (`State.ledger`), folded from `action_finished`
records by `note_action`, so the completion gate and the goal verdict read evidence,
never the model's word. Entries carry the serial number of the subtask they happened
in, so one subtask's evidence is a filter, not a copy.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from localagent.state.checkruns import (
    check_kind,
    command_words,
    judge,
    key,
    mentioned,
    norm,
    outcome,
    run_facts,
    run_off,
    summary_parts,
)
from localagent.state.settled import settled

MAX_WRITES = 400
MAX_SEEN = 400
MAX_CHECKS = 40
FACT_CHARS = 200  # a fact of a run (`broken`, `wrong`), as the ledger keeps it
WRONGS = 12  # the wrong values of a test run kept (`tools.asserted.MOST_WRONG`)

# Tools that only look: their success is the work of a subtask that asks to look something up.
LOOKUPS = frozenset(
    {"read_file", "list_dir", "search_files", "find_files", "read_output"}
    | {"git_status", "git_log", "git_diff"}
)


class Write(BaseModel):
    model_config = ConfigDict(defer_build=True)  # built with the state that holds it

    seq: int
    subtask: int
    emptied: bool = False  # it left a Python file that had functions or classes with none


class CheckRun(BaseModel):
    """The latest run of one check command."""

    model_config = ConfigDict(defer_build=True)  # built with the state that holds it

    cmd: str
    kind: str
    seq: int
    subtask: int
    passed: bool | None  # None: inconclusive (it waited for input, or ran too long)
    summary: str
    epoch: int = -1  # the workspace's epoch after it ran: equal to today's, nothing changed
    broken: str = ""  # "path: error" of a workspace file it failed to load (`tools.loaderror`)
    wrong: str = ""  # what a call returned against what a test asserted (`tools.asserted`)
    wrongs: list[str] = Field(default_factory=list)  # that, and the next few such failures
    # [path, old, new]: the edit of a test that checks a raise wrong (`tools.raisedtests`)
    test_edit: list[str] = Field(default_factory=list)


class Ledger(BaseModel):
    model_config = ConfigDict(defer_build=True)  # built with the state that holds it

    subtask: int = 0  # serial number of the active subtask (starts at 1)
    writes: dict[str, Write] = Field(default_factory=dict)  # path -> its latest write
    seen: dict[str, int] = Field(default_factory=dict)  # path -> seq of its latest read or run
    # path -> seq of its latest run that showed something (output, an exit code, tests
    # that passed): a program is checked by this, never by reading it.
    shown: dict[str, int] = Field(default_factory=dict)
    # path -> (seq, summary) of its latest run that showed nothing, to say why it is unproven
    blank: dict[str, tuple[int, str]] = Field(default_factory=dict)
    tried: int = 0  # tool calls made (run or blocked) in this subtask
    worked: int = 0  # of them, those that changed the workspace or ran a program
    looked: int = 0  # of them, look-ups that succeeded (a file read, a search, a listing)
    removed: dict[str, int] = Field(default_factory=dict)  # path -> seq of its deletion or move
    checks: dict[str, CheckRun] = Field(default_factory=dict)  # command -> its latest run
    refused: int = 0  # completion claims refused in this subtask
    nudged: bool = False  # this subtask had its one "not accepted yet"


def latest_tests(ledger: Ledger) -> CheckRun | None:
    """The latest run of the tests (pytest or unittest), whatever its outcome."""
    runs = [run for run in ledger.checks.values() if run.kind in ("pytest", "unittest")]
    return max(runs, key=lambda run: run.seq, default=None)


def script_runs(ledger: Ledger) -> list[tuple[CheckRun, int, str]]:
    """The runs of scripts since their script's last change, oldest first, each with its
    exit code and the last line it printed ("" for none); runs with no exit code (cut
    short, inconclusive) are left out."""
    found = []
    for check in sorted(ledger.checks.values(), key=lambda c: c.seq):
        said = command_words(check.cmd)
        write = ledger.writes.get(norm(said[1])) if len(said) > 1 else None
        shown = summary_parts(check.summary)
        if check.kind == "script" and shown and (write is None or write.seq < check.seq):
            found.append((check, *shown))
    return found


def _bound(items: dict[str, Any], limit: int, order: Any) -> None:
    while len(items) > limit:
        del items[min(items, key=order)]


def new_subtask(ledger: Ledger) -> None:
    ledger.subtask += 1
    ledger.refused = 0
    ledger.nudged = False
    ledger.tried = 0
    ledger.worked = 0
    ledger.looked = 0


def recorded_facts(rec: dict[str, Any]) -> dict[str, list[str]]:
    """What an `action_finished` record says the call did: its `facts`, or for records
    written before tools reported facts, what the four tools of that time did."""
    facts = rec.get("facts")
    if isinstance(facts, dict):
        return {str(k): [str(x) for x in v] for k, v in facts.items() if isinstance(v, list)}
    tool, args = rec.get("tool"), rec.get("args") or {}
    path = args.get("path") if isinstance(args.get("path"), str) else ""
    if tool == "run_cmd":
        return {"ran": [str(args.get("cmd", ""))]}
    if rec.get("changed") and path and tool == "write_file":
        return {"wrote": [path]}
    if rec.get("ok") and path and tool == "read_file":
        return {"read": [path]}
    return {}


def note_action(ledger: Ledger, rec: dict[str, Any], epoch: int = -1) -> None:
    """Fold one `action_finished` record into the ledger; `epoch`: the workspace's epoch
    once the action ended."""
    facts, seq = recorded_facts(rec), rec["seq"]
    ledger.tried += 1
    # An unchanged rewrite ("already has this content") is no work; a program run is.
    ledger.worked += bool(rec.get("changed") or facts.get("ran"))
    ledger.looked += bool(rec.get("ok") and rec.get("tool") in LOOKUPS)
    for cmd in facts.get("ran", []):
        _note_command(ledger, cmd, rec, epoch)
    for path in map(norm, facts.get("removed", [])):
        ledger.writes.pop(path, None)
        ledger.removed[path] = seq
        _bound(ledger.removed, MAX_SEEN, lambda p: ledger.removed[p])
    emptied = set(map(norm, facts.get("emptied", [])))
    for path in map(norm, facts.get("wrote", [])):
        ledger.writes.pop(path, None)
        ledger.removed.pop(path, None)
        ledger.writes[path] = Write(seq=seq, subtask=ledger.subtask, emptied=path in emptied)
        _bound(ledger.writes, MAX_WRITES, lambda p: ledger.writes[p].seq)
    for path in map(norm, facts.get("read", [])):
        ledger.seen[path] = seq
        _bound(ledger.seen, MAX_SEEN, lambda p: ledger.seen[p])


def note_program_check(ledger: Ledger, rec: dict[str, Any]) -> None:
    """Fold a program the verification ran itself (a `check_finished` record whose source
    is "program") into the ledger: what it showed, as a run of the model's would. It is
    no check: a crash is a fact for the verdict, not a failure."""
    if rec.get("status") != "ran":
        return  # refused or not run: no evidence either way
    cmd, code = str(rec.get("cmd", "")), rec.get("returncode")
    found = judge("script", code, str(rec.get("output") or ""))
    if found[0] is not False:  # a crash run without arguments or input is no verdict
        _note_shown(ledger, mentioned(cmd), rec["seq"], *found)


def own_result(rec: dict[str, Any]) -> str:
    """An `action_finished` record's observation without the note the loop added after
    it (`note_at`): "SUBTASK COMPLETE: …" is not the program's output. Qwen2.5-Coder-1.5B's
    greet.py printed its usage and exited 0; the run's summary read "exit code 0: SUBTASK
    COMPLETE: 'run python greet.py' is done", and so did the verdict that cited it."""
    text, cut = str(rec.get("result", "")), rec.get("note_at")
    return text[:cut] if isinstance(cut, int) and not isinstance(cut, bool) and cut >= 0 else text


def _note_command(ledger: Ledger, cmd: str, rec: dict[str, Any], epoch: int) -> None:
    seq = rec["seq"]
    facts = recorded_facts(rec)
    fed, unproven = run_facts(facts, cmd)
    empty = (facts.get("empty") or [""])[0] if cmd in facts.get("ran", []) else ""
    found = outcome(cmd, own_result(rec), fed, unproven, empty, run_off(facts, cmd))
    if found is None:
        return  # refused, or stopped before it ended: no evidence either way
    kind = check_kind(cmd)
    observed = mentioned(cmd)
    if kind in ("pytest", "unittest"):  # tests exercise the code written so far
        observed += [path for path in ledger.writes if path.endswith(".py")]
    for path in observed:
        ledger.seen[path] = seq
    _bound(ledger.seen, MAX_SEEN, lambda p: ledger.seen[p])
    passed, summary = found
    if kind != "ruff":  # a linter does not run the program
        _note_shown(ledger, observed, seq, passed, summary)
    if kind is None:
        return
    ledger.checks.pop(key(cmd), None)
    ledger.checks[key(cmd)] = CheckRun(
        cmd=key(cmd),
        kind=kind,
        seq=seq,
        subtask=ledger.subtask,
        passed=passed,
        summary=summary,
        epoch=epoch,
        broken=_first(facts, "broken") if passed is False else "",
        wrong=_first(facts, "wrong") if passed is False else "",
        wrongs=[w[:FACT_CHARS] for w in facts.get("wrong", [])[:WRONGS]] if passed is False else [],
        test_edit=_edit(facts) if passed is False else [],
    )
    # What `ruff check --fix X` left, `ruff check X` would not find: its failure is over.
    settle(ledger, ledger.checks[key(cmd)])
    _bound(ledger.checks, MAX_CHECKS, lambda k: ledger.checks[k].seq)


def settle(ledger: Ledger, passing: CheckRun) -> None:
    """Drop the failed check runs a later passing one settles (see `settled`): the goal's
    own checks too, which the ledger does not keep."""
    for name, run in list(ledger.checks.items()):
        if settled(passing, run):
            del ledger.checks[name]


def note_goal_check(ledger: Ledger, rec: dict[str, Any]) -> None:
    """Fold a goal check the verification ran (a `check_finished` record) into the
    ledger: a test or ruff run that passed settles the failed runs it covers."""
    cmd, kind = str(rec.get("cmd") or ""), check_kind(str(rec.get("cmd") or ""))
    if rec.get("status") == "passed" and kind in ("pytest", "unittest", "ruff"):
        settle(ledger, CheckRun(cmd=key(cmd), kind=kind, seq=rec["seq"], subtask=0,
                                passed=True, summary=""))  # fmt: skip


def _edit(facts: dict[str, list[str]]) -> list[str]:
    """A run's `test_edit` fact, when it is one (three texts, none longer than an edit)."""
    found = facts.get("test_edit", [])
    if len(found) == 3 and all(isinstance(t, str) and len(t) <= FACT_CHARS for t in found):
        return list(found)
    return []


def _first(facts: dict[str, list[str]], name: str) -> str:
    return next(iter(facts.get(name, [])), "")[:FACT_CHARS]


def _note_shown(
    ledger: Ledger, paths: list[str], seq: int, passed: bool | None, summary: str
) -> None:
    """Which programs a run showed to do something, and which it left unproven."""
    for path in paths:
        if passed:
            ledger.shown[path] = seq
            ledger.blank.pop(path, None)
        elif passed is None:
            ledger.blank[path] = (seq, summary.removeprefix("inconclusive: "))
    _bound(ledger.shown, MAX_SEEN, lambda p: ledger.shown[p])
    _bound(ledger.blank, MAX_SEEN, lambda p: ledger.blank[p][0])
