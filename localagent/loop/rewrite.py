"""A function the tests show wrong, asked for on its own (small profile).

Qwen2.5-Coder-1.5B's fixtest runs on the H200, six of six failed: told to fix stats.py
after `median([4, 1, 3, 2])` returned 3 where the test wants 2.5, the model only copied
text it saw into the edit's `old` and `new` (the test's call, the function's own lines)
for all of its 24 rounds. Asked in a request of its own, without tools, for the function
whole and fixed, with the file and the failing test before it, the same model wrote a
correct median six times of six (the CPU, its journaled prompts replayed).

So in an edit subtask of a Python file whose function the latest test run shows wrong
(`tools.asserted`), with nothing changed since, the round is that request: its reply's
function, read with `ast`, becomes the round's one call, a `replace_in_file` of the
function's current lines, journaled and run like any other call (the `llm_call` record's
`recogniser` is "rewrite"). Once per subtask: a reply with no such function is the
model's answer like any reply without a call, and the next round is an ordinary one.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localagent.loop.roundcall import CONTENT_CHARS
from localagent.loop.subtasks import edited_file
from localagent.prompts.promptset import PromptSet
from localagent.state import State, current
from localagent.state.ledger import latest_tests
from localagent.textcalls import ToolCall
from localagent.tools.noneresult import none_from, none_note
from localagent.tools.pkgimports import text_of
from localagent.tools.pyscript import TEST_FILE

RECOGNISER = "rewrite"
STOOD = "stood_by"  # the round's fact: the function the reply gave back unchanged
MAX_FILE_CHARS = 6000  # a file longer than this is shown as the function alone
REPLY_TOKENS = 800
_CALLED = re.compile(r"([A-Za-z_][\w.]*)\(")
_FAILED = re.compile(r"^FAILED ([\w./\\-]+\.py)::(\w+)")
_BLOCK = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.S)


@dataclass(frozen=True)
class Rewrite:
    """What the request shows: the file, the function to fix and the failing test."""

    path: str
    name: str
    file: str  # the file's text
    lines: str  # the function's current lines, exactly as the file has them
    failure: str  # "median([4, 1, 3, 2]) must return 2.5 (it returned 3)"
    test: str  # the failing test's own lines, or ""


def due(state: State, root: Path) -> Rewrite | None:
    """The request the round makes instead of an ordinary one, or None."""
    here = current(state)
    path = edited_file(here[1].description) if here is not None else ""
    if not path.endswith(".py") or TEST_FILE.search(path):
        return None
    last = latest_tests(state.ledger)
    if last is None or last.passed is not False or not last.wrong:
        return None
    if last.epoch != state.guard.epoch or _asked(state):
        return None
    called = _CALLED.match(last.wrong)
    text = text_of(root, path)
    if called is None or text is None:
        return None
    name, failure = called[1].rsplit(".", 1)[-1], last.wrong
    if named := none_from(root, path, failure):  # the None came from another function
        name, failure = named, f"{failure} ({none_note(named)})"
    lines = function_lines(text, name)
    if not lines:
        return None
    failed = _FAILED.match(last.summary)
    test = ""
    if failed is not None and (source := text_of(root, failed[1])) is not None:
        test = function_lines(source, failed[2])
    return Rewrite(path, name, text, lines, failure, test)


def _asked(state: State) -> bool:
    """Whether a round of the active subtask was such a request already."""
    return any(
        e.subtask == state.ledger.subtask and e.probe.get(RECOGNISER) for e in state.exchanges
    )


def function_lines(source: str, name: str) -> str:
    """The lines of the top-level function `name` (decorators included), "" when the
    source does not parse or defines no such function."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ""
    lines = source.splitlines()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            return "\n".join(lines[first - 1 : node.end_lineno])
    return ""


def messages(rewrite: Rewrite, prompts: PromptSet) -> list[dict[str, Any]]:
    """The request: its own system prompt (no tools), then the file and the failure."""
    shown = rewrite.file if len(rewrite.file) <= MAX_FILE_CHARS else rewrite.lines
    test = prompts.render("rewrite_test", test=rewrite.test) if rewrite.test else ""
    user = prompts.render(
        "rewrite_user",
        path=rewrite.path,
        file=shown.rstrip("\n"),
        failure=rewrite.failure,
        test=test,
        name=rewrite.name,
    )
    return [
        {"role": "system", "content": prompts.render("rewrite_system")},
        {"role": "user", "content": user},
    ]


def call(rewrite: Rewrite, reply: str) -> ToolCall | None:
    """The reply's function `name` as a replace_in_file of its current lines; None when
    the reply holds no such function that compiles, or the same lines."""
    blocks = _BLOCK.findall(reply) or [reply]
    for block in blocks:
        new = function_lines(block, rewrite.name)
        if new and new.strip() != rewrite.lines.strip():
            arguments = {"path": rewrite.path, "old": rewrite.lines, "new": new}
            return ToolCall(name="replace_in_file", arguments=arguments)
    return None


def unchanged(rewrite: Rewrite, reply: str) -> bool:
    """Whether the reply gives the function back as the file has it, and no other form of
    it: the model stands by the code (`loop.stoodback`)."""
    blocks = _BLOCK.findall(reply) or [reply]
    found = [new for block in blocks if (new := function_lines(block, rewrite.name))]
    return bool(found) and all(new.strip() == rewrite.lines.strip() for new in found)


def as_written(found: ToolCall, reply: str) -> dict[str, str]:
    """The `llm_call` record's `content`, the call as a model writes it (what later rounds
    show of this one), and `reply`, what the model wrote."""
    text = json.dumps({"name": found.name, "arguments": found.arguments}, ensure_ascii=False)
    return {"content": text, "reply": reply[:CONTENT_CHARS]}
