"""The agent's own work per round, and the prompt it sends, over a long run (SPEC §10).

The real agent loop runs in this process against the fake Ollama server with no
reply delay, so a round costs only the agent's work (journaling, probing, building
the context, running the tool) plus the HTTP round trip to the fake. The model
call's own time (`duration_ms` of each `llm_call` record) is subtracted from the
round's wall time; the rest is the overhead. The scripted model never ends the goal
early: by round number it writes a new file, reads one or lists a folder, and only
the last round marks the subtask complete.

From the chat requests the fake received, per round: the prompt's size (characters
and the fake's `prompt_eval_count`) and the share of its messages that is an
unchanged prefix of the previous round's messages (what a KV cache can reuse).

    python scripts/bench_rounds.py [--quick] [--dir FOLDER] [--rounds N]
"""

from __future__ import annotations

import argparse
import json
import time
from itertools import pairwise
from pathlib import Path
from typing import Any

from benchlib import FLAT_RATIO, header, median, parse_args, scratch, table, verdict

from localagent.config.settings import Settings
from localagent.journal import Journal
from localagent.loop.agent import Agent
from localagent.models import make_model
from localagent.models.config import ModelConfig
from localagent.models.fake import FakeServer
from localagent.state import EXCHANGES_KEPT
from localagent.system.stopping import StopSignal
from localagent.tools import ToolContext

GOAL = "Keep a notes folder with one file per round and check the workspace as you go"
OVERHEAD_TARGET_MS = 25
PREFIX_TARGET = 0.70
SIZE_BAND = 0.30
EARLY, LATE = (10, 50), (150, 200)
PHASE = EXCHANGES_KEPT  # from this round on the state holds its most exchanges


def scenario(rounds: int) -> dict[str, Any]:
    plan = {"tasks": [{"description": "Keep notes", "subtasks": ["Write and check the notes"]}]}

    def call(match: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        reply = {"tool_calls": [{"name": name, "arguments": arguments}]}
        return {"match": match, "in": "last", "kind": "chat", "reply": reply}

    done = {"success": True, "reason": "all notes written"}
    return {
        "rules": [
            {"kind": "plan", "reply": {"content": json.dumps(plan)}},
            call(rf"\[status\] round {rounds} of", "mark_subtask_complete", done),
            call(
                r"\[status\] round (\d*[02468]) of",
                "write_file",
                {"path": "notes/r$1.txt", "content": "notes of round $1\n", "create_dirs": True},
            ),
            call(r"\[status\] round \d*[159] of", "read_file", {"path": "README.md"}),
            call(r"\[status\] round \d*[37] of", "list_dir", {"path": "."}),
        ]
    }


def run_once(
    root: Path, rounds: int, backend: str = "ollama"
) -> tuple[list[float], list[dict[str, Any]], list[Any]]:
    """One run: per round wall seconds, `llm_call` records, and the fake's chat requests."""
    workspace = root / "ws"
    workspace.mkdir(parents=True)
    (workspace / "README.md").write_text("# Notes\n\nOne file per round in notes/.\n")
    with FakeServer(scenario(rounds)) as fake:
        settings = Settings(
            backend=backend,
            ollama_host=fake.url,
            base_url=fake.url + "/v1",
            max_rounds=rounds,
            retry_deadline=5,
        )
        journal = Journal(workspace)
        journal.load()
        journal.append("goal_started", goal=GOAL, model=settings.model)
        model = make_model(ModelConfig.of(settings))
        model.preflight()
        # A round is its model call and then its tool calls, each a step of the loop; the
        # last step of round N ends when the state still counts N rounds.
        marks: dict[int, float] = {}
        ctx = ToolContext(root=workspace, allowed_commands=settings.allowed_commands)
        stop = StopSignal(journal.stop_requested)

        def mark(state: Any) -> None:
            marks[state.rounds] = time.perf_counter()

        agent = Agent(journal, model, settings, ctx, stop, mark)
        try:
            agent.plan()
            marks[0] = time.perf_counter()
            outcome = agent.run()
        finally:
            journal.snapshot()
            journal.close()
        requests = [
            r for r in fake.chat_requests if not r.get("format") and not r.get("response_format")
        ]
    if outcome.status != "completed" or journal.state.rounds != rounds:
        raise RuntimeError(f"the run ended {outcome} after {journal.state.rounds} rounds")
    calls = [r for r in journal.records() if r["type"] == "llm_call" and r["purpose"] == "round"]
    walls = [b - a for a, b in pairwise(marks[n] for n in sorted(marks))]
    return walls, calls, requests


def chars(message: dict[str, Any]) -> int:
    calls = message.get("tool_calls")
    return len(message.get("content", "")) + (len(json.dumps(calls)) if calls else 0)


def prefix_shares(requests: list[dict[str, Any]]) -> list[tuple[float, float]]:
    """Per round from the second: the unchanged prefix's share of messages and characters."""
    shares = []
    for before, now in pairwise(requests):
        old, new = before["messages"], now["messages"]
        same = 0
        while same < min(len(old), len(new)) and old[same] == new[same]:
            same += 1
        total = sum(map(chars, new))
        shares.append((same / len(new), sum(map(chars, new[:same])) / total))
    return shares


def window(values: list[float], bounds: tuple[int, int]) -> list[float]:
    """Values of rounds bounds[0]..bounds[1] (1-based, inclusive)."""
    return values[bounds[0] - 1 : bounds[1]]


def main() -> int:
    def extra(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--rounds", type=int, default=200, help="rounds per run (>= 60)")

    args = parse_args(__doc__.splitlines()[0], extra)
    rounds = max(args.rounds, 60)
    reps = 1 if args.quick else 5
    early = EARLY
    late = LATE if rounds == LATE[1] else (rounds - 50, rounds)
    overheads: list[list[float]] = []
    model_ms: list[float] = []
    with scratch(args.dir) as root:
        header("Rounds: agent overhead per round and prompt shape, instant model", root)
        for rep in range(reps):
            walls, calls, requests = run_once(root / f"run{rep}", rounds)
            models = [c["duration_ms"] / 1000 for c in calls]
            overheads.append([w - m for w, m in zip(walls, models, strict=True)])
            model_ms += models
    pooled = [[x for o in overheads for x in window(o, b)] for b in (early, late)]
    early_ms, late_ms = (median(p) * 1000 for p in pooled)
    print(
        table(
            ["rounds", "overhead ms (median)", "overhead ms (p90)", "vs rounds 10-50"],
            [
                [f"{b[0]}-{b[1]}", f"{median(p) * 1000:.2f}", f"{p90(p) * 1000:.2f}", ratio]
                for b, p, ratio in zip(
                    (early, late), pooled, ("1.00x", f"{late_ms / early_ms:.2f}x"), strict=True
                )
            ],
        )
    )
    print()
    print(
        f"{reps} run(s) of {rounds} rounds; overhead = round wall time minus the model call "
        f"(median model call, HTTP to the in-process fake: {median(model_ms) * 1000:.2f} ms); "
        f"it includes running the tool."
    )
    print()
    tokens = [c["prompt_tokens"] for c in calls]
    flat = late_ms / early_ms
    checks = [
        (
            max(early_ms, late_ms) < OVERHEAD_TARGET_MS,
            f"overhead median {early_ms:.1f} ms (rounds {early[0]}-{early[1]}) and "
            f"{late_ms:.1f} ms (rounds {late[0]}-{late[1]}) (target < {OVERHEAD_TARGET_MS} ms)",
        ),
        (flat <= FLAT_RATIO, f"late vs early {flat:.2f}x (target flat, <= {FLAT_RATIO}x)"),
    ]
    ok = verdict(checks + prompt_report(requests, tokens, rounds))
    return 0 if ok else 1


def p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))]


def prompt_report(
    requests: list[dict[str, Any]], tokens: list[int], rounds: int
) -> list[tuple[bool, str]]:
    """Print the prompt table and notes; return the prompt checks for the verdict."""
    sizes = [sum(map(chars, r["messages"])) for r in requests]
    shares = prefix_shares(requests)
    shown = [1, 2, 5, 6, 8, 10, 11, 39, 40, 41, 42, 43, 100, 199, 200]
    rows = []
    for rnd in (r for r in shown if r <= rounds):
        share = shares[rnd - 2] if rnd > 1 else None
        rows.append(
            [
                rnd,
                len(requests[rnd - 1]["messages"]),
                f"{sizes[rnd - 1]:,}",
                f"{tokens[rnd - 1]:,}",
                f"{share[0]:.0%}" if share else "-",
                f"{share[1]:.0%}" if share else "-",
            ]
        )
    print(
        table(
            ["round", "messages", "chars", "prompt tokens", "prefix (msgs)", "prefix (chars)"],
            rows,
        )
    )
    avg_msgs = sum(s[0] for s in shares) / len(shares)
    avg_chars = sum(s[1] for s in shares) / len(shares)
    # shares[i] belongs to round i + 2
    early = [s[0] for s in shares[: PHASE - 1]]
    late = [s[0] for s in shares[PHASE - 1 :]]
    size_ratio = sizes[39] / sizes[7]
    same_tools = all(r.get("tools") == requests[0].get("tools") for r in requests)
    print()
    print(
        f"prompt tokens: the fake's prompt_eval_count (message characters / 4). Over rounds "
        f"2-{rounds} the unchanged prefix averages {avg_msgs:.1%} of the messages and "
        f"{avg_chars:.0%} of the characters (messages: {sum(early) / len(early):.0%} over "
        f"rounds 2-{PHASE}, {sum(late) / len(late):.0%} over rounds {PHASE + 1}-{rounds}); "
        f"prompt size ranges {min(sizes[7:]):,}-{max(sizes[7:]):,} chars from round 8 on."
    )
    print()
    return [
        (
            avg_msgs >= PREFIX_TARGET,
            f"unchanged prefix {avg_msgs:.1%} of messages on average "
            f"(target >= {PREFIX_TARGET:.0%})",
        ),
        (
            abs(size_ratio - 1) <= SIZE_BAND,
            f"round 40 / round 8 prompt size {size_ratio:.2f}x (target within +-{SIZE_BAND:.0%})",
        ),
        (same_tools, "the same tool list in every request"),
    ]


if __name__ == "__main__":
    raise SystemExit(main())
