"""What a goal says its script prints, checked against the runs: "python greet.py NAME
prints Hello, NAME! and exits 0" (the text with the run's own arguments in place of the
placeholders, and the status), and "run without arguments it prints a usage message"
(something printed).

Qwen2.5-Coder-1.5B's greet.py on the H200, three runs of six "completed (verified)":
told to end with `raise SystemExit(2)` after its usage message, it put that line in
place of the message, first in the function `greet`; `python greet.py World` then
exited 2 and printed nothing, as did `python greet.py`, and both runs counted, the
exit status a fact. A run whose output or status is not the one the goal states for it
ends no run subtask (`loop.rundone`), fails it at once (`loop.handback.stops_now`), and
is a hard finding of the verdict, for which the verification runs it with a name of its
own (`sample_run`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localagent.state.checkruns import NO_OUTPUT, split_result
from localagent.state.ledger import script_runs
from localagent.verify import counts
from localagent.verify.stated import PRINTS, args_of, off_status

_NO_ARGS = r"(?:without|with\s+no)\s+(?:any\s+)?arguments?"
_USAGE = re.compile(rf"\b{_NO_ARGS}\b[^.;]{{0,40}}?\bprints?\s+(?:a\s+|its\s+)?usage\b", re.I)
_SCRIPT = re.compile(r"\bpython3?\s+([\w./-]+\.py)\b")
# What says what it prints rather than showing it: "the number of lines ... in FILE".
_DESCRIBED = re.compile(
    r"(?:the|a|an|its|their|how|what|which|whether|all|each|every|one|some|only)\b", re.I
)
SAMPLE = "Ada"  # what a placeholder stands for in the verification's own run


@dataclass(frozen=True)
class Printed:
    """What the goal says `python SCRIPT NAME ...` prints (`template`, with the
    placeholders `names`) and the status it exits with (None: not said)."""

    script: str
    names: tuple[str, ...]
    template: str
    status: int | None

    def expected(self, args: list[str]) -> str:
        text = self.template
        for name, arg in zip(self.names, args, strict=False):
            text = re.sub(rf"\b{re.escape(name)}\b", arg.replace("\\", "\\\\"), text)
        return text


def stated_output(goal: str) -> Printed | None:
    """What the goal says its script prints for its arguments, when the text it names
    holds them (not "prints the number of lines ..."): None otherwise."""
    found = PRINTS.search(goal)
    if found is None:
        return None
    names = tuple(found[2].split())
    template = found[3].strip()
    if _DESCRIBED.match(template) or not any(
        re.search(rf"\b{re.escape(n)}\b", template) for n in names
    ):
        return None
    return Printed(found[1], names, template, int(found[4]) if found[4] else None)


def off_output(goal: str, cmd: str, code: int | None, output: str, whole: bool = True) -> str:
    """What is wrong with a run of `cmd` that exited `code` and printed `output`, by what
    the goal states for it ("" when nothing, or the goal states nothing of it); with only
    its last line (`whole` false), its text counts only when there is none."""
    printed = stated_output(goal)
    script = printed.script if printed else _usage_script(goal)
    args = args_of(cmd, script) if script else None
    if args is None or code is None:
        return ""
    shown = " ".join(output.split())
    if not args and _USAGE.search(goal) and not shown:
        said = f"the goal says {script} run without arguments prints a usage message"
        return f"{said}; `{cmd}` printed nothing"
    if printed is None or len(args) != len(printed.names):
        return ""
    want = printed.expected(args)
    if (want in shown or (shown and not whole)) and printed.status in (None, code):
        return ""
    status = f" and exits {printed.status}" if printed.status is not None else ""
    said = f"the goal says `python {script} {' '.join(printed.names)}` prints {printed.template}"
    if want in shown or (shown and not whole):
        return f"{said}{status}; `{cmd}` exited {code}"
    what = f"printed `{shown[:80]}`" if shown else "printed nothing"
    return f"{said}{status}; `{cmd}` {what} (exit code {code}), not `{want}`"


def off_run(goal: str, cmd: str, text: str, root: Path | None = None) -> str:
    """What is wrong with a run, by its run_cmd observation: its exit status without
    arguments (`stated.off_status`), else what it printed (`off_output`), else, with the
    workspace's `root` and when it succeeded, the numbers it printed for what the goal
    says it counts (`counts`)."""
    if off := off_status(goal, cmd, text):
        return off
    code, output = split_result(text)
    printed = "" if output.lstrip().startswith(NO_OUTPUT) else output
    if off := off_output(goal, cmd, code, printed):
        return off
    return counts.off_counts(goal, cmd, printed, root) if code == 0 and root else ""


def _usage_script(goal: str) -> str:
    found = _SCRIPT.search(goal) if _USAGE.search(goal) else None
    return found[1] if found else ""


def wrong_outputs(
    goal: str, ledger: Any, results: Iterable[dict[str, Any]] = (), root: Path | None = None
) -> list[str]:
    """Each run since its script's last change (the verification's own `results` too)
    whose output or status is not what the goal states for it; with the workspace's
    `root`, the verification's own runs that succeeded also by the numbers the goal says
    its script counts (`counts`: the journal's runs keep their last line only)."""
    found = []
    for check, code, last in script_runs(ledger):
        if why := off_output(goal, check.cmd, code, last, whole=False):
            found.append(why)
    for result in results:
        cmd, code = str(result.get("cmd") or ""), result.get("returncode")
        if type(code) is not int:
            continue
        output = str(result.get("output"))
        why = off_output(goal, cmd, code, output)
        if not why and code == 0 and root is not None and result.get("status") != "failed":
            why = counts.off_counts(goal, cmd, output, root)  # a check failed says why itself
        if why:
            found.append(why)
    return list(dict.fromkeys(found))


def sample_run(goal: str) -> str | None:
    """`python greet.py Ada` when the goal says what its script prints for its arguments:
    the verification runs it, and reads all it prints (the journal's runs keep their
    last line only)."""
    printed = stated_output(goal)
    if printed is None:
        return None
    return " ".join(["python", printed.script, *[SAMPLE] * len(printed.names)])
