"""What the real-model benchmark reads from each run's journal, and the table it prints.

A run's journal (`.agent_context/history.jsonl`) gives what localagent said (how the goal
ended, with which verification), how many rounds and tokens it took, and whether a crash
made a command run twice. The judge's verdict (realjudges.py) is kept beside it, never
mixed with it.
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from benchlib import table

ENDINGS = {"goal_completed": "completed", "goal_failed": "failed", "stopped": "stopped"}


@dataclass
class Run:
    """One agent run of one goal: what the journal says and what the judge found."""

    goal: str
    index: int
    seconds: float = 0.0
    exit_code: int | None = None
    timed_out: bool = False
    kills: int = 0
    outcome: str = "unfinished"  # completed, failed, stopped or unfinished
    verification: str = ""
    reason: str = ""
    rounds: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model_seconds: float = 0.0
    repeated_commands: int = 0
    asked_again: int = 0
    works: bool = False
    judged: str = ""
    workspace: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def completed(self) -> bool:
        return self.outcome == "completed"

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def read_lines(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a JSON-lines file; a torn or damaged line is skipped (the
    journal's own reader decides what counts, the benchmark only counts)."""
    if not path.is_file():
        return []
    found = []
    for line in path.read_bytes().splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            found.append(record)
    return found


def read_history(path: Path) -> list[dict[str, Any]]:
    return [r for r in read_lines(path) if isinstance(r.get("type"), str)]


def summarize(run: Run, records: list[dict[str, Any]]) -> None:
    """Fill run's journal figures from its history records."""
    for record in records:
        kind = record["type"]
        if kind == "llm_call":
            run.rounds += record.get("purpose") == "round"
            run.prompt_tokens += _int(record.get("prompt_tokens"))
            run.completion_tokens += _int(record.get("completion_tokens"))
            run.model_seconds += _int(record.get("duration_ms")) / 1000
        elif kind in ENDINGS:
            run.outcome = ENDINGS[kind]
            run.verification = str(record.get("verification", ""))
            run.reason = str(record.get("reason", ""))[:300]
        elif kind == "goal_started":  # a resumed run that restarts its goal
            run.outcome, run.verification, run.reason = "unfinished", "", ""
    run.repeated_commands, run.asked_again = _command_starts(records)


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def _is_command(record: dict[str, Any]) -> bool:
    return record.get("tool") == "run_cmd" or "marker" in record


def repeated_commands(records: list[dict[str, Any]]) -> int:
    """Command starts by which the harness ran a command a second time: an `action_started`
    for a call id already started, the same command started again while an earlier start
    of it has neither an `action_finished` nor an `action_interrupted`, or a finish marked
    `redone` (a crash's leftover run again). A command the model asks for again after it
    was told its run was interrupted is its own decision: `asked_again` counts those."""
    return _command_starts(records)[0]


def asked_again(records: list[dict[str, Any]]) -> int:
    """Commands the model sent again after being told their run was interrupted (SPEC 5:
    never re-run blindly; the model decides, knowing the effect is unknown)."""
    return _command_starts(records)[1]


def _command_starts(records: list[dict[str, Any]]) -> tuple[int, int]:
    started: set[str] = set()
    open_: dict[str, str] = {}  # signature -> call id of its start with no ending yet
    interrupted: dict[str, str] = {}  # signature -> call id of its interrupted start
    repeated = again = 0
    for record in records:
        kind, call = record["type"], str(record.get("call") or "")
        if kind == "action_started" and _is_command(record):
            signature = str(record.get("signature") or record.get("args"))
            repeated += bool(call and call in started) or signature in open_
            again += signature in interrupted and call not in started
            started.add(call)
            open_[signature] = call
            interrupted.pop(signature, None)
        elif kind in ("action_finished", "action_interrupted"):
            repeated += bool(record.get("redone")) and _is_command(record)
            ended = {s for s, c in open_.items() if c == call}
            open_ = {s: c for s, c in open_.items() if c != call}
            if kind == "action_interrupted":
                interrupted.update((s, call) for s in ended)
    return repeated, again


# ---- figures over runs -------------------------------------------------------------

HEADERS = [
    "goal",
    "runs",
    "localagent said completed",
    "artefact actually works",
    '"completed (verified)" but broken',
    "works but ended failed",
    "over time",
    "rounds",
    "tokens",
    "s/run",
    "s/round",
]
KILL_HEADERS = ["kills", "commands run twice", "interrupted, sent again by the model"]


def _median(values: Iterable[float]) -> float | None:
    found = list(values)
    return statistics.median(found) if found else None


def figures(runs: list[Run]) -> dict[str, Any]:
    """The counts and medians of a group of runs (one goal's, or all)."""
    per_round = [r.seconds / r.rounds for r in runs if r.rounds]
    return {
        "runs": len(runs),
        "said_completed": sum(r.completed for r in runs),
        "said_verified": sum(r.completed and r.verification == "verified" for r in runs),
        "works": sum(r.works for r in runs),
        "verified_but_broken": sum(
            r.completed and r.verification == "verified" and not r.works for r in runs
        ),
        "completed_but_broken": sum(r.completed and not r.works for r in runs),
        "works_but_failed": sum(r.works and not r.completed for r in runs),
        "over_time": sum(r.timed_out for r in runs),
        "kills": sum(r.kills for r in runs),
        "repeated_commands": sum(r.repeated_commands for r in runs),
        "asked_again": sum(r.asked_again for r in runs),
        "median_rounds": _median(r.rounds for r in runs),
        "median_tokens": _median(r.prompt_tokens + r.completion_tokens for r in runs),
        "median_seconds": _median(r.seconds for r in runs),
        "median_seconds_per_round": _median(per_round),
    }


def by_goal(runs: list[Run]) -> dict[str, dict[str, Any]]:
    """Figures per goal in the order the goals first appear, then "all" over every run."""
    groups: dict[str, list[Run]] = defaultdict(list)
    for run in runs:
        groups[run.goal].append(run)
    found = {goal: figures(group) for goal, group in groups.items()}
    if len(groups) > 1:
        found["all"] = figures(runs)
    return found


def _number(value: float | None, digits: int = 0) -> str:
    if value is None:
        return "-"
    return f"{value:,.{digits}f}"


def table_rows(groups: dict[str, dict[str, Any]], kills: bool) -> list[list[str]]:
    rows = []
    for goal, f in groups.items():
        said = str(f["said_completed"])
        if f["said_verified"]:
            said += f" ({f['said_verified']} verified)"
        row = [goal, str(f["runs"]), said, str(f["works"]), str(f["verified_but_broken"])]
        row += [str(f["works_but_failed"]), str(f["over_time"])]
        row += [_number(f["median_rounds"], 1 if f["runs"] % 2 == 0 else 0)]
        row += [_number(f["median_tokens"]), _number(f["median_seconds"])]
        row += [_number(f["median_seconds_per_round"], 1)]
        if kills:
            row += [str(f["kills"]), str(f["repeated_commands"]), str(f["asked_again"])]
        rows.append(row)
    return rows


def render(groups: dict[str, dict[str, Any]], kills: bool) -> str:
    """The Markdown table of the figures; rounds, tokens and seconds are medians per run."""
    headers = HEADERS + (KILL_HEADERS if kills else [])
    return table(headers, table_rows(groups, kills))


# ---- the engine's KV cache ---------------------------------------------------------


def metric(text: str, name: str) -> float | None:
    """The value of a Prometheus metric without labels (llama-server's /metrics)."""
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] == name:
            try:
                return float(parts[1])
            except ValueError:
                return None
    return None


def cache_from_metrics(processed: float, sent: int) -> dict[str, Any]:
    """KV-cache reuse from the prompt tokens the engine evaluated against those localagent
    sent (each request counts its whole prompt, cached part included)."""
    reuse = 1 - processed / sent if sent else None
    return {"source": "metrics", "sent": sent, "processed": int(processed), "reuse": reuse}


def cache_from_shim(log: Path) -> dict[str, Any]:
    """KV-cache reuse from the Ollama shim's log: cache_n of cache_n + prompt_n per reply."""
    cached = evaluated = 0
    for record in read_lines(log):
        cached += _int(record.get("cache_n"))
        evaluated += _int(record.get("prompt_n"))
    total = cached + evaluated
    return {
        "source": "shim",
        "sent": total,
        "processed": evaluated,
        "reuse": cached / total if total else None,
    }


def cache_line(cache: dict[str, Any] | None) -> str:
    if not cache or cache.get("reuse") is None:
        return "KV-cache reuse: not measured (no /metrics and no shim log)"
    return (
        f"KV-cache reuse ({cache['source']}): {cache['reuse']:.1%} of "
        f"{cache['sent']:,} prompt tokens sent were served from the cache; the engine "
        f"evaluated {cache['processed']:,}"
    )
