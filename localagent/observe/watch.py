"""`status --watch`: a live view of a running goal, read from the journal.

On a terminal it is a `rich` live display redrawn a few times a second; when stdout is
not a terminal it writes the trace's lines as records arrive. Either way it ends when
the goal ends or no agent holds the workspace any more, and Ctrl-C ends it quietly.

The journal says what the agent is doing: the owed work (`next_due`) after the last
record is a model call or a tool, and the time since that record is how long it has been
going. Tokens per second come from the `llm_call` records (completion tokens over the
call's duration). Every text that came from a model, a tool or the user is shown as
`rich.text.Text`, never parsed as markup, with its control characters escaped.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localagent.journal import Journal
from localagent.observe import pace, text, trace
from localagent.observe.events import ENDS, Follower
from localagent.observe.pace import seconds
from localagent.observe.report import open_journal, running, visible
from localagent.state import (
    DueCall,
    DuePlan,
    DueReplan,
    DueVerify,
    State,
    counts,
    current,
    next_due,
)
from localagent.system.console import printable

RECENT = 6
TAIL = 80
ACTIONS = ("action_finished", "action_blocked", "action_interrupted")


@dataclass
class View:
    """What the live view shows, computed from the journal at one moment."""

    goal: str = ""
    status: str = "no goal"
    process: str = "not running"
    task: str = "-"
    subtask: str = "-"
    doing: str = "-"
    rounds: str = "0"
    progress: str = ""
    tokens: str = "0"
    speed: str = "-"
    cache: str = "-"
    blocked: str = "none"
    recent: list[str] = field(default_factory=list)
    ended: bool = False


def _since(records: list[dict[str, Any]], now: float, seq: int | None = None) -> str:
    found = [r for r in records if seq is None or r.get("seq") == seq]
    at = seconds(found[-1].get("ts")) if found else None
    return "" if at is None else f" for {max(0.0, now - at):.1f}s"


def _doing(state: State, records: list[dict[str, Any]], alive: bool, now: float) -> str:
    """What the agent is doing now, and for how long."""
    goal = state.goal
    if goal is None:
        return "-"
    if goal.status != "in_progress":
        return f"goal {goal.status}" + (f" ({state.verification})" if state.verification else "")
    if not alive:
        return f"suspended: {state.suspended}" if state.suspended else "no agent is running"
    if state.open_action is not None:
        call = text.call_text(state.open_action.tool, state.open_action.args, False)
        return f"running {call}{_since(records, now, state.open_action.seq)}"
    if state.waiting is not None:
        return _retrying(state.waiting.reason, state.waiting.since, now)
    due = next_due(state)
    waiting = _since(records, now)
    if isinstance(due, DuePlan | DueReplan):
        return (
            f"waiting for the model ({'plan' if isinstance(due, DuePlan) else 'replan'}){waiting}"
        )
    if isinstance(due, DueVerify):
        running = due.under_way is not None and due.under_way.open
        return f"running a goal check{waiting}" if running else f"verifying the goal{waiting}"
    if isinstance(due, DueCall):
        return (
            f"about to run {text.call_text(due.call.get('name'), due.call.get('arguments'), False)}"
        )
    return f"waiting for the model (round {state.rounds + 1}){waiting}"


def _retrying(reason: str, since: str, now: float) -> str:
    """A model call waiting out a failing server: what the server did, not "waiting"."""
    at = seconds(since)
    lasting = "" if at is None else f", for {max(0.0, now - at):.1f}s"
    status = reason.removeprefix("server error ")
    said = f"answered {status}" if status != reason else f"failed: {reason}"
    return f"the model server {said} (retrying{lasting})"


def _speed(records: list[dict[str, Any]]) -> str:
    calls = [
        r
        for r in records
        if r.get("type") == "llm_call"
        and isinstance(r.get("completion_tokens"), int)
        and isinstance(r.get("duration_ms"), int | float)
        and r["duration_ms"] > 0
    ]
    if not calls:
        return "-"
    last = calls[-1]
    rate = last["completion_tokens"] / last["duration_ms"] * 1000
    total = sum(r["completion_tokens"] for r in calls) / sum(r["duration_ms"] for r in calls)
    return f"{rate:,.1f} tokens/s last call, {total * 1000:,.1f} over the last {len(calls)}"


def _cache(state: State, records: list[dict[str, Any]]) -> str:
    """The run's share of prompt tokens served from the server's cache, and the last call's."""
    whole = pace.run_share(state.tokens)
    said = [part for part in map(pace.call_share, records) if part is not None]
    if whole is None:
        return ""
    last = f" (last call {said[-1]:.0%})" if said else ""
    return pace.cached_text(whole) + last


def _action(rec: dict[str, Any]) -> str:
    kind = rec.get("type")
    call = text.call_text(rec.get("tool"), rec.get("args"), False)
    if kind == "action_finished":
        first = str(rec.get("result", "")).split("\n", 1)[0]
        return f"{call} -> {'ok' if rec.get('ok') is True else 'error'}: {first}"
    if kind == "action_blocked":
        return f"BLOCKED {call} ({rec.get('pattern', '?')})"
    if kind == "action_interrupted":
        return f"interrupted {call}"
    if kind == "feedback":
        return f"REFUSED {rec.get('tool', '?')}: {str(rec.get('text', '')).split(chr(10), 1)[0]}"
    if kind == "check_finished":
        return f"goal check `{rec.get('cmd')}` {rec.get('status')}: {rec.get('summary', '')}"
    return f"subtask {str(kind).split('_')[1]}: {rec.get('reason', '')}"


def _recent(records: list[dict[str, Any]], now: float) -> list[str]:
    """The last actions, subtask ends and goal checks, each with how long ago."""
    kinds = (*ACTIONS, "subtask_completed", "subtask_failed", "check_finished")
    found = []
    for rec in records:
        if rec.get("type") in kinds or (rec.get("type") == "feedback" and rec.get("refused")):
            at = seconds(rec.get("ts"))
            ago = "?" if at is None else f"{max(0.0, now - at):.0f}s"
            found.append(f"{ago:>6} ago  {visible(' '.join(_action(rec).split()))}")
    return found[-RECENT:]


def view(
    state: State, records: list[dict[str, Any]], alive: bool, pid: int | None, now: float
) -> View:
    """The view of `state` (the journal's) and its last `records`, at time `now`."""
    goal = state.goal
    if goal is None:
        return View(ended=not alive)
    here = current(state)
    c = counts(state)
    shown = View(goal=visible(goal.text), status=goal.status)
    if state.verification:
        shown.status += f", {state.verification}"
    shown.process = (
        f"running (pid {pid})" if alive and pid else "running" if alive else "not running"
    )
    if here is not None:
        shown.task = f"{state.task_index + 1}/{len(goal.tasks)} {visible(here[0].description)}"
        shown.subtask = (
            f"{state.subtask_index + 1}/{len(here[0].subtasks)} {visible(here[1].description)}"
        )
    shown.doing = _doing(state, records, alive, now)
    limit = state.settings.get("max_rounds")
    shown.rounds = f"{state.rounds}" + (f"/{limit}" if limit else "")
    shown.progress = f"{c['completed']}/{c['subtasks']} subtasks done, {c['failed']} failed"
    shown.tokens = (
        f"{state.tokens.prompt:,} prompt, {state.tokens.completion:,} completion "
        f"({state.llm_calls} model calls)"
    )
    rounds = pace.per_round(pace.round_gaps(records))
    shown.speed = "; ".join(filter(None, [_speed(records), rounds]))
    shown.cache = _cache(state, records) or shown.cache
    blocked = [r for r in records if r.get("type") == "action_blocked"]
    if state.blocked_total:
        last = blocked[-1] if blocked else {}
        what = text.call_text(last.get("tool"), last.get("args"), False) if last else ""
        shown.blocked = f"{state.blocked_total}" + (f", last: {what}" if what else "")
    shown.recent = _recent(records, now)
    shown.ended = goal.status != "in_progress" or not alive
    return shown


def snapshot(journal: Journal, now: float | None = None) -> View:
    journal.notes.clear()  # loading adds its notes again each time
    state = journal.load(repair=False)
    alive, pid = running(journal)
    return view(state, journal.tail(TAIL), alive, pid, time.time() if now is None else now)


def rows(shown: View) -> list[tuple[str, str]]:
    """The facts of the view, each made printable (a rich Text shows controls as they are)."""
    facts = [
        ("goal", shown.goal or "-"),
        ("status", f"{shown.status} · {shown.process}"),
        ("task", shown.task),
        ("subtask", shown.subtask),
        ("now", shown.doing),
        ("rounds", f"{shown.rounds} · {shown.progress}"),
        ("tokens", shown.tokens),
        ("speed", shown.speed),
        ("cache", shown.cache),
        ("blocked", shown.blocked),
    ]
    return [(key, printable(value, one_line=True)) for key, value in facts]


def renderable(shown: View) -> Any:
    """The view as a rich renderable: a panel of facts, then the last actions."""
    from rich.console import Group
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    facts = Table.grid(padding=(0, 1))
    facts.add_column(style="bold", no_wrap=True)
    facts.add_column(overflow="fold")
    for key, value in rows(shown):
        facts.add_row(key, Text(value))
    recent = Table.grid()
    recent.add_column(overflow="ellipsis", no_wrap=True)
    for line in shown.recent or ["(none yet)"]:
        recent.add_row(Text(printable(line, one_line=True)))
    return Group(
        Panel(facts, title="localagent", title_align="left"),
        Panel(recent, title="last actions", title_align="left"),
    )


def live(workspace: Path, poll: float = 0.5) -> None:
    """The rich live display, until the goal ends or Ctrl-C."""
    from rich.console import Console
    from rich.live import Live

    journal = open_journal(workspace)
    console = Console()
    try:
        with Live(renderable(snapshot(journal)), console=console, auto_refresh=False) as screen:
            while True:
                shown = snapshot(journal)
                screen.update(renderable(shown), refresh=True)
                if shown.ended:
                    return
                time.sleep(poll)
    except KeyboardInterrupt:
        return


def lines(workspace: Path, write: Callable[[str], None], poll: float = 0.5) -> None:
    """Plain lines: the trace of the last few records, then of each new one, until the
    goal ends or no agent holds the workspace."""
    journal = open_journal(workspace)
    follower = Follower(journal)
    tracer = trace.Tracer()
    newest = journal.tail(1)
    show_from = newest[0]["seq"] - 20 if newest else 0
    try:
        while True:
            found = follower.poll()
            for record in found:
                entry = tracer.feed(record)
                if entry is not None and record["seq"] > show_from:
                    for line in text.render(entry):
                        write(line)
            if any(str(r.get("type")) in ENDS for r in found) or (
                not found and not running(journal)[0]
            ):
                return
            time.sleep(poll)
    except KeyboardInterrupt:
        return


def show(workspace: Path, write: Callable[[str], None]) -> None:
    """`status --watch`: the live display on a terminal, plain lines otherwise."""
    import sys

    from localagent.system.console import live_line_supported

    if live_line_supported(sys.stdout):
        live(workspace)
    else:
        lines(workspace, write)
