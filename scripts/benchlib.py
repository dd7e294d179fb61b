"""Shared pieces of the benchmarks in this folder: synthetic histories, timing, tables.

A synthetic history is a goal in progress as a long run leaves it: `goal_started`,
`plan`, then rounds of `llm_call` + `action_started` + `action_finished` on one open
subtask. It is written as encoded lines (fast), and `state.json` is made by loading
the journal once, so both files are exactly what the journal itself would produce.
The snapshot is left `SNAPSHOT_LAG` records behind the end of the history, as it is in
a live run between snapshots, so every load also replays records.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import psutil

from localagent.config.userconfig import ENV_NAMES
from localagent.journal import CONTEXT_DIR, Journal, encode
from localagent.journal.codec import signature

GOAL = "Write inventory.py, a small stock-keeping module, with tests in test_inventory.py"
SUBTASK = "Implement inventory.py and make python -m pytest pass"
SNAPSHOT_LAG = 150
FLAT_RATIO = 1.5  # largest ratio that still reads as flat on a shared, noisy machine
SETTINGS_ENV = tuple(ENV_NAMES.values())
_EPOCH = datetime(2025, 1, 1)
_BODY = "def restock(items, name, count):\n    items[name] = items.get(name, 0) + count\n"
_PYTEST_OUT = "....F.\n" + "=" * 60 + "\nFAILED test_inventory.py::test_remove - KeyError\n"


def parse_args(
    description: str, extra: Callable[[argparse.ArgumentParser], None] | None = None
) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help="a ~10 s smoke version")
    parser.add_argument(
        "--dir",
        type=Path,
        default=None,
        help="parent folder for the temporary workspaces (default: the system temp folder); "
        "put it on the disk you care about, fsync on tmpfs costs nothing",
    )
    if extra is not None:
        extra(parser)
    return parser.parse_args()


# ---- environment -------------------------------------------------------------------


def filesystem(path: Path) -> str:
    """The type of the filesystem holding path, e.g. 'ext4' (fsync costs depend on it)."""
    path = path.resolve()
    best = ("", "?")
    for part in psutil.disk_partitions(all=True):
        mount = part.mountpoint
        if path.is_relative_to(mount) and len(mount) > len(best[0]):
            best = (mount, part.fstype)
    return best[1]


@contextmanager
def scratch(parent: Path | None) -> Iterator[Path]:
    """A temporary folder, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="localagent-bench-", dir=parent) as name:
        yield Path(name)


def agent_env(home: Path, **settings: str) -> dict[str, str]:
    """The environment of a localagent subprocess: own per-user home, only these settings."""
    env = {k: v for k, v in os.environ.items() if k not in SETTINGS_ENV}
    # An installed package has its bytecode compiled; without it every start compiles
    # localagent from source, which no user's run does.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["LOCALAGENT_HOME"] = str(home)
    env.update(settings)
    return env


def header(title: str, where: Path) -> None:
    print(f"{title}")
    print(
        f"python {sys.version.split()[0]} on {sys.platform}, {os.cpu_count()} cores, "
        f"temp folder {where} ({filesystem(where)})"
    )
    print()


# ---- synthetic histories -----------------------------------------------------------


def _round(rnd: int) -> list[tuple[str, dict[str, Any]]]:
    """The three records of one round; the tool cycles write_file, run_cmd, read_file."""
    kind = rnd % 3
    if kind == 0:
        path = f"inventory/part_{rnd % 40}.py"
        args: dict[str, Any] = {"path": path, "content": _BODY * 4, "create_dirs": True}
        tool, ok, result, code = "write_file", True, f"wrote {len(_BODY) * 4} bytes to {path}", None
    elif kind == 1:
        args = {"cmd": "python -m pytest -q", "timeout_sec": 120}
        tool, ok, result, code = "run_cmd", False, f"exit code 1\n{_PYTEST_OUT}", 1
    else:
        args = {"path": "test_inventory.py", "max_bytes": 20000}
        tool, ok, result, code = "read_file", True, _BODY * 3, None
    probe = {
        "round": rnd,
        "max_rounds": 1_000_000,
        "written": [f"inventory/part_{i}.py" for i in range(3)],
        "existing": ["inventory.py"],
        "missing": ["test_inventory.py"],
        "commands": ["python -m pytest -q -> 1"],
        "errors": [],
        "notice": "",
    }
    call = {"name": tool, "arguments": args}
    return [
        (
            "llm_call",
            {
                "purpose": "round",
                "prompt_tokens": 1400,
                "completion_tokens": 60,
                "duration_ms": 900.0,
                "content": "",
                "probe": probe,
                "tool_calls": [call],
            },
        ),
        ("action_started", {"tool": tool, "args": args, "signature": signature(tool, args)}),
        (
            "action_finished",
            {
                "tool": tool,
                "args": args,
                "ok": ok,
                "result": result,
                "changed": tool == "write_file",
                "returncode": code,
            },
        ),
    ]


def synthetic_records(count: int) -> Iterator[tuple[str, dict[str, Any]]]:
    """Exactly `count` records (count >= 3) of one goal whose only subtask is still open."""
    plan = [{"description": "Build the inventory module", "subtasks": [SUBTASK]}]
    yield "goal_started", {"goal": GOAL, "model": "gpt-oss:20b"}
    plan_calls = 1 + (count - 3) % 3  # a failed plan attempt or two pads the count
    for _ in range(plan_calls):
        yield "llm_call", {"purpose": "plan", "prompt_tokens": 300, "completion_tokens": 80}
    yield "plan", {"tasks": plan}
    for rnd in range(1, (count - 2 - plan_calls) // 3 + 1):
        yield from _round(rnd)


def _line(seq: int, kind: str, fields: dict[str, Any]) -> bytes:
    ts = (_EPOCH + timedelta(seconds=seq)).isoformat(timespec="milliseconds") + "Z"
    return encode({"seq": seq, "ts": ts, "type": kind, **fields})


def build_history(workspace: Path, count: int, lag: int = SNAPSHOT_LAG) -> None:
    """Write a goal in progress with `count` history records into workspace."""
    context = workspace / CONTEXT_DIR
    context.mkdir(parents=True, exist_ok=True)
    history = context / "history.jsonl"
    covered = max(3, count - lag)
    records = synthetic_records(count)
    with history.open("wb") as fh:
        fh.writelines(_line(seq, *next(records)) for seq in range(1, covered + 1))
    journal = Journal(workspace)
    journal.load()
    journal.snapshot()
    journal.close()
    with history.open("ab") as fh:
        fh.writelines(_line(seq, *rec) for seq, rec in enumerate(records, covered + 1))
        fh.flush()
        os.fsync(fh.fileno())


class Restorer:
    """Puts a workspace's journal back to how it was, after a run appended to it."""

    def __init__(self, workspace: Path) -> None:
        self.context = workspace / CONTEXT_DIR
        self.history_size = (self.context / "history.jsonl").stat().st_size
        self.state = (self.context / "state.json").read_bytes()
        self.names = {p.name for p in self.context.iterdir()}

    def restore(self) -> None:
        with (self.context / "history.jsonl").open("r+b") as fh:
            fh.truncate(self.history_size)
        (self.context / "state.json").write_bytes(self.state)
        for path in self.context.iterdir():
            if path.name not in self.names and path.is_file():
                path.unlink()


# ---- one action ------------------------------------------------------------------

ACTION_ARGS = {"path": "inventory/stock.py", "content": "STOCK = {}\n" * 20, "create_dirs": True}
ACTION_RESULT = "wrote 220 bytes to inventory/stock.py (replaced)"


def append_action(journal: Journal) -> None:
    """What the agent journals around one tool call: two fsynced appends."""
    sig = signature("write_file", ACTION_ARGS)
    journal.append("action_started", tool="write_file", args=ACTION_ARGS, signature=sig, round=1)
    journal.append(
        "action_finished",
        tool="write_file",
        args=ACTION_ARGS,
        ok=True,
        result=ACTION_RESULT,
        changed=True,
        returncode=None,
    )


# ---- numbers -----------------------------------------------------------------------


def timed(fn: Callable[[], Any]) -> float:
    """Seconds one call of fn takes."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A Markdown table (it goes into the README as printed)."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]

    def line(row: list[str]) -> str:
        return "| " + " | ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)) + " |"

    rule = "|" + "|".join("-" * (w + 1) + ":" for w in widths) + "|"
    return "\n".join([line(cells[0]), rule] + [line(row) for row in cells[1:]])


def verdict(checks: Sequence[tuple[bool, str]]) -> bool:
    """Print the one-line verdict over (met, description) checks; True if all are met."""
    ok = all(met for met, _ in checks)
    parts = [f"{text} [{'ok' if met else 'MISSED'}]" for met, text in checks]
    print(f"{'PASS' if ok else 'FAIL'}: " + "; ".join(parts))
    return ok
