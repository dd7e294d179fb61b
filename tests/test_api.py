"""The Python API: a goal run from a worker thread against the fake server, with the
event stream, the result object, and the process left as it was."""

from __future__ import annotations

import logging
import signal
import threading
from pathlib import Path
from typing import Any

import pytest
from support import call, done, plan_rule, records

import localagent
from localagent.models.fake import FakeServer
from localagent.system.errors import UsageError

HELLO = {
    "rules": [
        plan_rule(("Write it", ["Write hello.py"])),
        {"match": "wrote .* to 'hello.py'", "reply": done("hello.py written and run")},
        {
            "match": "ACTIVE SUBTASK",
            "reply": call("write_file", path="hello.py", content="print('hi')\n"),
        },
    ]
}


def in_thread(function: Any) -> Any:
    """What function returns (or raises) when run on a worker thread."""
    outcome: dict[str, Any] = {}

    def work() -> None:
        try:
            outcome["value"] = function()
        except BaseException as exc:
            outcome["error"] = exc

    worker = threading.Thread(target=work)
    worker.start()
    worker.join(60)
    assert not worker.is_alive()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def test_a_goal_runs_from_a_worker_thread_with_its_events(tmp_path: Path) -> None:
    events: list[dict[str, Any]] = []
    handler = signal.getsignal(signal.SIGINT)
    level = logging.getLogger("localagent").level
    with FakeServer(HELLO) as server:
        result = in_thread(
            lambda: localagent.run_goal(
                "Write hello.py",
                tmp_path,
                on_event=events.append,
                ollama_host=server.url,
                verify=False,
            )
        )
    assert result.ok and result.status == "completed", result
    assert result.files_written == ["hello.py"] and result.rounds >= 2
    assert result.tokens["prompt"] > 0 and result.goal == "Write hello.py"
    assert [e["seq"] for e in events] == [r["seq"] for r in records(tmp_path)]
    assert events[0]["type"] == "goal_started" and events[-1]["type"] == "goal_completed"
    assert signal.getsignal(signal.SIGINT) is handler
    assert logging.getLogger("localagent").level == level
    assert not logging.getLogger("localagent").handlers


def test_failures_come_back_as_results_and_mistakes_as_errors(tmp_path: Path) -> None:
    def broken(event: dict[str, Any]) -> None:
        raise RuntimeError("callback bug")

    with FakeServer(HELLO) as server:
        failed = localagent.run_goal(
            "Write hello.py", tmp_path, ollama_host=server.url, max_rounds=1, on_event=broken
        )
        with pytest.raises(UsageError, match="max_rounds"):
            localagent.run_goal("x", tmp_path / "other", ollama_host=server.url, max_rounds=0)
    assert failed.status == "failed" and "round" in failed.reason and not failed.ok
    log = (tmp_path / ".agent_context" / "agent.log").read_text()
    assert "the event callback failed on goal_started" in log
    again = localagent.run_goal(None, tmp_path, ollama_host="127.0.0.1:9")
    assert again.status == "failed" and "already failed" not in again.reason
    suspended = localagent.run_goal(
        "x", tmp_path / "down", ollama_host="127.0.0.1:9", retry_deadline=0
    )
    assert suspended.status == "suspended" and "127.0.0.1:9" in suspended.reason
