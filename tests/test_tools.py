from __future__ import annotations

import json
import os
import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import psutil
import pytest
from support import TREE_SCRIPT

from localagent.models.calls import function_tools
from localagent.system.proctree import MARKER_VARIABLE
from localagent.system.textcap import cap_text
from localagent.system.workspace_env import venv_program
from localagent.tools import (
    ToolContext,
    ToolResult,
    canonical_call,
    catalog,
    clean_stale_temps,
    command_argv,
    execute,
)

STATE = '{"schema_version": 1}'
NO_LINKS = "this account cannot create symbolic links (Windows without the privilege; Wine 8)"


def under_wine() -> bool:
    if sys.platform != "win32":
        return False
    import ctypes

    return hasattr(ctypes.WinDLL("ntdll"), "wine_get_version")  # type: ignore[attr-defined]


# Would leave a trace in the sentinel folder if anything ever ran it.
OUTSIDE_SCRIPT = (
    "from pathlib import Path\n(Path(__file__).parent / 'sentinel' / 'pwned').touch()\n"
)
LINKS = {
    "out_link": "sentinel/secret.txt",
    "out_dir": "sentinel",
    "dangling": "sentinel/new.txt",
    "ctx_link": "ws/.agent_context",
}


class Workspace:
    """A workspace folder with hostile neighbours: a sentinel folder, an outside script, links."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.root = base / "ws"
        self.root.mkdir()
        (self.root / ".agent_context").mkdir()
        (self.root / ".agent_context" / "state.json").write_text(STATE)
        (self.root / "script.py").write_text(
            "import sys\nprint('hello from script', *sys.argv[1:])\n"
            "sys.exit(int(sys.argv[1]) if len(sys.argv) > 1 else 0)\n"
        )
        (base / "sentinel").mkdir()
        (base / "sentinel" / "secret.txt").write_text("secret")
        (base / "outside.py").write_text(OUTSIDE_SCRIPT)
        self.links = True
        (self.root / "nested" / ".agent_context").mkdir(parents=True)
        (self.root / "nested" / ".agent_context" / "state.json").write_text(STATE)
        try:
            for name, target in LINKS.items():
                (self.root / name).symlink_to(base / target)
        except OSError:
            self.links = False
        self.ctx = ToolContext(self.root)

    def snapshot(self) -> list[tuple[str, int, int]]:
        """Everything outside the workspace plus the journal, which the model may not touch."""
        found = []
        for folder, dirs, files in os.walk(self.base):
            if Path(folder) == self.root:
                dirs[:] = [d for d in dirs if d in (".agent_context", "nested")]
                files[:] = []
            for name in files:
                path = Path(folder) / name
                info = path.lstat()
                found.append((str(path.relative_to(self.base)), info.st_size, info.st_mtime_ns))
        return sorted(found)

    def run(self, name: str, args: object) -> ToolResult:
        return execute(self.ctx, name, args)


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path)


def running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


# ------------------------------------------------------------------ schemas


def tool_names() -> list[str]:
    return catalog().names()


def tool_schemas() -> list[dict[str, Any]]:
    """The tools as the adapters send them."""
    return function_tools(catalog().specs())


def test_tool_names_are_the_contract() -> None:
    assert tool_names() == [
        "list_dir",
        "read_file",
        "search_files",
        "find_files",
        "write_file",
        "replace_in_file",
        "append_file",
        "delete_file",
        "move_file",
        "git_status",
        "git_diff",
        "git_log",
        "git_commit",
        "run_cmd",
        "read_output",
        "search_output",
        "delegate",
        "mark_subtask_complete",
    ]
    redone = {tool.name for tool in catalog() if tool.policy.resume == "redo"}
    assert redone == {"list_dir", "read_file", "write_file", "mark_subtask_complete"} | {
        "search_files",
        "find_files",
        "git_status",
        "git_diff",
        "git_log",
        "read_output",
        "search_output",
    }
    unchanging = {tool.name for tool in catalog() if not tool.policy.changes}
    assert {"search_files", "find_files"} <= unchanging
    checked = {tool.name for tool in catalog() if tool.policy.resume == "check"}
    assert checked == {"replace_in_file", "append_file", "delete_file", "move_file"}


def test_schemas_are_flat_with_exact_required_lists() -> None:
    expected = {
        "list_dir": ({"path": "string"}, []),
        "read_file": (
            {
                "path": "string",
                "max_bytes": "integer",
                "start_line": "integer",
                "end_line": "integer",
            },
            ["path"],
        ),
        "search_files": (
            {"pattern": "string", "path": "string", "glob": "string", "max_results": "integer"},
            ["pattern"],
        ),
        "find_files": ({"glob": "string", "path": "string"}, ["glob"]),
        "write_file": (
            {"path": "string", "content": "string", "create_dirs": "boolean"},
            ["path", "content"],
        ),
        "replace_in_file": (
            {"path": "string", "old": "string", "new": "string", "count": "integer"},
            ["path", "old", "new"],
        ),
        "append_file": ({"path": "string", "content": "string"}, ["path", "content"]),
        "delete_file": ({"path": "string"}, ["path"]),
        "move_file": ({"src": "string", "dst": "string"}, ["src", "dst"]),
        "git_status": ({}, []),
        "git_diff": ({"path": "string", "staged": "boolean"}, []),
        "git_log": ({"max_count": "integer"}, []),
        "git_commit": ({"message": "string", "paths": "string"}, ["message"]),
        "run_cmd": ({"cmd": "string", "timeout_sec": "integer", "stdin": "string"}, ["cmd"]),
        "read_output": (
            {"id": "integer", "start_line": "integer", "end_line": "integer"},
            ["id"],
        ),
        "search_output": ({"id": "integer", "pattern": "string"}, ["id", "pattern"]),
        "delegate": ({"agent": "string", "task": "string"}, ["agent", "task"]),
        "mark_subtask_complete": (
            {"success": "boolean", "reason": "string"},
            ["success", "reason"],
        ),
    }
    schemas = tool_schemas()
    assert [s["function"]["name"] for s in schemas] == list(expected)
    for schema in schemas:
        assert schema["type"] == "function"
        function = schema["function"]
        assert set(function) == {"name", "description", "parameters"}
        assert function["description"] and "\n" not in function["description"]
        parameters = function["parameters"]
        assert set(parameters) == {"type", "properties", "required"}
        assert parameters["type"] == "object"
        types, required = expected[function["name"]]
        assert {p: spec["type"] for p, spec in parameters["properties"].items()} == types
        assert parameters["required"] == required
        for spec in parameters["properties"].values():
            assert set(spec) == {"type", "description"}
            assert spec["description"]
        text = json.dumps(schema)
        for keyword in ("anyOf", "oneOf", "allOf", "$ref", "default", "null", "title"):
            assert keyword not in text


def test_schemas_are_fresh_copies() -> None:
    tool_schemas()[0]["function"]["name"] = "changed"
    assert tool_schemas()[0]["function"]["name"] == "list_dir"


# -------------------------------------------------------- argument handling


def test_arguments_may_be_a_json_string(ws: Workspace) -> None:
    ws.run("write_file", '{"path": "a.txt", "content": "x"}')
    assert ws.run("read_file", ' {"path": "a.txt"} ').text == "x"


@pytest.mark.parametrize("args", [None, "", "   ", "null", {}])
def test_no_arguments_means_defaults(ws: Workspace, args: object) -> None:
    result = ws.run("list_dir", args)
    assert result.ok
    assert result.text.startswith("./")


def test_null_for_an_optional_argument_means_its_default(ws: Workspace) -> None:
    assert ws.run("list_dir", {"path": None}).ok


@pytest.mark.parametrize(
    ("name", "args", "words"),
    [
        ("read_file", {}, ["missing required parameter 'path'", "read_file(path: string"]),
        # Two paths for one: no shape of it is obviously meant (one path in a list is).
        (
            "read_file",
            {"path": ["a.py", "b.py"]},
            ["'path'", "valid string", "max_bytes: integer = 20000"],
        ),
        ("read_file", {"path": "a", "mode": "r"}, ["unknown parameter 'mode'"]),
        ("run_cmd", {"cmd": "pytest", "timeout_sec": "soon"}, ["'timeout_sec'", "integer"]),
        ("write_file", {"path": "a"}, ["'content'", "write_file(path: string, content: string"]),
        ("mark_subtask_complete", {"success": "maybe", "reason": "x"}, ["'success'", "bool"]),
        ("read_file", "{not json", ["not valid json"]),
        ("read_file", "[1, 2]", ["json object", "list"]),
        ("read_file", 42, ["json object", "int"]),
    ],
)
def test_bad_arguments_become_observations(
    ws: Workspace, name: str, args: object, words: list[str]
) -> None:
    result = ws.run(name, args)
    assert not result.ok
    for word in words:
        assert word.lower() in result.text.lower()


def test_lenient_types_are_accepted(ws: Workspace) -> None:
    result = ws.run("mark_subtask_complete", {"success": "true", "reason": "done"})
    assert result.verdict == (True, "done")


# READ_FILE is read_file in another case: tests/test_tool_names.py.
@pytest.mark.parametrize("name", ["delete_everything", "", "format_disk", None])
def test_unknown_tool_names_the_available_tools(ws: Workspace, name: Any) -> None:
    result = ws.run(name, {})
    assert not result.ok
    assert "unknown tool" in result.text
    for known in tool_names():
        assert known in result.text


# ------------------------------------------------------------ happy paths


def test_writing_python_that_does_not_compile_says_where(ws: Workspace) -> None:
    bad = ws.run("write_file", {"path": "game.py", "content": "def play(:\n    return 1\n"})
    assert bad.ok and bad.changed  # the file is written: the model fixes it next
    assert "syntax error at line 1" in bad.text
    good = ws.run("write_file", {"path": "game.py", "content": "def play():\n    return 1\n"})
    assert "syntax error" not in good.text
    text = ws.run("write_file", {"path": "notes.txt", "content": "def play(:\n"})
    assert "syntax error" not in text.text


def test_a_syntax_error_shows_its_line_and_an_apostrophe_in_a_string_is_named(
    ws: Workspace,
) -> None:
    """Qwen2.5-Coder-1.5B wrote `return 'It's a tie!'` in every rock-paper-scissors game
    and, told only the line number, replaced other text until three strikes."""
    game = "def play(a, b):\n    if a == b:\n        return 'It's a tie!'\n    return a\n"
    bad = ws.run("write_file", {"path": "rps_game.py", "content": game})
    assert "syntax error at line 3" in bad.text
    assert "(the line: `return 'It's a tie!'`)" in bad.text
    assert "the apostrophe in It's ends the '...' string: use double quotes" in bad.text
    fix = bad.text.split("e.g. ", 1)[1].split("}}", 1)[0] + "}}"
    call = json.loads(fix)
    assert call["arguments"] == {
        "path": "rps_game.py",
        "old": "'It's a tie!'",
        "new": '"It\'s a tie!"',
    }
    fixed = ws.run("replace_in_file", call["arguments"])
    assert fixed.ok and "syntax error" not in fixed.text
    other = ws.run("write_file", {"path": "b.py", "content": "x = 'abc\n"})
    assert "(the line: `x = 'abc`)" in other.text and "apostrophe" not in other.text


# Qwen2.5-Coder-1.5B's first rock-paper-scissors file, verbatim: two syntax errors.
RPS_TWO_ERRORS = (
    "import random\n\nclass RPSGame:\n    def __init__(self):\n"
    "        self.choices = ['rock', 'paper', 'scissors']\n\n"
    "    def play(self, player1, player2):\n        result = random.choice(self.choices)\n"
    "        if result == player1:\n            return 'Player 1 wins!'\n"
    "        elif result == player2:\n            return 'Player 2 wins!'\n"
    "        else:\n            return 'It's a tie!'\n\nif __name__ == '__main__':\n"
    "    game = RPSGame()\n"
    "    player1 = input('Player 1, choose rock, paper, or scissors: ').lower()\n"
    "    player2 = input('Player 2, choose rock, paper, or scissors: ').lower()\n"
    "    print(game.play(player1, player2)}"
)


def _offered(text: str, after: str) -> dict[str, Any]:
    """The replace_in_file call a result offers after `after`, parsed."""
    call = json.loads(text.split(after, 1)[1].split("}}", 1)[0] + "}}")
    assert call["name"] == "replace_in_file"
    return call["arguments"]


def test_a_syntax_error_one_edit_fixes_comes_with_that_edit_and_a_repeated_fix_is_named(
    ws: Workspace,
) -> None:
    """The 1.5B copied the apostrophe fix, was told of the `}` next without a fix, and sent
    its first fix again five times ("old was not found"), resumed, until three strikes."""
    written = ws.run("write_file", {"path": "rps_game.py", "content": RPS_TWO_ERRORS})
    first = _offered(written.text, "e.g. ")
    fixed = ws.run("replace_in_file", first)
    assert "syntax error at line 20: closing parenthesis '}' does not match" in fixed.text
    second = _offered(fixed.text, "this fixes it: ")
    assert second == {
        "path": "rps_game.py",
        "old": "print(game.play(player1, player2)}",
        "new": "print(game.play(player1, player2))",
    }
    # The model's next call, verbatim: the first fix again, its old with `return`.
    again = ws.run(
        "replace_in_file",
        {"path": "rps_game.py", "old": "return 'It's a tie!'", "new": '"It\'s a tie!"'},
    )
    assert not again.ok
    assert "new already is (line 14)" in again.text and "made already" in again.text
    assert "'rps_game.py' now has a syntax error at line 20" in again.text
    assert _offered(again.text, "this fixes it: ") == second
    done = ws.run("replace_in_file", second)
    assert done.ok and "syntax error" not in done.text
    compile((ws.root / "rps_game.py").read_text(), "rps_game.py", "exec")


def test_an_edit_whose_new_text_is_the_offered_fix_makes_that_fix(ws: Workspace) -> None:
    """The 1.5B, shown the fix for `print(play(player1, player2)}`, sent the fixed line as
    both old and new (old not found), five times, until the round limit."""
    game = (
        "import random\n\ndef play(player1, player2):\n    if player1 == player2:\n"
        "        return \"It's a tie\"\n    return 'Player 1 wins'\n\ndef main():\n"
        "    player1 = input('Player 1, choose rock, paper, or scissors: ').lower()\n"
        "    player2 = input('Player 2, choose rock, paper, or scissors: ').lower()\n"
        "    print(play(player1, player2)}"
    )  # its lines as the model wrote them
    ws.run("write_file", {"path": "rps_game.py", "content": game})
    line = "print(play(player1, player2))"
    made = ws.run("replace_in_file", {"path": "rps_game.py", "old": line, "new": line})
    assert made.ok and made.changed
    assert "so that fix is made: `print(play(player1, player2)}` is now" in made.text
    assert "syntax error at" not in made.text
    compile((ws.root / "rps_game.py").read_text(), "rps_game.py", "exec")
    # Where new is not the fix, old must still match: nothing is guessed.
    ws.run("write_file", {"path": "b.py", "content": "print(1)}\n"})
    other = ws.run("replace_in_file", {"path": "b.py", "old": "print(2)", "new": "print(3)"})
    assert not other.ok and (ws.root / "b.py").read_text() == "print(1)}\n"


def test_a_rewrite_that_drops_what_other_files_import_is_refused(ws: Workspace) -> None:
    """The benchmark's fixtest folder, and the 1.5B's writes over its stats.py, verbatim:
    a game, and (8 runs of 12 on an H100, never having read the file) a stub."""
    stats = (
        "def mean(values):\n    return sum(values) / len(values)\n\n\n"
        "def median(values):\n    ordered = sorted(values)\n    middle = len(ordered) // 2\n"
        "    return ordered[middle]\n"
    )
    (ws.root / "stats.py").write_text(stats)
    (ws.root / "test_stats.py").write_text("from stats import mean, median\n")
    (ws.root / "report.py").write_text("import stats\n\nprint(stats.median([1]))\n")
    game = "import random\n\ndef game_logic():\n    # Game logic goes here\n    pass"
    refused = ws.run("write_file", {"path": "stats.py", "content": game})
    assert not refused.ok and refused.text.startswith(
        "not written: 'stats.py' defines mean, median, which report.py and test_stats.py "
        "import, and this content does not; written, it would break them."
    )
    assert refused.text.endswith(
        "It is now:\n    1| def mean(values):\n"
        + "\n".join(f"{n:>5}| {line}" for n, line in enumerate(stats.splitlines()[1:], 2))
    )
    stub = "def stats():\n    return 'Hello, World!'"
    assert not ws.run("write_file", {"path": "stats.py", "content": stub}).ok
    broken = "def mean(values:\n    return 0\n"  # no parse: its defs read as text
    assert not ws.run("write_file", {"path": "stats.py", "content": broken}).ok
    assert (ws.root / "stats.py").read_text() == stats
    kept = "def mean(values):\n    return 0\n\n\ndef median(values):\n    return 0\n"
    assert ws.run("write_file", {"path": "stats.py", "content": kept}).ok
    alone = "def mean(values):\n    return 0\n"
    assert "median, which report.py and test_stats.py import" in (
        ws.run("write_file", {"path": "stats.py", "content": alone}).text
    )
    (ws.root / "report.py").unlink()
    (ws.root / "test_stats.py").write_text("from stats import mean\n")
    assert ws.run("write_file", {"path": "stats.py", "content": alone}).ok


def test_a_rewrite_that_drops_what_its_package_imports_relatively_is_refused(
    ws: Workspace,
) -> None:
    """The 1.5B's mathx on the CPU, verbatim: replanned to "write_file mathx/add.py with
    the pytest tests", it wrote a test over mathx/add.py, whose add the package's
    `__init__.py` imports as `from .add import add as add`; the write went through, and
    the package no longer imported."""
    (ws.root / "mathx").mkdir()
    (ws.root / "mathx" / "__init__.py").write_text(
        "from .add import add as add\nfrom .divide import divide as divide\n"
    )
    (ws.root / "mathx" / "add.py").write_text("def add(a, b):\n    return a + b")
    (ws.root / "mathx" / "divide.py").write_text("def divide(a, b):\n    return a / b\n")
    tests = (
        "import pytest\n\n@pytest.mark.parametrize('a, b, expected', [\n    (1, 2, 3),\n    (3, 4,"
        " 7),\n    (5, 6, 11),\n    (7, 8, 15),\n    (9, 10, 19),\n])\ndef test_add(a, b, expec"
        "ted):\n    assert add(a, b) == expected\n"
    )
    refused = ws.run("write_file", {"path": "mathx/add.py", "content": tests})
    assert not refused.ok and refused.text.startswith(
        "not written: 'mathx/add.py' defines add, which mathx/__init__.py imports, and this "
        "content does not; written, it would break them."
    ), refused.text
    assert (ws.root / "mathx" / "add.py").read_text() == "def add(a, b):\n    return a + b"
    (ws.root / "mathx" / "__init__.py").write_text("from . import add\n")
    assert ws.run("write_file", {"path": "mathx/divide.py", "content": "x = 1\n"}).ok
    (ws.root / "mathx" / "divide.py").write_text("def divide(a, b):\n    return a / b\n")
    (ws.root / "mathx" / "ops.py").write_text("from .divide import divide\n")
    assert "divide, which mathx/ops.py imports" in (
        ws.run("write_file", {"path": "mathx/divide.py", "content": "x = 1\n"}).text
    )


def test_a_body_of_only_a_comment_is_named(ws: Workspace) -> None:
    """The 1.5B's first rock-paper-scissors write, verbatim, sent three times."""
    stub = "def rps_game():\n    # Game logic goes here\n"
    written = ws.run("write_file", {"path": "rps_game.py", "content": stub})
    assert "rps_game has only a comment, no code: write its code" in written.text


@pytest.mark.parametrize(
    ("source", "old", "new"),
    [
        ("x = foo(1, 2))\n", "x = foo(1, 2))", "x = foo(1, 2)"),
        ("def f()\n    return 1\n", "def f()", "def f():"),
        ("print 'hi'\n", "print 'hi'", "print('hi')"),
        ("def f():\n    x = foo(1\n    return x\n", "x = foo(1", "x = foo(1)"),
    ],
)
def test_one_line_syntax_fixes_make_the_file_compile(
    ws: Workspace, source: str, old: str, new: str
) -> None:
    written = ws.run("write_file", {"path": "m.py", "content": source})
    assert _offered(written.text, "this fixes it: ") == {"path": "m.py", "old": old, "new": new}
    assert (
        "syntax error"
        not in ws.run("replace_in_file", {"path": "m.py", "old": old, "new": new}).text
    )


@pytest.mark.parametrize(
    "source",
    [
        "d = {'a': 1,\n 'b': 2\n",  # the bracket spans lines: closing it here is a guess
        "x = (1,\n2\ny = 3\n",
        "else if x:\n    pass\n",  # no one-line edit known
        "print(1)}\nprint(1)}\n",  # the line occurs twice: old would not be unique
    ],
)
def test_no_fix_is_offered_where_one_edit_is_a_guess(ws: Workspace, source: str) -> None:
    written = ws.run("write_file", {"path": "m.py", "content": source})
    assert "syntax error" in written.text and "this fixes it" not in written.text


def test_write_then_read_roundtrip(ws: Workspace) -> None:
    content = "première ligne\nzweite Zeile ✓\n"
    written = ws.run("write_file", {"path": "notes.txt", "content": content})
    assert written.ok and written.changed
    assert f"wrote {len(content.encode())} bytes" in written.text
    assert (ws.root / "notes.txt").read_bytes() == content.encode()
    assert ws.run("read_file", {"path": "notes.txt"}).text == content
    assert not [p for p in ws.root.iterdir() if p.name.endswith(".tmp")]


def test_rewriting_identical_content_is_ok_but_unchanged(ws: Workspace) -> None:
    ws.run("write_file", {"path": "a.txt", "content": "same"})
    again = ws.run("write_file", {"path": "a.txt", "content": "same"})
    assert again.ok and not again.changed
    different = ws.run("write_file", {"path": "a.txt", "content": "other"})
    assert different.changed and "replaced" in different.text


def test_create_dirs(ws: Workspace) -> None:
    refused = ws.run("write_file", {"path": "x/y/z.txt", "content": "1", "create_dirs": False})
    assert not refused.ok and "create_dirs" in refused.text
    assert not (ws.root / "x").exists()
    created = ws.run("write_file", {"path": "x/y/z.txt", "content": "1"})
    assert created.ok and (ws.root / "x" / "y" / "z.txt").read_text() == "1"


def test_writing_through_an_inside_link_updates_its_target(ws: Workspace) -> None:
    if not ws.links:
        pytest.skip(NO_LINKS)
    (ws.root / "real.txt").write_text("old")
    (ws.root / "inner").symlink_to(ws.root / "real.txt")
    assert ws.run("write_file", {"path": "inner", "content": "new"}).ok
    assert (ws.root / "inner").is_symlink()
    assert (ws.root / "real.txt").read_text() == "new"


def test_list_dir_sorts_marks_folders_sizes_and_hides_the_journal(ws: Workspace) -> None:
    (ws.root / "b.txt").write_text("12345")
    (ws.root / "A").mkdir()
    lines = ws.run("list_dir", {"path": "."}).text.splitlines()
    assert lines[1] == "A/"
    assert "b.txt  (5 bytes)" in lines
    assert not any(".agent_context" in line for line in lines)
    assert ws.run("list_dir", {"path": "A"}).text.splitlines() == ["A/ (0 entries)", "(empty)"]


def test_list_dir_hides_nested_journals_in_any_case(ws: Workspace) -> None:
    (ws.root / "nested" / "code.py").write_text("x = 1\n")
    (ws.root / "deep" / "er" / ".Agent_Context").mkdir(parents=True)
    inner = ws.run("list_dir", {"path": "nested"}).text
    assert "code.py" in inner and "agent_context" not in inner.casefold()
    assert ws.run("list_dir", {"path": "deep/er"}).text.splitlines()[1:] == ["(empty)"]


def test_list_dir_caps_the_number_of_entries(ws: Workspace) -> None:
    many = ws.root / "many"
    many.mkdir()
    for index in range(230):
        (many / f"f{index:03}").touch()
    text = ws.run("list_dir", {"path": "many"}).text
    assert text.splitlines()[-1] == "... 30 more"
    assert "f000" in text and "f229" not in text


def test_read_file_limits_and_errors(ws: Workspace) -> None:
    (ws.root / "long.txt").write_text("0123456789" * 10)
    cut = ws.run("read_file", {"path": "long.txt", "max_bytes": 10})
    assert cut.ok and cut.text.startswith("0123456789\n") and "100 bytes" in cut.text
    missing = ws.run("read_file", {"path": "nope.txt"})
    assert not missing.ok and "'nope.txt' does not exist" in missing.text
    assert "list_dir" in missing.text
    folder = ws.run("read_file", {"path": "."})
    assert not folder.ok and "folder" in folder.text


def test_read_file_reports_binary_files(ws: Workspace) -> None:
    (ws.root / "blob.bin").write_bytes(b"\x89PNG\x00\x01\xff" * 100)
    result = ws.run("read_file", {"path": "blob.bin"})
    assert result.ok and "binary" in result.text and "700 bytes" in result.text
    (ws.root / "latin.txt").write_bytes(b"caf\xe9 ol\xe9")
    assert ws.run("read_file", {"path": "latin.txt"}).text == "caf\ufffd ol\ufffd"


def test_observations_are_capped(ws: Workspace) -> None:
    (ws.root / "big.txt").write_text("a" * 8000 + "z" * 8000)
    text = ws.run("read_file", {"path": "big.txt"}).text
    assert len(text) <= ws.ctx.output_limit
    assert text.startswith("aaa") and text.endswith("zzz")
    assert re.search(r"\[\.\.\. \d+ characters cut \.\.\.\]", text)


@pytest.mark.parametrize("limit", [10, 40, 41, 100, 999, 1000, 1001])
def test_cap_text_never_exceeds_the_limit(limit: int) -> None:
    for size in (limit - 1, limit, limit + 1, 10 * limit, 12345):
        text = "".join(chr(65 + i % 26) for i in range(size))
        capped = cap_text(text, limit)
        assert len(capped) <= limit
        assert capped == text or len(text) > limit


def test_run_cmd_script_exit_codes(ws: Workspace) -> None:
    good = ws.run("run_cmd", {"cmd": "python script.py"})
    assert good.ok and good.returncode == 0
    assert good.text.startswith("exit code 0\n") and "hello from script" in good.text
    bad = ws.run("run_cmd", {"cmd": "python3 -u script.py 3 'two words'"})
    assert not bad.ok and bad.returncode == 3
    assert bad.text.startswith("exit code 3\n") and "hello from script 3 two words" in bad.text


def test_run_cmd_python_module_pytest(ws: Workspace) -> None:
    result = ws.run("run_cmd", {"cmd": "python -m pytest --version"})
    assert result.ok and result.returncode == 0 and "pytest" in result.text


def test_pytest_s_session_header_is_left_out_of_what_the_model_reads(ws: Workspace) -> None:
    """The platform, rootdir, plugins and benchmark lines are the same in every run (about
    130 tokens of each pytest result the engine read); what ran and what failed stay."""
    (ws.root / "test_one.py").write_text("def test_one():\n    assert 1 + 1 == 3\n")
    result = ws.run("run_cmd", {"cmd": "python -m pytest -p no:cacheprovider test_one.py"})
    assert not result.ok
    assert "test session starts" in result.text and "collected 1 item" in result.text
    assert "assert (1 + 1) == 3" in result.text and "1 failed" in result.text
    for line in result.text.splitlines():
        assert not line.startswith(("platform ", "rootdir: ", "plugins: ", "benchmark: ")), line


def _marks(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip() and not line.strip("^~ ")]


def test_a_load_error_s_frames_in_python_s_library_are_left_out(ws: Workspace) -> None:
    """The 1.5B's mathx runs: of 488 tokens of pytest output, 63 were a frame in importlib
    (its location, source line and caret marks) and 13 a hint about module names. The
    workspace's frames and the error stay."""
    (ws.root / "mathx").mkdir()
    (ws.root / "mathx" / "__init__.py").write_text("from mathx import add\n")
    (ws.root / "tests").mkdir()
    (ws.root / "tests" / "test_m.py").write_text("import mathx\n\ndef test_add():\n    pass\n")
    result = ws.run("run_cmd", {"cmd": "python -m pytest -p no:cacheprovider tests/test_m.py"})
    assert not result.ok
    text = result.text.replace("\\", "/")  # pytest on Windows: tests\\test_m.py
    assert "tests/test_m.py:1: in <module>" in text
    assert "mathx/__init__.py:1: in <module>\n    from mathx import add\n" in text
    assert "E   ImportError: cannot import name 'add'" in text
    assert "importlib" not in text and "Hint:" not in text
    assert _marks(text) == []


def test_a_traceback_keeps_the_workspace_s_frames_and_the_error(ws: Workspace) -> None:
    helper = "import json\n\ndef helper(s):\n    return json.loads(s)\n"
    (ws.root / "prog.py").write_text(helper + "\nhelper('{')\n")
    (ws.root / "test_j.py").write_text(helper + "\ndef test_j():\n    assert helper('{') == 1\n")
    ran = ws.run("run_cmd", {"cmd": "python prog.py"})
    assert not ran.ok and _marks(ran.text) == []
    frame = r'File ".*prog\.py", line 4, in helper\n    return json\.loads\(s\)\n'
    assert re.search(frame, ran.text)
    assert "json.decoder.JSONDecodeError: Expecting property name" in ran.text
    assert "decoder.py" not in ran.text and "__init__.py" not in ran.text
    tested = ws.run("run_cmd", {"cmd": "python -m pytest -p no:cacheprovider test_j.py"})
    assert not tested.ok and _marks(tested.text) == []
    assert "test_j.py:4: in helper\n    return json.loads(s)\n" in tested.text
    # pytest's long form of the frame that raised: its location and error, not its source
    assert re.search(r"\nE +json\.decoder\.JSONDecodeError: Expecting", tested.text)
    assert re.search(r"decoder\.py:\d+: JSONDecodeError\n", tested.text)
    assert "def raw_decode" not in tested.text and "self = " not in tested.text
    assert "FAILED test_j.py::test_j" in tested.text


def test_a_traceback_names_the_workspace_s_files_as_the_model_does(ws: Workspace) -> None:
    """Python names the script it ran by its absolute path in every frame, 7-15 tokens the
    engine read for each (`File "/tmp/.../ws/rps_game.py"`, the 1.5B's rps runs): the
    model reads the path it would write, relative to the workspace; so does a SyntaxError's
    frame, which names no function."""
    (ws.root / "game").mkdir()
    (ws.root / "game" / "rules.py").write_text("def beats(a):\n    return {}[a]\n")
    main = "import sys\nsys.path.insert(0, 'game')\nimport rules\n\nrules.beats('rock')\n"
    (ws.root / "game" / "main.py").write_text(main)
    ran = ws.run("run_cmd", {"cmd": "python game/main.py"})
    assert not ran.ok and "KeyError: 'rock'" in ran.text
    assert 'File "game/main.py", line 5, in <module>' in ran.text, ran.text
    assert 'File "game/rules.py", line 2, in beats' in ran.text, ran.text
    (ws.root / "bad.py").write_text("def f(:\n    pass\n")
    broken = ws.run("run_cmd", {"cmd": "python bad.py"})
    assert 'File "bad.py", line 1' in broken.text and "SyntaxError" in broken.text, broken.text
    for text in (ran.text, broken.text):
        assert str(ws.root) not in text and str(ws.root.resolve()) not in text


def test_a_collection_error_names_the_workspace_s_files_as_the_model_does(ws: Workspace) -> None:
    """pytest's report of a test module that does not import named it, and the file with
    the SyntaxError, by their absolute paths, and showed four frames of Python's frozen
    importlib (`<frozen importlib._bootstrap>:1204: in _gcd_import` and `???`, about 60
    tokens): the 1.5B's mathx packages often do not load (its `from math import add`, a
    `def` without its colon)."""
    (ws.root / "mathx").mkdir()
    (ws.root / "mathx" / "__init__.py").write_text("def add(a, b)\n    return a + b\n")
    test = "import mathx\n\n\ndef test_add():\n    assert mathx.add(1, 2) == 3\n"
    (ws.root / "test_m.py").write_text(test)
    cmd = {"cmd": "python -m pytest -p no:cacheprovider test_m.py"}
    broken = ws.run("run_cmd", cmd)
    assert not broken.ok and "SyntaxError" in broken.text, broken.text
    assert 'E     File "mathx/__init__.py", line 1' in broken.text, broken.text
    assert "<frozen " not in broken.text and "???" not in broken.text, broken.text
    assert "test_m.py:1: in <module>" in broken.text, broken.text
    (ws.root / "mathx" / "__init__.py").write_text("from math import add\n")
    unloaded = ws.run("run_cmd", cmd)
    assert "ImportError while importing test module 'test_m.py'." in unloaded.text, unloaded.text
    assert "cannot import name 'add' from 'math'" in unloaded.text, unloaded.text
    for text in (broken.text, unloaded.text):
        assert str(ws.root) not in text and str(ws.root.resolve()) not in text


def test_a_fixture_error_names_the_test_file_as_the_model_does(ws: Workspace) -> None:
    """The 1.5B's mathx test `def test_add(self):` at a module's top: pytest's report named
    the file by its absolute path twice and listed every fixture its plugins give (about
    100 tokens of this machine's plugins), none of them the one the test asked for."""
    (ws.root / "test_m.py").write_text("def test_add(self):\n    assert 1 + 2 == 3\n")
    ran = ws.run("run_cmd", {"cmd": "python -m pytest -p no:cacheprovider test_m.py"})
    assert not ran.ok and "fixture 'self' not found" in ran.text, ran.text
    assert "file test_m.py, line 1" in ran.text and "\ntest_m.py:1\n" in ran.text, ran.text
    assert "available fixtures" not in ran.text and "--fixtures" not in ran.text, ran.text
    assert str(ws.root) not in ran.text and str(ws.root.resolve()) not in ran.text


def test_tests_that_fail_the_same_way_are_reported_once(ws: Workspace) -> None:
    """The 1.5B's parametrized mathx tests, without `import mathx`: twelve reports of the
    same NameError, 5,146 characters the model read (1,665 tokens the engine read anew).
    A test that fails another way keeps its own report."""
    cases = "@pytest.mark.parametrize('a', [1, 2, 3, 4, 5, 6])\n"
    code = f"import pytest\n\n\n{cases}def test_add(a):\n    assert mathx.add(a, a) == 2 * a\n"
    code += f"\n\n{cases}def test_sub(a):\n    assert mathx.sub(a, a) == 0\n"
    code += "\n\ndef test_other():\n    assert 1 == 2\n"
    (ws.root / "test_p.py").write_text(code)
    result = ws.run("run_cmd", {"cmd": "python -m pytest -p no:cacheprovider test_p.py"})
    assert not result.ok and "13 failed" in result.text
    assert result.text.count("E       NameError: name 'mathx' is not defined") == 1
    assert "(the same in 11 more: test_add[2], test_add[3], test_add[4], test_add[5], " in (
        result.text
    )
    assert "E       assert 1 == 2" in result.text  # its own report
    failed = [line for line in result.text.splitlines() if line.startswith("FAILED ")]
    assert len(failed) == 2 and failed[0].endswith(" (and 11 more)"), failed
    assert failed[1].startswith("FAILED test_p.py::test_other - assert 1 == 2")
    assert len(result.text) < 1600


# The 1.5B's mathx tests under the Ollama API (the journal keeps their ends; the middle
# follows the run's report): four functions never imported, four NameErrors.
UNIMPORTED = "".join(
    f"@pytest.mark.parametrize('a, b, expected', {cases})\n"
    f"def test_{name}(a, b, expected):\n    assert {name}(a, b) == expected\n\n"
    for name, cases in (
        ("add", "[(1, 2, 3), (3, 4, 7), (5, 6, 11)]"),
        ("subtract", "[(1, 2, -1), (3, 4, -1), (5, 6, -1)]"),
        ("multiply", "[(1, 2, 2), (3, 4, 12), (5, 6, 30)]"),
        ("divide", "[(1, 2, 1), (3, 4, 1), (5, 6, 1)]"),
    )
)


def test_reports_after_the_first_keep_the_failed_line_and_the_error(ws: Workspace) -> None:
    """The 1.5B's four tests failing on four NameErrors: 2,800 characters, 901 tokens the
    engine read. The first report is whole; the others keep their test's name, the line
    that failed, the error and where."""
    (ws.root / "test_m.py").write_text("import pytest\n\n" + UNIMPORTED)
    result = ws.run("run_cmd", {"cmd": "python -m pytest -p no:cacheprovider test_m.py"})
    assert not result.ok and "12 failed" in result.text
    assert result.text.count("a = 1, b = 2, expected = ") == 1  # the first report's values
    for name in ("add", "subtract", "multiply", "divide"):
        assert f">       assert {name}(a, b) == expected" in result.text
        assert f"E       NameError: name '{name}' is not defined" in result.text
    assert "test_m.py:13: NameError" in result.text
    assert result.text.count("@pytest.mark.parametrize") == 1
    assert "bytes cut" not in result.text and len(result.text) < 2300, len(result.text)


def test_failures_whose_message_only_starts_alike_keep_their_lines(ws: Workspace) -> None:
    code = "def test_a():\n    assert 3 == 2\n\n\ndef test_b():\n    assert 3 == 25\n"
    (ws.root / "test_q.py").write_text(code)
    result = ws.run("run_cmd", {"cmd": "python -m pytest -p no:cacheprovider test_q.py"})
    failed = [line for line in result.text.splitlines() if line.startswith("FAILED ")]
    assert failed == [
        "FAILED test_q.py::test_a - assert 3 == 2",
        "FAILED test_q.py::test_b - assert 3 == 25",
    ]


@pytest.mark.parametrize(
    ("test", "wrong"),
    [
        (
            "assert median([4, 1, 3, 2]) == 2.5",
            "median([4, 1, 3, 2]) must return 2.5 (it returned 3)",
        ),
        (
            "assert 2.5 == median([4, 1, 3, 2])",
            "median([4, 1, 3, 2]) must return 2.5 (it returned 3)",
        ),
        ("assert add(2, 3) == 5", "add(2, 3) must return 5 (it returned None)"),
        ("assert str(3) == '4'", ""),  # pytest names no call of a builtin's value
        ("assert median([1]) != 1", ""),
    ],
)
def test_a_failed_assertion_names_the_call_and_the_value_it_had_to_return(
    ws: Workspace, test: str, wrong: str
) -> None:
    code = "def median(v):\n    return sorted(v)[len(v) // 2]\n\n\ndef add(a, b):\n    pass\n"
    (ws.root / "calc.py").write_text(code)
    (ws.root / "test_calc.py").write_text(
        f"from calc import add, median\n\n\ndef test_it():\n    {test}\n"
    )
    result = ws.run("run_cmd", {"cmd": "python -m pytest -p no:cacheprovider test_calc.py"})
    assert not result.ok and "1 failed" in result.text
    assert result.facts.get("wrong", []) == ([wrong] if wrong else [])


def test_pytest_runs_as_python_m_pytest_which_imports_the_workspace_s_package(
    ws: Workspace,
) -> None:
    """The 1.5B's mathx plan said `run pytest tests/test_mathx.py`: pytest started as a
    program puts tests/ on the path, not the workspace, and `import mathx` failed there
    until three strikes; told to run `python -m pytest`, it still spent a round on
    `pytest tests/test_mathx.py` in the next run (350101c, the CPU). `python -m pytest`
    imports it, and `pytest` runs as that where python may run."""
    (ws.root / "mathx").mkdir()
    (ws.root / "mathx" / "__init__.py").write_text("def add(a, b):\n    return a + b\n")
    (ws.root / "tests").mkdir()
    (ws.root / "tests" / "test_mathx.py").write_text(
        "import mathx\n\n\ndef test_add():\n    assert mathx.add(1, 2) == 3\n"
    )
    cmd = "pytest tests/test_mathx.py -q -p no:cacheprovider"
    passed = ws.run("run_cmd", {"cmd": cmd})
    fix = "python -m pytest tests/test_mathx.py -q -p no:cacheprovider"
    assert passed.ok and "1 passed" in passed.text, passed.text
    assert f"NOTE: `{cmd}` ran as `{fix}`, which puts the workspace on Python's" in passed.text
    assert passed.facts["ran"] == [fix]
    assert "ran as" not in ws.run("run_cmd", {"cmd": fix}).text
    (ws.root / "tests" / "test_other.py").write_text("import nowhere\n")
    other = ws.run("run_cmd", {"cmd": "pytest tests/test_other.py -q -p no:cacheprovider"})
    assert not other.ok and "No module named 'nowhere'" in other.text
    # Where python may not run, pytest runs as it is, and a failed import of the
    # workspace's package is told the command that imports it.
    if shutil.which("pytest") is None:
        return
    ctx = ToolContext(ws.root, allowed_commands=("pytest",))
    failed = execute(ctx, "run_cmd", {"cmd": cmd})
    assert not failed.ok and "No module named 'mathx'" in failed.text
    assert "NOTE: mathx is in the workspace, but `pytest` started as a program" in failed.text
    assert f"Run it as `{fix}` instead" in failed.text


# Qwen2.5-Coder-1.5B's mathx, verbatim: a module a function, and an __init__.py that
# imports the modules.
MATHX_FILES = {
    "mathx/__init__.py": "from mathx import add, subtract, multiply, divide",
    "mathx/add.py": "def add(a, b):\n    return a + b",
    "mathx/subtract.py": "def subtract(a, b):\n    return a - b",
    "mathx/multiply.py": "def multiply(a, b):\n    return a * b",
    "mathx/divide.py": "def divide(a, b):\n    if b == 0:\n"
    "        raise ValueError('Cannot divide by zero')\n    return a / b",
    "tests/test_mathx.py": "import mathx\n\nclass TestMathx:\n    def test_add(self):\n"
    "        assert mathx.add(1, 2) == 3\n\n    def test_divide(self):\n"
    "        assert mathx.divide(6, 2) == 3",
}


def _seed(ws: Workspace, files: dict[str, str]) -> None:
    for name, text in files.items():
        (ws.root / name).parent.mkdir(exist_ok=True)
        (ws.root / name).write_text(text)


TESTS_FILE = "tests/test_mathx.py"


def _seeded_run(ws: Workspace, files: dict[str, str]) -> Any:
    """The pytest run of tests/test_mathx.py in the workspace seeded with `files`."""
    _seed(ws, files)
    return ws.run("run_cmd", {"cmd": f"python -m pytest {TESTS_FILE} -q -p no:cacheprovider"})


def test_a_package_that_imports_its_modules_for_their_functions_is_told_the_imports(
    ws: Workspace,
) -> None:
    _seed(ws, MATHX_FILES)
    cmd = "python -m pytest tests/test_mathx.py -q -p no:cacheprovider"
    failed = ws.run("run_cmd", {"cmd": cmd})
    assert not failed.ok and "'module' object is not callable" in failed.text
    assert "imports the modules add, subtract, multiply, divide, not the functions" in failed.text
    fix = _offered(failed.text, "send: ")
    assert fix["new"] == (
        "from .add import add as add\nfrom .divide import divide as divide\n"
        "from .multiply import multiply as multiply\nfrom .subtract import subtract as subtract"
    )
    assert ws.run("replace_in_file", fix).ok
    assert ws.run("run_cmd", {"cmd": cmd}).ok
    if shutil.which("ruff") is not None:  # the goal asks for `ruff check` to be clean too
        assert ws.run("run_cmd", {"cmd": "ruff check --no-cache mathx"}).ok


def test_a_package_init_that_imports_its_modules_is_told_so_when_written(
    ws: Workspace,
) -> None:
    """The 1.5B's first write in all 16 mathx runs on an H100 was that one line; told only
    when a run failed, it went on to its tests."""
    _seed(ws, {k: v for k, v in MATHX_FILES.items() if k != "mathx/__init__.py"})
    init = {"path": "mathx/__init__.py", "content": MATHX_FILES["mathx/__init__.py"]}
    wrote = ws.run("write_file", init)
    assert wrote.ok and "imports the modules add, subtract, multiply, divide" in wrote.text
    assert ws.run("replace_in_file", _offered(wrote.text, "send: ")).ok
    cmd = "python -m pytest tests/test_mathx.py -q -p no:cacheprovider"
    assert ws.run("run_cmd", {"cmd": cmd}).ok


def test_a_package_init_that_imports_none_of_its_functions_is_told_the_imports(
    ws: Workspace,
) -> None:
    """The 1.5B's mathx on the CPU, as its plan said: `mathx/__init__.py` was `import
    math`, each function in a module of its own, and the tests called `mathx.add(1, 2)`:
    four AttributeErrors, with no word on why."""
    files = {
        **MATHX_FILES,
        "mathx/__init__.py": "import math",
        "tests/test_mathx.py": "import mathx\ndef test_add(): assert mathx.add(1, 2) == 3\n"
        "def test_divide(): assert mathx.divide(6, 2) == 3\n"
        "def test_sub(): assert mathx.subtract(3, 1) == 2\n"
        "def test_pow(): assert mathx.power(2, 3) == 8",
    }
    failed = _seeded_run(ws, files)
    assert "module 'mathx' has no attribute 'add'" in failed.text
    assert (
        "mathx/__init__.py does not import add, divide and subtract, which mathx/add.py, "
        "mathx/divide.py and mathx/subtract.py define, so mathx.add(...) finds no add"
    ) in failed.text, failed.text
    call = json.loads(failed.text.split("send: ", 1)[1])
    assert call["name"] == "write_file"
    assert call["arguments"]["content"] == (
        "import math\nfrom .add import add as add\nfrom .divide import divide as divide\n"
        "from .subtract import subtract as subtract\n"
    )
    assert ws.run("write_file", call["arguments"]).ok
    again = _seeded_run(ws, {})
    assert "1 failed, 3 passed" in again.text  # power is defined nowhere
    assert "send: " not in again.text


def test_a_test_that_calls_a_function_it_never_imported_is_told_the_import(
    ws: Workspace,
) -> None:
    """The 1.5B's tests, verbatim in part: `add(2, 3)` with no import; it ran pytest
    again unchanged until three strikes."""
    _seed(ws, MATHX_FILES)
    (ws.root / "mathx/__init__.py").write_text("from .add import add as add\n")
    test = "def test_add():\n    assert add(2, 3) == 5\n"
    (ws.root / "tests/test_mathx.py").write_text(test)
    cmd = "python -m pytest tests/test_mathx.py -q -p no:cacheprovider"
    failed = ws.run("run_cmd", {"cmd": cmd})
    assert not failed.ok and "NameError: name 'add' is not defined" in failed.text
    assert (
        "NOTE: tests/test_mathx.py uses add but does not import it; add `from mathx import "
        "add` at its top." in failed.text
    )
    assert ws.run("replace_in_file", _offered(failed.text, "send: ")).ok
    assert ws.run("run_cmd", {"cmd": cmd}).ok


def test_a_package_that_imports_from_itself_what_it_lacks_is_told_when_run(
    ws: Workspace,
) -> None:
    """7 of the 1.5B's 16 mathx runs wrote only `from mathx import add, ...` in the
    package; pytest failed with a circular import and no word on why."""
    failed = _seeded_run(ws, {k: MATHX_FILES[k] for k in ("mathx/__init__.py", TESTS_FILE)})
    assert "partially initialized module 'mathx'" in failed.text
    assert (
        "NOTE: mathx/__init__.py imports add, subtract, multiply, divide from mathx itself, "
        "which has none of them (no mathx/add.py, no def add): write their code in "
        "mathx/__init__.py (def add(...): ...) instead of importing them, or each in a module "
        "of its own (mathx/add.py)." in failed.text
    )


# The 1.5B's mathx tests (350101c, OpenAI API, the CPU), which ruff's import-order rule
# fails and fixes: told that `ruff tests/test_mathx.py --fix` is refused and to run
# `ruff check tests/test_mathx.py --fix`, it sent its own command again, 3 runs and 6
# blocks through a replan, until the round limit.
SORTED_BADLY = """import mathx

def test_add():
    assert mathx.add(1, 2) == 3
"""


def test_ruff_given_a_file_checks_it(ws: Workspace) -> None:
    """`ruff FILE`, which ruff has refused since 0.5 ("unrecognized subcommand"), runs as
    `ruff check FILE`, the command it once was, and says so."""
    if shutil.which("ruff") is None:
        pytest.skip("no ruff program on PATH")
    (ws.root / "tests").mkdir()
    (ws.root / "tests" / "test_mathx.py").write_text(SORTED_BADLY)
    fixed = ws.run("run_cmd", {"cmd": "ruff tests/test_mathx.py --fix"})
    assert fixed.ok and "unrecognized subcommand" not in fixed.text, fixed.text
    assert (
        "NOTE: ruff checks files with its check command: `ruff tests/test_mathx.py --fix` "
        "ran as `ruff check tests/test_mathx.py --fix`." in fixed.text
    )
    assert fixed.facts["ran"] == ["ruff check tests/test_mathx.py --fix"]
    assert (ws.root / "tests" / "test_mathx.py").read_text() != SORTED_BADLY
    assert ws.run("run_cmd", {"cmd": "ruff check --no-cache tests/test_mathx.py"}).ok
    # `ruff` alone (the 1.5B's mathx, 91f3f5e: 12 times, ruff's usage each time) checks
    # the folder.
    alone = ws.run("run_cmd", {"cmd": "ruff"})
    assert alone.returncode in (0, 1) and "Usage: ruff" not in alone.text, alone.text
    assert "`ruff` ran as `ruff check`" in alone.text
    # A folder of the workspace named without a path's marks (the 1.5B's mathx, 9d45f3b:
    # `ruff tests` until blocked).
    folder = ws.run("run_cmd", {"cmd": "ruff tests"})
    assert "`ruff tests` ran as `ruff check tests`" in folder.text, folder.text
    # ruff's own options and a word that is no file stay ruff's to answer.
    assert "ran as" not in ws.run("run_cmd", {"cmd": "ruff --version"}).text
    typo = ws.run("run_cmd", {"cmd": "ruff chek tests"})
    assert not typo.ok and "ran as" not in typo.text


def test_run_cmd_reports_a_missing_program(ws: Workspace) -> None:
    ctx = ToolContext(ws.root, allowed_commands=("python", "no-such-program-4711"))
    result = execute(ctx, "run_cmd", {"cmd": "no-such-program-4711 --help"})
    assert not result.ok and "not found" in result.text


def test_run_cmd_huge_output_is_capped(ws: Workspace) -> None:
    (ws.root / "big.py").write_text(
        "import sys\nprint('FIRST')\nsys.stdout.write('y' * 20_000_000)\nprint('\\nLAST')\n"
    )
    result = ws.run("run_cmd", {"cmd": "python big.py"})
    assert result.ok and result.returncode == 0
    assert len(result.text) <= ws.ctx.output_limit
    assert result.text.startswith("exit code 0\nFIRST")
    assert result.text.rstrip().endswith("LAST")
    assert "cut ...]" in result.text


def test_run_cmd_binary_output_is_safe(ws: Workspace) -> None:
    (ws.root / "noise.py").write_text(
        "import sys\nsys.stdout.buffer.write(bytes(range(256)) * 8 + b'\\xc3\\x00\\xff')\n"
    )
    result = ws.run("run_cmd", {"cmd": "python noise.py"})
    assert result.ok
    assert "\x00" not in result.text
    assert orjson.loads(orjson.dumps(result.text)) == result.text


def test_run_cmd_timeout_kills_the_tree(ws: Workspace) -> None:
    (ws.root / "tree.py").write_text(TREE_SCRIPT)
    before = ws.snapshot()
    started = time.monotonic()
    result = ws.run("run_cmd", {"cmd": "python tree.py", "timeout_sec": 1})
    assert time.monotonic() - started < 8
    assert not result.ok and result.returncode is None
    assert result.text.startswith("timed out after 1s; the process tree was killed")
    # Inside a sandbox's PID namespace the printed pids are not this machine's.
    assert re.findall(r"pid=(\d+)", result.text), result.text
    assert wait_none_left(ws.root) == []
    assert ws.snapshot() == before


def test_mark_subtask_complete_returns_the_verdict(ws: Workspace) -> None:
    done = ws.run("mark_subtask_complete", {"success": True, "reason": "tests pass"})
    assert done.ok and done.verdict == (True, "tests pass") and not done.changed
    failed = ws.run("mark_subtask_complete", '{"success": false, "reason": "no network"}')
    assert failed.ok and failed.verdict == (False, "no network")


# -------------------------------------------------------- hostile input

OUTSIDE = "outside the workspace"
JOURNAL = "journal"
SHELL = "shell syntax"
NOT_ALLOWED = "not allowed"

HOSTILE: list[tuple[str, dict[str, Any], list[str]]] = [
    ("read_file", {"path": "../sentinel/secret.txt"}, [OUTSIDE, "relative"]),
    ("read_file", {"path": "a/../../sentinel/secret.txt"}, [OUTSIDE]),
    ("write_file", {"path": "../sentinel/new.txt", "content": "x"}, [OUTSIDE]),
    ("write_file", {"path": "a/../../sentinel/new.txt", "content": "x"}, [OUTSIDE]),
    ("write_file", {"path": "new/../../../x.txt", "content": "x"}, [OUTSIDE]),
    ("list_dir", {"path": ".."}, [OUTSIDE]),
    ("read_file", {"path": "/etc/passwd"}, [OUTSIDE]),
    ("read_file", {"path": "{base}/sentinel/secret.txt"}, [OUTSIDE]),
    ("write_file", {"path": "{base}/sentinel/abs.txt", "content": "x"}, [OUTSIDE]),
    ("write_file", {"path": "C:\\Windows\\evil.txt", "content": "x"}, [OUTSIDE]),
    ("write_file", {"path": "C:/Windows/evil.txt", "content": "x"}, [OUTSIDE]),
    ("write_file", {"path": "\\\\server\\share\\evil.txt", "content": "x"}, [OUTSIDE]),
    ("read_file", {"path": "..\\sentinel\\secret.txt"}, [OUTSIDE]),
    ("read_file", {"path": "out_link"}, [OUTSIDE]),
    ("write_file", {"path": "out_link", "content": "x"}, [OUTSIDE]),
    ("write_file", {"path": "out_dir/new.txt", "content": "x"}, [OUTSIDE]),
    ("write_file", {"path": "out_dir/deeper/new.txt", "content": "x"}, [OUTSIDE]),
    ("list_dir", {"path": "out_dir"}, [OUTSIDE]),
    ("write_file", {"path": "dangling", "content": "x"}, [OUTSIDE]),
    ("read_file", {"path": ".agent_context/state.json"}, [JOURNAL]),
    ("write_file", {"path": ".agent_context/state.json", "content": "{}"}, [JOURNAL]),
    ("write_file", {"path": "./.agent_context/new.json", "content": "{}"}, [JOURNAL]),
    ("list_dir", {"path": ".agent_context"}, [JOURNAL]),
    ("read_file", {"path": "ctx_link/state.json"}, [JOURNAL]),
    ("write_file", {"path": "nested/.agent_context/history.jsonl", "content": "{}"}, [JOURNAL]),
    ("read_file", {"path": "nested/.AGENT_CONTEXT/state.json"}, [JOURNAL]),
    ("read_file", {"path": "nested\\.agent_context.\\state.json"}, [JOURNAL]),
    ("write_file", {"path": "a/b/.Agent_Context/new.json", "content": "{}"}, [JOURNAL]),
    ("list_dir", {"path": "nested/.agent_context"}, [JOURNAL]),
    ("run_cmd", {"cmd": "python nested/.agent_context/state.json"}, [JOURNAL]),
    ("write_file", {"path": "a\x00b.txt", "content": "x"}, ["nul"]),
    ("read_file", {"path": ""}, ["empty"]),
    ("write_file", {"path": "   ", "content": "x"}, ["empty"]),
    ("write_file", {"path": ".", "content": "x"}, ["folder"]),
    ("write_file", {"path": "con.txt", "content": "x"}, ["reserved"]),
    ("run_cmd", {"cmd": "python script.py; python {base}/outside.py"}, [SHELL, "';'"]),
    ("run_cmd", {"cmd": "pytest && python ../outside.py"}, [SHELL, "'&&'"]),
    ("run_cmd", {"cmd": "pytest || python ../outside.py"}, [SHELL, "'||'"]),
    ("run_cmd", {"cmd": "python script.py | python ../outside.py"}, [SHELL, "'|'"]),
    ("run_cmd", {"cmd": "python script.py > ../sentinel/out.txt"}, [SHELL, "'>'"]),
    ("run_cmd", {"cmd": "python script.py < ../sentinel/secret.txt"}, [SHELL, "'<'"]),
    ("run_cmd", {"cmd": "python `echo ../outside.py`"}, [SHELL, "'`'"]),
    ("run_cmd", {"cmd": "python $(echo ../outside.py)"}, [SHELL, "'$('"]),
    ("run_cmd", {"cmd": "python script.py & python ../outside.py"}, [SHELL, "'&'"]),
    ("run_cmd", {"cmd": "python script.py\npython ../outside.py"}, [SHELL, "line break"]),
    ("run_cmd", {"cmd": "python script.py a&python ../outside.py"}, [SHELL, "'&'"]),
    ("run_cmd", {"cmd": "python script.py 'quoted'>../sentinel/out.txt"}, [SHELL, "'>'"]),
    ("run_cmd", {"cmd": "python script.py 'a\nb'"}, [SHELL, "line break"]),
    ("run_cmd", {"cmd": "rm -rf /"}, ["'rm'", NOT_ALLOWED, "python, pytest, ruff"]),
    ("run_cmd", {"cmd": "curl http://example.com"}, ["'curl'", NOT_ALLOWED]),
    ("run_cmd", {"cmd": "bash -c 'python ../outside.py'"}, ["'bash'", NOT_ALLOWED]),
    ("run_cmd", {"cmd": "sh"}, ["'sh'", NOT_ALLOWED]),
    ("run_cmd", {"cmd": "/bin/sh -c true"}, ["'/bin/sh'", NOT_ALLOWED]),
    ("run_cmd", {"cmd": "/usr/bin/python3 script.py"}, ["by name"]),
    ("run_cmd", {"cmd": "../python script.py"}, ["by name"]),
    ("run_cmd", {"cmd": "python -c 'import os'"}, ["python -c", NOT_ALLOWED, "write_file"]),
    ("run_cmd", {"cmd": "python -"}, ["stdin", NOT_ALLOWED]),
    ("run_cmd", {"cmd": "python"}, ["bare python", NOT_ALLOWED]),
    ("run_cmd", {"cmd": "python -u"}, ["bare python"]),
    ("run_cmd", {"cmd": "python -m http.server"}, ["http.server", NOT_ALLOWED, "pytest"]),
    ("run_cmd", {"cmd": "python -mhttp.server"}, ["http.server", NOT_ALLOWED]),
    ("run_cmd", {"cmd": "python -m"}, [NOT_ALLOWED]),
    ("run_cmd", {"cmd": "python -I script.py"}, ["'-i'", NOT_ALLOWED]),
    ("run_cmd", {"cmd": "py -X dev script.py"}, ["'-x'", NOT_ALLOWED]),
    ("run_cmd", {"cmd": "python ../outside.py"}, [OUTSIDE]),
    ("run_cmd", {"cmd": "python {base}/outside.py"}, [OUTSIDE]),
    ("run_cmd", {"cmd": "python3.11 out_dir/../../outside.py"}, [OUTSIDE]),
    ("run_cmd", {"cmd": "python .agent_context/state.json"}, [JOURNAL]),
    ("run_cmd", {"cmd": "python missing.py"}, ["'missing.py' does not exist"]),
    ("run_cmd", {"cmd": "python 'unclosed"}, ["cannot parse"]),
    ("run_cmd", {"cmd": "ruff format ../outside.py"}, [OUTSIDE, "'../outside.py'"]),
    ("run_cmd", {"cmd": "ruff format out_dir"}, [OUTSIDE]),
    ("run_cmd", {"cmd": "ruff check --config=../sentinel/ruff.toml ."}, [OUTSIDE]),
    ("run_cmd", {"cmd": "ruff format .agent_context/state.json"}, [JOURNAL]),
    ("run_cmd", {"cmd": "pytest ../outside.py"}, [OUTSIDE]),
    ("run_cmd", {"cmd": "pytest {base}/outside.py"}, [OUTSIDE]),
    ("run_cmd", {"cmd": "pytest --rootdir={base}/sentinel"}, [OUTSIDE]),
    ("run_cmd", {"cmd": "pytest -c../sentinel/x.ini"}, [OUTSIDE]),
    ("run_cmd", {"cmd": "pytest -o cache_dir=../sentinel"}, [OUTSIDE]),
    ("run_cmd", {"cmd": "pytest --basetemp a/../../sentinel/tmp"}, [OUTSIDE]),
    ("run_cmd", {"cmd": "python -m pytest C:\\Windows\\x.py"}, [OUTSIDE]),
    ("run_cmd", {"cmd": "python script.py ../sentinel/secret.txt"}, [OUTSIDE]),
    ("run_cmd", {"cmd": "pip install --target ../sentinel requests"}, [OUTSIDE]),
    ("run_cmd", {"cmd": "pip install --target=../sentinel requests"}, [OUTSIDE]),
    ("run_cmd", {"cmd": "pip install ../sentinel"}, [OUTSIDE]),
    ("run_cmd", {"cmd": "pip install -e {base}/sentinel"}, [OUTSIDE]),
    ("run_cmd", {"cmd": "pip install file://{base}/sentinel"}, [OUTSIDE]),
    ("run_cmd", {"cmd": "pip install 'pkg @ file:../sentinel'"}, [OUTSIDE]),
    ("run_cmd", {"cmd": "python -m pip install --prefix ~/x requests"}, [OUTSIDE]),
    # A value glued to a cluster of one-letter options, or inside a TOML setting.
    ("run_cmd", {"cmd": "pip install -qt../sentinel requests"}, [OUTSIDE, "-qt../sentinel"]),
    ("run_cmd", {"cmd": "pip download -qd../sentinel requests"}, [OUTSIDE]),
    ("run_cmd", {"cmd": "ruff check -eo../sentinel/secret.txt ."}, [OUTSIDE]),
    ("run_cmd", {"cmd": "python -m unittest discover -vs../sentinel"}, [OUTSIDE]),
    ("run_cmd", {"cmd": "ruff check --config \"cache-dir = '{base}/x'\" ."}, [OUTSIDE]),
    ("run_cmd", {"cmd": "ruff check --config=cache-dir='{base}/x' ."}, [OUTSIDE]),
    ("run_cmd", {"cmd": "pip config set global.index-url http://x"}, ["pip config set"]),
    ("run_cmd", {"cmd": "python -u -m pip cache purge"}, ["pip cache purge", NOT_ALLOWED]),
    ("run_cmd", {"cmd": "   "}, ["empty"]),
]


def hostile_id(case: tuple[str, dict[str, Any], list[str]]) -> str:
    name, args, _ = case
    return f"{name}:{next(iter(args.values()))!r}"[:60]


@pytest.mark.parametrize("case", HOSTILE, ids=[hostile_id(case) for case in HOSTILE])
def test_hostile_input_is_refused_and_nothing_outside_changes(
    ws: Workspace, case: tuple[str, dict[str, Any], list[str]]
) -> None:
    name, args, words = case
    if not ws.links and any(link in json.dumps(args) for link in LINKS):
        pytest.skip(NO_LINKS)
    args = {k: v.replace("{base}", str(ws.base)) for k, v in args.items()}
    before = ws.snapshot()
    result = ws.run(name, args)
    assert not result.ok, result.text
    assert not result.changed
    for word in words:
        assert word.lower() in result.text.lower(), result.text
    assert ws.snapshot() == before
    assert not (ws.base / "sentinel" / "pwned").exists()
    assert (ws.root / ".agent_context" / "state.json").read_text() == STATE


def test_hostile_json_string_arguments_are_refused_too(ws: Workspace) -> None:
    before = ws.snapshot()
    result = ws.run("write_file", json.dumps({"path": "../sentinel/x", "content": "x"}))
    assert not result.ok and OUTSIDE in result.text
    assert ws.snapshot() == before


def test_allow_list_comes_from_the_context(ws: Workspace) -> None:
    ctx = ToolContext(ws.root, allowed_commands=("pytest",))
    result = execute(ctx, "run_cmd", {"cmd": "python script.py"})
    assert not result.ok and NOT_ALLOWED in result.text
    assert execute(ctx, "run_cmd", {"cmd": "pytest --version"}).ok


@pytest.mark.skipif(
    sys.platform == "win32", reason="POSIX file names (test_windows_tools covers Windows')"
)
def test_backslash_paths_stay_inside(ws: Workspace) -> None:
    result = ws.run("write_file", {"path": "sub\\file.txt", "content": "x"})
    assert result.ok
    assert (ws.root / "sub" / "file.txt").read_text() == "x"


# ------------------------------------------------------- commands leave nothing behind

DAEMON = """
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        print(f"pid={os.getpid()}", flush=True)
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
        time.sleep(60)
    os._exit(0)
os.wait()
"""


@pytest.mark.skipif(
    sys.platform == "win32", reason="fork and setsid are POSIX (test_windows_process: breakaway)"
)
def test_run_cmd_leaves_no_daemon_behind(ws: Workspace) -> None:
    (ws.root / "daemon.py").write_text(DAEMON)
    result = ws.run("run_cmd", {"cmd": "python daemon.py"})
    assert result.ok, result.text
    assert len(re.findall(r"pid=(\d+)", result.text)) == 1, result.text
    assert wait_none_left(ws.root) == []


def wait_none_left(root: Path) -> list[int]:
    """The processes still working in root a moment after the command ended."""
    deadline = time.monotonic() + 3
    while (left := working_in(root)) and time.monotonic() < deadline:
        time.sleep(0.02)
    return left


def working_in(root: Path) -> list[int]:
    found = []
    for proc in psutil.process_iter():
        try:
            if proc.status() != psutil.STATUS_ZOMBIE and Path(proc.cwd()) == root:
                found.append(proc.pid)
        except (psutil.Error, OSError):
            continue
    return found


def test_run_cmd_marks_its_processes_with_the_calls_marker(ws: Workspace) -> None:
    # The journal names the marker before the command starts: after a crash, whatever
    # still runs of it is found by the marker (see actions.kill_leftovers).
    ctx = ToolContext(ws.root, marker="feedc0de")
    (ws.root / "me.py").write_text(f"import os\nprint(os.environ['{MARKER_VARIABLE}'])\n")
    result = execute(ctx, "run_cmd", {"cmd": "python me.py"})
    assert result.ok and "feedc0de" in result.text, result.text


# ----------------------------------------------------- arguments that stay inside


def test_ordinary_commands_and_inside_paths_are_accepted(ws: Workspace) -> None:
    venv = ws.root / ".venv"
    # A stand-in interpreter is enough: the commands are only resolved, never run.
    venv_program(venv, "python").parent.mkdir(parents=True)
    venv_program(venv, "python").write_bytes(b"")
    (ws.root / "tests").mkdir()
    for cmd in (
        "python -m pytest -q",
        "python -m pytest -q -p no:cacheprovider -k 'a and not b' tests/test_a.py::test_x",
        "pytest tests/",
        f"pytest {ws.root / 'tests'}",
        "pytest --rootdir=. -o cache_dir=tests/.cache",
        "ruff check .",
        "ruff format --line-length=100 script.py",
        "pip install requests",
        "pip install 'requests==2.*' -r requirements.txt --index-url https://pypi.org/simple",
        "pip install -e .",
        "pip config --site set global.timeout 5",
        "python -m pip list",
        "python script.py 3 'two words' --flag=value",
    ):
        argv = command_argv(ws.ctx, cmd)
        # ruff, a standalone program, comes from PATH when the venv has none.
        assert argv[0].startswith(str(venv)) or cmd.startswith("ruff"), (cmd, argv)


# ------------------------------------------------------------ canonical calls


@pytest.mark.parametrize(
    "args",
    [
        {"path": "a.py"},
        {"path": "./a.py"},
        {"path": "a.py", "max_bytes": 20000},
        '{"path": ".\\\\a.py"}',
        {"path": "a.py", "max_bytes": None},
        {"path": ".//a.py"},
    ],
)
def test_spellings_of_one_call_are_one_canonical_call(args: object) -> None:
    assert canonical_call(" read_file\n", args) == (
        "read_file",
        {"path": "a.py", "max_bytes": 20000, "start_line": 0, "end_line": 0},
    )


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("a//b", "a/b"),
        ("a/b/", "a/b"),
        ("src\\pkg\\mod.py", "src/pkg/mod.py"),
        (".", "."),
        ("./", "."),
        ("./.", "."),
        ("../x", "../x"),
        ("a/../b", "a/../b"),
        ("/etc/passwd", "/etc/passwd"),
        ("\\\\server\\share", "//server/share"),
        (" a.py", " a.py"),
    ],
)
def test_paths_are_normalised_without_changing_what_they_name(raw: str, canonical: str) -> None:
    assert canonical_call("list_dir", {"path": raw}) == ("list_dir", {"path": canonical})


@pytest.mark.parametrize(
    ("cmd", "args"),
    [
        ("python script.py ';' \"a | b\"", [";", "a | b"]),
        ("python script.py '&&' \"> x\" '$(id)' \"`id`\"", ["&&", "> x", "$(id)", "`id`"]),
        ('python script.py a";"b \'it\'"\'"s', ["a;b", "it's"]),
    ],
)
def test_operators_inside_quotes_reach_the_program_as_they_are(
    ws: Workspace, cmd: str, args: list[str]
) -> None:
    # There is no shell: only an operator outside quotes could be meant for one.
    assert command_argv(ws.ctx, cmd)[-len(args) :] == args


def test_commands_are_respaced_and_defaults_filled() -> None:
    one = canonical_call("run_cmd", {"cmd": "python  -m pytest   -q"})
    other = canonical_call("run_cmd", '{"cmd": "python -m pytest -q", "timeout_sec": 60}')
    filled = {"cmd": "python -m pytest -q", "timeout_sec": 60, "stdin": ""}
    assert one == other == ("run_cmd", filled)
    assert canonical_call("run_cmd", {"cmd": "python 'a b.py'"})[1]["cmd"] == "python 'a b.py'"
    assert canonical_call("run_cmd", {"cmd": "python 'open"})[1]["cmd"] == "python 'open"


@pytest.mark.parametrize(
    ("name", "args", "expected"),
    [
        ("  no_such_tool ", {"path": "./a"}, ("no_such_tool", {"path": "./a"})),
        ("read_file", {"path": {"a": 5}}, ("read_file", {"path": {"a": 5}})),
        ("read_file", {"mode": "r"}, ("read_file", {"mode": "r"})),
        ("read_file", "{not json", ("read_file", {"__raw__": "'{not json'"})),
        ("read_file", [1, 2], ("read_file", {"__raw__": "[1, 2]"})),
        (None, {}, ("None", {})),
    ],
)
def test_calls_that_do_not_validate_keep_their_arguments(
    name: object, args: object, expected: tuple[str, dict[str, Any]]
) -> None:
    assert canonical_call(name, args) == expected


# ------------------------------------------------------------ stale temp files


def aged(path: Path, seconds: float, data: bytes = b"partial") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    then = time.time() - seconds
    os.utime(path, (then, then))
    return path


def test_clean_stale_temps_removes_only_old_write_file_temps(ws: Workspace) -> None:
    stale = [
        aged(ws.root / ".big.bin.0a1b2c3d.tmp", 120, b"x" * 100_000),
        aged(ws.root / "src" / "deep" / ".mod.py.ffffffff.tmp", 3600),
    ]
    kept = [
        aged(ws.root / ".fresh.py.12345678.tmp", 5),
        aged(ws.root / ".notes.txt.zzzzzzzz.tmp", 120),
        aged(ws.root / "plain.0a1b2c3d.tmp", 120),
        aged(ws.root / ".venv" / ".x.py.0a1b2c3d.tmp", 120),
        aged(ws.root / ".git" / ".x.py.0a1b2c3d.tmp", 120),
        aged(ws.root / "nested" / ".agent_context" / ".state.json.0a1b2c3d.tmp", 120),
        aged(ws.base / "sentinel" / ".secret.txt.0a1b2c3d.tmp", 120),
    ]
    (ws.root / ".dir.0a1b2c3d.tmp").mkdir()
    if ws.links:
        (ws.root / ".link.0a1b2c3d.tmp").symlink_to(kept[-1])
        (ws.root / "to_sentinel").symlink_to(ws.base / "sentinel", target_is_directory=True)
    assert clean_stale_temps(ws.root) == 2
    assert not any(path.exists() for path in stale)
    assert all(path.exists() for path in kept)
    assert (ws.root / ".dir.0a1b2c3d.tmp").is_dir()
    assert clean_stale_temps(ws.root) == 0


def test_a_write_leaves_a_temp_name_that_the_cleaner_knows(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    names: list[str] = []

    def observing(real: Any) -> Any:
        def observe(source: str, target: str, **where: Any) -> None:
            names.append(Path(source).name)
            real(source, target, **where)

        return observe

    # Only observes the temp file's name; the write itself runs for real.
    monkeypatch.setattr(os, "rename", observing(os.rename))
    monkeypatch.setattr(os, "replace", observing(os.replace))
    assert ws.run("write_file", {"path": "sub/a.txt", "content": "y"}).ok
    monkeypatch.undo()
    assert len(names) == 1 and "localagent" in names[0]
    # A kill a moment ago left it: the next run (which holds the workspace) removes it.
    (ws.root / "sub" / names[0]).write_text("partial")
    assert clean_stale_temps(ws.root) == 1


def test_a_fresh_temp_file_in_a_nested_workspace_is_left_to_its_own_run(ws: Workspace) -> None:
    fresh = aged(ws.root / "nested" / ".mod.py.localagent-0a1b2c3d.tmp", 5)
    old = aged(ws.root / "nested" / ".old.py.localagent-0a1b2c3d.tmp", 120)
    assert clean_stale_temps(ws.root) == 1
    assert fresh.exists() and not old.exists()


# ------------------------------------------------------------ over-long names

LONG = "n" * 256


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("list_dir", {"path": LONG}),
        ("read_file", {"path": f"src/{LONG}.py"}),
        ("write_file", {"path": LONG, "content": "x"}),
        ("write_file", {"path": f"d/{LONG}/x.txt", "content": "x"}),
        (
            "write_file",
            {"path": "é" * 200 if sys.platform != "win32" else "é" * 256, "content": "x"},
        ),
        ("run_cmd", {"cmd": f"python {LONG}.py"}),
        ("list_dir", {"path": "x/" * 2500}),
    ],
)
def test_over_long_names_get_a_clear_tool_error(
    ws: Workspace, name: str, args: dict[str, Any]
) -> None:
    result = ws.run(name, args)
    assert not result.ok
    assert "use a shorter" in result.text, result.text
    assert "failed:" not in result.text and "internal error" not in result.text
    assert not (ws.root / "d").exists()


@pytest.mark.skipif(
    under_wine(),
    reason="Wine 8's GetFinalPathNameByHandleW fails (ERROR_MORE_DATA) on a path over 260 "
    "characters where Windows returns the size it needs",
)
def test_a_name_of_255_bytes_can_be_written_and_read(ws: Workspace) -> None:
    name = "b" * 251 + ".txt"
    assert ws.run("write_file", {"path": name, "content": "long name"}).ok
    assert ws.run("read_file", {"path": name}).text == "long name"
    assert ws.run("write_file", {"path": name, "content": "replaced"}).ok
    assert (ws.root / name).read_text() == "replaced"


def test_a_stub_written_again_is_told_again(ws: Workspace) -> None:
    """The 1.5B's stub, verbatim, sent three times (H100 run): the note on the first
    write was no longer the latest thing it read."""
    stub = "def rps_game(player1, player2):\n    # Game logic goes here\n    pass"
    first = ws.run("write_file", {"path": "rps_game.py", "content": stub})
    assert first.text.endswith("; but rps_game is only `pass`: write its code")
    again = ws.run("write_file", {"path": "rps_game.py", "content": stub})
    assert again.text == (
        "'rps_game.py' already has this content (67 bytes); and still rps_game is only "
        "`pass`: write its code"
    )
    fine = "print('hi')\n"
    ws.run("write_file", {"path": "hi.py", "content": fine})
    assert ws.run("write_file", {"path": "hi.py", "content": fine}).text.endswith("(12 bytes)")


def test_new_text_found_inside_another_line_is_no_edit_made_already(ws: Workspace) -> None:
    """Qwen2.5-Coder-1.5B's refactor: `area(kind, size)` is part of line 1, `def area(kind,
    size):`; the edit replacing `total_area` was never made, and was told it was, six
    rounds running. It is shown where its old text is not instead."""
    (ws.root / "shapes.py").write_text("def area(kind, size):\n    return size * size\n")
    edit = {"path": "shapes.py", "old": "total_area", "new": "area(kind, size)"}
    result = ws.run("replace_in_file", edit)
    assert not result.ok
    assert "made already" not in result.text and "old was not found" in result.text
    assert "def area(kind, size):" in result.text  # the short file, shown whole
    # An edit made already, its new text where a line's code starts, is still named.
    made = {"path": "shapes.py", "old": "return size ** 2", "new": "return size * size"}
    again = ws.run("replace_in_file", made)
    assert not again.ok and "made already" in again.text and "(line 2)" in again.text


def test_an_edit_that_drops_a_name_another_file_imports_is_refused(ws: Workspace) -> None:
    """Asked to move shapes.py's area formulas into one function, Qwen2.5-Coder-1.5B
    renamed total_area, which test_shapes.py imports: the tests could only break."""
    shapes = "def total_area(shapes):\n    return sum(s * s for _, s in shapes)\n"
    (ws.root / "shapes.py").write_text(shapes)
    (ws.root / "test_shapes.py").write_text("from shapes import total_area\n")
    edit = {"path": "shapes.py", "old": "total_area", "new": "area"}
    result = ws.run("replace_in_file", edit)
    assert not result.ok
    assert result.text.startswith(
        "not changed: 'shapes.py' defines total_area, which test_shapes.py imports"
    ), result.text
    assert (ws.root / "shapes.py").read_text() == shapes
    # An edit that keeps the name is made.
    body = {"path": "shapes.py", "old": "s * s", "new": "s ** 2"}
    assert ws.run("replace_in_file", body).ok


def test_a_write_to_a_folder_s_path_makes_the_folder(ws: Workspace) -> None:
    """Qwen2.5-Coder-1.5B's mathx plan on the CPU, verbatim, began "write_file mathx/", and
    it sent `{"path": "mathx/", "content": "This is the initial content of the directory."}`:
    written as a file, mathx stood where the package's folder had to be, and each write of
    its files was refused as a path "changed after it was checked"."""
    made = ws.run(
        "write_file",
        {"path": "mathx/", "content": "This is the initial content of the directory."},
    )
    assert made.ok and made.text.startswith("folder mathx/ created.")
    assert (ws.root / "mathx").is_dir()
    assert ws.run("write_file", {"path": "mathx/__init__.py", "content": "X = 1\n"}).ok
    # a file where a folder of the path must be is named as such
    (ws.root / "notes").write_text("a file\n")
    refused = ws.run("write_file", {"path": "notes/a.py", "content": "X = 1\n"})
    assert not refused.ok
    assert refused.text == (
        "'notes' is a file, not a folder, so 'notes/a.py' cannot be written in it: "
        "write the file under another folder name, or replace 'notes' with a folder first"
    )
    assert (ws.root / "notes").read_text() == "a file\n"


def test_a_rewrite_that_drops_what_a_program_calls_says_so(ws: Workspace) -> None:
    """Qwen2.5-Coder-1.5B's greet.py on the CPU, verbatim: the program the goal asks for,
    then, replanned by the small verifier's doubt, the function alone."""
    program = (
        "def greet(NAME):\n    print(f'Hello, {NAME}!')\n    return 0\n\nif __name__ == "
        "'__main__':\n    import sys\n    if len(sys.argv) > 1:\n        greet(sys.argv[1])\n"
        "    else:\n        print('Usage: python greet.py NAME')\n        sys.exit(2)"
    )
    first = ws.run("write_file", {"path": "greet.py", "content": program})
    assert first.ok and "no longer calls" not in first.text
    alone = "def greet(NAME):\n    print(f'Hello, {NAME}!')\n    return 0"
    second = ws.run("write_file", {"path": "greet.py", "content": alone})
    assert second.ok and second.text == (
        "wrote 58 bytes to 'greet.py' (replaced); but it no longer calls its code when run "
        "(its `__main__` block is gone)"
    )
    # a module that never called anything is not told so
    ws.run("write_file", {"path": "lib.py", "content": alone})
    assert "no longer" not in ws.run("write_file", {"path": "lib.py", "content": alone + "\n"}).text


def test_a_package_s_init_run_as_a_script_is_no_fault_of_its_imports(ws: Workspace) -> None:
    """The 1.5B's mathx replan ran `python mathx/__init__.py` (the CPU): its relative
    imports, right for the package, failed, and each failure sent the run back to a write
    of the `__init__.py`, three times."""
    init = "from .add import add as add\n"
    _seed(ws, {"mathx/__init__.py": init, "mathx/add.py": "def add(a, b):\n    return a + b\n"})
    ran = ws.run("run_cmd", {"cmd": "python mathx/__init__.py"})
    assert "attempted relative import with no known parent package" in ran.text
    assert (
        "NOTE: mathx/__init__.py is a module of the package mathx: run as a script it has no "
        "package, so its relative imports (from .x import ...) fail, though mathx imports "
        "them as it should."
    ) in ran.text, ran.text
    assert "broken" not in ran.facts, ran.facts  # no write of the file is asked for
    # A script that is no package's, failing the same way, is at fault: it gets no such
    # note, and its run goes back to it.
    _seed(ws, {"tools/run.py": init})
    other = ws.run("run_cmd", {"cmd": "python tools/run.py"})
    assert "NOTE: tools/run.py" not in other.text
    assert other.facts["broken"][0].startswith("tools/run.py: ImportError"), other.facts


def test_a_test_run_given_a_file_that_is_not_there_says_to_write_it(ws: Workspace) -> None:
    """The 1.5B wrote its mathx tests as mathx/tests/main.py, then ran pytest and ruff on
    tests/test_mathx.py, the file the goal names, six times (the CPU), and edited its
    tests to hold ruff's "E902 No such file or directory"."""
    _seed(ws, {"mathx/main.py": "def add(a, b):\n    return a + b\n"})
    _seed(ws, {"mathx/tests/main.py": "def test_add():\n    assert True\n"})
    note = (
        "NOTE: tests/test_mathx.py does not exist: no run can check it. Write it first "
        "(write_file tests/test_mathx.py), then run this again."
    )
    ran = ws.run("run_cmd", {"cmd": "python -m pytest tests/test_mathx.py"})
    assert "file or directory not found: tests/test_mathx.py" in ran.text
    assert note in ran.text, ran.text
    if shutil.which("ruff") is not None:
        checked = ws.run("run_cmd", {"cmd": "ruff check --no-cache tests/test_mathx.py"})
        assert "E902" in checked.text and note in checked.text, checked.text
    # Once it is there, nothing is said.
    _seed(ws, {"tests/test_mathx.py": "def test_add():\n    assert True\n"})
    assert "NOTE" not in ws.run("run_cmd", {"cmd": "python -m pytest tests/test_mathx.py"}).text
