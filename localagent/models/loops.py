"""Cutting a streamed reply that repeats itself.

A small model can fall into a loop and repeat one line or one chunk until the length cap
(Qwen2.5-Coder-0.5B ran to about 2,000 tokens of the same text): every token of that is
time on a local CPU and nothing the agent can use. Once the end of the reply is the same
unit of text over and over, reading stops and what came before, with the unit once, is
the reply. Short repeats are ordinary text (a ruler of `=`, a table's rows), so a loop
needs both many copies and a long span. A tool call written as text is the exception:
the same call twice in one reply adds nothing (the loop guard would run it once), and
the 0.5B model repeats its call for hundreds of tokens, so two copies of a unit that
holds a call are a loop. So are rows that count on, each the one above plus a step
(`rows_start`): they never repeat, and run to the cap all the same.
"""

from __future__ import annotations

import re

MIN_COPIES = 4  # of one unit, back to back
MIN_SPAN = 1200  # characters the copies cover together: a ruler of 80 `-` is no loop
# Or tokens, for text of short tokens: Qwen2.5-Coder-1.5B's mathx table of numbers,
# `(0.1, -0.2, -0.21),` and four rows more over and over, was 1,452 characters when the
# length cap of 1,024 tokens cut it, 100 s on the CPU, three times running.
MIN_SPAN_TOKENS = 340
MAX_PERIOD = 2000  # characters of the longest unit looked for
CHECK_EVERY = 128  # new characters between two looks: a loop is caught that much later
_PROBE = 32  # characters compared first: most units are ruled out by them
CALL_MARKS = ('"name"', '"arguments": {')  # a unit holding both is a call written as text
# Rows that count on are a loop of their own kind: Qwen2.5-Coder-1.5B's mathx tables ran
# `(1, 2, 3),`, `(3, 4, 7),`, `(5, 6, 11),` ... to row 62 at the cap of 1,024 tokens, 40 s
# on the CPU, in 4 of 48 runs; its echo of a file's numbered lines ran `186 |` to `208 |`.
MIN_ROWS = 24  # lines of one shape, back to back, each number counting on by one step
ROWS_KEPT = 3  # of them, in the text kept: enough to show what ran on
_BREAK = re.compile(r"\n|\\n")  # a line break, or `\n` in a string of a call's JSON
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_NUMBERED = re.compile(r"\s*0\s*\|\s*")  # a file's line as a tool's result numbers it


def loop_start(text: str, min_span: int = MIN_SPAN) -> int | None:
    """Where the repetition that ends `text` starts repeating (just past its first copy),
    or None when the end of `text` is no loop (copies covering fewer than `min_span`
    characters are none)."""
    n = len(text)
    for period in range(1, min(MAX_PERIOD, n // 2) + 1):
        probe = min(_PROBE, n - period)
        if text[n - probe :] != text[n - probe - period : n - period]:
            continue
        span = _span(text[n - period :], period, min_span)
        if span > n:
            continue
        if text[n - span :] != text[n - span + period :] + text[n - period :]:
            continue
        start = n - span
        while start > 0 and text[start - 1] == text[start - 1 + period]:
            start -= 1
        return _line_end(text, start + period, period)
    return None


def rows_start(text: str) -> int | None:
    """Where the rows that count on and end `text` are cut (past their first ROWS_KEPT),
    or None when its last MIN_ROWS whole lines are no such rows. Each row has the shape
    of the others (numbers aside) and two numbers or more, or is a numbered line
    (`186 |`); each number is the one above it plus that column's step."""
    ends = [m.end() for m in _BREAK.finditer(text)]
    if len(ends) <= MIN_ROWS:
        return None
    shape, steps, below, first = None, None, None, len(ends)
    for at in range(len(ends) - 1, 0, -1):  # whole lines, the last first
        line = _BREAK.sub("", text[ends[at - 1] : ends[at]])
        numbers = [float(n) for n in _NUMBER.findall(line)]
        now = _NUMBER.sub("0", line)
        if not numbers or now != (shape or now):
            break
        if len(numbers) < 2 and not _NUMBERED.fullmatch(now):
            break
        if below is not None:
            step = [round(b - n, 9) for b, n in zip(below, numbers, strict=True)]
            if steps is not None and step != steps:
                break
            steps = step
        shape, below, first = now, numbers, at
    if len(ends) - first < MIN_ROWS or not any(steps or ()):
        return None
    return ends[first + ROWS_KEPT - 1]


def _span(unit: str, period: int, min_span: int) -> int:
    """How much text the copies of `unit` must cover to be a loop."""
    if all(mark in unit for mark in CALL_MARKS):
        return 2 * period
    return max(MIN_COPIES * period, min_span)


def _line_end(text: str, cut: int, period: int) -> int:
    """`cut` moved on to the end of a line when the unit holds one: the copy kept is then
    whole lines (a call on a line of its own keeps its closing brace), not the unit as it
    happens to start after a text that ends like it."""
    newline = text.find("\n", cut - 1, cut - 1 + period)
    return cut if newline < 0 else newline + 1


class LoopCut:
    """The text of a reply as its pieces arrive, cut once it loops."""

    def __init__(self) -> None:
        self.pieces: list[str] = []
        self.chunks = 0  # pieces with text: one token each on llama-server and Ollama
        self.size = 0
        self.checked = 0  # the size at the latest look
        self.cut: int | None = None

    def add(self, piece: str) -> bool:
        """Take the next piece; True once the text loops (read no further)."""
        self.pieces.append(piece)
        self.chunks += bool(piece)
        self.size += len(piece)
        if self.size - self.checked < CHECK_EVERY:
            return False
        self.checked = self.size
        # MIN_SPAN_TOKENS at the reply's own characters per token, MIN_SPAN at most.
        span = min(MIN_SPAN, MIN_SPAN_TOKENS * self.size // max(self.chunks, 1))
        text = self.text()
        self.cut = loop_start(text, span)
        if self.cut is None:
            self.cut = rows_start(text)
        return self.cut is not None

    def text(self) -> str:
        whole = "".join(self.pieces)
        return whole if self.cut is None else whole[: self.cut]
