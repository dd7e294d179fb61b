"""Plans checked before they are used: every subtask must be a step a tool can do.

A small model plans as it would for a person at a desk: "Open a text editor or an IDE.",
"Navigate to the workspace folder.", "Choose a language", a subtask that holds the whole
program in a code block, a tool that does not exist. Each such subtask is named with
what is wrong, so that one repair request can say it all. A subtask that only makes a
folder ("Create a directory named 'mathx'") is dropped instead: write_file makes the
folders of the file it writes, so the next subtask that writes a file there does it.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from localagent.loop.plancode import BARE_FENCE, as_print, as_write
from localagent.loop.plancompact import compact, same
from localagent.loop.planpackage import into_package, package_name
from localagent.loop.subtasks import FILE as _FILE
from localagent.loop.subtasks import MANY_FILES, MAX_STEPS, as_edit, runnable, written_file

MAX_CHARS = 300  # of one subtask: a step is one line, not a program
MAX_LINES = 3

_FENCE = re.compile(r"```|~~~")
_CODE_LINE = re.compile(
    r"^\s*(?:def |class |import \w|from [\w.]+ import |print\(|if __name__|return\b|"
    r"for \w+ in .*:|while .*:|#include\b|function \w+\()",
    re.M,
)
_DESK = re.compile(
    r"\b(?:open|opens|opening|launch|start|fire up|use|switch to|go to|close)\b[^.;:]{0,40}?"
    r"\b(?:editor|ide|terminal|command prompt|vs ?code|visual studio|"
    r"notepad(?:\+\+)?|vim|emacs|nano|pycharm|file explorer|finder)\b",
    re.I,
)
_NAVIGATE = re.compile(
    r"\bnavigate\s+(?:to|into|in)\b|\bcd\s+(?:in)?to\b|"
    r"\bchange (?:the |your |into the )?(?:working |current )?director(?:y|ies)\b",
    re.I,
)
_THINKING = re.compile(
    r"^\W*(?:\d+[.)]\s*)?(?:(?:first|then|next|now),?\s+)?"
    r"(?:(?:choose|pick|decide|select)\b(?:\s+(?:on|upon))?\s+(?:(?:a|an|the|which|what|"
    r"how|whether|programming|suitable|right|best)\b\s*)*(?:language|framework|library|"
    r"approach|design|structure|name|format|technology|tool|editor|ide|how|what|which|"
    r"whether)|think|design|plan|consider|brainstorm|understand|research|learn|outline|"
    r"imagine|analy[sz]e)\b",
    re.I,
)
_SAVE = re.compile(
    r"^\W*(?:save|close)\s+(?:the\s+|your\s+|all\s+)?(?:file|files|changes|work|script|"
    r"program|editor|it)\b(?!\s+(?:to|in|into)\b)",
    re.I,
)
# A first word such as create_file or run_command: a verb, an underscore, a name (a file's
# or a function's name, `rps_game.py`, `check_winner`, is no tool's).
_FIRST_TOOL = re.compile(
    r"^\W*((?:create|make|write|read|run|exec|execute|open|save|edit|modify|update|delete|"
    r"remove|list|search|find|append|move|copy|rename|mkdir|touch|insert|replace|mark|git|"
    r"shell|bash|python)(?:_[a-z0-9]+)+)\b(?![./\\-])"
)
_NAMED_TOOL = re.compile(r"\b([a-z][a-z0-9]*(?:_[a-z0-9]+)+)`?\s+tool\b")
_MKDIR = re.compile(
    r"^\W*(?:(?:create|make|set up)\s+(?:(?:a|an|the|new|empty|package|project|source|sub|"
    r"python)\s+)*(?:['\"`]?[\w./-]+['\"`]?\s+)?(?:directory|folder|dir)\b|"
    r"(?:mkdir|create_dir|make_dir|makedirs|create_directory|create_folder)\b)",
    re.I,
)
# `list_dir` alone, a run of mkdir or cd and nothing else, a read of a stored output.
_NO_STEP = re.compile(
    r"^\W*(?:read_output\b.*|list_dir(?:\s+['\"`]?\.?/?['\"`]?)?|(?:run_cmd\s+|run\s+)?['\"`]?"
    r"(?:mkdir(?:\s+-p)?|cd)\s+['\"`]?[\w./-]+['\"`]?)\W*$",
    re.I,
)
# Code quoted in a subtask ("write_file mathx/add.py with the content 'def add(a, b):
# return a + b'"), from its opening quote to the end.
_QUOTED_CODE = re.compile(
    r"""(['"`])\s*((?:def |class |import \w|from [\w.]+ import |print\(|return |raise ).*)""",
    re.S,
)
_MORE = re.compile(r"\b(?:and|then|with|containing|inside|holding)\b", re.I)
# A lead-in to content the step does not hold: "write_file mathx/add.py with the following
# content:", the 1.5B's mathx plan six times, the code left for the write.
_LEAD_IN = re.compile(
    r"\s*,?\s*(?:(?:with|containing|using|holding)\s+the\s+following(?:\s+(?:content|"
    r"contents|code|lines|text))?|as\s+follows)\s*:?\s*$",
    re.I,
)

EDITOR = "opens an editor, IDE or terminal: files are written with write_file, run with run_cmd"
NAVIGATE = "navigates: every tool already works in the workspace folder"
THINKING = "is thinking, not a step: plan what to write or to run"
SAVE = "saving is part of writing the file, not a step"
CODE = "holds code: name the file and what it must do; the code goes into write_file"
BROKEN_CODE = (
    "holds code that does not compile (cut off, or statements one line cannot hold): name "
    "the file and what it must do; the code goes into write_file"
)
EMPTY = "is empty"
NO_WORDS = "has no words: name the file to write or the command to run"
_WORD = re.compile(r"[^\W\d_]{2}")


@dataclass
class Checked:
    """A plan's tasks as they will be used, and what is wrong with it (empty: usable)."""

    tasks: list[dict[str, Any]]
    problems: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)  # subtasks that only made a folder
    packaged: str = ""  # the package whose module NAME.py became NAME/__init__.py


def folder_only(text: str) -> bool:
    """A subtask that only makes a folder (it names no file and does nothing else), goes
    into one, or lists the workspace: no step of a plan. Qwen2.5-Coder-1.5B's mathx plan
    held 44 subtasks, 18 of them `list_dir`, `run_cmd 'mkdir mathx'` and `run_cmd 'cd
    mathx'`. Nor is reading a stored output: its id comes from the run that stored it,
    and that run shows its output (the 1.5B's rps replan, "run_cmd rps_game.py" then
    "read_output rps_game.py": it sent read_output(id=1), of nothing, until three strikes,
    and the goal failed with a game that worked)."""
    if _NO_STEP.match(text):
        return True
    return bool(_MKDIR.search(text)) and not _FILE.search(text) and not _MORE.search(text)


def subtask_problem(text: str, tools: Collection[str]) -> str:
    """What makes this subtask something no tool does, or "" when it is a step."""
    line = text.strip()
    if not line:
        return EMPTY
    if not _WORD.search(line):
        return NO_WORDS
    if _FENCE.search(line) or len(_CODE_LINE.findall(line)) >= 2 or _one_code_line(line):
        return CODE
    if _broken_quote(line):
        return BROKEN_CODE
    if len(line) > MAX_CHARS or line.count("\n") >= MAX_LINES:
        return f"is {len(line)} characters long: one short line says a step"
    if unknown := _unknown_tool(line, tools):
        return f"names the tool {unknown}, which this run does not have"

    for pattern, problem in ((_DESK, EDITOR), (_NAVIGATE, NAVIGATE), (_SAVE, SAVE)):
        if pattern.search(line):
            return problem
    if _THINKING.search(line) and not _FILE.search(line):
        return THINKING
    return ""


# Standard modules a workspace file may well be named after (the test package, code).
_NAMES_OF_FILES = {"test", "code", "this", "main", "types", "token", "site"}


def shadowed(path: str) -> str:
    """The standard module a Python file at `path` would hide from the programs of its
    folder (`argparse.py`: argparse), or ""."""
    name = path.rsplit("/", 1)[-1]
    if not name.endswith(".py"):
        return ""
    stem = name[:-3]
    return stem if stem in sys.stdlib_module_names and stem not in _NAMES_OF_FILES else ""


def _hides(text: str, goal: str) -> str:
    """What is wrong with a step that writes a file named after a standard module the
    goal does not name (the 1.5B's wordcount plan: "write_file argparse.py with the
    argparse module", and its wordcount.py then imported that file)."""
    module = shadowed(written_file(text))
    if not module or re.search(rf"(?<![\w.]){module}\.py\b", goal):
        return ""
    return (
        f"writes {module}.py, which would hide Python's own module {module} from every "
        f"program in its folder: a program imports {module}, it does not write it"
    )


def _one_code_line(line: str) -> bool:
    """A step that is nothing but a line of Python (`print('Hello, World!')`): a small
    model's replan split "write hello.py with the following content:" from its code."""
    if "\n" in line or len(line) > MAX_CHARS or not _CODE_LINE.match(line):
        return False
    try:
        compile(line, "<subtask>", "exec")  # parsed only, never run
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _broken_quote(line: str) -> bool:
    """Code quoted in a step that Python would not compile. Qwen2.5-Coder-1.5B's mathx
    plan ended "write_file mathx/divide.py with the content 'def divide(a, b): if b == 0:
    raise ValueError(" (its JSON string ended at the code's own quote), and the model
    wrote exactly that, then wrote it again until three strikes."""
    found = _QUOTED_CODE.search(line)
    if found is None:
        return False
    code = found[2].rstrip()
    if code.endswith(found[1]):
        code = code[: -len(found[1])]
    try:
        compile(code, "<subtask>", "exec")  # parsed only, never run
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return True
    return False


def _unknown_tool(line: str, tools: Collection[str]) -> str:
    named = [m.group(1) for m in (_FIRST_TOOL.match(line), *_NAMED_TOOL.finditer(line)) if m]
    return next((name for name in named if name not in tools), "")


def check(tasks: list[dict[str, Any]], goal: str, tools: Collection[str]) -> Checked:
    """The plan without its folder-only subtasks, and every problem of what is left."""
    kept: list[dict[str, Any]] = []
    found = Checked(kept)
    package = package_name(goal)
    for task in tasks:
        subtasks = []
        for text in task["subtasks"]:
            if package and (moved := into_package(text, package, goal)) != text:
                found.packaged, text = package, moved
            text = as_print(as_edit(runnable(_LEAD_IN.sub("", text) or text), goal))
            if folder_only(text):
                found.dropped.append(text)
            else:
                subtasks.append(text)
        if subtasks:
            kept.append({"description": task["description"], "subtasks": subtasks})
    if not kept:
        found.problems.append(
            "the plan only makes folders: write_file makes the folders of the file it "
            "writes, so plan the files"
        )
    for text in (s for task in kept for s in task["subtasks"]):
        if problem := subtask_problem(text, tools) or _hides(text, goal):
            found.problems.append(f"subtask {_quoted(text)} {problem}")
    copies = sum(same(s, goal) for task in kept for s in task["subtasks"])
    if copies > 1:
        found.problems.append(
            f"{copies} subtasks repeat the goal's whole text: plan its steps, or one task "
            "whose one subtask is the goal"
        )
    found.tasks = compact(kept, goal)
    return found


def code_left_out(checked: Checked, goal: str, tools: Collection[str]) -> Checked:
    """The checked plan with each write step that holds code as the write it stands for
    (`plancode.as_write`), checked again: the last mend of a plan the model's repair left
    with code in its steps, before the goal as one task would replace it all. Qwen2.5-Coder-
    1.5B's mathx plan and its repair each quoted the code of divide.py and of the tests in
    their steps; the goal as one task then spent 12 of the run's 20 rounds on folders,
    `mathx/main.py` and edits that changed nothing."""
    tasks = []
    for task in checked.tasks:
        steps: list[str] = []
        for text in task["subtasks"]:
            fence = BARE_FENCE.fullmatch(text) is not None
            if subtask_problem(text, tools) not in (CODE, BROKEN_CODE) and not fence:
                steps.append(text)
            elif write := as_write(text):
                steps.append(write)
            elif not (steps and written_file(steps[-1])):
                steps.append(text)  # code after a write is that write's (a replan's
                # "from . import add, subtract, multiply, divide" after its init's write)
        if steps:
            tasks.append({"description": task["description"], "subtasks": steps})
    return check(tasks, goal, tools)


def _quoted(text: str, limit: int = 80) -> str:
    line = " ".join(text.split())
    return f'"{line if len(line) <= limit else line[: limit - 1] + "…"}"'


def one_file(goal: str) -> str:
    """The file a goal is about when it names exactly one and nothing suggests more
    (tests, a package, folders); "" otherwise."""
    named = {m.group().rstrip(".") for m in _FILE.finditer(goal)}
    return named.pop() if len(named) == 1 and not MANY_FILES.search(goal) else ""


def one_task(tasks: list[dict[str, Any]], goal: str) -> dict[str, Any]:
    """The plan's subtasks, in order, as one task that is the goal (at most 8 of them)."""
    steps = [s for task in tasks for s in task["subtasks"]]
    return {"description": goal, "subtasks": steps[:MAX_STEPS]}
