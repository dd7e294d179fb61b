"""What a goal says its script counts, checked against a run of it: "python wordcount.py
FILE prints the number of lines, words and characters in FILE". A run that succeeded
must print a number for each thing counted, and, for the lines, words and characters
(or bytes) of the file it was given, one of the numbers that file has.

Qwen2.5-Coder-1.5B's wordcount.py, on the CPU: `15` alone for the lines, words and
characters of its sample, the run ending its step; `words = len(lines)` in three runs of
four, each "completed (unverified)" with counts nothing had compared. What counts as a
line or a character varies (a last line without a line break, the line breaks counted or
not, characters or bytes): any of those counts is right, and only a number none of them
gives is a finding. What it counts of something else ("unique words") is not checked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localagent.state.checkruns import summary_parts
from localagent.system import safefs
from localagent.system.textcap import listed
from localagent.verify.stated import NUMBER, PRINTS, args_of

MAX_BYTES = 1 << 20  # of the file a run was given, read to count
# "the number of lines, words and characters in FILE": one number for each.
_COUNTS = re.compile(r"the\s+(?:numbers?|counts?)\s+of\s+(.+?)(?:\s+in\s+(\w+))?", re.I)
_WORDS = ("none", "one", "two", "three", "four", "five", "six")


@dataclass(frozen=True)
class Counted:
    """What the goal says `python SCRIPT NAME ...` prints when it says only what it counts
    (`template`: "the number of lines, words and characters in FILE"): one number for each
    of the `counted`, of the file its placeholder `source` names ("" when none)."""

    script: str
    names: tuple[str, ...]
    template: str
    counted: tuple[str, ...]
    source: str


def stated_counts(goal: str) -> Counted | None:
    """What the goal says its script counts, when it says it prints "the number of A, B
    and C" (two things or more); None otherwise."""
    found = PRINTS.search(goal)
    counts = _COUNTS.fullmatch(found[3].strip()) if found else None
    if found is None or counts is None:
        return None
    counted = tuple(c for c in re.split(r",\s*(?:and\s+)?|\s+and\s+", counts[1]) if c)
    if (
        len(counted) < 2
        or len(counted) >= len(_WORDS)
        or not all(re.fullmatch(r"[a-z]+(?:\s[a-z]+)?", c) for c in counted)
    ):
        return None
    names = tuple(found[2].split())
    source = counts[2] if counts[2] in names else ""
    return Counted(found[1], names, found[3].strip(), counted, source)


def count_check(goal: str, ledger: Any, root: Path) -> str | None:
    """The run of the goal's counting script the verification makes itself, so that it
    reads all the script prints (the journal keeps a run's last line only): the latest
    successful run of its plain form since the script's last change, the file the model
    gave it, unless its last line proves the counts; None when there is none.
    Qwen2.5-Coder-1.5B's wordcount printed `5`, `10` and `34` on lines of their own, each
    right for its sample, and the goal ended "completed (unverified)": `34` alone proved
    no count (the CPU)."""
    counted = stated_counts(goal)
    if counted is None:
        return None
    write = ledger.writes.get(counted.script)
    for check in sorted(ledger.checks.values(), key=lambda c: c.seq, reverse=True):
        args = args_of(check.cmd, counted.script)
        if write is not None and check.seq < write.seq:
            return None
        if check.passed is True and args is not None and len(args) == len(counted.names):
            shown = summary_parts(check.summary)
            last = shown[1] if shown is not None else ""
            return None if proven(goal, check.cmd, last, root) else str(check.cmd)
    return None


def off_counts(goal: str, cmd: str, output: str, root: Path) -> str:
    """What is wrong with a run of `cmd` that succeeded and printed `output` (all of it),
    by the numbers the goal says it prints: fewer numbers than it counts (with the option
    the goal says prints only one of them, another count than one), or none of the counts
    the file it was given (in the workspace at `root`) has for a line, word or character
    count; "" when nothing is, or the goal says no such thing of it."""
    return _judged(goal, cmd, output, root)[0]


def proven(goal: str, cmd: str, output: str, root: Path) -> bool:
    """Whether such a run printed, for each thing the goal says it counts, a count the
    file it was given has: deterministic evidence of what it prints."""
    wrong, compared = _judged(goal, cmd, output, root)
    return compared and not wrong


def _judged(goal: str, cmd: str, output: str, root: Path) -> tuple[str, bool]:
    """(what is wrong, "" for nothing; whether every count was compared with the file's)."""
    counted = stated_counts(goal)
    if counted is None:
        return "", False
    form, things, only = counted.names, counted.counted, False
    args = args_of(cmd, counted.script)
    if args is None and (flag := _only(goal)) is not None and flag[0] in cmd.split():
        args = args_of(" ".join(w for w in cmd.split() if w != flag[0]), counted.script)
        form, things, only = (flag[0], *counted.names), (flag[1],), True
    if args is None or len(args) != len(counted.names):
        return "", False
    shown = " ".join(output.split("\nNOTE: ", 1)[0].split())  # not the tool's own notes
    rest = shown
    for arg in args:
        rest = rest.replace(arg, " ")
    numbers = [float(n) for n in NUMBER.findall(rest)]
    what = f"only the number of {things[0]}" if only else counted.template
    said = f"the goal says `python {counted.script} {' '.join(form)}` prints {what}"
    want = len(things)
    if not shown:
        return f"{said}, {_many(want)}; `{cmd}` printed nothing", False
    if len(numbers) < want or (only and len(numbers) > 1):
        many = _many(len(numbers))
        return f"{said}, {_many(want)}; `{cmd}` printed `{shown[:80]}`, {many}", False
    given = args[counted.names.index(counted.source)] if counted.source else ""
    data = _data(root, given) if given else None
    if data is None:
        return "", False
    has = _has(data, things)
    wrong = [thing for thing, (_, right) in has.items() if not right & set(numbers)]
    facts = listed([f"{usual} {thing}" for thing, (usual, _) in has.items()])
    printed = f"{said}; {given} has {facts}, and `{cmd}` printed `{shown[:80]}`"
    if not wrong and _out_of_order(numbers, rest, things, has):
        # Bare numbers say what they count by their order alone: the 1.5B's wordcount
        # printed `12 69 3` (words, characters, lines), and its small verifier said
        # VERIFIED (the CPU).
        order = " ".join(str(has[thing][0]) for thing in things)
        return f"{printed}: not in the order the goal states them ({order})", True
    if not wrong:
        return "", set(has) == set(things) and not _alike(has)
    return f"{printed}: no number right for {listed([f'the {t}' for t in wrong])}", True


def _alike(has: dict[str, tuple[int, set[float]]]) -> bool:
    """Whether the file has as many of two things counted (one word a line: as many
    words as lines), so that a run's numbers cannot tell which it counted. The 1.5B's
    wordcount counted its words as its lines, and its sample, `line1` to `line5`, had
    5 of each: its run "proved" all three counts (the CPU)."""
    found = [(t, right) for t, (_, right) in has.items() if t != "chars" or "characters" not in has]
    return any(a[1] & b[1] for n, a in enumerate(found) for b in found[n + 1 :])


def _out_of_order(
    numbers: list[float], rest: str, things: tuple[str, ...], has: dict[str, Any]
) -> bool:
    """Whether output of bare numbers, one for each count, gives them in another order
    than the goal states: each number right for a count, not each for its own."""
    if len(numbers) != len(things) or len(things) < 2 or re.search(r"[A-Za-z]", rest):
        return False
    if set(has) != set(things):
        return False
    return not all(n in has[thing][1] for n, thing in zip(numbers, things, strict=True))


def _many(count: int) -> str:
    """ "no numbers", "one number", "three numbers", "12 numbers"."""
    if not count:
        return "no numbers"
    word = _WORDS[count] if count < len(_WORDS) else str(count)
    return f"{word} number{'s' * (count > 1)}"


# "with --lines it prints only the number of lines"
_ONLY = re.compile(
    r"\bwith\s+(--[A-Za-z][\w-]*)\s+it\s+prints\s+only\s+the\s+(?:number|count)\s+of\s+"
    r"([a-z]+)",
    re.I,
)


def _only(goal: str) -> tuple[str, str] | None:
    """The option the goal says makes its script print only one count, and that count."""
    found = _ONLY.search(goal)
    return (found[1], found[2].lower()) if found else None


def _data(root: Path, given: str) -> bytes | None:
    """The bytes of the workspace file a run was given; None when it is no such file, is
    too long, or lies outside the workspace."""
    try:
        data = safefs.read_inside(root, root / given, MAX_BYTES + 1)
    except (OSError, safefs.UnsafeFile, ValueError):
        return None
    return data if len(data) <= MAX_BYTES else None


def _has(data: bytes, counted: tuple[str, ...]) -> dict[str, tuple[int, set[float]]]:
    """For each thing counted that has one meaning for a file (lines, words, characters,
    bytes): its usual count (`wc`'s, a last line without a line break counted), and every
    count of it a program could rightly print."""
    text = data.decode("utf-8", errors="replace")
    lines = (len(text.splitlines()), {len(text.splitlines()), text.count("\n")})
    chars = (len(text), {len(text), len(data), len(text.replace("\n", "")), len(text.rstrip())})
    meanings = {
        "lines": lines,
        "words": (len(text.split()), {len(text.split())}),
        "characters": chars,
        "chars": chars,
        "bytes": (len(data), {len(data)}),
    }
    return {
        thing: (meanings[thing][0], {float(n) for n in meanings[thing][1]})
        for thing in counted
        if thing in meanings
    }
