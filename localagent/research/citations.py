"""Citations in an answer (`path:line`, `path:start-end`), checked against the workspace
and against what the run retrieved or read: a citation is good when the file exists, the
lines exist, and every cited line lies in a span the run saw."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from localagent.prompts.promptset import DEFAULT, PromptSet
from localagent.research.tools import Span
from localagent.tools.base import ToolError
from localagent.tools.paths import normalize_path, resolve_in_workspace

# A path with an extension, a colon, a line or a range; backticks around it are fine.
CITATION = re.compile(
    r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.[A-Za-z][A-Za-z0-9]*):(\d+)(?:-(\d+))?\b"
)
UNVERIFIED = " (unverified)"


@dataclass(frozen=True)
class Citation:
    text: str  # as written
    path: str
    start: int
    end: int


def citations(answer: str) -> list[Citation]:
    found = []
    for m in CITATION.finditer(answer):
        start = int(m[2])
        end = int(m[3]) if m[3] else start
        found.append(Citation(m[0], normalize_path(m[1]), start, end))
    return found


def _line_count(root: Path, path: str) -> int | None:
    try:
        target = resolve_in_workspace(root, path)
        if not target.is_file():
            return None
        with target.open("rb") as fh:
            return sum(1 for _ in fh)
    except (ToolError, OSError):
        return None


def problem(
    root: Path, citation: Citation, seen: Iterable[Span], texts: PromptSet = DEFAULT
) -> str:
    """Why a citation is bad, or "" when it is good."""
    lines = _line_count(root, citation.path)
    named = {"citation": citation.text, "path": citation.path}
    if lines is None:
        return texts.render("research_citation_no_file", **named)
    if citation.end < citation.start or citation.end > lines or citation.start < 1:
        return texts.render("research_citation_past_end", **named, lines=lines)
    mine = [(a, b) for p, a, b in seen if p == citation.path]
    if not any(a <= citation.start <= b for a, b in mine) or not any(
        a <= citation.end <= b for a, b in mine
    ):
        return texts.render("research_citation_unseen", citation=citation.text)
    return ""


def check(
    root: Path, answer: str, seen: Iterable[Span], texts: PromptSet = DEFAULT
) -> dict[str, str]:
    """The bad citations of an answer, each with why (in these texts' words)."""
    spans = list(seen)
    bad = {}
    for citation in citations(answer):
        why = problem(root, citation, spans, texts)
        if why:
            bad[citation.text] = why
    return bad


def mark_unverified(answer: str, bad: Iterable[str]) -> str:
    """Each bad citation followed by "(unverified)", and a note saying so at the end."""
    bad = set(bad)
    if not bad:
        return answer
    marked = CITATION.sub(lambda m: m[0] + UNVERIFIED if m[0] in bad else m[0], answer)
    note = (
        f"\n\n> {len(bad)} citation(s) marked (unverified) point at lines this research did "
        f"not retrieve or read, or that do not exist."
    )
    return marked.rstrip() + note + "\n"
