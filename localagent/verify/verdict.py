"""The goal verdict: deterministic from the evidence first, then a model that can only
downgrade it.

`findings` gathers the goal checks' results and the ledger's evidence over the whole
goal. A hard failure is NOT_VERIFIED with no model call. Otherwise one structured call
(temperature 0) judges the goal against the ledger, as the turn after the rounds' last
(`prompts.front.Conversation`); an invalid answer is asked once more, then the
deterministic verdict stands.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ValidationError

from localagent.models import Model
from localagent.prompts.front import Conversation
from localagent.prompts.promptset import DEFAULT, PromptSet
from localagent.state.checkruns import check_kind, command_words
from localagent.system.textcap import listed
from localagent.verify import checks, counts
from localagent.verify.claims import names_step, restates
from localagent.verify.evidence import gate
from localagent.verify.named import undefined, unused
from localagent.verify.outputs import sample_run, wrong_outputs
from localagent.verify.stated import computed, makes, mismatches, unrun_forms

log = logging.getLogger("localagent.verify")
ATTEMPTS = 2
# A verdict's reply is 50-150 tokens. Held to the JSON schema, Qwen2.5-Coder-1.5B once
# wrote 1,024 tokens of nothing (the grammar allows whitespace without end), 137 s on
# the CPU before the cap cut it, and the call was asked again.
VERDICT_TOKENS = 400
LEDGER_LINES = 40

VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["VERIFIED", "NOT_VERIFIED"]},
        "unmet": {"type": "array", "items": {"type": "string"}},
        "evidence": {"type": "array", "items": {"type": "integer"}},
        "next": {"type": "string", "enum": ["finish", "retry_subtask", "replan"]},
    },
    "required": ["verdict", "unmet", "evidence", "next"],
}


class ModelVerdict(BaseModel):
    verdict: Literal["VERIFIED", "NOT_VERIFIED"]
    unmet: list[str] = []
    evidence: list[int] = []
    next: Literal["finish", "retry_subtask", "replan"] = "finish"


@dataclass
class Findings:
    hard: list[str] = field(default_factory=list)  # each refuses the goal
    notes: list[str] = field(default_factory=list)  # stale checks, unread files, checks not run
    not_run: list[str] = field(default_factory=list)
    evidence: list[int] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)  # the ledger the model reads
    checked: bool = False  # whether anything at all could be checked
    unproven: list[str] = field(default_factory=list)  # programs nothing shows to work
    # Whether something deterministic shows the goal works: a goal check passed, or a
    # program written ran after its last change and showed something (tests included).
    proven: bool = False
    unrun: list[str] = field(default_factory=list)  # command lines the goal states, not run
    computed: list[str] = field(default_factory=list)  # runs printing numbers nothing checked


def findings(state: Any, root: Path) -> Findings:
    """What the goal checks and the journal's evidence over the whole goal show."""
    found = Findings()
    results = state.verifying.results if state.verifying is not None else {}
    for result in results.values():
        cmd, summary, seq = result.get("cmd"), result.get("summary"), result.get("seq", 0)
        status = result.get("status")
        found.evidence.append(seq)
        if result.get("source") == "program":  # a fact, in the ledger like the model's runs
            found.lines.append(f"seq {seq}: the verification ran `{cmd}`: {summary}")
            found.hard += _idle(str(cmd), state.goal.text, root)
            continue
        found.lines.append(f"seq {seq}: goal check `{cmd}` {status}: {summary}")
        if status == "failed":
            found.hard.append(f"goal check `{cmd}` failed: {summary}")
        elif status == "not_run":
            found.not_run.append(f"goal check `{cmd}` was not run: {summary}")
    goal = state.goal
    texts = [goal.text] + [s.description for t in goal.tasks for s in t.subtasks]
    evidence = gate(state.ledger, root, texts, scope=0)
    found.hard += evidence.hard + mismatches(goal.text, state.ledger, results.values())
    found.hard += [w for w in wrong_outputs(goal.text, state.ledger, results.values(), root)
                   if w not in found.hard]  # fmt: skip
    found.hard += undefined(goal.text, root)  # the functions it names, each defined
    found.hard += unused(goal.text, root)  # and called, where it says to use them
    found.unrun = unrun_forms(goal.text, state.ledger)
    if (
        (sample := sample_run(goal.text))
        and not found.hard
        and any(r.get("cmd") == sample for r in results.values())
    ):
        # the verification ran that form itself and read what it printed (`outputs`)
        found.unrun = [form for form in found.unrun if len(form.split()) != len(sample.split())]
    counted = [
        str(r.get("cmd"))
        for r in results.values()
        if r.get("status") == "passed"
        and counts.proven(goal.text, str(r.get("cmd")), str(r.get("output") or ""), root)
    ]
    if counted and not found.hard:
        # the verification ran that form itself, and each count it printed is the file's
        found.unrun = [f for f in found.unrun if not any(makes(f, cmd) for cmd in counted)]
    tested = any(
        r.get("status") == "passed" and check_kind(str(r.get("cmd"))) in ("pytest", "unittest")
        for r in results.values()
    )

    # a run whose counts are the file's it was given (`counts`) vouches for its values,
    # as does the verification's own run of its command, all of whose output it read
    def vouched(cmd: str, shown: str) -> bool:
        return cmd in counted or counts.proven(goal.text, cmd, shown, root)

    found.computed = [] if tested else computed(goal.text, state.ledger, vouched)
    unrun = [
        f"the goal states `{form}`, and no run since the last change was" for form in found.unrun
    ]
    found.notes += evidence.soft + found.not_run + unrun
    found.evidence += evidence.evidence
    found.unproven = evidence.unproven
    ledger = state.ledger
    again = [
        (int(r.get("seq") or 0), whole)
        for r in results.values()
        if r.get("source") != "program" and r.get("status") in ("passed", "failed")
        if (whole := _whole(str(r.get("cmd"))))
    ]
    found.lines += _ledger_lines(ledger, root, again) + [f"note: {n}" for n in found.notes]
    # A program written and shown to work since (by the verification's own run too):
    # Qwen2.5-Coder-0.5B's one-subtask plan "Write a hello world script" names no file,
    # and its hello world, run by the verification, was "unverified" for want of a check.
    shown = [p for p, w in ledger.writes.items() if ledger.shown.get(p, 0) > w.seq]
    found.checked = bool(
        any(r.get("status") in ("passed", "failed") for r in results.values())
        or any(check.passed is not None for check in ledger.checks.values())
        or evidence.confirmed
        or shown
    )
    found.proven = any(r.get("status") == "passed" for r in results.values()) or bool(shown)
    return found


IDLE = "calls none of its code"


def _idle(cmd: str, goal: str, root: Path) -> list[str]:
    """For the verification's run of a program the goal asks for that calls none of its
    code: the finding that it does nothing ([] otherwise)."""
    script = cmd.split()[1] if cmd.startswith("python ") and len(cmd.split()) == 2 else ""
    if (
        not script
        or not checks.program_goal(goal)
        or not (names := checks.idle_program(root, script))
    ):
        return []
    return [f"`{cmd}` printed nothing: {script} defines {listed(names[:3])} and {IDLE}"]


def _program(cmd: str) -> str:
    """Which check a command is, ruff's by its command: "pytest", "ruff check"."""
    kind = check_kind(cmd) or ""
    if kind != "ruff":
        return kind
    return f"ruff {next((w for w in command_words(cmd) if w in ('check', 'format')), '')}"


_WHOLE_WORDS = frozenset({".", "pytest", "unittest", "discover", "ruff", "check", "format"})


def _whole(cmd: str) -> str:
    """The check a command is when it runs over the whole workspace (no file or folder
    named but "."); else ""."""
    words = {w for w in command_words(cmd)[1:] if not w.startswith("-")}
    return "" if words - _WHOLE_WORDS else _program(cmd)


def _ledger_lines(ledger: Any, root: Path, again: list[tuple[int, str]]) -> list[str]:
    """The latest checks and writes, as the verifier model reads them; not a test or ruff
    run that a goal check of the same program over the whole workspace (`again`: its seq
    and `_whole`) ran after."""
    lines = []
    checks = [
        c
        for c in sorted(ledger.checks.values(), key=lambda c: c.seq)
        if all(seq < c.seq for seq, program in again if program == _program(c.cmd))
    ]
    for check in checks[-LEDGER_LINES // 2 :]:
        outcome = {True: "passed", False: "failed", None: "inconclusive"}[check.passed]
        if check.kind == "script" and check.passed:
            outcome = "ran"  # its exit code is a fact to judge, not a verdict
        lines.append(f"seq {check.seq}: ran `{check.cmd}`: {outcome} ({check.summary})")
    writes = sorted(ledger.writes.items(), key=lambda item: item[1].seq)[-LEDGER_LINES // 2 :]
    for path, write in writes:
        exists = "exists" if (root / path).is_file() else "no longer exists"
        seen = ledger.seen.get(path, 0)
        checked = f", read or run at seq {seen}" if seen > write.seq else ""
        lines.append(f"seq {write.seq}: wrote {path} ({exists}{checked})")
    return lines


def ask_model(
    model: Model,
    found: Findings,
    on_call: Callable[[Any], None],
    conversation: Callable[[str], Conversation],
    progress: str,
    prompts: PromptSet = DEFAULT,
) -> ModelVerdict | None:
    """The model's verdict, or None when it gave no valid one in two tries: asked as the
    turn after the rounds (`conversation` lays them out with that turn last), whose goal
    and plan it judges (`progress`: the plan's marks), so the server reads that turn and
    the last round's results alone. Asked on a front of its own, the 1.5B's verdicts read
    the goal and the plan again."""
    ledger = "\n".join(found.lines) or "(no evidence was recorded)"
    asked = conversation(prompts.render("verify_turn", progress=progress, ledger=ledger))
    for attempt in range(1, ATTEMPTS + 1):
        reply = model.chat(
            asked.messages,
            asked.tools,
            VERDICT_SCHEMA,
            temperature=0.0,
            max_tokens=VERDICT_TOKENS,
        )
        on_call(reply)
        try:
            return ModelVerdict.model_validate(orjson.loads(reply.content))
        except (ValueError, ValidationError) as exc:
            log.warning("verdict attempt %d was not valid: %s", attempt, str(exc)[:200])
    return None


def small_verifier(profile: str, billions: float | None) -> str:
    """How small the verifying model is ("1.5B parameters"), or "" when it is not small:
    the small profile's model (chosen from its size, or set) is no judge of a goal."""
    if profile != "small":
        return ""
    return f"{billions:g}B parameters" if billions else "the small profile"


def level(found: Findings, small: str = "", prompts: PromptSet = DEFAULT) -> tuple[str, str]:
    """How verified a goal the checks did not refuse can be, and why not, loudly: a
    program nothing shows to work is not verified, and a small verifier model's word
    (`small` says how small) is no evidence: it needs something deterministic."""
    if found.unproven:
        shown = ", ".join(found.unproven[:3])
        return "unverified", prompts.render("unproven", programs=shown)
    if not found.checked or found.not_run:
        return "unverified", ""
    if small and not found.proven:
        return "unverified", prompts.render("small_verifier", size=small)
    if small and found.unrun:
        forms = ", ".join(f"`{form}`" for form in found.unrun[:3])
        return "unverified", prompts.render("unrun_forms", forms=forms, size=small)
    if small and found.computed:
        runs = "; ".join(found.computed[:2])
        return "unverified", prompts.render("computed_output", runs=runs, size=small)
    return "verified", ""


def decide(
    found: Findings,
    answer: ModelVerdict | None,
    replans_left: bool,
    small: str = "",
    prompts: PromptSet = DEFAULT,
    goal: str = "",
    steps: tuple[str, ...] = (),
) -> dict[str, Any]:
    """The `verdict` record: what was found, who decided, and what happens next (`goal`:
    its text, and `steps`: the plan's task and subtask texts, which a small verifier may
    name as all that is unmet)."""
    if found.hard:
        return {
            "verdict": "NOT_VERIFIED",
            "source": "checks",
            "unmet": found.hard,
            "evidence": found.evidence,
            "then": "replan" if replans_left else "fail",
            "verification": "failed",
        }
    reached, note = level(found, small, prompts)
    if answer is None or answer.verdict == "VERIFIED":
        return {
            "verdict": "VERIFIED",
            "source": "checks" if answer is None else "model",
            "unmet": [],
            "evidence": answer.evidence if answer else found.evidence,
            "then": "complete",
            "verification": reached,
            **({"note": note} if note else {}),
        }
    unmet = [item.strip()[:300] for item in answer.unmet if item.strip()][:6]
    vague = all(restates(item, goal) or names_step(item, steps) for item in unmet)
    if small and reached == "verified" and vague:
        # Qwen2.5-Coder-1.5B's greet.py did what the goal asks, and the checks showed it;
        # the 1.5B verifier named the goal's own text as unmet, and the replan for it
        # wrote the program again as the function alone (the CPU). A small verifier that
        # names nothing in particular is no reason to redo the work.
        return {
            "verdict": "NOT_VERIFIED",
            "source": "model",
            "unmet": unmet or ["the verifier found the goal not achieved"],
            "evidence": answer.evidence,
            "then": "complete",
            "verification": "partial",
            "note": prompts.render("vague_doubt", size=small),
        }
    return {
        "verdict": "NOT_VERIFIED",
        "source": "model",
        "unmet": unmet or ["the verifier found the goal not achieved"],
        "evidence": answer.evidence,
        "then": "replan" if replans_left else "complete",
        "verification": "partial" if reached == "verified" else "unverified",
    }
