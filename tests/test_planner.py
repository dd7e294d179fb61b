"""Decomposition through one structured-output call, retried, with a fallback."""

from __future__ import annotations

import json
from typing import Any

from localagent import planner
from localagent.models import Reply
from localagent.models.fake import FakeServer
from localagent.models.ollama import OllamaModel
from localagent.settings import Settings
from localagent.state import State, apply

GOAL = "Write a CLI that converts Celsius to Fahrenheit, with tests"
PLAN = {
    "tasks": [
        {"description": "Write the converter", "subtasks": ["Write conv.py", "Run conv.py 100"]},
        {"description": "Test it", "subtasks": ["Write test_conv.py", "Run pytest"]},
    ]
}


def planned(replies: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[Reply], Any]:
    with FakeServer({"models": [{"name": "m:1"}], "replies": replies}) as server:
        model = OllamaModel(Settings(ollama_host=server.url, model="m:1", retry_deadline=1))
        seen: list[Reply] = []
        tasks = planner.decompose(model, GOAL, seen.append)
        return tasks, seen, server.chat_requests


def test_a_valid_plan_is_taken_in_one_structured_call() -> None:
    tasks, seen, requests = planned([{"content": json.dumps(PLAN)}])
    assert tasks == PLAN["tasks"]
    assert len(seen) == 1 and len(requests) == 1
    assert requests[0]["format"] == planner.PLAN_SCHEMA
    assert not requests[0].get("tools")
    assert requests[0]["messages"][-1]["content"] == f"Goal: {GOAL}"


def test_invalid_json_three_times_falls_back_to_the_goal_as_one_task() -> None:
    bad = [{"content": "Sure! Here is the plan:"}, {"content": "{"}, {"content": '{"tasks": 3}'}]
    tasks, seen, requests = planned(bad)
    assert tasks == [{"description": GOAL, "subtasks": [GOAL]}]
    assert len(seen) == len(requests) == planner.ATTEMPTS


def test_a_task_with_no_subtasks_is_retried() -> None:
    empty = {"tasks": [{"description": "Everything", "subtasks": []}]}
    tasks, _, requests = planned([{"content": json.dumps(empty)}, {"content": json.dumps(PLAN)}])
    assert tasks == PLAN["tasks"]
    assert len(requests) == 2


def test_blank_subtasks_and_an_empty_task_list_are_retried() -> None:
    blank = {"tasks": [{"description": "X", "subtasks": ["  "]}]}
    replies = [{"content": json.dumps(blank)}, {"content": '{"tasks": []}'}]
    tasks, _, requests = planned([*replies, {"content": json.dumps(PLAN)}])
    assert tasks == PLAN["tasks"] and len(requests) == 3


def test_replan_names_the_failure_and_what_is_done() -> None:
    state = State()
    for rec in (
        {"type": "goal_started", "goal": GOAL},
        {"type": "plan", **PLAN},
        {"type": "subtask_completed", "reason": "written"},
    ):
        apply(state, {"seq": state.seq + 1, **rec})
    better = {"tasks": [{"description": "Run it differently", "subtasks": ["Run conv.py 37"]}]}
    with FakeServer({"models": [{"name": "m:1"}], "default": {"content": json.dumps(better)}}) as f:
        model = OllamaModel(Settings(ollama_host=f.url, model="m:1"))
        failed = ("Write the converter", "Run conv.py 100")
        tasks = planner.replan(model, state, failed, "exit code 2", lambda reply: None)
        prompt = f.chat_requests[0]["messages"][-1]["content"]
    assert tasks == better["tasks"]
    assert '"Run conv.py 100"' in prompt and "exit code 2" in prompt
    assert "- Write conv.py" in prompt
