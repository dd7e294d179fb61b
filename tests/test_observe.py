"""Seeing what the agent did: the trace, the Mermaid graphs, the live view and the event
stream, all read from the journal of one scripted run (shared by the module).

The run: the model server is down at first (the goal is suspended), then the goal is
resumed; the plan has two tasks; a long output goes to the output store; a repeated read
is blocked; a subtask fails and the rest of the plan is replanned; the goal check runs
and the verdict is VERIFIED. The goal text is hostile to Mermaid and to terminals.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support import call, cli_args, cli_env, closed_port, done, plan_rule, records, run_cli

from localagent.models.fake import FakeServer

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="uses POSIX signals")

GOLDEN = Path(__file__).parent / "golden"
GOAL = 'Build calc.py: print "sum" of [1, 2] `fast` <b>now</b>\nthen check it; end %% x --> y'
CALC = "print(sum([1, 2]))\n"
LONG = "for i in range(3000):\n    print('line', i)\n"


def scenario() -> dict[str, Any]:
    replan = {
        "tasks": [{"description": "Check the sum instead", "subtasks": ["Run calc.py again"]}]
    }
    plan = plan_rule(
        ("Write the program", ["Write calc.py", "Print a long listing"]),
        ("Check it", ["Compare with a listing"]),
    )
    replies = [
        {"content": "I will write calc.py.", **call("write_file", path="calc.py", content=CALC)},
        call("run_cmd", cmd="python calc.py", timeout_sec=30),
        done("calc.py prints 3"),
        call("write_file", path="long.py", content=LONG),
        call("run_cmd", cmd="python long.py", timeout_sec=30),
        call("read_file", path="calc.py"),
        call("read_file", path="calc.py"),
        call("read_file", path="calc.py"),
        done("the listing is too long to check", success=False),
        call("run_cmd", cmd="python calc.py", timeout_sec=30),
        done("calc.py printed 3 again"),
    ]
    return {
        "rules": [
            {"kind": "plan", "match": "failed:", "reply": {"content": json.dumps(replan)}},
            plan,
        ],
        "replies": replies,
    }


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The workspace of the scripted run, ended."""
    base = tmp_path_factory.mktemp("observe")
    ws = base / "ws"
    ws.mkdir()
    home = str(base / "home")
    down = cli_env(f"http://127.0.0.1:{closed_port()}", LOCALAGENT_HOME=home)
    down["LOCALAGENT_RETRY_DEADLINE"] = "0"
    args = ("-w", str(ws), "--foreground")
    first = run_cli(down, "start", GOAL, "--check", "python calc.py", *args)
    assert first.returncode == 3, first.stderr
    path = base / "scenario.json"
    path.write_text(json.dumps(scenario()))
    with FakeServer(path) as server:
        second = run_cli(cli_env(server.url, LOCALAGENT_HOME=home), "resume", *args)
    assert second.returncode == 0, second.stderr
    return ws


def test_the_scripted_run(run: Path) -> None:
    kinds = [r["type"] for r in records(run)]
    for kind in ("suspended", "resumed", "action_blocked", "subtask_failed", "verdict"):
        assert kind in kinds
