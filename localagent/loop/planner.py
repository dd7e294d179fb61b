"""Decomposition: one structured-output call for the plan, validated, retried, with a
fallback of a single task equal to the goal (SPEC §6.1).

Every plan, replan and plan for unmet requirements is checked before it is used
(`localagent.loop.plancheck`): a plan with steps no tool can do gets one request to mend it,
naming each problem; a plan still unusable after that is not used. In the small-model
profile a goal about one named file is planned as one task.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel, Field, ValidationError

from localagent.loop import plancheck
from localagent.loop.firststeps import read_first, run_last, sample_first, see_first
from localagent.loop.planpackage import TESTED, package_name
from localagent.loop.subtasks import FIX, MAX_STEPS
from localagent.models import Model, Reply
from localagent.prompts.front import Front, opening
from localagent.prompts.promptset import DEFAULT, PromptSet
from localagent.state import State
from localagent.tools.paths import workspace_file
from localagent.tools.pyscript import TEST_FILE
from localagent.verify import evidence

log = logging.getLogger("localagent.loop.planner")
ATTEMPTS = 3
OnCall = Callable[[Reply], None]


MAX_TASKS = 6
EXAMPLE = '"write_file rps_game.py with the game logic", "run python rps_game.py"'
# A goal that changes a file that is there: "Refactor shapes.py: ...", "Update app.py ..."
_CHANGE = re.compile(
    r"\W*(?:refactor|change|update|modify|edit|rename|move|clean up|simplify|extend)\b", re.I
)
MAX_SUBTASKS = 8  # of one task


class PlannedTask(BaseModel):
    description: str = Field(min_length=1)
    subtasks: list[str] = Field(min_length=1)


class Plan(BaseModel):
    tasks: list[PlannedTask] = Field(min_length=1)


def fold(tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A plan longer than MAX_TASKS tasks of MAX_SUBTASKS subtasks, as that many: its
    subtasks in order, in tasks of equal size, each named after the task its first subtask
    was in (those past the last task's room are dropped). Qwen2.5-Coder-1.5B planned mathx
    as nine tasks of one subtask each, twice, a minute each, and both were refused."""
    if len(tasks) <= MAX_TASKS and all(len(t["subtasks"]) <= MAX_SUBTASKS for t in tasks):
        return tasks
    steps = [(t["description"], s) for t in tasks for s in t["subtasks"]]
    steps = steps[: MAX_TASKS * MAX_SUBTASKS]
    size = -(-len(steps) // MAX_TASKS)  # rounded up
    return [
        {"description": steps[at][0], "subtasks": [s for _, s in steps[at : at + size]]}
        for at in range(0, len(steps), size)
    ]


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

VALUE_TOKENS = 24  # a value's reply: "-1", "0.5"


@dataclass(frozen=True)
class Planner:
    """Plans for one run: its model and prompts, the tools a subtask may use and whether
    the small-model profile is on."""

    model: Model
    prompts: PromptSet = DEFAULT
    tools: Sequence[str] = ()  # the run's tools, but not mark_subtask_complete
    small: bool = False
    # How the run's plan requests open, as it is now (see `Agent.request_front`).
    front: Callable[[], Front | None] | None = None
    root: Path | None = None  # the workspace: which files a plan's writes find there
    # A retry after the same reply that was no plan twice: sent alike, it comes back
    # alike (the 1.5B's replan looped to the same cut three times, 45 s on the CPU). Not
    # after one: the 1.5B's plans sampled at 0.8 were "write_file" four times over, or
    # steps no tool does ("add a module import at the top of the file").
    retry_temperature: float | None = None

    def decompose(self, goal: str, on_call: OnCall) -> list[dict[str, Any]]:
        """The goal's tasks; without a usable plan, one task that is the goal. In the
        small profile a goal about one named file is one task, whatever the plan says."""
        tasks = _usable(self._ask(self.prompts.render("plan_user", goal=goal), goal, on_call))
        if tasks is None:
            log.warning("no usable plan; working on the goal as one task")
            return _goal_task(goal)
        if self.small and len(tasks) > 1 and (name := plancheck.one_file(goal)):
            log.info("a goal about one file (%s): its plan as one task", name)
            tasks = [plancheck.one_task(tasks, goal)]
        if self.small:
            self._reads(tasks, goal)
            see = self.prompts.render("see_failure", cmd="python -m pytest")
            see_first(tasks, goal, see)
            run_last(tasks, goal)
            self._samples(tasks)
        return tasks

    def _reads(self, tasks: list[dict[str, Any]], goal: str) -> None:
        """A read of a file the goal names before the plan's first edit of it."""
        read_first(
            tasks, goal, lambda path: self.prompts.render("handback_read", path=path), self._exists
        )

    def _samples(self, tasks: list[dict[str, Any]]) -> None:
        """A sample's write before each run on an input file that is not there."""
        sample_first(tasks, self._exists, lambda p: self.prompts.render("sample_write", path=p))

    def _exists(self, path: str) -> bool:
        """Whether the workspace holds the regular file `path` (relative) now."""
        return self.root is not None and workspace_file(self.root, path)

    def replan(
        self, state: State, failed: tuple[str, str], reason: str, on_call: OnCall
    ) -> list[dict[str, Any]] | None:
        """The remaining work planned again; None when no reply was a plan (the replan is
        skipped), the goal as one task when the plan is unusable even after a repair."""
        assert state.goal is not None
        goal = state.goal.text
        prompt = self.prompts.render(
            "replan_user",
            goal=goal,
            task=failed[0],
            subtask=failed[1],
            reason=reason,
            done="\n".join(_done(state)) or "- nothing yet",
        )
        checked = self._ask(prompt, goal, on_call)
        tasks = None if checked is None else _usable(checked) or _goal_task(goal)
        if tasks and self.small:
            # The replan's window starts after the rounds before it, the read among them:
            # Qwen2.5-Coder-1.5B's replan "replace_in_file stats.py to fix the bug" got
            # `{"old": "old_text", "new": "new_text"}` (fixtest on the H200).
            self._reads(tasks, goal)
            self._samples(tasks)
        return tasks

    def unmet(self, state: State, unmet: list[str], on_call: OnCall) -> list[dict[str, Any]]:
        """Tasks for what a verdict found unmet; without a usable plan, one task made of
        them."""
        assert state.goal is not None
        prompt = self.prompts.render(
            "unmet_user",
            goal=state.goal.text,
            unmet="\n".join(f"- {item}" for item in unmet),
            done="\n".join(_done(state)) or "- nothing yet",
        )
        tasks = _usable(self._ask(prompt, state.goal.text, on_call))
        if tasks is None:
            log.warning("no usable plan for the unmet requirements; working on them as one task")
            meet = "Meet what the verification found unmet"
            return [{"description": meet, "subtasks": unmet[:MAX_STEPS]}]
        return tasks

    def value(self, goal: str, call: str, on_call: OnCall) -> str:
        """What the model says `call` returns, asked alone: no code, no tools, the goal
        its only context (`loop.testback`); its first line, stripped."""
        messages = [
            {"role": "system", "content": self.prompts.render("value_system")},
            {"role": "user", "content": self.prompts.render("value_user", goal=goal, call=call)},
        ]
        reply = self.model.chat(messages, temperature=0.0, max_tokens=VALUE_TOKENS)
        on_call(reply)
        lines = reply.content.strip().strip("`").strip().splitlines()
        return lines[0].strip() if lines else ""

    def _ask(self, prompt: str, goal: str, on_call: OnCall) -> plancheck.Checked | None:
        """The plan the model gives, checked; None when no reply was a plan at all. A plan
        with problems gets one request to mend it; what comes back then is final."""
        names = list(self.tools) or _default_tools()
        listed = ", ".join(names)
        front = self.front() if self.front is not None else None
        instructions = self.prompts.render("plan_system", tools=listed, **_example(goal))
        messages = opening(front, instructions, prompt)
        checked, hot, before = None, None, None
        for attempt in range(1, ATTEMPTS + 1):
            reply = self.model.chat(messages, front and front.tools, PLAN_SCHEMA, hot)
            on_call(reply)
            try:
                plan = Plan.model_validate(orjson.loads(reply.content))
            except (ValueError, ValidationError) as exc:
                log.warning("plan attempt %d was not valid: %s", attempt, str(exc)[:200])
                # The same reply twice: sent alike, it comes back alike.
                hot = self.retry_temperature if reply.content == before else None
                before = reply.content
                continue
            tasks = [t.model_dump() for t in plan.tasks]
            if (folded := fold(tasks)) is not tasks:
                log.info("a plan of %d tasks folded into %d", len(tasks), len(folded))
            checked = plancheck.check(folded, goal, names)
            if checked.dropped:
                log.info("dropped as write_file makes folders: %s", "; ".join(checked.dropped))
            if checked.packaged:
                log.info("%s.py planned as %s/__init__.py", checked.packaged, checked.packaged)
            if not checked.problems or len(messages) > 2:
                break
            log.warning("the plan cannot be used: %s", "; ".join(checked.problems))
            problems = "\n".join(f"- {problem}" for problem in checked.problems)
            messages += [
                {"role": "assistant", "content": reply.content},
                {
                    "role": "user",
                    "content": self.prompts.render("plan_repair", problems=problems, tools=listed),
                },
            ]
        if checked is not None and checked.problems:
            mended = plancheck.code_left_out(checked, goal, names)
            if not mended.problems:
                log.info("the plan's code left to its writes")
                checked = mended
        return checked


def _example(goal: str) -> dict[str, str]:
    """The small plan prompt's good subtasks, about the goal's own Python file when it
    names one. Asked for wordcount.py, the 1.5B planned "write_file wordcount.py with the
    game logic" and "run python wordcount.py rps_game.py", from a game example; asked to
    fix stats.py, it wrote a game over it."""
    # "move them into one function" names a file to change, not one to remove
    named = [n for n in evidence.file_names(goal) if n.endswith(".py") and "/" not in n]
    if not named and (package := package_name(goal)):
        # The 1.5B's mathx replan on the CPU planned "write_file mathx/rps_game.py with the
        # game logic", from the game example, and wrote a game into the package.
        steps = [f"write_file {package}/__init__.py with the code of its functions"]
        if TESTED.search(goal):
            tests = next((n for n in evidence.file_names(goal) if TEST_FILE.search(n)), "")
            steps += [f"write_file {tests or f'tests/test_{package}.py'} with its tests"]
            steps += ["run python -m pytest"]
        return {"good": ", ".join(f'"{step}"' for step in steps)}
    if not named:
        return {"good": EXAMPLE}
    name = named[0]
    if FIX.search(goal) or _CHANGE.match(goal):
        # The 1.5B, asked to refactor shapes.py, planned from the game example and never
        # read the file: 12 runs of 12.
        why = "to fix the bug" if FIX.search(goal) else "to make the change"
        steps = [f"read_file {name}", f"replace_in_file {name} {why}", "run python -m pytest"]
    else:
        steps = [f"write_file {name} with its code", f"run python {name}"]
    return {"good": ", ".join(f'"{step}"' for step in steps)}


def _default_tools() -> list[str]:
    from localagent.tools.catalog import catalog

    return [t.name for t in catalog() if t.policy.default and not t.policy.control]


def _usable(checked: plancheck.Checked | None) -> list[dict[str, Any]] | None:
    """The checked plan's tasks, or None when there was no plan or it is unusable."""
    if checked is None:
        return None
    if checked.problems:
        log.warning("the plan is unusable: %s", "; ".join(checked.problems))
        return None
    return checked.tasks


def _goal_task(goal: str) -> list[dict[str, Any]]:
    return [{"description": goal, "subtasks": [goal]}]


def _done(state: State) -> list[str]:
    assert state.goal is not None
    return [
        f"- {s.description}"
        for t in state.goal.tasks
        for s in t.subtasks
        if s.status == "completed"
    ]
