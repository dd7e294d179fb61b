"""What a write of a Python file says when it does not compile: where, why, and where one
edit of that line makes it compile, that edit as a replace_in_file call ready to copy.

Small models copy a call they are shown: Qwen2.5-Coder-1.5B sent the apostrophe fix
verbatim, but told only "closing parenthesis '}' does not match opening parenthesis '('",
it went on fixing an error it had already fixed. A fix is offered only when the source
with it compiles, or fails only on a later line, and its line occurs once in the file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from localagent.tools import indentfix, unflatten
from localagent.tools.indentfix import compiles_past as _fixes

SHOWN_LINE_CHARS = 120  # of the line a syntax error is on, in the write's result
# A word with an apostrophe inside a single-quoted string: small models write 'It's a tie!'.
_APOSTROPHE = re.compile(r"'([^'\n]*?\b(\w+'\w+)\b[^'\n]*)'")
_MISMATCH = re.compile(r"closing parenthesis '(.)' does not match opening parenthesis '(.)'")
_NEVER_CLOSED = re.compile(r"'(.)' was never closed")
_CLOSER = {"(": ")", "[": "]", "{": "}"}
_GOES_ON = tuple(",([{\\+-*/%=&|^<>.:")
_QUOTES = "; the apostrophe in {word} ends the '...' string: use double quotes"
_NO_BODY = re.compile(r"expected an indented block after (.+?) on line (\d+)")
_DEF_NAME = re.compile(r"\s*(?:async\s+)?(?:def|class)\s+(\w+)")
_PRINT = re.compile(r"^(\s*)print\s+(?!\()(.+?)\s*$")
_UNTERMINATED = re.compile(r"unterminated (?:f-)?string literal")
# A sentence, as a module's docstring reads: words, ending in a full stop.
_PROSE = re.compile(r"[A-Z][\w,;:()' -]*\w[\w,;:()' -]*\.")
MAX_JOINED = 6  # lines a string cut by line breaks is joined across


def compile_problem(source: str | bytes, name: str) -> tuple[str | None, bool]:
    """(why the source does not compile or None, whether the compiler could tell)."""
    try:
        compile(source, name, "exec", dont_inherit=True)
    except SyntaxError as exc:
        where = f"line {exc.lineno}" if exc.lineno else "an unknown line"
        line = " ".join((exc.text or "").split())[:SHOWN_LINE_CHARS]
        shown = f" (the line: `{line}`)" if line else ""
        return f"syntax error at {where}: {exc.msg}{shown}{_fix(source, name, exc)}", True
    except ValueError as exc:  # null bytes
        return f"not Python source: {exc}", True
    except (RecursionError, MemoryError):
        return None, False
    return None, True


def _fix(source: str | bytes, name: str, exc: SyntaxError) -> str:
    """What ends the result of a write that does not compile: the one-line fix, if any."""
    found = _edit(source, name, exc)
    if found is None and isinstance(source, str) and (chain := fixes(source, name)):
        calls, before = [], source
        for old, new, after in chain:
            calls.append(_call(name, old, new, before.count(old)))
            before = after
        if len(calls) == 1:
            return f"; this fixes it: {calls[0]}"
        return f"; these fix it, one after the other: {' then '.join(calls)}"
    if found is None:
        word = _apostrophe(exc)
        return _QUOTES.format(word=word) if word else _empty_body(source, exc)
    old, new, word = found
    call = _call(name, old, new)
    return f"{_QUOTES.format(word=word)}, e.g. {call}" if word else f"; this fixes it: {call}"


def _apostrophe(exc: SyntaxError) -> str:
    """The word with an apostrophe that ends a '...' string on the error's line, or ""."""
    found = _APOSTROPHE.search(exc.text or "") if exc.msg.startswith("unterminated str") else None
    return found[2] if found else ""


_VERSION = re.compile(r"v?\d+(?:\.\d+){1,3}(?:[-.]?(?:a|b|rc|dev|post)\d*)?")


def line_fix(
    source: str, name: str, *, earlier: bool = False, every: bool = False
) -> tuple[str, str] | None:
    """The edit (old, new) that one line of source's syntax error is offered, or None;
    `earlier`: also a string joined after which the file fails on a line above it;
    `every`: also a cut string written the same in several places (each is joined)."""
    try:
        compile(source, name, "exec", dont_inherit=True)
    except SyntaxError as exc:
        found = _edit(source, name, exc, earlier=earlier, every=every)
        return (found[0], found[1]) if found else None
    except (ValueError, RecursionError, MemoryError):
        return None
    return None


MAX_FIXES = 3  # one-line fixes made in turn, each uncovering the next error


def fixes(source: str, name: str) -> list[tuple[str, str, str]]:
    """The one-line fixes that make source compile, made in turn: (the line, as fixed,
    the source after it); [] when it compiles or no such fixes are known.

    A string cut by line breaks hides the errors above it, since the compiler reads the
    strings first: Qwen2.5-Coder-1.5B's wordcount had `print(count_characters(args.file)`
    without its `)` above its three-line f-string (the CPU). Joined, the string left the
    file failing on that line, so no fix was offered, and it sent the write five times.

    A string cut the same way in several places is joined in each: the 1.5B wrote
    `print(args.file.read().count('\\n'))` twice with the `\\n` a line break, was told
    line 6 did not compile, and sent the same write until the round limit (the CPU)."""
    made: list[tuple[str, str, str]] = []
    for _ in range(MAX_FIXES):
        fix = line_fix(source, name, earlier=True, every=True)
        if fix is None or (source.count(fix[0]) != 1 and "\n" not in fix[0]):
            return []
        source = source.replace(fix[0], fix[1])
        made.append((fix[0], fix[1], source))
        if _fixes(source, name, 0, anywhere=False):  # compiles (no fix offered to compute)
            return made
    return []


def _edit(
    source: str | bytes, name: str, exc: SyntaxError, *, earlier: bool = False,
    every: bool = False,
) -> tuple[str, str, str] | None:  # fmt: skip
    """The one-line edit that fixes the error: (old, new, the word with an apostrophe
    when that is the fix), old occurring once in the source; None when none is known.
    `earlier`: a joined string may leave an error above it; `every`: a cut string may
    occur more than once (see `fixes`)."""
    if isinstance(source, bytes):
        source = source.decode("utf-8", errors="replace")
    lines = source.splitlines(keepends=True)
    if not exc.lineno or not 0 < exc.lineno <= len(lines):
        return None
    line = lines[exc.lineno - 1]
    body = line.rstrip("\r\n")
    version = body.strip()
    if (
        _VERSION.fullmatch(version)
        and "version" in name.rsplit("/", 1)[-1].lower()
        and source.count(version) == 1
    ):
        # Qwen2.5-Coder-1.5B wrote mathx/__version__.py as the bare text `0.1.0`, again
        # until blocked, then `ruff check` failed on it (the CPU): a version module's line.
        return version, f'__version__ = "{version}"', ""
    if exc.msg.startswith("unterminated string") and (found := _APOSTROPHE.search(body)):
        text = found[1]
        if '"' in text or "\\" in text:
            return None
        return f"'{text}'", f'"{text}"', found[2]
    if _UNTERMINATED.match(exc.msg) and (
        joined := _joined(source, lines, exc.lineno, name, earlier, every)
    ):
        return joined
    if exc.msg == "unexpected indent":
        return indentfix.unexpected(source, lines, exc.lineno, name)
    for fixed in _candidates(body, exc, lines[exc.lineno :]):
        end = line[len(body) :]
        edited = "".join([*lines[: exc.lineno - 1], fixed + end, *lines[exc.lineno :]])
        # A bracket closed at the end of its line must leave a file that compiles: the
        # error moving on would be the lines that were meant to be inside it.
        if _fixes(edited, name, exc.lineno, anywhere=not _NEVER_CLOSED.match(exc.msg)):
            old, new = body.strip(), fixed.strip()
            if old and source.count(old) == 1:
                return old, new, ""
    return None


def _joined(
    source: str, lines: list[str], lineno: int, name: str, earlier: bool, every: bool
) -> tuple[str, str, str] | None:
    """A string cut by line breaks meant as `\\n`: the line joined with the ones after it
    by `\\n`, up to the first join after which the file compiles or fails only further on
    (`earlier`: or on a line above it).

    In a call's JSON, `\\n` is a line break, and a model that means the two characters
    `\\n` in the code must write `\\\\n`: Qwen2.5-Coder-1.5B wrote
    `print(f'Number of lines: {len(lines)}\\nNumber of words: {words}')` so in 5 of 6
    wordcount runs (the H200), sent the same write again until three strikes, and two of
    those runs ran out of time on it."""
    for end in range(lineno, min(lineno - 1 + MAX_JOINED, len(lines))):
        span = [line.rstrip("\r\n") for line in lines[lineno - 1 : end + 1]]
        fixed = "\\n".join(span)
        ending = lines[end][len(span[-1]) :]
        edited = "".join([*lines[: lineno - 1], fixed + ending, *lines[end + 1 :]])
        try:
            compile(edited, name, "exec", dont_inherit=True)
        except SyntaxError as exc:
            if exc.lineno == lineno and _UNTERMINATED.match(exc.msg):
                continue  # still cut: the next line belongs to the string too
            closed = _closed(fixed, exc, lines[end + 1 :]) if exc.lineno == lineno else None
            if closed is not None and _fixes(
                "".join([*lines[: lineno - 1], closed + ending, *lines[end + 1 :]]),
                name, lineno, anywhere=False,
            ):  # fmt: skip
                fixed = closed
            elif (exc.lineno or 0) == lineno or ((exc.lineno or 0) < lineno and not earlier):
                return None
        except (ValueError, RecursionError, MemoryError):
            return None
        old, new = "\n".join(span).strip(), fixed.strip()
        return (old, new, "") if source.count(old) == 1 or every else None
    return None


def _closed(joined: str, exc: SyntaxError, after: list[str]) -> str | None:
    """The joined line with the bracket it left open closed at its end, when that is all
    it lacks (see `_complete`): Qwen2.5-Coder-1.5B's wordcount wrote its three-line
    f-string's `print(` without the `)` (the CPU), and sent that write three times."""
    found = _NEVER_CLOSED.match(exc.msg)
    if found is None or found[1] not in _CLOSER or not _complete(joined, after):
        return None
    return joined.rstrip() + _CLOSER[found[1]]


def _empty_body(source: str | bytes, exc: SyntaxError) -> str:
    """A function or class whose body is only comments: what to write instead."""
    found = _NO_BODY.match(exc.msg)
    if found is None:
        return ""
    if isinstance(source, bytes):
        source = source.decode("utf-8", errors="replace")
    lines = source.splitlines()
    header = lines[int(found[2]) - 1] if 0 < int(found[2]) <= len(lines) else ""
    rest = lines[int(found[2]) :]
    if not rest or not all(not t.strip() or t.strip().startswith("#") for t in rest[:3]):
        return ""
    named = _DEF_NAME.match(header)
    what = f"{named[1]} has" if named else f"the {found[1]} on line {found[2]} has"
    return f"; {what} only a comment, no code: write its code"


def _candidates(body: str, exc: SyntaxError, after: list[str]) -> Iterator[str]:
    """Edits of the line the error is on, each of which may be the fix; after: the
    lines that follow it."""
    at = (exc.offset or 0) - 1  # the column the compiler points at
    if (found := _MISMATCH.match(exc.msg)) and body[at : at + 1] == found[1]:
        yield body[:at] + _CLOSER[found[2]] + body[at + 1 :]
    if exc.msg.startswith("unmatched ") and body[at : at + 1] in ")]}":
        yield body[:at] + body[at + 1 :]
    if (found := _NEVER_CLOSED.match(exc.msg)) and _complete(body, after):
        yield body.rstrip() + _CLOSER.get(found[1], "")
    if exc.msg.startswith("unexpected character after line continuation") and "\\" in body:
        # `\if __name__ == '__main__':`, a stray backslash (Qwen2.5-Coder-1.5B)
        at = at if body[at : at + 1] == "\\" else body.index("\\")
        yield body[:at] + body[at + 1 :]
    if exc.msg == "expected ':'":
        yield body.rstrip() + ":"
    if _UNTERMINATED.match(exc.msg) and (opened := _opened(body, at)) is not None:
        # `print(f"Lines: {len(lines)}, ... {chars})`, its closing quote left out
        # (Qwen2.5-Coder-1.5B, the CPU): the string ends where the line's brackets close.
        code, (quote, start) = body.rstrip(), opened
        cut = len(code.rstrip(")]"))
        if start < cut < len(code) and quote not in code[start:cut]:
            yield code[:cut] + quote + code[cut:]
    if exc.msg.startswith("Missing parentheses in call to 'print'") and (
        found := _PRINT.match(body)
    ):
        yield f"{found[1]}print({found[2]})"
    if (split := unflatten.lines(body)) is not None:
        yield split
    if exc.lineno == 1 and exc.msg == "invalid syntax" and _PROSE.fullmatch(body.strip()):
        # The file's docstring without its quotes: Qwen2.5-Coder-1.5B wrote shapes.py's
        # content in Python's three quotes, the docstring's own lost (the H200).
        yield f'"""{body.strip()}"""'


def _opened(body: str, at: int) -> tuple[str, int] | None:
    """The quote a string opens with at column `at` (after its prefix, `f"`) and the
    column just past it, or None."""
    start = at
    while start < len(body) and body[start] in "fFrRbBuU":
        start += 1
    if start < len(body) and body[start] in "\"'":
        return body[start], start + 1
    return None


def _complete(body: str, after: list[str]) -> bool:
    """Whether a line that leaves a bracket open looks finished all the same: it does not
    end in a comma, an operator or a bracket, and the next line is not indented deeper."""
    if body.rstrip().endswith(_GOES_ON):
        return False
    following = next((line for line in after if line.strip()), "")
    depth = len(body) - len(body.lstrip())
    return len(following) - len(following.lstrip()) <= depth


def _call(name: str, old: str, new: str, count: int = 1) -> str:
    given: dict[str, str | int] = {"path": name, "old": old, "new": new}
    arguments = json.dumps(given | {"count": count} if count > 1 else given)
    return f'{{"name": "replace_in_file", "arguments": {arguments}}}'
