"""`localagent ask`: a research goal. A plan of at most 3 sub-questions, a bounded
read-only tool loop per sub-question, a refinery that may add sub-questions (at most
twice), and a synthesized Markdown answer whose citations are checked against the code
the run retrieved or read.

Everything is journaled with a goal's records (goal_started with `mode: ask`, plan,
llm_call, action_started/finished, subtask_completed with the step's findings) in the
questions' own journal, `.agent_context/ask/`, beside the workspace's goal, which a
question never touches. Asking the same question again resumes it: the run keeps the
sub-questions already answered and starts the open one afresh (its tools only read).
"""

from __future__ import annotations

import logging
from typing import Any, TypeVar

import orjson
from pydantic import BaseModel, Field, ValidationError

from localagent.models.protocol import Message
from localagent.research.answer import write_answer
from localagent.research.session import Session
from localagent.research.step import run_step
from localagent.state import current
from localagent.system.exits import Outcome

log = logging.getLogger("localagent.research")
MAX_SUB_QUESTIONS = 3
MAX_REFINEMENTS = 2
ATTEMPTS = 2  # structured calls tried before falling back
PLAN_SCHEMA = {
    "type": "object",
    "properties": {"sub_questions": {"type": "array", "items": {"type": "string"}}},
    "required": ["sub_questions"],
}
# No "verdict" property: that name is the goal verdict's.
REFINE_SCHEMA = {
    "type": "object",
    "properties": {
        "decision": {"type": "string", "enum": ["CONTINUE", "FINISH"]},
        "sub_questions": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["decision"],
}


class PlanReply(BaseModel):
    sub_questions: list[str] = Field(min_length=1)


class RefineReply(BaseModel):
    decision: str
    sub_questions: list[str] = Field(default_factory=list)


Shape = TypeVar("Shape", bound=BaseModel)


class Research(Session):
    """A question researched to its answer: plan, steps, refinery, the answer."""

    def run(self) -> Outcome:
        """Research until the answer is saved; a stop ends it with StopRequested (the
        run journals every ending)."""
        if self.journal.state.plan_due or not self.goal.tasks:
            self.plan()
        while self.next_step():
            pass
        return write_answer(self)

    def next_step(self) -> bool:
        """Work on the next open sub-question, or refine; False once it is time to answer."""
        self.stop.check()
        here = current(self.journal.state)
        if here is not None:
            run_step(self, here[1].description)
            return True
        return self.progress.refinements < MAX_REFINEMENTS and self.refine()

    # ---- structured calls ------------------------------------------------------------

    def _structured(
        self, purpose: str, messages: list[Message], schema: dict[str, Any], shape: type[Shape]
    ) -> Shape | None:
        for _ in range(ATTEMPTS):
            reply = self.model.chat(messages, schema=schema, temperature=0)
            self.record_call(purpose, reply)
            try:
                return shape.model_validate(orjson.loads(reply.content))
            except (ValueError, ValidationError) as exc:
                log.warning("%s reply was not valid: %s", purpose, str(exc)[:200])
        return None

    def plan(self) -> None:
        messages = [
            {"role": "system", "content": self.texts.render("research_plan_system")},
            {
                "role": "user",
                "content": self.texts.render("research_plan_user", question=self.question),
            },
        ]
        found = self._structured("plan", messages, PLAN_SCHEMA, PlanReply)
        questions = _clean(found.sub_questions if found else [], MAX_SUB_QUESTIONS)
        self.journal.append("plan", tasks=_tasks(questions or [self.question]))

    def refine(self) -> bool:
        """Ask whether the findings answer the question; True when sub-questions were added."""
        messages = [
            {"role": "system", "content": self.texts.render("research_refine_system")},
            {
                "role": "user",
                "content": self.texts.render(
                    "research_refine_user", question=self.question, findings=self.findings_text()
                ),
            },
        ]
        found = self._structured("refinery", messages, REFINE_SCHEMA, RefineReply)
        wanted = found is not None and found.decision.upper() == "CONTINUE"
        more = _clean(found.sub_questions, 2) if found and wanted else []
        self.journal.append(
            "refinery", decision="CONTINUE" if more else "FINISH", sub_questions=more
        )
        self.progress.refinements += 1
        if not more:
            return False
        self.journal.append("plan", tasks=_tasks(more), replace_from=len(self.goal.tasks))
        return True


def _clean(questions: list[str], limit: int) -> list[str]:
    """Distinct, non-empty sub-questions, at most `limit`."""
    kept: list[str] = []
    for question in questions:
        text = " ".join(str(question).split())[:500]
        if text and text not in kept:
            kept.append(text)
    return kept[:limit]


def _tasks(questions: list[str]) -> list[dict[str, Any]]:
    """Sub-questions as plan tasks: one task of one subtask each."""
    return [{"description": q, "subtasks": [q]} for q in questions]
