"""One research step: a bounded tool loop on one sub-question, read-only tools only,
ended by `finish_step(findings)` or by its call budget. Each call and its result are
journaled (with the lines of code the result showed)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from localagent.journal.codec import signature
from localagent.models.protocol import Message
from localagent.research.tools import spans
from localagent.system.textcap import cap_text
from localagent.textcalls import ToolCall, given_arguments, parse_reply

if TYPE_CHECKING:
    from localagent.research.session import Session

log = logging.getLogger("localagent.research")
STEP_CALLS = 8  # tool calls of one step
STEP_REPLIES = 12  # replies of one step, with or without calls
FULL_RESULTS = 3  # the latest tool results kept whole in the step's messages
OLD_RESULT_CHARS = 400
RESULT_CHARS = 6000


def run_step(research: Session, question: str) -> None:
    """Work on `question` until finish_step or the budget; journals the outcome."""
    messages = _opening(research, question)
    calls = 0
    for _ in range(STEP_REPLIES):
        if calls >= STEP_CALLS - 1:
            messages.append(
                {"role": "user", "content": research.texts.render("research_step_last")}
            )
        reply = research.model.chat(_trimmed(messages), tools=research.tools.specs())
        found = reply.tool_calls or parse_reply(reply.content, set(research.tools.names())).calls
        state = research.journal.state
        ids = [f"{state.rounds + 1}.{i}" for i in range(1, len(found) + 1)]
        research.record_call(
            "round", reply, content=reply.content[:2000], tool_calls=_wire(found, ids)
        )
        if not found:
            messages += [
                {"role": "assistant", "content": reply.content},
                {"role": "user", "content": research.texts.render("research_step_nudge")},
            ]
            continue
        messages.append(
            {"role": "assistant", "content": reply.content, "tool_calls": _wire(found, ids)}
        )
        for call, call_id in zip(found, ids, strict=True):
            if call.name == "finish_step":
                if _finish(research, question, call, call_id):
                    return
                said = research.texts.render("research_step_no_findings")
                messages.append(_tool_message(call, call_id, said))
                continue
            calls += 1
            messages.append(_tool_message(call, call_id, _act(research, call, call_id)))
    why = research.texts.render("research_step_unfinished", calls=calls)
    research.journal.append("subtask_failed", reason=why, question=question, findings=f"({why})")
    research.progress.findings.append((question, f"({why})"))


def _opening(research: Session, question: str) -> list[Message]:
    text_protocol = ""
    if not research.model.native_tools:
        tools = "\n".join(f"- {t.name}: {t.description}" for t in research.tools.specs())
        text_protocol = research.texts.render("research_text_protocol", tools=tools)
    system = research.texts.render(
        "research_step_system", steps=STEP_CALLS, text_protocol=text_protocol
    )
    number = len(research.progress.findings) + 1
    user = research.texts.render(
        "research_step_user",
        question=research.question,
        number=number,
        sub_question=question,
        findings=research.findings_text(),
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _wire(calls: list[ToolCall], ids: list[str]) -> list[dict[str, Any]]:
    return [
        {"id": i, "name": c.name, "arguments": c.arguments} for c, i in zip(calls, ids, strict=True)
    ]


def _tool_message(call: ToolCall, call_id: str, text: str) -> Message:
    return {"role": "tool", "content": text, "call": call_id, "tool": call.name}


def _finish(research: Session, question: str, call: ToolCall, call_id: str) -> bool:
    findings = str(call.arguments.get("findings", "")).strip()
    if not findings:
        return False
    log.info("step finished: %s", findings[:200])
    research.journal.append(
        "subtask_completed",
        reason=findings[:300],
        call=call_id,
        question=question,
        findings=findings,
    )
    research.progress.findings.append((question, findings))
    return True


def _act(research: Session, call: ToolCall, call_id: str) -> str:
    args = given_arguments(call.arguments)
    name, canonical = research.tools.canonical(call.name, args)
    sig = signature(name, canonical)
    research.journal.append(
        "action_started", tool=call.name, args=call.arguments, call=call_id, signature=sig
    )
    result = research.tools.execute(research.ctx, call.name, args)
    shown = spans(name, canonical, result) if research.tools.get(name) else []
    research.progress.seen += shown
    research.journal.append(
        "action_finished",
        tool=call.name,
        args=call.arguments,
        call=call_id,
        ok=result.ok,
        result=cap_text(result.text, RESULT_CHARS),
        spans=[list(s) for s in shown],
    )
    return result.text


def _trimmed(messages: list[Message]) -> list[Message]:
    """The step's messages with all but the latest tool results cut short, so a step's
    prompt stays within the context window."""
    tool_positions = [i for i, m in enumerate(messages) if m["role"] == "tool"]
    old = set(tool_positions[:-FULL_RESULTS])
    return [
        {**m, "content": cap_text(m["content"], OLD_RESULT_CHARS)} if i in old else m
        for i, m in enumerate(messages)
    ]
