"""Decomposition: one structured-output call for the plan, validated, retried, with a
fallback of a single task equal to the goal (SPEC §6.1)."""

from __future__ import annotations

import logging
from typing import Any

import orjson
from pydantic import BaseModel, Field, ValidationError

from localagent.models import Model, Reply
from localagent.promptset import DEFAULT, PromptSet
from localagent.state import State

log = logging.getLogger("localagent.planner")
ATTEMPTS = 3


class PlannedTask(BaseModel):
    description: str = Field(min_length=1)
    subtasks: list[str] = Field(min_length=1, max_length=8)


class Plan(BaseModel):
    tasks: list[PlannedTask] = Field(min_length=1, max_length=6)


PLAN_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "tasks": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "description": {"type": "string"},
                    "subtasks": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["description", "subtasks"],
            },
        }
    },
    "required": ["tasks"],
}


def _ask(model: Model, prompt: str, on_call: Any, prompts: PromptSet) -> Plan | None:
    system = prompts.render("plan_system")
    messages = [{"role": "system", "content": system}, {"role": "user", "content": prompt}]
    for attempt in range(1, ATTEMPTS + 1):
        reply: Reply = model.chat(messages, schema=PLAN_SCHEMA)
        on_call(reply)
        try:
            plan = Plan.model_validate(orjson.loads(reply.content))
            if all(s.strip() for t in plan.tasks for s in t.subtasks):
                return plan
        except (ValueError, ValidationError) as exc:
            log.warning("plan attempt %d was not valid: %s", attempt, str(exc)[:200])
    return None


def decompose(
    model: Model, goal: str, on_call: Any, prompts: PromptSet = DEFAULT
) -> list[dict[str, Any]]:
    plan = _ask(model, prompts.render("plan_user", goal=goal), on_call, prompts)
    if plan is None:
        log.warning("no valid plan after %d attempts; working on the goal as one task", ATTEMPTS)
        return [{"description": goal, "subtasks": [goal]}]
    return [t.model_dump() for t in plan.tasks]


def _done(state: State) -> list[str]:
    assert state.goal is not None
    return [
        f"- {s.description}"
        for t in state.goal.tasks
        for s in t.subtasks
        if s.status == "completed"
    ]


def replan(
    model: Model,
    state: State,
    failed: tuple[str, str],
    reason: str,
    on_call: Any,
    prompts: PromptSet = DEFAULT,
) -> list[dict[str, Any]] | None:
    assert state.goal is not None
    done = _done(state)
    prompt = prompts.render(
        "replan_user",
        goal=state.goal.text,
        task=failed[0],
        subtask=failed[1],
        reason=reason,
        done="\n".join(done) or "- nothing yet",
    )
    plan = _ask(model, prompt, on_call, prompts)
    return [t.model_dump() for t in plan.tasks] if plan else None


def plan_unmet(
    model: Model, state: State, unmet: list[str], on_call: Any, prompts: PromptSet = DEFAULT
) -> list[dict[str, Any]]:
    """Tasks for what a verdict found unmet; without a valid plan, one task made of them."""
    assert state.goal is not None
    prompt = prompts.render(
        "unmet_user",
        goal=state.goal.text,
        unmet="\n".join(f"- {item}" for item in unmet),
        done="\n".join(_done(state)) or "- nothing yet",
    )
    plan = _ask(model, prompt, on_call, prompts)
    if plan is None:
        log.warning("no valid plan for the unmet requirements; working on them as one task")
        return [{"description": "Meet what the verification found unmet", "subtasks": unmet[:8]}]
    return [t.model_dump() for t in plan.tasks]
