"""The focused context of one round, built from the state alone (SPEC §6.2, §10).

Order: the constant system prompt; the goal and the plan (its text only, so it stays
byte-identical across subtask changes); a window of recent exchanges; last, the
volatile facts (progress marks, the active subtask, the probe). The window slides in
chunks: it grows from `keep` to `3*keep - 1` exchanges and then drops back to `keep`,
so between drops every round's messages start with the previous round's messages
unchanged and the model server reuses its KV cache; a drop makes the server read the
`keep` exchanges again, once every `2*keep` rounds. A replan starts the window anew
(`State.window_start`): the rounds before it are about the subtask that failed.

The whole prompt fits a token budget (`num_ctx` minus room for the reply), estimated
from characters with a ratio the state learns from the server's token counts. Over
budget, the oldest exchanges are dropped until the rest takes half the room, and the
window starts there from then on (the round is journaled with `llm_call`'s `window`),
so the next rounds append again instead of each dropping one; an exchange still too
long has its results shortened. The system prompt, the plan and the latest exchange are
always there.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import orjson

from localagent.loop.facts import fact_values, probe_message
from localagent.loop.roundcall import shown_reply
from localagent.prompts.promptset import DEFAULT, PromptSet
from localagent.state import CALL_CHARS, Exchange, State
from localagent.system.textcap import cap_text, clip, first_line, listed
from localagent.verify.claims import restates

if TYPE_CHECKING:
    from localagent.tools import ToolRegistry

OLD_RESULT_CHARS = 800  # a result of an older exchange, when the budget is tight
MESSAGE_OVERHEAD = 16  # characters of role and framing per message, roughly
# Of a subtask in the plan: the 1.5B's mathx plan gave each step its file's code, and its
# first round's prompt came to 1,694 tokens.
PLAN_STEP_CHARS = 100
SAME_AT_LEAST = 300  # characters of a result worth naming by its round when repeated
# What differs between two runs of one command that gave the same output: pytest's
# "1 failed in 0.32s", the id of the stored output.
_TIMING = re.compile(r"\b\d+(?:\.\d+)?s\b|\b(?:output |id=)\d+")


def system_prompt(
    allowed: tuple[str, ...], tools: ToolRegistry, native: bool, prompts: PromptSet = DEFAULT
) -> str:
    """The constant system prompt: the tools by name with their rules, and for a model
    without native tool calls, the text protocol with each tool's parameters."""
    protocol = ""
    if not native:
        lines = [spec.line() for spec in tools.specs()]
        protocol = prompts.render("text_protocol", tools="\n".join(lines))
    shown = ", ".join(allowed)
    guides = "\n".join(
        prompts.render(t.policy.guide, allowed=shown) for t in tools if t.policy.guide
    )
    names = tools.names()
    return prompts.render("system", names=listed(names), guides=guides, protocol=protocol)


def summary(state: State, facts: dict[str, Any], prompts: PromptSet = DEFAULT) -> str:
    """The goal and the plan's text: no marks, so a subtask change leaves it unchanged
    (unless a replaced summary prompt asks for the round's facts). Each subtask is its
    first line, cut at PLAN_STEP_CHARS: the facts name the active one whole."""
    assert state.goal is not None
    plan = []
    for ti, task in enumerate(state.goal.tasks, 1):
        said = "The goal above." if restates(task.description, state.goal.text) else None
        plan.append(f"{ti}. {said or task.description}")
        plan += [
            f"    {ti}.{si}. {first_line(s.description, PLAN_STEP_CHARS)}"
            for si, s in enumerate(task.subtasks, 1)
        ]
    values = fact_values(facts)
    return prompts.render("summary", **values, goal=state.goal.text, plan="\n".join(plan))


def window(exchanges: list[Exchange], keep: int, start: int = 0) -> list[Exchange]:
    """The exchanges shown: those after `start` (the round a replan or the budget moved
    the window past), moved on by `2*keep` rounds once `3*keep` rounds follow it.

    The start is counted in rounds, not list positions: the state keeps only the last
    few dozen exchanges, and a list that drops its oldest entry every round would make
    a position-based window slide by one each round.
    """
    if exchanges and exchanges[-1].round - start >= keep:
        # Counted from the start, not from round 0: after a replan started the window at
        # round 9, an absolute schedule moved it to round 10 at round 15, one exchange,
        # and the 1.5B's next round read 1,524 of its 3,016 tokens again (the CPU).
        start += ((exchanges[-1].round - start - keep) // (2 * keep)) * 2 * keep
    return [e for e in exchanges if e.round > start]


def exchange_messages(
    exchange: Exchange,
    native: bool,
    result_chars: int | None = None,
    prompts: PromptSet = DEFAULT,
    before: dict[str, Any] | None = None,
    same: dict[str, int] | None = None,
) -> list[dict[str, Any]]:
    """One past round as the model saw it: the facts it was given (as far as they differ
    from the facts `before` it, the previous round's), its reply, the results (each one
    in `same`, a call id, named by the earlier round that gave it: see `repeats`).

    Keeping each round's facts in place (rather than only the latest at the end) makes
    every round's prompt start with the whole previous prompt, unchanged.
    """
    shown = probe_message(exchange.probe, prompts, before) if exchange.probe else ""
    facts = [{"role": "user", "content": shown}] if exchange.probe else []
    return facts + _reply_messages(exchange, native, result_chars, prompts, same or {})


def repeats(shown: list[Exchange]) -> list[dict[str, int]]:
    """For each exchange shown, its calls whose result is word for word (timings aside)
    the result the same call (tool and arguments) gave in an earlier round shown: the call
    id and that round. The model reads such a result once; the engine then reads a line
    instead of the output again (a failing test run of 400-500 tokens, run twice by the
    1.5B model before each blocked repeat). Only earlier rounds of the window count, so a
    round's messages stay the same for as long as it is shown."""
    seen: dict[bytes, int] = {}
    found: list[dict[str, int]] = []
    for exchange in shown:
        calls = {str(c["id"]): c for c in exchange.tool_calls}
        same: dict[str, int] = {}
        for result in exchange.results:
            call = calls.get(result.get("call", ""))
            content = result.get("content", "")
            if call is None or result.get("status") != "done" or len(content) < SAME_AT_LEAST:
                continue
            key = orjson.dumps(
                [call["name"], call["arguments"], _TIMING.sub("", content)],
                option=orjson.OPT_SORT_KEYS,
            )
            if key in seen:
                same[str(call["id"])] = seen[key]
            else:
                seen[key] = exchange.round
        found.append(same)
    return found


def _reply_messages(
    exchange: Exchange,
    native: bool,
    result_chars: int | None,
    prompts: PromptSet,
    same: dict[str, int],
) -> list[dict[str, Any]]:
    """The reply, then each call's one result in the order of the calls (paired by the
    call's id, never by position), then the notes that answer no call."""

    def text(result: dict[str, str]) -> str:
        content = result["content"]
        if result.get("status") == "skipped":
            content = prompts.render("call_skipped")
        elif (earlier := same.get(result.get("call", ""))) is not None:
            status = content.split("\n", 1)[0][:200]  # `exit code 1`
            return prompts.render("same_output", round=earlier, status=status)
        return content if result_chars is None else cap_text(content, result_chars)

    answers = {r["call"]: r for r in exchange.results if "call" in r}
    notes = [r for r in exchange.results if "call" not in r]
    paired = [
        (c, answers.get(str(c["id"])) or {"tool": c["name"], "content": "", "status": "skipped"})
        for c in exchange.tool_calls
    ]
    if not native or exchange.written:
        # Calls the model wrote in its text go back as it wrote them, each result after
        # them as a message of its own: the reply is then the very tokens the server
        # generated and still holds in its cache, where the calls as the server's own
        # (`tool_calls`) would be rendered anew after them and read again.
        messages = [{"role": "assistant", "content": shown_reply(exchange, prompts)}]
        return messages + [
            {"role": "user", "content": f"[result of {r['tool']}]\n{text(r)}"}
            for r in [r for _, r in paired] + notes
        ]
    # The server's id for each call when it gave one (an OpenAI-compatible server
    # matches results by it), else ours.
    wire = [str(c.get("server_id") or c["id"]) for c in exchange.tool_calls]
    calls = [
        {"id": w, "name": c["name"], "arguments": clip(c["arguments"], CALL_CHARS)}
        for c, w in zip(exchange.tool_calls, wire, strict=True)
    ]
    messages: list[dict[str, Any]] = [
        {
            "role": "assistant",
            "content": shown_reply(exchange, prompts),
            **({"tool_calls": calls} if calls else {}),
        }
    ]
    messages += [
        {"role": "tool", "content": text(r), "tool": str(c["name"]), "call": w}
        for (c, r), w in zip(paired, wire, strict=True)
    ]
    # A note (feedback on a reply that held no call) as a tool message would match nothing.
    return messages + [{"role": "user", "content": text(r)} for r in notes]


def budget(num_ctx: int, num_predict: int) -> int:
    """Tokens the prompt may take: the context window minus room for the reply."""
    return num_ctx - min(num_predict, num_ctx // 2)


def _chars(messages: list[dict[str, Any]]) -> int:
    return sum(len(str(m.get("content", ""))) + MESSAGE_OVERHEAD for m in messages) + sum(
        len(str(m.get("tool_calls", ""))) for m in messages
    )


def build(
    state: State,
    system: str,
    keep: int,
    native: bool,
    facts: dict[str, Any],
    budget_tokens: int | None = None,
    prompts: PromptSet = DEFAULT,
) -> list[dict[str, Any]]:
    return layout(state, system, keep, native, facts, budget_tokens, prompts)[0]


def layout(
    state: State,
    system: str,
    keep: int,
    native: bool,
    facts: dict[str, Any],
    budget_tokens: int | None = None,
    prompts: PromptSet = DEFAULT,
    turn: str | None = None,
) -> tuple[list[dict[str, Any]], int]:
    """The round's messages, and the round the window starts after (journaled with the
    round, so the next round starts there too: see the module's docstring). With `turn`,
    a request of its own goes last instead of the round's facts (the verdict's)."""
    head = [
        {"role": "system", "content": system},
        {"role": "user", "content": summary(state, facts, prompts)},
    ]
    shown = window(state.exchanges, keep, state.window_start)
    before = shown[-1].probe if shown else None
    last = probe_message(facts, prompts, before) if turn is None else turn
    tail = [{"role": "user", "content": last}]
    start = shown[0].round - 1 if shown else state.window_start
    blocks = _blocks(shown, native, None, prompts)
    if budget_tokens is not None and sum(map(_chars, blocks)) > (
        room := int(budget_tokens * state.chars_per_token * 0.95) - _chars(head + tail)
    ):
        shown, blocks = _fit(shown, blocks, native, room, prompts)
        start = shown[0].round - 1
    return head + [m for block in blocks for m in block] + tail, start


def _fit(
    shown: list[Exchange],
    blocks: list[list[dict[str, Any]]],
    native: bool,
    room: int,
    prompts: PromptSet,
) -> tuple[list[Exchange], list[list[dict[str, Any]]]]:
    """The exchanges past `room` characters: the oldest dropped until the rest takes half
    of it, so the rounds after append to an unchanged prompt until it is full again;
    what is still too long is shortened (older results, then the latest's)."""
    while len(blocks) > 1 and sum(map(_chars, blocks)) > room // 2:
        del shown[0], blocks[0]
    blocks = _blocks(shown, native, None, prompts)  # the first now shows all its facts
    if sum(map(_chars, blocks)) <= room:
        return shown, blocks
    blocks = [*_blocks(shown, native, OLD_RESULT_CHARS, prompts)[:-1], blocks[-1]]
    if _chars(blocks[-1]) > room:
        latest = shown[-1]
        before = shown[-2].probe if len(shown) > 1 else None
        same = repeats(shown)[-1]
        fixed = _chars(exchange_messages(latest, native, 0, prompts, before, same))
        each = max(200, (room - fixed) // max(1, len(latest.results)))
        blocks[-1] = exchange_messages(latest, native, each, prompts, before, same)
    return shown, blocks


def _blocks(
    shown: list[Exchange], native: bool, result_chars: int | None, prompts: PromptSet
) -> list[list[dict[str, Any]]]:
    """The messages of each exchange shown, each round's facts as far as they differ from
    the round's before it (the first round shown: all of them)."""
    same = repeats(shown)
    return [
        exchange_messages(
            e, native, result_chars, prompts, shown[i - 1].probe if i else None, same[i]
        )
        for i, e in enumerate(shown)
    ]
