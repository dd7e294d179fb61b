"""What an edit of a Python file may not do, and what it is made as instead: one that
breaks a file that compiled (`breaks`), defines a function a second time
(`defined_twice`) or replaces part of a longer name (`cut_name`), refused; one that drops
what other files import but adds a function, made as that addition (`kept`); one whose
old is not there but whose new is the fix the file's syntax error was shown with, made as
that fix (`meant_fix`)."""

from __future__ import annotations

import ast
import re
from collections import defaultdict

from localagent.tools import pywrite, undefined
from localagent.tools.base import ToolError, describe
from localagent.tools.syntaxfix import SHOWN_LINE_CHARS, compile_problem, line_fix


def kept(text: str, old: str, new: str, name: str, had: list[str]) -> tuple[str, str]:
    """An edit that would drop what other files import but defines something new, made as
    the new definitions added above `old`, which stays: (the file so, "area|total_area":
    what it added and what it kept); ("", "") when that does not compile or adds nothing."""
    added = [d for d in pywrite.defined(new) if d not in had]
    lost = [d for d in had if d not in pywrite.defined(text.replace(old, new))]
    if not added or not new.strip():
        return "", ""
    edited = text.replace(old, f"{new.rstrip()}\n\n\n{old}", 1)
    if breaks(text, edited, name) or compile_problem(edited, name)[0] is not None:
        return "", ""
    return edited, f"{', '.join(added[:3])}|{', '.join(lost[:3])}"


def kept_fields(kept: str) -> dict[str, str]:
    added, _, lost = kept.partition("|")
    return {"added": added, "kept": lost}


def breaks(text: str, edited: str, name: str) -> str | None:
    """Why the edited Python file does not compile, when the file compiled before it."""
    if not name.lower().endswith((".py", ".pyw")):
        return None
    if compile_problem(text, name)[0] is not None:
        return None  # broken already: an edit on the way to a fix is no worse
    try:
        compile(edited, name, "exec", dont_inherit=True)
    except SyntaxError as exc:
        line = " ".join((exc.text or "").split())[:SHOWN_LINE_CHARS]
        return f"syntax error at line {exc.lineno}: {exc.msg}" + (f": `{line}`" if line else "")
    except (ValueError, RecursionError, MemoryError):
        return None
    return None


def meant_fix(text: str, path: str, old: str, new: str) -> tuple[str, str] | None:
    """For an edit whose old is not in a Python file that does not compile: the fix of
    the syntax error the file was shown with, when the edit's new text is that fix's."""
    if not path.lower().endswith((".py", ".pyw")) or not new.strip():
        return None
    fix = line_fix(text, path)
    return fix if fix is not None and new.strip() == fix[1] and old.strip() != fix[0] else None


def python_now(text: str, path: str) -> ToolError | str:
    """The syntax error a Python file has now (with its fix, where there is one): the
    model sending an edit that fits no text may be fixing one it has fixed already."""
    if not path.lower().endswith((".py", ".pyw")):
        return ""
    problem = compile_problem(text, path)[0]
    return ToolError.of("python_now", path=describe(path), problem=problem) if problem else ""


_DEFS = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def defined_twice(text: str, edited: str, name: str) -> str | None:
    """The top-level function (or class) the edited Python file would define twice and
    the file defines once or not at all, with the lines of each ("total_area (lines 4 and
    14)"); None for none. Python keeps the last: the first is dead code. Told to move
    shapes.py's area formulas into area, Qwen2.5-Coder-1.5B sent area's new definition
    as old and total_area's old code as new: area was gone, total_area was there twice,
    and every write after that changed one of them (the CPU)."""
    if not name.lower().endswith((".py", ".pyw")):
        return None
    before, after = _top_defs(text), _top_defs(edited)
    for each, lines in after.items():
        if len(lines) > 1 and len(before.get(each, [])) < 2:
            return f"{each} (lines {' and '.join(map(str, lines[:2]))})"
    return None


def unbinds(text: str, edited: str, name: str) -> list[str]:
    """The top-level functions and classes the Python file defines that the edit removes
    while the file still uses them (running it would raise NameError); [] for none.
    Qwen2.5-Coder-1.5B's refactor sent area with the helpers it calls, area_circle and
    area_square, as old, and area alone as new: area called two functions that were gone,
    and the tests failed on NameError (the CPU)."""
    if not name.lower().endswith((".py", ".pyw")):
        return []
    gone = set(_top_defs(text)) - set(_top_defs(edited))
    return [n for n in undefined.names(edited) if n in gone]


def _top_defs(source: str) -> dict[str, list[int]]:
    """The lines of each top-level function and class definition, by name."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    found: dict[str, list[int]] = defaultdict(list)
    for node in tree.body:
        if isinstance(node, _DEFS):
            found[node.name].append(node.lineno)
    return found


_WORD = re.compile(r"\w")
_NAME_END = re.compile(r"[\w.]*")


def cut_name(text: str, old: str, new: str, name: str) -> tuple[int, str, str] | None:
    """The first place an edit of a Python file would replace the start or end of a
    longer name: (its line, the name, what the edit makes of it); None for none. Told
    that `text.split` occurs three times, Qwen2.5-Coder-1.5B sent it with count=3 and
    `text.splitlines` as new: one of the three was the start of `text.splitlines`, which
    became `text.splitlineslines` (the CPU)."""
    if not name.lower().endswith((".py", ".pyw")) or not old.strip():
        return None
    at = text.find(old)
    while at >= 0:
        end = at + len(old)
        before = at > 0 and _WORD.match(old[0]) and _WORD.match(text[at - 1])
        after = end < len(text) and _WORD.match(old[-1]) and _WORD.match(text[end])
        if before or after:
            start = at
            while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_."):
                start -= 1
            whole = text[start:end] + _NAME_END.match(text, end)[0]  # type: ignore[index]
            line = text.count("\n", 0, at) + 1
            return line, whole, whole.replace(old, new, 1)
        at = text.find(old, end)
    return None
