"""The round's facts: what the model should not have to ask for (the active subtask, the
files, the latest commands and errors, notices), sent last in every round's prompt.

Each round's facts stay in place in the rounds after it (see `context`), so what they
repeat of the plan and of the results above them is read again by the server every
round: they name the active task and the recent errors by their first line only.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from localagent.prompts.promptset import DEFAULT, PromptSet
from localagent.state import State, current
from localagent.system.textcap import first_line
from localagent.verify.claims import restates
from localagent.verify.where import locate

FACT_ERROR_CHARS = 160  # of one recent error: its first line (the result has it whole)
FACT_TASK_CHARS = 120  # of the active task (the plan above has it whole)
# A name with an extension that has a letter: no version (`0.1.0`, `v1.2`) is a file, nor
# a call or the start of one (`mathx.divide(6, 0)`, `@pytest.mark.parametrize(` in an edit
# step's code).
_FILE = re.compile(
    r"(?<![\w/.-])([\w-][\w./-]*\.(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{1,6})\b(?![(]|\.\w)"
)
_NOT_FILES = {"e.g", "i.e", "a.k.a", "et.al"}


def progress(state: State) -> str:
    """Which subtasks are done, failed and active, by number, as ranges (so it stays
    short however long the plan); volatile, so it goes last."""
    assert state.goal is not None
    marks: dict[str, list[str]] = {"completed": [], "failed": [], "in_progress": []}
    for ti, task in enumerate(state.goal.tasks, 1):
        runs: dict[str, list[list[int]]] = {k: [] for k in marks}
        for si, sub in enumerate(task.subtasks, 1):
            if sub.status not in runs:
                continue
            spans = runs[sub.status]
            if spans and spans[-1][1] == si - 1:
                spans[-1][1] = si
            else:
                spans.append([si, si])
        for status, spans in runs.items():
            marks[status] += [f"{ti}.{a}" if a == b else f"{ti}.{a}-{ti}.{b}" for a, b in spans]
    parts = [f"{k.replace('_', ' ')} {', '.join(v)}" for k, v in marks.items() if v]
    return "; ".join(parts) or "nothing done yet"


def probe(
    state: State, root: Path, max_rounds: int, notice: str = "", prompts: PromptSet = DEFAULT
) -> dict[str, Any]:
    """Generic facts about the workspace the model should not have to ask for."""
    here = current(state)
    text = " ".join(
        filter(None, [state.goal.text if state.goal else "", here[1].description if here else ""])
    )
    named = {m.rstrip(".") for m in _FILE.findall(text)}
    mentioned = sorted(m for m in named if m.lower() not in _NOT_FILES)[:12]
    found = {name: locate(root, name) for name in mentioned}
    written = state.files_written[-4:]
    existing = [  # not those the line above names as written
        name if at == name else f"{at} (for {name})"
        for name, at in found.items()
        if at and at not in written
    ]
    if state.replanned:  # the failure before the new plan is no longer the latest news
        notice = "\n".join(filter(None, [prompts.render("replanned"), notice]))
    if state.rewound:
        notice = "\n".join(filter(None, [state.rewound, notice]))
    return {
        "round": state.rounds + 1,
        "max_rounds": max_rounds,
        "progress": progress(state) if state.goal else "",
        "task": _task(here[0].description, state.goal.text if state.goal else "") if here else "-",
        "subtask": here[1].description if here else "-",
        "written": written,
        "existing": existing,
        "missing": [name for name, at in found.items() if at is None],
        "commands": [f"{c['cmd']} -> {c['returncode']}" for c in state.commands[-3:]],
        "errors": list(dict.fromkeys(first_line(e, FACT_ERROR_CHARS) for e in state.errors[-3:])),
        "notice": notice,
    }


def _task(description: str, goal: str) -> str:
    """The active task as the facts name it: a task that restates the goal, as the plan
    above names it (the 1.5B's mathx task, 120 characters of the goal again, took its
    first round to 1,516 tokens), else its first line."""
    return (
        "The goal above."
        if restates(description, goal)
        else first_line(description, FACT_TASK_CHARS)
    )


def _listing(items: list[str]) -> str:
    return ", ".join(items) if items else "none"


def fact_values(facts: dict[str, Any]) -> dict[str, Any]:
    """The probe's facts as the prompts show them."""
    return {
        "round": facts["round"],
        "max_rounds": facts["max_rounds"],
        "progress": facts.get("progress") or "-",
        "task": facts.get("task", "-"),
        "subtask": facts.get("subtask", "-"),
        "written": _listing(facts["written"]),
        "existing": _listing(facts["existing"]),
        "missing": _listing(facts["missing"]),
        "commands": _listing(facts["commands"]),
        "errors": "\n  " + "\n  ".join(facts["errors"]) if facts["errors"] else "none",
        "notice": f"{facts['notice']}\n" if facts["notice"] else "",
    }


def probe_message(
    facts: dict[str, Any], prompts: PromptSet = DEFAULT, before: dict[str, Any] | None = None
) -> str:
    """The facts as the model reads them, without the lines of what there is none of yet;
    with the facts `before` them (the previous round's, shown just above), only the first
    line, the lines that changed and the last (the active subtask): the unchanged lines
    were read again every round, about 100 of the 250 tokens a round of the 1.5B added.
    Of the recent commands and the files written, then, only those run or written since,
    and no errors: the results just above show them (20-40 tokens a round)."""
    text = prompts.render("probe", **fact_values(facts)).rstrip()
    if not before:  # the lines that say there is nothing yet say nothing (20 tokens)
        return "\n".join(line for line in text.split("\n") if not line.endswith(": none"))
    since = _since(before.get("commands", []), facts["commands"])
    # A new subtask's first round names the errors again: the results above may be two
    # rounds back (the 1.5B's fixtest edit round came after a read, and it edited the
    # test's assertion into stats.py).
    fresh = bool(facts["errors"]) and facts.get("subtask") != before.get("subtask")
    errors = facts["errors"] if fresh else before.get("errors", [])
    wrote = _since(before.get("written", []), facts["written"])
    echoed = {
        "errors": errors,
        "commands": since or before.get("commands", []),
        "written": wrote or before.get("written", []),
    }
    lines = prompts.render("probe", **fact_values({**facts, **echoed})).rstrip().split("\n")
    seen = set(prompts.render("probe", **fact_values(before)).rstrip().split("\n"))
    named = {n for n, line in enumerate(lines) if fresh and line in {f"  {e}" for e in errors}}
    named |= {n - 1 for n in named if n > 0}  # and the line that titles them
    last = len(lines) - 1
    return "\n".join(
        line for n, line in enumerate(lines) if n in (0, last) or n in named or line not in seen
    )


def _since(before: list[str], now: list[str]) -> list[str]:
    """The items a list of the latest few gained since `before` (its oldest drop off)."""
    overlap = next((n for n in range(min(len(before), len(now)), 0, -1)
                    if before[len(before) - n :] == now[:n]), 0)  # fmt: skip
    return now[overlap:]
