"""Durable step cost: localagent's journal against LangGraph's SqliteSaver (SPEC §5, §10).

Both sides make one agent step durable before the next one starts:

- localagent: `Journal.append` of `action_started` and `action_finished`, each
  written and fsynced to `history.jsonl` (two fsyncs per action);
- LangGraph: one super-step of a `StateGraph` whose node records the same action
  in a bounded list of recent actions (as localagent's state keeps them), compiled
  with `SqliteSaver` and run with `durability="sync"`. SQLite runs in the WAL
  journal mode SqliteSaver sets up, with `PRAGMA synchronous=FULL`, so the WAL is
  fsynced at every commit: equal durability. A LangGraph step without a checkpointer
  is timed too, to separate the framework's own cost from the checkpoint.

LangGraph is only needed here; install it into a separate virtual environment:

    python -m venv /tmp/benchvenv
    /tmp/benchvenv/bin/pip install -e ".[bench]"
    /tmp/benchvenv/bin/python scripts/bench_langgraph.py [--quick] [--dir FOLDER]
"""

from __future__ import annotations

import sqlite3
import sys
import time
from itertools import pairwise
from pathlib import Path
from typing import Any, TypedDict

from benchlib import (
    ACTION_ARGS,
    ACTION_RESULT,
    append_action,
    header,
    median,
    parse_args,
    scratch,
    table,
    verdict,
)

from localagent.journal import Journal

RECENT_ACTIONS = 20


class AgentState(TypedDict):
    recent: list[dict[str, Any]]
    seq: int
    steps: int


def act(state: AgentState) -> dict[str, Any]:
    action = {"tool": "write_file", "args": ACTION_ARGS, "ok": True, "result": ACTION_RESULT}
    return {"recent": [*state["recent"], action][-RECENT_ACTIONS:], "seq": state["seq"] + 1}


def more(state: AgentState) -> str:
    return "act" if state["seq"] < state["steps"] else "__end__"


def compile_graph(checkpointer: Any) -> Any:
    from langgraph.graph import START, StateGraph

    builder = StateGraph(AgentState)
    builder.add_node("act", act)
    builder.add_edge(START, "act")
    builder.add_conditional_edges("act", more)
    return builder.compile(checkpointer=checkpointer)


def graph_batch(graph: Any, steps: int, thread: str, durable: bool) -> list[float]:
    """Seconds per super-step: the time between consecutive step updates."""
    config = {"configurable": {"thread_id": thread}, "recursion_limit": steps + 10}
    options = {"durability": "sync"} if durable else {}
    marks = []
    start = {"recent": [], "seq": 0, "steps": steps}
    for _ in graph.stream(start, config, stream_mode="updates", **options):
        marks.append(time.perf_counter())
    return [b - a for a, b in pairwise(marks)]


def journal_batch(journal: Journal, steps: int) -> list[float]:
    per_step = []
    for _ in range(steps):
        start = time.perf_counter()
        append_action(journal)
        per_step.append(time.perf_counter() - start)
    return per_step


def open_saver(path: Path) -> tuple[Any, sqlite3.Connection, str]:
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(str(path), check_same_thread=False)
    saver = SqliteSaver(conn)
    saver.setup()
    conn.execute("PRAGMA synchronous=FULL")
    mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
    sync = {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}[
        conn.execute("PRAGMA synchronous").fetchone()[0]
    ]
    return saver, conn, f"journal_mode={mode}, synchronous={sync}"


def main() -> int:
    args = parse_args(__doc__.splitlines()[0])
    try:
        import langgraph  # noqa: F401
        from langgraph.checkpoint.sqlite import SqliteSaver  # noqa: F401
    except ImportError:
        print(
            "bench_langgraph: langgraph and langgraph-checkpoint-sqlite are not installed.\n"
            "Install the optional `bench` extra into a separate virtual environment:\n"
            "  python -m venv /tmp/benchvenv && /tmp/benchvenv/bin/pip install -e '.[bench]'\n"
            "  /tmp/benchvenv/bin/python scripts/bench_langgraph.py",
            file=sys.stderr,
        )
        return 2
    from importlib.metadata import version

    reps, steps = (6, 25) if args.quick else (40, 50)
    ours: list[float] = []
    durable: list[float] = []
    bare: list[float] = []
    with scratch(args.dir) as root:
        header("Durable step: localagent journal vs LangGraph SqliteSaver", root)
        journal = Journal(root / "ws")
        saver, conn, pragmas = open_saver(root / "checkpoints.sqlite")
        with_saver, without = compile_graph(saver), compile_graph(None)
        try:
            for rep in range(reps):
                ours += journal_batch(journal, steps)
                durable += graph_batch(with_saver, steps, f"run-{rep}", durable=True)
                bare += graph_batch(without, steps, f"run-{rep}", durable=False)
            rows_per_step = [
                conn.execute(f"SELECT COUNT(*) FROM {name}").fetchone()[0] / (reps * steps)
                for name in ("checkpoints", "writes")
            ]
        finally:
            journal.close()
            conn.close()
    base = median(ours)
    rows = [
        ["localagent Journal.append x2 (2 fsyncs)", f"{base * 1000:.3f}", "1.00x"],
        [
            "LangGraph step + SqliteSaver (sync)",
            f"{median(durable) * 1000:.3f}",
            f"{median(durable) / base:.2f}x",
        ],
        [
            "LangGraph step, no checkpointer",
            f"{median(bare) * 1000:.3f}",
            f"{median(bare) / base:.2f}x",
        ],
    ]
    print(table(["one durable agent step", "ms (median)", "vs localagent"], rows))
    print()
    print(
        f"langgraph {version('langgraph')}, langgraph-checkpoint-sqlite "
        f"{version('langgraph-checkpoint-sqlite')}, SQLite {sqlite3.sqlite_version} "
        f"({pragmas}); {reps} batches x {steps} steps each; per LangGraph step SqliteSaver "
        f"stored {rows_per_step[0]:.1f} checkpoint rows and {rows_per_step[1]:.1f} write rows."
    )
    checkpoint_ms = (median(durable) - median(bare)) * 1000
    ok = verdict(
        [
            (
                base <= median(durable),
                f"a durable step costs {base * 1000:.2f} ms in localagent's journal and "
                f"{median(durable) * 1000:.2f} ms with LangGraph's SqliteSaver "
                f"({median(durable) / base:.1f}x; its checkpoint alone ~{checkpoint_ms:.2f} ms) "
                f"(target: the journal no dearer at equal durability)",
            )
        ]
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
