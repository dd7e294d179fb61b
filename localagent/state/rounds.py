"""What a round does to the state: the model's reply, the actions its calls start and
finish, and the results that settle each call (see `reduce` for the table)."""

from __future__ import annotations

import zlib
from typing import Any

from localagent.state.ledger import note_action, recorded_facts
from localagent.state.model import (
    CALL_CHARS,
    CLAIMS_KEPT,
    EXCHANGES_KEPT,
    GUARD_WINDOW,
    RECENT_ACTIONS,
    RECENT_LIMIT,
    RESULT_CHARS,
    Action,
    Attempt,
    Claim,
    Exchange,
    State,
)
from localagent.system.textcap import cap_text, clip

ERROR_TOOL_CHARS = 60  # of the tool's name, in an error the facts name

ERROR_TOOL_CHARS = 60  # of the tool's name, in an error the facts name


def _push(items: list[Any], item: Any, limit: int) -> None:
    items.append(item)
    del items[:-limit]


def add_result(
    state: State, tool: str, text: str, rec: dict[str, Any] | None = None, status: str = "done"
) -> None:
    """One observation: it settles the call of the latest reply the record names, or
    is a note (answering no call) when that call is not open.

    Every call ends with exactly one result, so a second observation of the same call
    (a blocked claim whose subtask then fails) is a note too. Records of older journals
    name no call: they settle the first call still open.
    """
    if not state.exchanges:
        return
    last = state.exchanges[-1]
    call_id = (rec or {}).get("call")
    if call_id is None and _older(rec) and last.round == state.rounds:
        call_id = next(
            (c.get("id") for c in last.tool_calls if c.get("id") not in last.settled), None
        )
    entry = {"tool": tool, "content": cap_text(text, RESULT_CHARS)}
    open_ = {str(c.get("id")) for c in last.tool_calls} - set(last.settled)
    if call_id is not None and str(call_id) in open_:
        entry.update(call=str(call_id), status=status)
        last.settled.append(str(call_id))
    last.results.append(entry)


def _older(rec: dict[str, Any] | None) -> bool:
    """A record of a journal from before calls had ids (an action's record names its
    call from then on; feedback and a subtask's end may answer none)."""
    if rec is None or rec.get("type") == "feedback":
        return False
    return "call" not in rec or str(rec.get("type", "")).startswith("action_")


def skip_rest_of_reply(state: State) -> None:
    """Calls after a subtask boundary belong to the old subtask: they are never run,
    and each is answered as skipped."""
    if state.exchanges:
        last = state.exchanges[-1]
        for call in last.tool_calls:
            if call.get("id") not in last.settled:
                last.settled.append(str(call["id"]))
                last.results.append(
                    {
                        "tool": str(call["name"]),
                        "content": "",
                        "call": str(call["id"]),
                        "status": "skipped",
                    }
                )


def llm_call(state: State, rec: dict[str, Any]) -> None:
    state.tokens.prompt += rec.get("prompt_tokens", 0)
    state.tokens.completion += rec.get("completion_tokens", 0)
    if rec.get("cached_tokens") is not None:
        state.tokens.cached += min(rec["cached_tokens"], rec.get("prompt_tokens", 0))
        state.tokens.measured += rec.get("prompt_tokens", 0)
    state.llm_calls += 1
    state.suspended = ""
    state.waiting = None
    if rec.get("purpose") == "round":
        _learn_token_size(state, rec)
        state.call_format = str(rec.get("recogniser") or state.call_format)
        state.rounds += 1
        state.last_probe = rec.get("probe", {})
        state.notice = rec.get("notice", "")
        if rec.get("window") is not None:
            state.window_start = rec["window"]
        state.replanned = False  # the probe of this round told of it
        state.rewound = ""  # and of a rewind
        if state.exchanges:  # only the latest reply may still have calls to run in full
            last = state.exchanges[-1]
            last.tool_calls = [
                {**c, "arguments": clip(c["arguments"], CALL_CHARS)} for c in last.tool_calls
            ]
        exchange = Exchange(
            round=state.rounds,
            cursor=(state.task_index, state.subtask_index),
            subtask=state.ledger.subtask,
            probe=state.last_probe,
            content=rec.get("content", ""),
            written=rec.get("recogniser") not in (None, "", "native"),
            cut_off=str(rec.get("cut_off") or ""),
            tool_calls=[
                {**call, "id": str(call.get("id") or f"{state.rounds}.{i}")}
                for i, call in enumerate(rec.get("tool_calls", []), 1)
            ],
        )
        _push(state.exchanges, exchange, EXCHANGES_KEPT)


def _learn_token_size(state: State, rec: dict[str, Any]) -> None:
    if rec.get("estimated"):  # an estimate made from the size would only teach itself
        return
    chars, tokens = rec.get("prompt_chars"), rec.get("prompt_tokens")
    if isinstance(chars, int) and isinstance(tokens, int) and chars > 0 and tokens > 0:
        seen = min(max(chars / tokens, 1.5), 8.0)
        state.chars_per_token = round(0.5 * state.chars_per_token + 0.5 * seen, 3)


def action_started(state: State, rec: dict[str, Any]) -> None:
    state.open_action = Action(
        seq=rec["seq"],
        tool=rec["tool"],
        args=rec["args"],
        call=rec.get("call"),
        marker=rec.get("marker"),
        pid=rec.get("pid"),
        create_time=rec.get("create_time"),
        before=rec.get("before"),
    )
    state.format_errors = 0
    state.guard.window.append(Attempt(sig=rec["signature"], epoch=state.guard.epoch))
    del state.guard.window[:-GUARD_WINDOW]


def action_finished(state: State, rec: dict[str, Any]) -> None:
    result = cap_text(rec["result"], RESULT_CHARS)
    action = Action(
        seq=rec["seq"],
        tool=rec["tool"],
        args=clip(rec["args"], 300),
        ok=rec["ok"],
        result=result,
        returncode=rec.get("returncode"),
    )
    if state.open_action is not None and state.guard.window:
        state.guard.window[-1].obs = f"{zlib.crc32(rec['result'].encode('utf-8', 'replace')):08x}"
    state.open_action = None
    state.completion_due = rec.get("completes") or None
    state.fingerprint = str(rec.get("fingerprint") or state.fingerprint)
    if rec.get("changed"):
        state.guard.epoch += 1
    note_action(state.ledger, rec, state.guard.epoch)
    _push(state.recent_actions, action, RECENT_ACTIONS)
    add_result(state, rec["tool"], result, rec)
    facts = recorded_facts(rec)
    for path in facts.get("removed", []) + facts.get("wrote", []):
        if path in state.files_written:
            state.files_written.remove(path)
    for path in facts.get("wrote", []):
        _push(state.files_written, path, RECENT_LIMIT * 4)
    for cmd in facts.get("ran", []):
        _push(state.commands, {"cmd": cmd, "returncode": rec.get("returncode")}, RECENT_LIMIT)
    if not rec["ok"]:
        # A tool name is the model's: it may be 20,000 characters of nothing.
        tool = str(rec["tool"])
        tool = tool if len(tool) <= ERROR_TOOL_CHARS else tool[: ERROR_TOOL_CHARS - 1] + "…"
        _push(state.errors, f"{tool}: {_what_failed(rec, facts)}", 3)


def action_blocked(state: State, rec: dict[str, Any]) -> None:
    sig = rec["signature"]
    if sig not in state.blocked:
        _push(state.blocked, sig, 50)
    state.blocked_total += 1
    state.guard.insisted += 1
    state.ledger.tried += 1
    add_result(state, rec["tool"], rec["reason"], rec, "blocked")


def feedback(state: State, rec: dict[str, Any]) -> None:
    if rec.get("format_error"):
        state.format_errors += 1
    if rec.get("refused"):
        state.ledger.refused += 1
    if rec.get("nudged"):
        state.ledger.nudged = True
    if rec.get("completes"):  # a repeat that ended its run subtask: the completion is owed
        state.completion_due = rec["completes"]
    count_claim(state, rec)
    status = "refused" if rec.get("refused") or rec.get("nudged") else "done"
    add_result(state, rec.get("tool", ""), rec["text"], rec, status)


def loop_detected(state: State, rec: dict[str, Any]) -> None:
    state.loops_total += 1


def action_interrupted(state: State, rec: dict[str, Any]) -> None:
    if state.open_action is not None and state.guard.window:
        # An attempt that never finished gave no result: it is not a repeat to count.
        state.guard.window.pop()
    state.open_action = None
    add_result(state, rec["tool"], rec["text"], rec, "interrupted")


def count_claim(state: State, rec: dict[str, Any]) -> None:
    """A failure claim the record answers counts for the loop guard, across subtasks."""
    claim = rec.get("claim")
    if isinstance(claim, str) and claim:
        claims = state.guard.claims
        claims[claim] = claims.pop(claim, None) or Claim(first=state.ledger.subtask)
        claims[claim].count += 1
        while len(claims) > CLAIMS_KEPT:
            del claims[next(iter(claims))]


def _what_failed(rec: dict[str, Any], facts: dict[str, list[str]]) -> str:
    """A failed call as the facts' `errors` name it: for a run, the command and the value
    a test wanted (`wrong`) or the file that did not load (`broken`), where the run found
    one; else the start of its result. Qwen2.5-Coder-1.5B's fixtest edit round read
    "run_cmd: exit code 1 …" there, and edited the test's assertion into stats.py."""
    found = facts.get("wrong", []) + facts.get("broken", [])
    if found and facts.get("ran"):
        return f"`{facts['ran'][0][:80]}`: {found[0][:200]}"
    return str(rec["result"])[:300]
