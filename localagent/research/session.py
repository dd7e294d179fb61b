"""One research run's session: the question, the model, the read-only tools, and what
the journal says was done. The plan and refinery (`ask`), each step (`step`) and the
answer (`answer`) work on it."""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field
from typing import Any

from localagent.config.settings import Settings
from localagent.journal import Journal
from localagent.models.protocol import Model, Reply
from localagent.prompts.promptset import PromptSet
from localagent.research.search import index_folder, make_searcher
from localagent.research.tools import Library, Span, research_tools
from localagent.state import Goal
from localagent.system.stopping import StopSignal
from localagent.tools.base import ToolContext

log = logging.getLogger("localagent.research")


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


class Session:
    """The research of one question: what every part of it reads and journals through."""

    def __init__(
        self, journal: Journal, model: Model, settings: Settings, ctx: ToolContext, stop: StopSignal
    ) -> None:
        self.journal = journal
        self.model = model
        self.stop = stop
        self.texts = PromptSet(settings.prompts)
        self.ctx = dataclasses.replace(ctx, prompts=self.texts)  # the tools' notes too
        cancelled = lambda: stop.requested() is not None  # noqa: E731
        searcher, notes = make_searcher(self.ctx.root, settings, cancelled, model)
        for note in notes:
            log.info("%s", note)
        self.tools = research_tools(Library(searcher, index_folder(self.ctx.root)))
        self.progress = read_progress(journal)

    @property
    def goal(self) -> Goal:
        assert self.journal.state.goal is not None
        return self.journal.state.goal

    @property
    def question(self) -> str:
        return self.goal.text

    def record_call(self, purpose: str, reply: Reply, **fields: Any) -> None:
        self.journal.append("llm_call", purpose=purpose, **reply.usage(), **fields)

    def findings_text(self) -> str:
        lines = [f"- {q}\n  {f}" for q, f in self.progress.findings]
        return "\n".join(lines) or "- none yet"
