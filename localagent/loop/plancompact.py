"""How a checked plan is made shorter: the steps of one file's writing as one step, and the
tasks that are the goal again as one task (`compact`)."""

from __future__ import annotations

import re
from typing import Any

from localagent.loop.subtasks import (
    MAX_STEPS,
    edited_file,
    read_file_of,
    write_of,
    written_file,
)
from localagent.verify import evidence
from localagent.verify.claims import restates

# A write step with the file's code after a lead-in: "write_file F with the following
# content: CODE".
_WITH_CODE = re.compile(
    r"^(\W*write_file\s.*?\b(?:content|contents|code)\s*:\s*)(\S.*)$", re.I | re.S
)
# A write step that says what goes in the file: "write_file F with the add function".
_WITH_WHAT = re.compile(r"^(\W*write_file\s+\S+)\s+with\s+([^\n:]+)$", re.I)


def compact(tasks: list[dict[str, Any]], goal: str) -> list[dict[str, Any]]:
    """The plan with each run of writes of one file as one write (`_joined`), and each
    task that is the goal again (or the task before's text) on the one before it, as far
    as a task holds steps."""
    kept: list[dict[str, Any]] = []
    last: list[str] = []  # the steps of the task kept last
    for task in tasks:
        steps: list[str] = []
        for text in _reads_apart(task["subtasks"]):
            before = steps or last
            if before and (joined := _joined(before[-1], text)):
                before[-1] = joined
            else:
                steps.append(text)
        if not steps:
            continue
        if kept and _one_task(kept[-1], task, goal, len(steps)):
            kept[-1]["subtasks"] += steps
        else:
            kept.append({"description": task["description"], "subtasks": steps})
        last = kept[-1]["subtasks"]
    return kept


# A read step that says what the read is for: "read_file shapes.py to move the area
# formulas into a single function area(kind, size)".
_READ_FOR = re.compile(r"^\W*(?:\d+[.)]\s*)?read_file\s+([\w./\\-]+)\s+to\s+(\w.*)$", re.I | re.S)
_CHANGE_VERB = re.compile(
    r"^(?:move|change|update|modify|edit|fix|replace|refactor|rename|extract|add|remove)\b",
    re.I,
)


def _reads_apart(steps: list[str]) -> list[str]:
    """The steps with a read that says it is for an edit of its file as that read, and
    the edit as a step of its own unless a later step edits or writes the file; a read of
    the file the step before read, with nothing between, left out. The 1.5B's refactor
    replan on the CPU, verbatim: "read_file shapes.py to move the area formulas into a
    single function area(kind, size)", "read_file shapes.py", "replace_in_file shapes.py
    to move ...": no read ended its first step, and it read shapes.py until blocked."""
    out: list[str] = []
    for at, text in enumerate(steps):
        found = _READ_FOR.match(text.strip())
        path = (
            read_file_of(f"read_file {found[1]}") if found and _CHANGE_VERB.match(found[2]) else ""
        )
        if path and read_file_of(text) != path:
            later = [edited_file(t) or written_file(t) or write_of(t) for t in steps[at + 1 :]]
            out.append(f"read_file {found[1]}")
            if path not in later:
                out.append(f"replace_in_file {found[1]} to {found[2].strip()}")
            continue
        if out and (read := read_file_of(text)) and read_file_of(out[-1]) == read:
            continue
        out.append(text)
    return out


def _joined(first: str, then: str) -> str:
    """Two writes of one file, each with its code, as one write of both codes, or each
    saying what goes in it, as one saying both (or "").
    The 1.5B's mathx plan on the CPU, verbatim: "write_file tests/test_mathx.py with the
    following content: import mathx", then four more writes of that file, each with one
    test; written as told, the import alone was refused as no test, six times.
    A write of a file and then an edit of it, as that write doing both (`edits_written`)."""
    if edits_written(first, then):
        both = f"{first.rstrip().rstrip('.')}, and {then[0].lower()}{then[1:]}"
        # still the step it was: one its write ends, when it was one
        kind = written_file if written_file(first) else write_of
        if kind(both) == kind(first):
            return both
    if not written_file(first) or written_file(first) != written_file(then):
        return ""
    a, b = _WITH_CODE.match(first), _WITH_CODE.match(then)
    if a is not None and b is not None:
        return f"{first.rstrip()}\n{b[2].strip()}"
    # "write_file mathx/__init__.py with the add function", then the same with subtract,
    # multiply and divide (the 1.5B's mathx replan on the CPU): each write ended its step
    # unchanged, four rounds of the same file
    a, b = _WITH_WHAT.match(first), _WITH_WHAT.match(then)
    if a is None or b is None:
        return ""
    return f"{first.rstrip().rstrip('.')} and {b[2].strip()}"


def _one_task(last: dict[str, Any], task: dict[str, Any], goal: str, more: int) -> bool:
    """Whether a task goes on the one before it: both are the goal again, or the same
    text, and their steps fit one task. The 1.5B planned mathx as five tasks, each the
    goal, of one or two steps: five lines, each "The goal above.", in every prompt."""
    a, b = last["description"], task["description"]
    if len(last["subtasks"]) + more > MAX_STEPS:
        return False
    return same(a, b) or (restates(a, goal) and restates(b, goal))


def same(a: str, b: str) -> bool:
    """Whether two texts are one, case, spacing and a closing full stop aside."""
    return " ".join(a.lower().split()).rstrip(".") == " ".join(b.lower().split()).rstrip(".")


# An edit step that names no file: "Replace the repeated area formulas in total_area,
# largest, and report with calls to the area function."
_EDIT_VERB = re.compile(
    r"^\W*(?:\d+[.)]\s*)?(?:replace_in_file|replace|edit|modify|update|change|use|move)\b",
    re.I,
)
_RUN_WORDS = re.compile(r"\b(?:run|runs|running|execute|pytest|install|commit|test|tests)\b", re.I)


def edits_written(first: str, then: str) -> bool:
    """Whether `then` edits the one file the write step `first` writes: it names that file
    as the one it edits, or names no file and asks for no run. The 1.5B's refactor plan on
    the CPU, verbatim: "Write a named file shapes.py with the area formulas moved into the
    area function.", then "Replace the repeated area formulas in total_area, largest, and
    report with calls to the area function.": its write did both, and the edit step sent
    edits of code the file no longer had until blocked (twice, with fe61f7b's plan too)."""
    path = written_file(first) or write_of(first)
    if not path:
        return False
    if edited := edited_file(then):
        return edited == path
    return bool(
        _EDIT_VERB.match(then) and not evidence.file_names(then) and not _RUN_WORDS.search(then)
    )
