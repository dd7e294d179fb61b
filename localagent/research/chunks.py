"""Chunks of a file: for Python, one per function and method (`Class.method`), the rest
of each class, and the rest of the module in runs of lines; for other text files (and
Python that does not parse), windows of lines."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

WINDOW = 60  # lines of a chunk of a non-Python file or of a module's remainder
OVERLAP = 10
MAX_CHUNK_LINES = 400  # a longer function is split into windows


@dataclass(frozen=True)
class Chunk:
    path: str
    start: int  # first line, 1-based
    end: int  # last line, inclusive
    symbol: str  # "Class.method", "func", "Class", "<module>" or "" (a window of lines)
    kind: str  # "function", "class", "module" or "lines"
    text: str


Defs = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def chunk_file(path: str, text: str, tree: ast.Module | None = None) -> list[Chunk]:
    lines = text.split("\n")
    if path.endswith((".py", ".pyi")) and tree is not None:
        return _python(path, lines, tree)
    return list(_windows(path, lines, 1, len(lines), "", "lines"))


def parse(path: str, text: str) -> ast.Module | None:
    if not path.endswith((".py", ".pyi")):
        return None
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _python(path: str, lines: list[str], tree: ast.Module) -> list[Chunk]:
    chunks: list[Chunk] = []
    covered: set[int] = set()
    for node in tree.body:
        if isinstance(node, Defs):
            chunks += _definition(path, lines, node, "", covered)
    rest = [n for n in range(1, len(lines) + 1) if n not in covered and lines[n - 1].strip()]
    chunks += _runs(path, lines, rest, "<module>", "module")
    return sorted(chunks, key=lambda c: (c.start, c.end))


def _first_line(node: Defs) -> int:
    return min([node.lineno, *(d.lineno for d in node.decorator_list)])


def _definition(
    path: str, lines: list[str], node: Defs, prefix: str, covered: set[int]
) -> list[Chunk]:
    start, end = _first_line(node), node.end_lineno or node.lineno
    name = prefix + node.name
    if not isinstance(node, ast.ClassDef):
        covered.update(range(start, end + 1))
        return list(_windows(path, lines, start, end, name, "function", MAX_CHUNK_LINES))
    chunks: list[Chunk] = []
    inner: set[int] = set()
    for child in node.body:
        if isinstance(child, Defs):
            chunks += _definition(path, lines, child, name + ".", inner)
    own = [n for n in range(start, end + 1) if n not in inner and lines[n - 1].strip()]
    covered.update(range(start, end + 1))
    return chunks + _runs(path, lines, own, name, "class")


def _runs(path: str, lines: list[str], numbers: list[int], symbol: str, kind: str) -> list[Chunk]:
    """The given lines in chunks of at most WINDOW lines, each from its first to last line."""
    chunks = []
    for i in range(0, len(numbers), WINDOW):
        group = numbers[i : i + WINDOW]
        text = "\n".join(lines[n - 1] for n in group)
        chunks.append(Chunk(path, group[0], group[-1], symbol, kind, text))
    return chunks


def _windows(
    path: str, lines: list[str], start: int, end: int, symbol: str, kind: str, size: int = WINDOW
) -> Iterator[Chunk]:
    if end - start < size:
        yield Chunk(path, start, end, symbol, kind, "\n".join(lines[start - 1 : end]))
        return
    first = start
    while first <= end:
        last = min(first + size - 1, end)
        yield Chunk(path, first, last, symbol, kind, "\n".join(lines[first - 1 : last]))
        if last == end:
            return
        first = last + 1 - OVERLAP
