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
from dataclasses import dataclass, field
from typing import Any, TypeVar

import orjson
from pydantic import BaseModel, Field, ValidationError

from localagent.config.settings import Settings
from localagent.journal import Journal
from localagent.loop.lifecycle import Outcome
from localagent.models.protocol import Message, Model, Reply
from localagent.prompts.promptset import PromptSet
from localagent.research.answer import write_answer
from localagent.research.search import index_folder, make_searcher
from localagent.research.step import run_step
from localagent.research.tools import Library, Span, research_tools
from localagent.state import Goal, current
from localagent.system.stopping import StopSignal
from localagent.tools.base import ToolContext

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


@dataclass
class Progress:
    """What the journal says this research has done (read back on resume)."""

    findings: list[tuple[str, str]] = field(default_factory=list)  # sub-question, findings
    seen: list[Span] = field(default_factory=list)
    refinements: int = 0

    def fold(self, record: dict[str, Any]) -> None:
        kind = record["type"]
        if kind in ("subtask_completed", "subtask_failed") and "findings" in record:
            self.findings.append((str(record.get("question", "")), str(record["findings"])))
        elif kind == "action_finished":
            self.seen += [(str(p), int(a), int(b)) for p, a, b in record.get("spans", [])]
        elif kind == "refinery":
            self.refinements += 1


def read_progress(journal: Journal) -> Progress:
    progress = Progress()
    for record in journal.records():
        progress.fold(record)
    return progress


class Research:
    def __init__(
        self, journal: Journal, model: Model, settings: Settings, ctx: ToolContext, stop: StopSignal
    ) -> None:
        self.journal = journal
        self.model = model
        self.ctx = ctx
        self.stop = stop
        self.texts = PromptSet(settings.prompts)
        cancelled = lambda: stop.requested() is not None  # noqa: E731
        searcher, notes = make_searcher(ctx.root, settings, cancelled, model)
        for note in notes:
            log.info("%s", note)
        self.tools = research_tools(Library(searcher, index_folder(ctx.root)))
        self.progress = read_progress(journal)

    @property
    def goal(self) -> Goal:
        assert self.journal.state.goal is not None
        return self.journal.state.goal

    @property
    def question(self) -> str:
        return self.goal.text

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

    def record_call(self, purpose: str, reply: Reply, **fields: Any) -> None:
        self.journal.append("llm_call", purpose=purpose, **reply.usage(), **fields)

    def findings_text(self) -> str:
        lines = [f"- {q}\n  {f}" for q, f in self.progress.findings]
        return "\n".join(lines) or "- none yet"


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
