"""Regenerate `.agent_context.example/` from a real run against the scripted fake server.

    python scripts/make_example.py

The run is the real agent (planner, loop guard, tools, journal) in a temporary
workspace; the model's replies come from the scenario below. One call is repeated
on purpose so that `loops.json` has an entry to show, and one claim comes before its
check so that the completion gate's "not accepted yet" shows too.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

from localagent.config.userconfig import load_settings
from localagent.loop.runner import run
from localagent.models.fake import FakeServer

GOAL = "Write a rock-paper-scissors game in Python with a test"
ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / ".agent_context.example"

GAME = """import random
import sys

MOVES = ("rock", "paper", "scissors")
BEATS = {"rock": "scissors", "paper": "rock", "scissors": "paper"}


def winner(a: str, b: str) -> str:
    if a == b:
        return "draw"
    return "player" if BEATS[a] == b else "computer"


if __name__ == "__main__":
    move = sys.argv[1] if len(sys.argv) > 1 else "rock"
    if move not in MOVES:
        sys.exit(f"choose one of {', '.join(MOVES)}")
    computer = random.choice(MOVES)
    print(f"you: {move}, computer: {computer} -> {winner(move, computer)}")
"""

TEST = """from rps import winner


def test_rules() -> None:
    assert winner("rock", "scissors") == "player"
    assert winner("rock", "paper") == "computer"
    assert winner("paper", "paper") == "draw"
"""


def call(name: str, **arguments: object) -> dict:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


PLAN = {
    "tasks": [
        {
            "description": "Write the game",
            "subtasks": [
                "Write rps.py with the game rules and a CLI",
                "Run python rps.py rock to check it plays",
            ],
        },
        {
            "description": "Test the game",
            "subtasks": ["Write test_rps.py for the rules", "Run the tests with python -m pytest"],
        },
    ]
}

SCENARIO = {
    "rules": [{"kind": "plan", "reply": {"content": json.dumps(PLAN)}}],
    "replies": [
        call("write_file", path="rps.py", content=GAME),
        call("run_cmd", cmd="python rps.py rock"),
        call("mark_subtask_complete", success=True, reason="rps.py written; it plays a round"),
        call("run_cmd", cmd="python rps.py rock"),
        call("read_file", path="rps.py"),
        call("read_file", path="rps.py"),
        call("read_file", path="rps.py"),
        call("mark_subtask_complete", success=True, reason="it plays a round"),
        call("write_file", path="test_rps.py", content=TEST),
        call("mark_subtask_complete", success=True, reason="tests written"),
        call("run_cmd", cmd="python -m pytest -q"),
        call("mark_subtask_complete", success=True, reason="tests written and passing"),
        call("run_cmd", cmd="python -m pytest -q"),
        call("mark_subtask_complete", success=True, reason="3 assertions pass"),
    ],
}


def main() -> int:
    workspace = Path(tempfile.mkdtemp(prefix="localagent-example-"))
    try:
        with FakeServer(SCENARIO) as fake:
            settings = load_settings(ollama_host=fake.url, model="gpt-oss:20b")
            outcome = run(workspace, GOAL, settings)
        shutil.rmtree(TARGET, ignore_errors=True)
        TARGET.mkdir()
        for name in ("state.json", "history.jsonl", "loops.json", "agent.log"):
            text = (workspace / ".agent_context" / name).read_text(encoding="utf-8")
            (TARGET / name).write_text(
                text.replace(str(workspace), "/home/me/rps"), encoding="utf-8"
            )
        print(f"goal {outcome.status}; wrote {TARGET}")
        return 0
    finally:
        shutil.rmtree(workspace, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
