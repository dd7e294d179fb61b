"""The end of a research run: the synthesized answer, its citations checked (one turn
to fix bad ones, then they are marked unverified), saved to
`.agent_context/answers/<timestamp>.md` and journaled."""

from __future__ import annotations

import logging
import os
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from localagent.journal import Journal
from localagent.models.protocol import Message
from localagent.research.citations import check, citations, mark_unverified
from localagent.research.tools import Span
from localagent.system import safefs
from localagent.system.exits import Outcome

if TYPE_CHECKING:
    from localagent.research.session import Session

log = logging.getLogger("localagent.research")
EVIDENCE_LINES = 80


def evidence(seen: list[Span]) -> str:
    """The spans seen, merged per file: `path:12-40`, one a line."""
    by_path: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for path, start, end in seen:
        by_path[path].append((start, end))
    lines = []
    for path in sorted(by_path):
        merged: list[list[int]] = []
        for start, end in sorted(by_path[path]):
            if merged and start <= merged[-1][1] + 1:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        lines += [f"- {path}:{a}-{b}" if a != b else f"- {path}:{a}" for a, b in merged]
    return "\n".join(lines[:EVIDENCE_LINES]) or "- nothing was retrieved"


def write_answer(research: Session) -> Outcome:
    """Synthesize the answer, check its citations, save it; the completed outcome."""
    seen = research.progress.seen
    user = research.texts.render(
        "research_synth_user",
        question=research.question,
        findings=research.findings_text(),
        evidence=evidence(seen),
    )
    messages: list[Message] = [
        {"role": "system", "content": research.texts.render("research_synth_system")},
        {"role": "user", "content": user},
    ]
    reply = research.model.chat(messages)
    research.record_call("synthesis", reply)
    answer = reply.content.strip() or "(the model gave no answer)"
    bad = check(research.ctx.root, answer, seen, research.texts)
    if bad:
        log.info("citations to fix: %s", "; ".join(bad.values()))
        research.journal.append("citations_checked", bad=list(bad.values()), fixing=True)
        problems = "\n".join(f"- {why}" for why in bad.values())
        messages += [
            {"role": "assistant", "content": answer},
            {
                "role": "user",
                "content": research.texts.render("research_fix_citations", problems=problems),
            },
        ]
        reply = research.model.chat(messages)
        research.record_call("fix_citations", reply)
        answer = reply.content.strip() or answer
        bad = check(research.ctx.root, answer, seen, research.texts)
    answer = mark_unverified(answer, bad)
    path = save(research.journal, research.question, answer)
    count = len(citations(answer))
    research.journal.append(
        "answer", path=path.name, citations=count, unverified=sorted(bad), text=answer[:4000]
    )
    verification = "partial" if bad else "verified"
    cited = f"{count} citation" + ("" if count == 1 else "s")
    reason = f"answered with {cited} ({len(bad)} unverified); saved as {path.name}"
    return Outcome("completed", reason, verification=verification)


def save(journal: Journal, question: str, answer: str) -> Path:
    folder = journal.research_folder("answers")
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    path = folder / f"{stamp}.md"
    n = 1
    while os.path.lexists(path):
        n += 1
        path = folder / f"{stamp}-{n}.md"
    text = f"# {question}\n\n{answer.rstrip()}\n"
    temp = folder / f"{path.name}.{os.getpid()}.tmp"
    safefs.write_new(temp, text.encode("utf-8", errors="replace"), fsync=True)
    safefs.replace(temp, path)
    return path


def saved_answer(journal: Journal) -> str | None:
    """The text of the answer the journal's last `answer` record names, if any."""
    last = None
    for record in journal.records():
        if record["type"] == "answer":
            last = record
    if last is None:
        return None
    try:
        folder = journal.research_folder("answers")
        return safefs.read_bytes(folder / Path(str(last["path"])).name).decode("utf-8", "replace")
    except FileNotFoundError:
        return str(last.get("text", ""))
