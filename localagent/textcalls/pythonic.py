"""Tool calls in Python call syntax, read with `ast` (literal keyword values only, never
evaluated): Llama 3.2/4's `[get_weather(city='SF'), other()]`, LFM2's list between
`<|tool_call_start|>`/`<|tool_call_end|>`, Granite's calls in a ```python fence or on
lines of their own (several on one line joined by `;`); a tool's name in any case."""

from __future__ import annotations

import ast
import re
import warnings
from typing import Any

from localagent.textcalls.base import Found, ToolCall, make_call
from localagent.textcalls.literals import NotLiteral, literal_node
from localagent.textcalls.names import is_tool_name

_LIST = re.compile(r"^[ \t]*\[\s*[A-Za-z_][\w.]*\s*\(", re.M)
_LINE = re.compile(r"^[ \t]*([A-Za-z_][\w.]*)\s*\(.*\)[ \t;]*$", re.M)
_FENCE = re.compile(r"```([\w+-]*)[^\n]*\n(.*?)```", re.S)
_CODE_LANGUAGES = ("", "python", "py", "tool_code", "tool_call")


def _parse(source: str) -> ast.expr | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(source.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def _call(node: ast.expr, known: set[str]) -> ToolCall | None:
    """A call node with a plain name and only literal keyword arguments, as a ToolCall."""
    if not isinstance(node, ast.Call) or node.args:
        return None
    name = _dotted(node.func)
    if name is None or any(keyword.arg is None for keyword in node.keywords):
        return None
    try:
        arguments: dict[str, Any] = {k.arg: literal_node(k.value) for k in node.keywords if k.arg}
    except NotLiteral:
        return None
    return make_call(name, arguments, known)


def call_list(source: str, known: set[str]) -> list[ToolCall] | None:
    """`source` as a bracketed list of calls (any names: the registry refuses unknown
    ones), or None when it is anything else."""
    node = _parse(source)
    if not isinstance(node, ast.List) or not node.elts:
        return None
    calls = [_call(element, known) for element in node.elts]
    if any(call is None for call in calls):
        return None
    return [call for call in calls if call is not None]


def _statement_calls(line: str, known: set[str]) -> list[ToolCall]:
    """A line of one call to a tool, or of several joined by `;` (Llama 3.2's
    `get_a(x=1); get_b(y=2)`); [] for a line that is anything else."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            body = ast.parse(line.strip(), mode="exec").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    nodes = [statement.value for statement in body if isinstance(statement, ast.Expr)]
    if not nodes or len(nodes) != len(body):
        return []
    if not all(
        isinstance(node, ast.Call) and is_tool_name(_dotted(node.func) or "", known)
        for node in nodes
    ):
        return []
    calls = [_call(node, known) for node in nodes]
    return [call for call in calls if call is not None] if all(calls) else []


def _line_calls(text: str, offset: int, known: set[str]) -> list[Found]:
    """The calls of each line that holds only calls, one list per such line."""
    return [
        [(offset + match.start(), call) for call in calls]
        for match in _LINE.finditer(text)
        if (calls := _statement_calls(match.group(0), known))
    ]


def _fenced_calls(text: str, known: set[str]) -> Found:
    """Calls in python fences whose every line is a call to a known tool: a fence that
    holds anything else is code the model is showing, not calls it is making."""
    found: Found = []
    for fence in _FENCE.finditer(text):
        if fence.group(1).lower() not in _CODE_LANGUAGES:
            continue
        body = fence.group(2)
        lines = [line for line in body.splitlines() if line.strip() and line.strip()[0] != "#"]
        calls = _line_calls(body, fence.start(2), known)
        if calls and len(calls) == len(lines):
            found += [call for line in calls for call in line]
    return found


def python_calls(text: str, known: set[str]) -> Found:
    """Family: Llama 3.2/4 (pythonic), Granite (python fences, bare lines).
    Real examples: `[get_weather(city='San Francisco', metric='celsius')]` (vLLM
    tests/tool_parsers/test_pythonic_tool_parser.py); `Sure, let me check the weather.\\n
    get_weather(location="London")` (vLLM test_granite_pythonic_tool_parser.py)."""
    whole = call_list(text, known)
    if whole is not None:
        return [(len(text) - len(text.lstrip()), call) for call in whole]
    fenced = _fenced_calls(text, known)
    if fenced:
        return fenced
    outside = _FENCE.sub(lambda fence: " " * len(fence.group(0)), text)
    return [call for line in _line_calls(outside, 0, known) for call in line]


PYTHON_MARKER = _LIST
