"""The one line of a counting script that counts a thing wrong, and that line counting it
as Python does: what a miscount's hand-back asks to replace.

Qwen2.5-Coder-1.5B's wordcount.py on the CPU counted `words = len(lines)` and `words =
len(lines) * len(lines[0].split())` after `lines = f.readlines()`. Told that no number was
right for the words, and then how Python counts words of a text, it wrote the whole
program again and counted the words wrong another way, or read sys.argv[1] instead of the
file. Where the line that assigns the count is certain, the edit is named instead.

Only what is certain counts: one assignment, on one line written once, of a name that
says the thing (`words`, `word_count`, `num_chars`), in a function that holds exactly one
read of the whole file into a name (`text = f.read()`, `lines = f.readlines()`,
`lines = f.read().splitlines()`; the same read in each branch of an `if` is one).
"""

from __future__ import annotations

import ast

__all__ = ["FROM_TEXT", "count_fix"]

_STEMS = {"lines": "line", "words": "word", "characters": "char"}
# How Python counts each thing, from the text (`T`) or from its lines (`L`).
FROM_TEXT = {
    "lines": "len({}.splitlines())",
    "words": "len({}.split())",
    "characters": "len({})",
}
_FROM_LINES = {
    "lines": "len({})",
    "words": "sum(len(line.split()) for line in {})",
    "characters": "sum(len(line) for line in {})",
}
# Lines without their line ends (`f.read().splitlines()`): their characters are not the file's.
_FROM_ROWS = {"lines": "len({})", "words": "sum(len(line.split()) for line in {})"}


def count_fix(source: str, thing: str) -> tuple[str, str] | None:
    """(the line's code, that code counting `thing` as Python does) for the one line
    of `source` that assigns the count of `thing` ("words") from a read of the file that
    the same function holds; None when that is not certain, or the line counts so already."""
    stem = _STEMS.get(thing)
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if stem is None:
        return None
    found = []
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        reads = sorted(set(_reads(function)))  # one name, read the same in each branch
        counts = [
            node
            for node in ast.walk(function)
            if isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(target := node.targets[0], ast.Name)
            and stem in target.id.lower()
            and not _is_read(node.value)
        ]
        if len(reads) == 1 and len(counts) == 1:
            found.append((counts[0], reads[0]))
    if len(found) != 1:
        return None
    count, (kind, held) = found[0]
    lines = source.splitlines()
    if count.lineno != count.end_lineno or not lines[count.lineno - 1].isascii():
        return None
    line = lines[count.lineno - 1]
    target = count.targets[0]
    assert isinstance(target, ast.Name)
    how = {"text": FROM_TEXT, "lines": _FROM_LINES, "rows": _FROM_ROWS}[kind].get(thing)
    if how is None:
        return None
    expr = how.format(held)
    same = ast.dump(ast.parse(expr, mode="eval").body) == ast.dump(count.value)
    if same or source.count(line) != 1:
        return None
    old, new = line.strip(), f"{target.id} = {expr}"
    return (old, new) if source.count(old) == 1 else None


def _reads(function: ast.AST) -> list[tuple[str, str]]:
    """(its kind, the name) for each whole read of a file into a name (`_is_read`)."""
    found = []
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name) and (kind := _is_read(node.value)):
                found.append((kind, target.id))
    return found


def _is_read(value: ast.expr) -> str:
    """What a call reads whole: "text" for `X.read()`, "lines" for `X.readlines()`,
    "rows" for `X.read().splitlines()` (lines without their ends); "" for any other."""
    if not isinstance(value, ast.Call) or value.args or value.keywords:
        return ""
    func = value.func
    if not isinstance(func, ast.Attribute):
        return ""
    if func.attr == "read":
        return "text"
    if func.attr == "readlines":
        return "lines"
    if func.attr == "splitlines" and _is_read(func.value) == "text":
        return "rows"
    return ""
