"""A Python file written indented as a whole, as code inside a string of three quotes is
in the reply that writes it: Qwen2.5-Coder-1.5B's wordcount.py came in three double
quotes, every line four spaces in (`    import argparse`, ...), "unexpected indent" at
its first statement; told so, it sent the same write again (the CPU)."""

from __future__ import annotations

import ast
import textwrap


def dedented(content: str, name: str) -> str | None:
    """The Python content with the indent all its lines share taken off (and the blank
    lines before its first line), when as written it does not parse and so it does;
    None otherwise."""
    if not name.lower().endswith((".py", ".pyw")) or _parses(content):
        return None
    text = textwrap.dedent(content).lstrip("\n")
    if text == content.lstrip("\n") or not _parses(text):
        return None
    return text.rstrip() + "\n"


def dedented_note(content: str) -> str:
    """What the write says of it."""
    first = next((line for line in content.splitlines() if line.strip()), "")
    depth = len(first) - len(first.lstrip())
    return f"; every line was indented {depth} spaces, so it was written without that indent"


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True
