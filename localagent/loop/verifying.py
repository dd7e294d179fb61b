"""Verifying the goal once its last subtask is done, one journaled step at a time: list
the goal's checks (`verify_started`), run the next one (`check_started`, then
`check_finished`), and decide (`verdict`) from what the checks and the journal's evidence
show, asking the verifier model when nothing deterministic already failed. A check a crash
or a stop cut short stays open and runs again on resume."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from localagent.config.settings import Settings
from localagent.journal import Journal
from localagent.loop.facts import progress
from localagent.models import Model, Reply
from localagent.prompts.front import Conversation
from localagent.prompts.promptset import PromptSet
from localagent.rewind.snapshots import Snapshots
from localagent.state import State, Verifying
from localagent.system.stopping import StopSignal
from localagent.tools import ToolContext
from localagent.verify import checks, verdict

log = logging.getLogger("localagent.loop.verifying")


@dataclass
class Verifier:
    journal: Journal
    settings: Settings
    ctx: ToolContext
    model: Model
    prompts: PromptSet
    snapshots: Snapshots  # a goal check may change files: kept first, as a tool's changes
    stop: StopSignal
    record: Callable[[Reply], None]  # journals the verdict's model call
    conversation: Callable[[str], Conversation]  # the rounds, a turn after them

    @property
    def state(self) -> State:
        return self.journal.state

    def step(self, under_way: Verifying | None) -> None:
        """One step of verifying the goal: list the checks, run the next, or decide."""
        state = self.state
        assert state.goal is not None
        if under_way is None:
            found = checks.goal_checks(
                self.settings.checks, self.ctx.root, state.ledger, state.goal.text
            )
            log.info("verifying the goal: %d checks", len(found))
            self.journal.append("verify_started", checks=found)
            return
        todo = next((c for c in under_way.checks if c["id"] not in under_way.results), None)
        if todo is not None:
            self._run_check(todo, rerun=under_way.open == todo["id"])
            return
        found = verdict.findings(state, self.ctx.root)
        answer = None
        if not found.hard:
            answer = verdict.ask_model(
                self.model, found, self.record, self.conversation, progress(state),
                self.prompts,
            )  # fmt: skip
        replans_left = state.verify_replans < self.settings.max_replans
        small = verdict.small_verifier(self.settings.profile, state.parameters)
        tasks = state.goal.tasks
        steps = tuple(t.description for t in tasks) + tuple(
            s.description for t in tasks for s in t.subtasks
        )
        record = verdict.decide(
            found, answer, replans_left, small, self.prompts, state.goal.text, steps
        )
        log.info("verdict %s (%s): %s", record["verdict"], record["source"], record["unmet"])
        self.journal.append("verdict", **record)

    def _run_check(self, check: dict[str, Any], rerun: bool) -> None:
        self.snapshots.before("goal check", self.state.rounds)
        self.journal.append("check_started", id=check["id"], cmd=check["cmd"], rerun=rerun)
        outcome = checks.run_check(self.ctx, check)
        self.snapshots.settle()
        if self.stop.requested():
            return  # cut off: it stays open and runs again on resume
        log.info("goal check `%s`: %s (%s)", check["cmd"], outcome["status"], outcome["summary"])
        # `ok` (SPEC §5): it passed; for a program the verification ran, it exited 0
        ok = outcome.get("returncode") == 0 if outcome["status"] == "ran" else None
        ok = outcome["status"] == "passed" if ok is None else ok
        self.journal.append(
            "check_finished", id=check["id"], cmd=check["cmd"], source=check["source"], ok=ok,
            **outcome,
        )  # fmt: skip
