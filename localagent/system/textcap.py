"""One rule for shortening text the model or the journal sees: head and tail, with a
marker of what was cut, so the end of a long output (a test summary) is never lost."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def cap_text(text: str, limit: int) -> str:
    """Keeps the head and tail of text within limit characters, marking what was cut."""
    if len(text) <= limit:
        return text
    # Sized for the longest possible count, so the result never exceeds limit.
    room = limit - len(f"\n[... {len(text)} characters cut ...]\n")
    if room < 2:
        return text[:limit]
    head, tail = room - room // 2, room // 2
    marker = f"\n[... {len(text) - head - tail} characters cut ...]\n"
    return text[:head] + marker + text[len(text) - tail :]


def clip(args: dict[str, Any], limit: int) -> dict[str, Any]:
    """Arguments with long strings (file contents) shortened, to keep the snapshot small."""
    return {k: cap_text(v, limit) if isinstance(v, str) else v for k, v in args.items()}


def first_line(text: str, limit: int) -> str:
    """The first line of text, at most limit characters (an ellipsis marks a cut)."""
    first = text.strip().split("\n", 1)[0].rstrip()
    if len(first) > limit:
        return first[: limit - 1].rstrip() + "…"
    return first if first == text.strip() else first + " …"


def listed(items: Sequence[str]) -> str:
    """ "a", "a and b", "a, b and c": items as a sentence names them ("" for none)."""
    if len(items) < 2:
        return "".join(items)
    return ", ".join(items[:-1]) + f" and {items[-1]}"
