"""What a subtask asks, read from its text: to write one named file, to run one program
or the tests. The loop ends such a subtask with that write or that run (`writedone`,
`rundone`, `handback`); the plan check reads the files a step writes."""

from __future__ import annotations

import re

from localagent.verify import evidence

FILE = re.compile(r"[\w-]+\.[A-Za-z][A-Za-z0-9]{0,5}\b")  # a name with an extension
MAX_STEPS = 8  # subtasks of a task, as the plan check allows
MANY_FILES = re.compile(
    r"\b(?:tests?|pytest|package|modules|files|project|director(?:y|ies)|folders?)\b", re.I
)


# A write subtask: it starts by saying to write or create something ("write_file app.py",
# "Create hello.py that prints hi") and asks for nothing that a write does not do.
_WRITES = re.compile(
    r"^\W*(?:\d+[.)]\s*)?(?:write_file|create_file|save_file|write|create|make|save|generate)\b",
    re.I,
)
_MORE_THAN_WRITING = re.compile(
    r"\b(?:run|runs|running|execute|executes|testing|check|verify|commit|"
    # pytest the program, not the kind of tests ("with the pytest tests", the 1.5B's mathx)
    r"pytest(?!\s+(?:tests?|test cases|cases|test functions|functions|style)\b)|"
    r"install|read|fix|update|edit|modify|append|and then)\b"
    # "test" as a verb ("... and test it"), not a noun ("with the test cases", "Write tests")
    r"|\b(?:and|then|to|also)\s+test\b|\btest\s+(?:it|them|that|whether)\b",
    re.I,
)


def written_file(text: str) -> str:
    """The one file a write subtask writes: the subtask says to write or create exactly
    one named file and asks for nothing else (no run, no test, no edit); "" otherwise.
    A step that opens with the write's own call (`write_file shapes.py to update the
    code ...`) says what that write changes: its words of changing are the write's."""
    named = evidence.named_files(text)
    words = _plain(text)
    more = _MORE_THAN_WRITING.search(words)
    if _TOOL_WRITE.match(text):
        more = next(
            (m for m in _MORE_THAN_WRITING.finditer(words) if not _CHANGING.match(m[0])), None
        )
    if not _WRITES.match(text) or more:
        return ""
    called = [c for c in (m.strip(".") for m in _CALLED.findall(text)) if c in named]
    if len(named) > 1 and called:
        # "Write a named file named 'area.py' in the same folder as shapes.py." (the 1.5B's
        # refactor plan): area.py is written; it wrote it three times unchanged, blocked.
        return called[0]
    return named[0] if len(named) == 1 else ""


# A step that opens with the write's call and file, and the words that say what it changes:
# "write_file shapes.py to update the code to use the new area function, and
# replace_in_file shapes.py to replace the formulas with the new function" (the 1.5B's
# refactor plan on the CPU, verbatim). Ended by no write, its write was sent until blocked.
_TOOL_WRITE = re.compile(r"^\W*(?:\d+[.)]\s*)?write_file\s+\S", re.I)
_CHANGING = re.compile(r"(?:fix|update|edit|modify|append)$", re.I)


# The file a write names as the one it makes: "a file named 'area.py'", "called x.py".
_CALLED = re.compile(r"\b(?:named|called)\s+['\"`]?([\w./-]+)", re.I)
_QUOTED = re.compile(r"'[^'\n]*'|`[^`\n]*`")


def _plain(text: str) -> str:
    """The words that say what a subtask does: not its files (tests/test_mathx.py names a
    file, not a test run), nor what it quotes (the error a write must stop raising:
    "NameError: name 'pytest' is not defined", or `import pytest`)."""
    return _QUOTED.sub(" ", FILE.sub(" ", text))


# An edit subtask: "replace_in_file stats.py to fix the bug", "Fix the bug in stats.py".
_EDITS = re.compile(
    r"^\W*(?:\d+[.)]\s*)?(?:replace_in_file|edit|fix|modify|update|change|correct)\b", re.I
)
_MORE_THAN_EDITING = re.compile(
    r"\b(?:run|runs|running|execute|executes|pytest|install|commit|and then|and test)\b", re.I
)


def edited_file(text: str) -> str:
    """The one file an edit subtask changes: it says to edit or fix exactly one named file
    and asks for no run; "" otherwise. "Move the formulas into one function" moves code,
    not files: every file the text names counts (the 1.5B's refactor step, verbatim:
    "replace_in_file shapes.py to move the repeated area formulas into a single function
    area(kind, size)")."""
    named = evidence.file_names(text)
    words = _plain(text)
    if not _EDITS.match(text) or _MORE_THAN_EDITING.search(words):
        return ""
    return named[0] if len(named) == 1 else ""


def writes_unnamed(text: str) -> bool:
    """A write subtask that names no file ("Write a hello world script"): one thing to
    write, nothing else asked, no file, package or tests named."""
    return bool(
        _WRITES.match(text)
        and not _MORE_THAN_WRITING.search(text)
        and not MANY_FILES.search(text)
        and not evidence.named_files(text)
    )


# A run subtask: it starts by saying to run, execute or test something ("run python
# hello_world.py", "Run the tests", "Execute game.py") and asks for nothing else.
_RUNS = re.compile(r"^\W*(?:\d+[.)]\s*)?(?:run_cmd|run|execute|exec|test)\b", re.I)
_MORE_THAN_RUNNING = re.compile(
    r"\b(?:and|then|write|create|make|fix|edit|modify|update|change|add|install|commit|"
    r"until|if|with input|stdin|enter|type|play|read|prints?|outputs?|shows?|displays?|"
    r"returns?|expect\w*)\b",
    re.I,
)
# A command line's option (`--fix`, `-k`): no word of what the subtask does.
_OPTION_WORD = re.compile(r"(?<!\S)--?[A-Za-z][\w-]*")
_TESTS = re.compile(r"\b(?:tests|test suite|unit tests?|pytest|unittest)\b", re.I)
TESTS = "the tests"  # what `ran_by` names for a subtask a test runner does
_RUFF = re.compile(r"\bruff\b", re.I)
_RUNNER = re.compile(r"\b(?:pytest|unittest)\b", re.I)
LINT = "ruff"  # what `ran_by` names for a subtask ruff does


# Why a run runs, which asks for nothing more than the run: "run python wordcount.py
# wordcount.py to check if the code is correct" (the 1.5B's wordcount plan on the CPU: its
# run printed the counts, the step went on, and the model ran the next step's command
# until three strikes). Its "if" is the check's, not a condition on the run.
_PURPOSE = re.compile(
    r"\bto\s+(?:check|see|verify|test|confirm|ensure|determine|find out)\s+(?:if|whether)\b"
    # "to ensure it works as expected": no output the run must show (the 1.5B's wordcount
    # plan on the CPU, its run never the step's end, run until three strikes)
    r"|\bto\s+(?:check|see|verify|test|confirm|ensure|make\s+sure)\s+(?:that\s+)?"
    r"(?:it|the\s+\w+|everything)\s+works(?:\s+(?:as\s+expected|correctly|properly|fine))?",
    re.I,
)
# The options a run step names for its program ("... with the --lines option").
OPTION = re.compile(r"(?<![\w-])--[A-Za-z][\w-]*")


_PYTHON_RUN = re.compile(r"\bpython3?\s+(?:-u\s+)?([\w./-]+\.py)\b")


def ran_by(text: str) -> str:
    """What a run subtask runs: `TESTS` for the tests, `LINT` for ruff, or the one
    program it names; "" for a subtask that is not one run (it also writes, fixes, plays,
    or names more)."""
    said = _OPTION_WORD.sub(" ", _PURPOSE.sub(" ", text))  # `--fix` is an option, no fix
    if not _RUNS.match(text) or _MORE_THAN_RUNNING.search(_plain(said)):
        return ""
    if _RUFF.search(text) and not _RUNNER.search(text):
        # The 1.5B's step "run ruff check to ensure the code is clean", on the CPU: its
        # `ruff check mathx` passed twice, and its third run was a strike, the step failed.
        # Ruff on the tests is ruff: "run_cmd ruff check tests/test_mathx.py" (the H200)
        # was taken for a test run, and its two clean runs never ended the step.
        return LINT
    if _TESTS.search(text):
        return TESTS
    named = evidence.named_files(text)
    if len(named) > 1 and (script := _PYTHON_RUN.search(text)) and script[1] in named:
        # "run python wordcount.py sample.txt" (the 1.5B's replan): the program, given a
        # file; its successful run was not the step's end, and it ran it until strikes.
        return script[1]
    return named[0] if len(named) == 1 else ""


# A run to see what fails, before a fix ("run python -m pytest to see what fails"): its
# run is the work, whatever the tests say.
_LOOK = re.compile(r"\bto (?:see|find out|show) (?:what|which|why|where|how)\b.*\bfail", re.I)


def checkers(text: str) -> set[str]:
    """The checkers a text names: `TESTS` (the tests, pytest, unittest) and `LINT` (ruff)."""
    return {name for name, found in ((TESTS, _TESTS), (LINT, _RUFF)) if found.search(text)}


def names_tests(text: str) -> bool:
    """Whether the text names tests or a test runner."""
    return bool(_TESTS.search(text))


def looks(text: str) -> bool:
    """Whether a run subtask runs the tests to see what fails (not to make them pass)."""
    return ran_by(text) == TESTS and bool(_LOOK.search(text))


# A read subtask: it says to read one named file ("read_file stats.py", "Read the file
# stats.py") and nothing more.
# What the read is for may follow: "read_file shapes.py to identify the area formulas"
# (the 1.5B's refactor plan on the CPU, verbatim: not taken for a read step, its read ended
# nothing, and it read the file until blocked, through two replans).
_READS = re.compile(
    r"^\W*(?:\d+[.)]\s*)?(?:read_file|read|open|view|inspect|look at)\b(?:\s+the)?"
    r"(?:\s+(?:file|code|contents?|source)(?:\s+of)?)?\s+([\w./\\-]+?)\s*[.:]?"
    r"(?:\s+to\s+(?:identify|find|locate|see|understand|learn|know|check|review)\b(.*))?\s*$",
    re.I,
)


def read_file_of(text: str) -> str:
    """The one file a read subtask reads ("" for a subtask that asks more than a read)."""
    found = _READS.match(text)
    if found is not None and _MORE.search(found[2] or ""):
        return ""
    named = evidence.named_files(text) if found else []
    return named[0] if len(named) == 1 and named[0] == evidence.norm(found[1].rstrip(".")) else ""


# A search subtask: it says to search one named file, at most with what to look for
# ("search_files shapes.py to find the area formulas", "Search shapes.py for def area"),
# and to do nothing more with it.
_SEARCHES = re.compile(
    r"^\W*(?:\d+[.)]\s*)?(?:search_files|search|grep)\b(?:\s+(?:in|through))?(?:\s+the)?"
    r"(?:\s+file)?\s+([\w./\\-]+)\s*(?:(?:to\s+(?:find|locate|look\s+for|see)|for)\b(.*))?$",
    re.I,
)
_MORE = re.compile(
    r"\b(?:and|then|write\w*|replace\w*|edit\w*|change|update|move|fix|run|create|add|"
    r"delete|remove|rename|extract|copy)\b",
    re.I,
)


def search_of(text: str) -> str:
    """The one file a search subtask searches ("" for a subtask that asks more)."""
    found = _SEARCHES.match(text.strip())
    if found is None or _MORE.search(found[2] or ""):
        return ""
    named = evidence.named_files(text)
    return named[0] if len(named) == 1 and named[0] == evidence.norm(found[1].rstrip(".")) else ""


# "run pytest tests/test_mathx.py": pytest started as a program cannot import the
# workspace's package (the 1.5B's mathx plans, 13 rounds of 16 runs); "run ruff x.py":
# ruff checks with its check command (it sent `ruff tests/test_mathx.py` five times).
# `pytest` run as a program, alone, on files or before what the step is for ("run pytest
# to ensure the tests pass"): not a word of a sentence about pytest.
_BARE_PYTEST = re.compile(
    r"(?<![\w.-])(?<!-m )pytest(?=(?:\s+-[\w-]+)*(?:\s+[\w./\\-]+\.py\b|\s*$|"
    r"\s+(?:to|so that|and check|and make sure)\b))",
    re.I,
)
_TOUCH = re.compile(r"^\W*run(?:_cmd)?\s+touch\s+['\"`]?([\w./\\-]+\.\w+)['\"`]?\s*\.?\s*$", re.I)
_BARE_RUFF = re.compile(r"(?<![\w.-])ruff(?=\s+(?!check\b|format\b|rule\b)[\w./\\-]+\.py\b)")


# "run python greet.py NAME prints Hello, NAME! and exits 0": the 1.5B's plans copied
# the goal's clauses into its run steps, then ran the whole sentence as the command.
_SAYS = re.compile(
    r"^(\W*run(?:_cmd)?\s+python3?\s+[\w./\\-]+\.py\b.*?)\s+(?:prints?|outputs?|shows?|"
    r"displays?|returns?|exits?|should|must|(?:without|with\s+no)\s+(?:any\s+)?arguments?)\b.*$",
    re.I,
)


def runnable(text: str) -> str:
    """A run step's command as it works: `python -m pytest`, `ruff check`, a program's
    run without what the goal says it does, and `touch FILE` as the write of FILE."""
    if not ran_by(text) and not text.lower().startswith(("run ", "run_cmd ")):
        return text
    if touched := _TOUCH.match(text):
        # The 1.5B's mathx replan on the CPU, verbatim: "run touch mathx/__init__.py",
        # "run touch mathx/add.py", ...: touch is no command a run may use, and an empty
        # file is not the code the step is for.
        return f"write_file {touched[1]} with its code"
    text = _SAYS.sub(r"\1", text, count=1)
    text = _BARE_PYTEST.sub("python -m pytest", text, count=1)
    return _BARE_RUFF.sub("ruff check", text, count=1)


# A goal to fix something: "python -m pytest fails ...: fix the bug in stats.py".
FIX = re.compile(r"\b(?:fix|fixes|bug|bugs|fails|failing|broken)\b", re.I)


def as_edit(text: str, goal: str) -> str:
    """A step that writes a file a goal to fix names, as the edit that fixes it: the
    1.5B planned "write_file stats.py" for "fix the bug in stats.py" (the CPU, today) and
    wrote a stub over it; written whole, the file's code is lost."""
    target = written_file(text) or write_to_fix(text) if FIX.search(goal) else ""
    if not target or target not in evidence.named_files(goal):
        return text
    return f"replace_in_file {target} to fix the bug"


def write_to_fix(text: str) -> str:
    """The one file a write step "to fix the bug" names (the 1.5B on the CPU, verbatim:
    "write_file stats.py to fix the bug", then a stub sent for it, refused, and a wrong
    edit of `mean` in a step no edit could end)."""
    named = evidence.file_names(text)
    words = FILE.sub(" ", text)
    if not _WRITES.match(text) or not FIX.search(words) or _MORE_THAN_EDITING.search(words):
        return ""
    return named[0] if len(named) == 1 else ""


def write_of(text: str) -> str:
    """The one file a write subtask writes, what else it says it does aside ("write_file
    shapes.py to move the area formulas into one function area(kind, size)")."""
    named = evidence.file_names(text)
    return named[0] if _WRITES.match(text) and len(named) == 1 else ""
