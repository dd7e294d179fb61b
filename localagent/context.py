"""The focused context of one round, built from the state alone (SPEC §6.2, §10).

Order: the constant system prompt; the goal/plan/active subtask; a window of recent
exchanges; last, the volatile probe facts. The window slides in chunks: it grows from
`keep` to `2*keep - 1` exchanges and then drops back to `keep`, so between drops every
round's messages start with the previous round's messages unchanged and the model
server reuses its KV cache.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from localagent.prompts import PROBE, SUMMARY, SYSTEM, TEXT_PROTOCOL, render
from localagent.state import CALL_CHARS, Exchange, State, clip, current

_MARK = {"pending": " ", "in_progress": ">", "completed": "x", "failed": "!"}
_FILE = re.compile(r"(?<![\w/.-])([\w-][\w./-]*\.[A-Za-z0-9]{1,6})\b")


def system_prompt(allowed: tuple[str, ...], tools: list[dict[str, Any]] | None) -> str:
    protocol = ""
    if tools is not None:
        lines = []
        for tool in tools:
            fn = tool["function"]
            params = ", ".join(
                f"{name}: {spec['type']}" for name, spec in fn["parameters"]["properties"].items()
            )
            lines.append(f"- {fn['name']}({params}): {fn['description']}")
        protocol = render(TEXT_PROTOCOL, tools="\n".join(lines))
    return render(SYSTEM, allowed=", ".join(allowed), protocol=protocol)


def summary(state: State) -> str:
    assert state.goal is not None
    plan = []
    for ti, task in enumerate(state.goal.tasks, 1):
        plan.append(f"[{_MARK[task.status]}] {ti}. {task.description}")
        plan += [
            f"    [{_MARK[s.status]}] {ti}.{si}. {s.description}"
            for si, s in enumerate(task.subtasks, 1)
        ]
    here = current(state)
    task, sub = (here[0].description, here[1].description) if here else ("-", "-")
    return render(SUMMARY, goal=state.goal.text, plan="\n".join(plan), task=task, subtask=sub)


def window(exchanges: list[Exchange], keep: int) -> list[Exchange]:
    """The exchanges shown: from a start that moves only every `keep` rounds.

    The start is counted in rounds, not list positions: the state keeps only the last
    few dozen exchanges, and a list that drops its oldest entry every round would make
    a position-based window slide by one each round.
    """
    if not exchanges or exchanges[-1].round < keep:
        return exchanges
    start = ((exchanges[-1].round - keep) // keep) * keep
    return [e for e in exchanges if e.round > start]


def exchange_messages(exchange: Exchange, native: bool) -> list[dict[str, Any]]:
    """One past round as the model saw it: the facts it was given, its reply, the results.

    Keeping each round's facts in place (rather than only the latest at the end) makes
    every round's prompt start with the whole previous prompt, unchanged.
    """
    facts = [{"role": "user", "content": probe_message(exchange.probe)}] if exchange.probe else []
    return facts + _reply_messages(exchange, native)


def _reply_messages(exchange: Exchange, native: bool) -> list[dict[str, Any]]:
    if native:
        calls = [
            {"function": {"name": c["name"], "arguments": clip(c["arguments"], CALL_CHARS)}}
            for c in exchange.tool_calls
        ]
        messages: list[dict[str, Any]] = [
            {
                "role": "assistant",
                "content": exchange.content,
                **({"tool_calls": calls} if calls else {}),
            }
        ]
        messages += [
            {"role": "tool", "content": r["content"], "tool_name": r["tool"]}
            for r in exchange.results
        ]
        return messages
    messages = [{"role": "assistant", "content": exchange.content}]
    messages += [
        {"role": "user", "content": f"[result of {r['tool']}]\n{r['content']}"}
        for r in exchange.results
    ]
    return messages


def probe(state: State, root: Path, max_rounds: int, notice: str = "") -> dict[str, Any]:
    """Generic facts about the workspace the model should not have to ask for."""
    here = current(state)
    text = " ".join(
        filter(None, [state.goal.text if state.goal else "", here[1].description if here else ""])
    )
    mentioned = sorted({m.rstrip(".") for m in _FILE.findall(text)})[:12]
    existing = [name for name in mentioned if (root / name).is_file()]
    return {
        "round": state.rounds + 1,
        "max_rounds": max_rounds,
        "written": state.files_written[-4:],
        "existing": existing,
        "missing": [name for name in mentioned if name not in existing],
        "commands": [f"{c['cmd']} -> {c['returncode']}" for c in state.commands[-3:]],
        "errors": state.errors[-3:],
        "notice": notice,
    }


def _listing(items: list[str]) -> str:
    return ", ".join(items) if items else "none"


def probe_message(facts: dict[str, Any]) -> str:
    return render(
        PROBE,
        round=facts["round"],
        max_rounds=facts["max_rounds"],
        written=_listing(facts["written"]),
        existing=_listing(facts["existing"]),
        missing=_listing(facts["missing"]),
        commands=_listing(facts["commands"]),
        errors="\n  " + "\n  ".join(facts["errors"]) if facts["errors"] else "none",
        notice=facts["notice"],
    ).rstrip()


def build(
    state: State, system: str, keep: int, native: bool, facts: dict[str, Any]
) -> list[dict[str, Any]]:
    messages = [{"role": "system", "content": system}, {"role": "user", "content": summary(state)}]
    for exchange in window(state.exchanges, keep):
        messages += exchange_messages(exchange, native)
    messages.append({"role": "user", "content": probe_message(facts)})
    return messages
