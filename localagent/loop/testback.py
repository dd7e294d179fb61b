"""A test run that failed after an edit goes back to the code it tests (small profile),
or, when this run wrote the test and it expects another value than this run's code
returns, to whichever of the two the model, asked alone, says is wrong.

Qwen2.5-Coder-1.5B's mathx runs on the CPU wrote `subtract(a, b)` as `return a - b`,
and tests in parametrize tables whose values it had got wrong: `(1, 2, 1)` for
subtract, `(3, 2, 1)` for multiply. The tests failed with "subtract(1, 2) must return 1
(it returned -1)", the hand-back sent the model to fix mathx/subtract.py, and it had
nothing to fix: it sent the function back as it was until the round limit. Asked alone,
with the goal and no code, "What does subtract(1, 2) return?", the same model answered
-1, and it answered the other calls of those tables right too (the CPU).

So when the latest test run failed on such a value, in a test file this run wrote, the
hand-back asks that question first. An answer that is the code's value and not the
test's sends the model to the test's expected value instead; any other answer (none,
or the test's, or a third value) leaves the hand-back to the code as it was. The answer
is a model call of the replan, journaled with it; the tests the user gave are never
questioned.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from localagent.loop.planfrom import from_failed
from localagent.loop.subtasks import FILE, TESTS, edited_file, ran_by, read_file_of, written_file
from localagent.loop.testrows import block_edit, row_edit, row_of, same
from localagent.prompts.promptset import PromptSet
from localagent.state import ReplanDue, State
from localagent.state.checkruns import norm
from localagent.state.ledger import latest_tests
from localagent.tools import pyscript
from localagent.tools.loaderror import ERROR_CHARS
from localagent.tools.noneresult import none_from, none_note
from localagent.tools.pkgimports import text_of
from localagent.tools.pyscript import TEST_FILE

# `tools.asserted.wrong_value`'s words.
WRONG = re.compile(
    r"^(?P<call>\w[\w.]*\(.*\)) must return (?P<expected>.+) \(it returned (?P<got>.+)\)$"
)
_TEST_FILE = re.compile(r"([\w./\\-]+\.py)::")


def failed_after_edit(
    state: State, subtask: str, root: Path | None = None
) -> tuple[str, str] | None:
    """For a run `subtask` that runs the tests, when the subtask before it edited or
    wrote a file (a test file only when this run wrote the code it tests): that file, or
    the one this run wrote that defines the function the failed test is named after
    (`_tested`, given the workspace `root`), and what failed, when the latest test run
    failed on its assertions (every file loaded) with nothing changed since. The 1.5B's
    fixtest plans: "replace_in_file stats.py to fix the bug", then "run python -m
    pytest"; the tests failed, the model ran them again until three strikes, and the
    replans were spent."""
    if ran_by(subtask) != TESTS:
        return None
    ledger = state.ledger
    last = latest_tests(ledger)
    if last is None or last.passed is not False or last.broken:
        return None
    if last.epoch != state.guard.epoch:
        return None
    before = _before(state, subtask)
    path = edited_file(before) or written_file(before)
    if not path.endswith(".py") or path not in ledger.writes:
        return None
    tested = _tested(root, ledger, last.summary, last.wrong) if root is not None else ""
    if TEST_FILE.search(path) and not tested:
        return None  # a test of this run's (`testback` may have edited it), of no code here
    path = tested or path
    failed = FILE.sub("", last.summary.split(" - ", 1)[-1]).strip()[:ERROR_CHARS]
    return path, last.wrong or failed


_FAILED_TEST = re.compile(r"::test_(\w+?)(?:\[|\s|$)")


def _tested(root: Path, ledger: Any, summary: str, wrong: str = "") -> str:
    """The file this run wrote (not a test file) that defines the function whose value
    was `wrong` ("mathx.divide(0, 2) must return ...": divide), else the function the
    failed test is named after (`test_divide[1-2-0]`: divide, `test_divide_by_zero`: the
    longest name of its words that a file defines). The 1.5B's mathx on the CPU: its
    test_divide failed, and the handback sent it to mathx/subtract.py, the file its plan
    wrote last; another run's test_mathx failed on mathx.divide's value, and so did that."""
    found = _FAILED_TEST.search(summary)
    words = found[1].split("_") if found else []
    written = [p for p in ledger.writes if p.endswith(".py") and not TEST_FILE.search(p)]
    if called := WRONG.match(wrong):
        name = function_of(called["call"])
        if owner := next((p for p in written if name in pyscript.defines(root, p)), ""):
            return owner
    for size in range(len(words), 0, -1):
        name = "_".join(words[:size])
        for path in written:
            if name in pyscript.defines(root, path):
                return path
    return ""


def function_of(call: str) -> str:
    """The function a call names: `subtract` of `mathx.subtract(5, 0)`."""
    return call.split("(", 1)[0].rsplit(".", 1)[-1]


def _before(state: State, subtask: str) -> str:
    """The plan's subtask just before the latest one with this text that is not done."""
    assert state.goal is not None
    texts = [(s.description, s.status) for t in state.goal.tasks for s in t.subtasks]
    at = max(
        (i for i, (d, st) in enumerate(texts) if d == subtask and st != "completed"), default=0
    )
    return texts[at - 1][0] if at > 0 else ""


def edit_tasks(
    state: State, due: ReplanDue, found: tuple[str, str], prompts: PromptSet, root: Path
) -> list[dict[str, Any]]:
    """The plan from the failed test run on: a read of the file, then an edit of it naming
    the failure (and the function a None came from, `noneresult`). The replan starts the
    window anew: without the read the model edits a file it no longer sees (the 1.5B sent
    the failing assertion as the text to replace)."""
    failure = found[1]
    if named := none_from(root, found[0], failure):
        failure = f"{failure} ({none_note(named)})"
    edit = prompts.render("handback_edit", path=found[0], failure=failure)
    if edited_file(edit) != found[0]:
        edit = prompts.render("handback_edit", path=found[0], failure="see the tests' output")
    read = prompts.render("handback_read", path=found[0])
    return from_failed(state, due, *([read] if read_file_of(read) == found[0] else []), edit)


def expected_tasks(
    state: State,
    due: ReplanDue,
    failure: str,
    prompts: PromptSet,
    ask: Callable[[str], str],
    root: Path | None = None,
    failed: bool = True,
) -> list[dict[str, Any]] | None:
    """The plan from the failed test run on, a read of the test file and an edit of its
    expected value (naming the text to replace, where `row_edit` finds it in the file
    under `root`), then the failed subtask again (unless not `failed`: `stoodback`) and
    the rest, when the model's own answer for the failed call is the code's value;
    None otherwise (`ask`: the model's answer for a call, `Planner.value`)."""
    test = own_test_file(state)
    last = latest_tests(state.ledger)
    failures = list(dict.fromkeys([failure, *(last.wrongs if last else [])]))
    ask = _once(ask)
    wrong = _confirmed(failures, ask) if test else None
    if wrong is None:
        return None
    said = {"path": test, "call": wrong["call"], "got": wrong["got"]}
    said["expected"] = wrong["expected"]
    edit = prompts.render("handback_expected", **said)
    source = text_of(root, test) if root is not None else None
    more: list[str] = []
    others = [f for f in failures if f != wrong[0]]
    row = row_edit(source, wrong["call"], wrong["got"], wrong["expected"]) if source else None
    # A row named with the lines around it: its table's other rows in the same edit.
    block = _block(source, wrong, others, ask) if source and (not row or "\n" in row[0]) else None
    edited = None  # (old, new, the text the other rows' edits leave alone)
    if row and not block:
        old, new = _table(source, wrong, others, ask) or row
        first = row_of(source, wrong["call"], wrong["got"], wrong["expected"])
        edited = (old, new, first[0] if first else old)
    elif block:
        edited = (*block, block[1])
    if source and edited:
        old, new, done = edited
        exact = _row_step(prompts, said, old, new)
        edit = exact if edited_file(exact) == test else edit
        more = _other_rows(source.replace(old, new, 1), done, test, others, ask, prompts)
    read = prompts.render("handback_read", path=test)
    if edited_file(edit) != test or read_file_of(read) != test:
        return None
    return from_failed(state, due, read, edit, *more, failed=failed)


def raise_tasks(
    state: State, due: ReplanDue, prompts: PromptSet, root: Path
) -> list[dict[str, Any]] | None:
    """When the failed test run's note gave the edit of a test that checks a raise the
    code makes otherwise (`tools.raisedtests`: a comparison of a call that raises on
    purpose, a `pytest.raises` around a call that misses the condition the code raises
    under), in a test file this run wrote: the plan from it on, a read of that file, that
    edit, then the run. The 1.5B's mathx wrapped `divide(a, b)` in `pytest.raises` for a
    table that never divides by zero; its hand-back went to mathx/__init__.py with
    pytest's words, which the model sent as the text to replace until the round limit,
    the note's edit of the test never made. Another compared `divide(0, 0)` with a
    string, and ran pytest until it was blocked, three subtasks running."""
    last = latest_tests(state.ledger)
    if ran_by(due.subtask) != TESTS or last is None or len(last.test_edit) != 3:
        return None
    if last.epoch != state.guard.epoch:
        return None
    path, old, new = last.test_edit
    if path != own_test_file(state):
        return None
    if (text_of(root, path) or "").count(old.strip()) == 1:  # its indent is the file's
        old, new = old.strip(), new.strip()
    shown = {"old": old.replace("\n", "\\n"), "new": new.replace("\n", "\\n")}
    edit = prompts.render("handback_raise", path=path, **shown)
    read = prompts.render("handback_read", path=path)
    if edited_file(edit) != path or read_file_of(read) != path:
        return None
    return from_failed(state, due, read, edit)


MORE_ROWS = 3  # edits of other wrong rows in one hand-back, each a step


def _other_rows(
    source: str,
    first: str,
    test: str,
    failures: list[str],
    ask: Callable[[str], str],
    prompts: PromptSet,
) -> list[str]:
    """An edit step for each other wrong row of the run (not on the first row's line
    `first`, which `_table` fixed) that the model, asked alone, answers with the code's value, as
    `source` stands after the edits before it, with the other rows of its line or table
    that it confirms too. The 1.5B's mathx tables on the CPU held seven wrong rows, each
    on a line of its own; one hand-back fixed one, and the round limit came after three.
    Another's held twelve in three tables, each on a line: one hand-back a table, and the
    round limit came after two."""
    steps: list[str] = []
    for failure in failures:
        wrong = WRONG.match(failure)
        if wrong is None or len(steps) == MORE_ROWS:
            continue
        found = row_edit(source, wrong["call"], wrong["got"], wrong["expected"])
        if found is not None and found[0] in first:  # on the first row's line: `_table`'s
            continue
        if not _code_s(ask(wrong["call"]), wrong):
            continue
        if found is None or "\n" in found[0]:  # its table whole, where that names more
            found = _block(source, wrong, failures, ask) or found
        else:  # and the other wrong rows of its line that the model confirms
            found = _table(source, wrong, failures, ask) or found
        if found is None:
            continue
        said = {"path": test, "call": wrong["call"], "got": wrong["got"]}
        step = _row_step(prompts, {**said, "expected": wrong["expected"]}, *found)
        if edited_file(step) == test:
            steps.append(step)
            source = source.replace(found[0], found[1], 1)
    return steps


def _row_step(prompts: PromptSet, said: dict[str, str], old: str, new: str) -> str:
    """The edit step of one row: lines apart as a step writes them, on one line, `\n`,
    which the call's JSON reads as the break."""
    shown = {"old": old.replace("\n", "\\n"), "new": new.replace("\n", "\\n")}
    return prompts.render("handback_expected_row", **said, **shown)


FIRST_ASKED = 3  # failed calls asked about until one answer is the code's value


def _confirmed(failures: list[str], ask: Callable[[str], str]) -> re.Match[str] | None:
    """The first of the test run's wrong values whose call the model, asked alone, answers
    with the code's value (not the test's), asking about at most FIRST_ASKED of them; None
    as soon as an answer is the test's value (the model stands by the test: the code is
    for fixing). The 1.5B's mathx table on the CPU: asked for subtract(10, 0), it answered
    0, a third value; asked for the next wrong row, multiply(0, 5), it answered 0, the
    code's value, and its test wanted 5."""
    asked = 0
    for failure in failures:
        wrong = WRONG.match(failure)
        if wrong is None:
            continue
        if asked == FIRST_ASKED:
            break
        answer, asked = ask(wrong["call"]), asked + 1
        if same(answer, wrong["expected"]):
            return None
        if same(answer, wrong["got"]):
            return wrong
    return None


def _code_s(answer: str, wrong: re.Match[str]) -> bool:
    """Whether the model's answer for the wrong value's call is the code's value, not the
    test's."""
    return same(answer, wrong["got"]) and not same(answer, wrong["expected"])


def _once(ask: Callable[[str], str]) -> Callable[[str], str]:
    """`ask`, asking about each call once."""
    answers: dict[str, str] = {}

    def asked(call: str) -> str:
        if call not in answers:
            answers[call] = ask(call)
        return answers[call]

    return asked


def _block(
    source: str, first: re.Match[str], failures: list[str], ask: Callable[[str], str]
) -> tuple[str, str] | None:
    """For the first wrong value's row in a table that only the lines around it name, or
    none (another test's table is the same), and the run's other wrong values in that
    table that the model, asked alone, also answers with the code's value:
    the text through its test's `def` line, and that text with each of them fixed
    (`testrows.block_edit`); None when there is none such."""
    rows = [(w["call"], w["got"], w["expected"]) for f in failures if (w := WRONG.match(f))]
    found = block_edit(
        source,
        (first["call"], first["got"], first["expected"]),
        rows,
        lambda row: same(ask(row[0]), row[1]) and not same(ask(row[0]), row[2]),
    )
    return found[:2] if found else None


def _table(
    source: str, first: re.Match[str], failures: list[str], ask: Callable[[str], str]
) -> tuple[str, str] | None:
    """For the first wrong value's row, and the rows of the run's other wrong values on
    its line that the model, asked alone, also answers with the code's value: that line,
    and the line with each of them fixed; None when no other such row is there."""
    row = row_of(source, first["call"], first["got"], first["expected"])
    if row is None:
        return None
    line, fixed, rows = row[0], row[0].replace(row[1], row[2], 1), 0
    for failure in failures:
        wrong = WRONG.match(failure)
        other = row_of(source, wrong["call"], wrong["got"], wrong["expected"]) if wrong else None
        if wrong is None or other is None or other[0] != line or fixed.count(other[1]) != 1:
            continue
        if _code_s(ask(wrong["call"]), wrong):
            fixed, rows = fixed.replace(other[1], other[2], 1), rows + 1
    return (line.strip(), fixed.strip()) if rows else None


def own_test_file(state: State) -> str:
    """The test file the latest test run failed in, when this run wrote it."""
    last = latest_tests(state.ledger)
    found = _TEST_FILE.search(last.summary) if last is not None else None
    path = norm(found[1]) if found is not None else ""
    return path if path in state.ledger.writes else ""
