"""Lines Python finds indented where nothing opened a block ("unexpected indent"), and
the edit that puts each where it belongs (see `syntaxfix`)."""

from __future__ import annotations


def unexpected(
    source: str, lines: list[str], lineno: int, name: str
) -> tuple[str, str, str] | None:
    """The edit (old, new, "") of line `lineno`, indented where no block opens, or None:
    the first line written at the margin, a later one in line with the statement above."""
    body = lines[lineno - 1].rstrip("\r\n")
    if "".join(lines[: lineno - 1]).strip():
        return _aligned(source, lines, lineno, name)
    # The first line indented as the call's JSON around it: Qwen2.5-Coder-1.5B wrote a
    # test file in Python's three quotes, `"content": """\n    import pytest\n\n@` (the
    # CPU), and sent it until it was blocked.
    edited = "".join([*lines[: lineno - 1], lines[lineno - 1].lstrip(" \t"), *lines[lineno:]])
    if source.count(body) == 1 and compiles_past(edited, name, lineno, anywhere=False):
        return body, body.lstrip(" \t"), ""
    return None


def _aligned(source: str, lines: list[str], lineno: int, name: str) -> tuple[str, str, str] | None:
    """A line indented under a statement that opens no block, written in line with that
    statement (the lines from it on, when the line alone occurs more than once); None
    when the file then still fails on that line or above it.

    Qwen2.5-Coder-1.5B wrote greet.py's `sys.exit(2)` four spaces in under a top-level
    `print('Usage: ...')` (the CPU); told "unexpected indent", it changed the 2 to a 0,
    then wrote the file back as it was until the round limit."""
    above = next(
        (at for at in range(lineno - 2, -1, -1) if lines[at].strip()[:1] not in ("", "#")),
        None,
    )
    if above is None:
        return None
    line, statement = lines[lineno - 1], lines[above]
    body = line.rstrip("\r\n")
    fixed = statement[: len(statement) - len(statement.lstrip(" \t"))] + body.lstrip(" \t")
    edited = "".join([*lines[: lineno - 1], fixed + line[len(body) :], *lines[lineno:]])
    if not compiles_past(edited, name, lineno, anywhere=True):
        return None
    if source.count(body) == 1:
        return body, fixed, ""
    old = "".join(lines[above : lineno - 1]) + body
    new = "".join(lines[above : lineno - 1]) + fixed
    return (old, new, "") if source.count(old) == 1 else None


def compiles_past(edited: str, name: str, lineno: int, *, anywhere: bool) -> bool:
    """Whether the edited source compiles, or (anywhere) fails only further on."""
    try:
        compile(edited, name, "exec", dont_inherit=True)
    except SyntaxError as exc:
        return anywhere and (exc.lineno or 0) > lineno
    except (ValueError, RecursionError, MemoryError):
        return False
    return True
