"""What a Python script does when run, read from its source without running it: whether
it does anything at all (a call at its top level or a `__main__` block), whether it
reads input, and which of its functions are stubs (`pass`, `...`). Small models write
`def game_logic(a, b):\n    # Implement the game logic here\n    pass` and call it done,
or define every function and never call one."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

from localagent.system import safefs
from localagent.tools import parsedargs

MAX_SOURCE_BYTES = 200_000
# pytest's own names for a file of tests (a path with '/' or, from a Windows traceback, '\')
TEST_FILE = re.compile(r"(?:^|[/\\])(?:test_[^/\\]*|[^/\\]*_test)\.py$")


@dataclass(frozen=True)
class Script:
    acts: bool  # a call at its top level, or a `__main__` block
    reads_input: bool  # input() or sys.stdin anywhere
    stubs: list[str] = field(default_factory=list)  # functions whose body is only pass/...
    entry: str = ""  # the function a script that calls nothing would call (see `_entry`)
    tail: str = ""  # its last lines, found once in it: where a call to `entry` would go
    prompts: list[str] = field(default_factory=list)  # input()'s prompts, their fixed text
    defines: list[str] = field(default_factory=list)  # its top-level functions and classes
    # Calls whose result is dropped: (function, the call's line) for `play()` at the top
    # level or in the `__main__` block, where play returns a value and prints nothing.
    dropped: list[tuple[str, str]] = field(default_factory=list)
    quiet: frozenset[str] = frozenset()  # functions that return a value and print nothing
    stdin: bool = False  # sys.stdin anywhere
    # It may read a file it is given: open(), read_text(), FileType, read_csv(), json.load(),
    # or a module that takes paths (os, pathlib, fileinput, shutil, subprocess, ...).
    opens: bool = False
    tests: bool = False  # a function or method pytest and unittest run (named test*)
    # For an entry that takes the parsed command line (`def main(args):`), the `__main__`
    # block that parses it and calls the entry (`parsedargs`); "" for any other.
    parsing: str = ""


def read(root: Path, path: str) -> Script | None:
    """What the Python file at `path` does, or None when it cannot be read (outside the
    workspace, too long) or does not parse."""
    try:
        source = safefs.read_inside(root, root / path, MAX_SOURCE_BYTES + 1)
    except (OSError, safefs.UnsafeFile):
        return None
    return None if len(source) > MAX_SOURCE_BYTES else parse(source)


def defines(root: Path, path: str) -> list[str]:
    """The top-level functions and classes of the Python file at `path` ([] for one that
    is not Python, cannot be read or does not parse)."""
    if not path.lower().endswith((".py", ".pyw")):
        return []
    script = read(root, path)
    return script.defines if script is not None else []


def parse(source: str | bytes) -> Script | None:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    reads = stdin = opens = False
    stubs: list[str] = []
    prompts: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id == "input":
                reads = True
                prompts += filter(None, [_prompt(node)])
            opens = opens or node.func.id == "open"
        elif isinstance(node, ast.Attribute) and node.attr == "stdin":
            reads = stdin = True
        elif _opens(node):
            opens = True
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _stub(node):
            stubs.append(node.name)
    acts = any(
        (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call))
        or (isinstance(node, ast.If) and "__main__" in ast.unparse(node.test))
        for node in tree.body
    )
    entry = "" if acts else _entry(tree, stubs)
    parsing = ""
    if not acts and not entry and (parsed := parsedargs.entry(tree, ENTRY_NAMES)) is not None:
        entry, parsing = parsed[0], parsedargs.block(parsed, parsedargs.imports_argparse(tree))
    text = source if isinstance(source, str) else source.decode("utf-8", "replace")
    defines = [
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    ]
    quiet = frozenset(_quiet(tree))
    tail = _tail(text) if entry else ""
    dropped = _dropped(tree, text, quiet)
    return Script(
        acts, reads, stubs, entry, tail, prompts, defines, dropped, quiet, stdin, opens,
        tests=_tests(tree), parsing=parsing,
    )  # fmt: skip


def _tests(tree: ast.Module) -> bool:
    """Whether the module defines a test: a function named test*, at its top level or in
    a class (pytest's and unittest's default names)."""

    def named(body: list[ast.stmt]) -> bool:
        return any(
            isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name.startswith("test")
            for n in body
        )

    return named(tree.body) or any(isinstance(n, ast.ClassDef) and named(n.body) for n in tree.body)


# Modules a script may hand a path to, or read a file with, without open() of its own.
_PATH_MODULES = frozenset(
    (
        *("fileinput", "os", "shutil", "subprocess", "pathlib", "glob", "zipfile", "tarfile"),
        *("sqlite3", "csv", "json", "io", "codecs", "mmap", "gzip", "bz2", "lzma", "configparser"),
    )
)


def _opens(node: ast.AST) -> bool:
    """Whether the node opens or reads a file (`Path.open`, `read_text`, `FileType`,
    `pd.read_csv`, `json.load`, ...) or uses a module that takes paths (`os.path.getsize`,
    `from pathlib import Path`); `import os` left unused is none."""
    if isinstance(node, ast.ImportFrom):
        return (node.module or "").split(".")[0] in _PATH_MODULES
    if not isinstance(node, ast.Attribute):
        return False
    if isinstance(node.value, ast.Name) and node.value.id in _PATH_MODULES:
        return True
    attr = node.attr
    return (
        attr in ("open", "FileType") or attr.startswith(("read_", "load")) or attr.endswith("load")
    )


def _quiet(tree: ast.Module) -> list[str]:
    """Top-level functions that return a value and print nothing (no print or write call
    in them): calling one as a statement shows nothing."""
    found = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        inner = list(ast.walk(node))
        returns = any(
            isinstance(n, ast.Return)
            and n.value is not None
            and not (isinstance(n.value, ast.Constant) and n.value.value is None)
            for n in inner
        )
        shows = any(
            isinstance(n, ast.Call)
            and (
                (isinstance(n.func, ast.Name) and n.func.id in ("print", "exit"))
                or (isinstance(n.func, ast.Attribute) and n.func.attr in ("write", "exit"))
            )
            for n in inner
        )
        if returns and not shows:
            found.append(node.name)
    return found


def _dropped(tree: ast.Module, text: str, quiet: frozenset[str]) -> list[tuple[str, str]]:
    """The statements `name()` at the top level or in the `__main__` block that call one of
    the `quiet` functions, with their line (as written, found once in the file)."""
    body = list(tree.body)
    for node in tree.body:
        if isinstance(node, ast.If) and "__main__" in ast.unparse(node.test):
            body += node.body
    lines = text.splitlines()
    found = []
    for node in body:
        call = node.value if isinstance(node, ast.Expr) else None
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
            continue
        if call.func.id not in quiet or node.lineno != node.end_lineno:
            continue
        line = lines[node.lineno - 1] if node.lineno <= len(lines) else ""
        # `play()` is in `def play():` too; "play()\n" is not
        unique = [old for old in (line, line + "\n") if text.count(old) == 1]
        if line.strip() and unique:
            found.append((call.func.id, unique[0]))
    return found


def _prompt(call: ast.Call) -> str:
    """The text `input(...)` shows, as far as the source fixes it (an f-string's first
    literal part); "" when nothing is fixed."""
    first = call.args[0] if call.args else None
    if isinstance(first, ast.JoinedStr) and first.values:
        first = first.values[0]
    return first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else ""


def call_entry(path: str, script: Script) -> dict[str, object] | None:
    """The replace_in_file call that makes `script` call its entry when it runs."""
    if not script.entry or not script.tail:
        return None
    call = f"{script.entry}()"
    # A function that returns its result and prints nothing shows it only when printed.
    shown = f"print({call})" if script.entry in script.quiet else call
    block = f'\n\n\nif __name__ == "__main__":\n    {shown}'
    if script.parsing:
        block = f"\n\n\n{script.parsing}"
    arguments = {"path": path, "old": script.tail, "new": script.tail + block}
    return {"name": "replace_in_file", "arguments": arguments}


def _tail(text: str, most: int = 4) -> str:
    """The fewest last lines (at most `most`) that occur only once in `text`."""
    lines = text.rstrip().splitlines()
    for count in range(1, min(most, len(lines)) + 1):
        tail = "\n".join(lines[-count:])
        if tail.strip() and text.count(tail) == 1:
            return tail
    return ""


# What a program's starting function is called, most likely first.
ENTRY_NAMES = ("main", "play", "play_game", "run", "run_game", "start", "game")


def _entry(tree: ast.Module, stubs: list[str]) -> str:
    """The top-level function to call when the script runs: one of ENTRY_NAMES, else the
    only one there is; only a function that needs no argument and is not a stub."""
    callable_now = [
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
        and node.name not in stubs
        and not node.decorator_list
        and not node.args.posonlyargs
        and len(node.args.args) == len(node.args.defaults)
        and all(default is not None for default in node.args.kw_defaults)
    ]
    named = [name for name in ENTRY_NAMES if name in callable_now]
    return named[0] if named else (callable_now[0] if len(callable_now) == 1 else "")


def _stub(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A function whose body is nothing but `pass` or `...` (after a docstring), and not
    decorated (an @abstractmethod or an @overload is meant to be empty), nor a dunder
    (`def __init__(self): pass` does nothing, as meant; Qwen2.5-Coder-1.5B put one in
    mathx/__init__.py, was told to write its code, and rewrote the file unchanged)."""
    if function.name.startswith("__") and function.name.endswith("__"):
        return False
    body = function.body
    first = body[0] if body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and len(body) > 1:
        body = body[1:] if isinstance(first.value.value, str) else body
    return not function.decorator_list and all(
        isinstance(s, ast.Pass)
        or (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and s.value.value is ...)
        for s in body
    )
