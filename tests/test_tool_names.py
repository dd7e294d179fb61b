"""No dead end on a tool's name or an argument's shape (localagent/tools/aliases.py,
localagent/tools/arguments.py): a name that clearly means a tool runs it and the
observation says so, any other name gets the nearest ones, arguments under other names
or in the other obvious shape are read as the tool takes them. The last tests drive the
real loop against the fake server with the replies real small models sent."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import pytest

from localagent.config.settings import Settings
from localagent.journal import Journal
from localagent.loop.agent import Agent
from localagent.models import make_model
from localagent.models.config import ModelConfig
from localagent.models.fake import FakeServer
from localagent.state import DueCall, next_due
from localagent.system.stopping import StopSignal
from localagent.textcalls.names import FOLDER_ALIASES, TOOL_ALIASES
from localagent.tools import ToolContext, ToolResult, canonical_call, catalog, execute
from localagent.tools.registry import ToolRegistry, make_tool
from localagent.tools.tool import Policy


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    root = tmp_path / "ws"
    root.mkdir()
    (root / ".agent_context").mkdir()
    (root / "a.py").write_text("print('a')\n")
    (root / "old.txt").write_text("one two\n")
    return ToolContext(root)


def ran_as(result: ToolResult, alias: str, tool: str) -> bool:
    return result.text.startswith(f"({alias} ran as {tool}")


# One call per family: the arguments the real tool takes, and what shows it ran.
FAMILIES: dict[str, tuple[dict[str, Any], str]] = {
    "write_file": ({"path": "new.py", "content": "x = 1\n"}, "new.py"),
    "run_cmd": ({"cmd": "python a.py"}, "exit code 0"),
    "read_file": ({"path": "a.py"}, "print('a')"),
    "list_dir": ({"path": "."}, "a.py"),
    "search_files": ({"pattern": "print"}, "a.py:1"),
    "find_files": ({"glob": "*.py"}, "a.py"),
    "append_file": ({"path": "old.txt", "content": "three\n"}, "old.txt"),
    "mark_subtask_complete": ({"success": True, "reason": "it is done"}, "marked completed"),
}


@pytest.mark.parametrize("tool", list(FAMILIES))
def test_every_alias_of_a_family_runs_its_tool_and_says_so(ctx: ToolContext, tool: str) -> None:
    args, shown = FAMILIES[tool]
    for alias in TOOL_ALIASES[tool]:
        result = execute(ctx, alias, args)
        assert result.ok, (alias, result.text)
        assert ran_as(result, alias, tool) and shown in result.text, (alias, result.text)


def test_the_aliases_that_change_or_move_files(ctx: ToolContext) -> None:
    for index, alias in enumerate(TOOL_ALIASES["replace_in_file"]):
        (ctx.root / "e.txt").write_text(f"old {index}\n")
        result = execute(ctx, alias, {"path": "e.txt", "old": "old", "new": "new"})
        assert result.ok and ran_as(result, alias, "replace_in_file"), result.text
        assert (ctx.root / "e.txt").read_text() == f"new {index}\n"
    for alias in TOOL_ALIASES["move_file"]:
        (ctx.root / "m.txt").write_text("m")
        assert execute(ctx, alias, {"src": "m.txt", "dst": "moved.txt"}).ok
        assert (ctx.root / "moved.txt").exists() and not (ctx.root / "m.txt").exists()
        (ctx.root / "moved.txt").unlink()
    for alias in TOOL_ALIASES["delete_file"]:
        (ctx.root / "d.txt").write_text("d")
        result = execute(ctx, alias, {"path": "d.txt"})
        assert result.ok and ran_as(result, alias, "delete_file")
        assert not (ctx.root / "d.txt").exists()


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
    ).stdout


def test_the_git_aliases_and_a_list_of_paths_for_git_commit(ctx: ToolContext) -> None:
    _git(ctx.root, "init", "-q")
    _git(ctx.root, "config", "user.email", "a@example.com")
    _git(ctx.root, "config", "user.name", "A")
    (ctx.root / "my file.txt").write_text("b\n")
    # Refused before: "Input should be a valid string" though the tool takes the names.
    result = execute(ctx, "git_commit", {"message": "m", "paths": ["a.py", "my file.txt"]})
    assert result.ok, result.text
    assert _git(ctx.root, "ls-files").split("\n")[:2] == ["a.py", "my file.txt"]
    (ctx.root / "a.py").write_text("print('b')\n")
    assert ran_as(execute(ctx, "diff", {}), "diff", "git_diff")
    result = execute(ctx, "commit", {"msg": "second", "paths": '["a.py"]'})
    assert result.ok and ran_as(result, "commit", "git_commit"), result.text
    assert "msg as message" in result.text
    assert _git(ctx.root, "log", "--format=%s") == "second\nm\n"


@pytest.mark.parametrize(
    "name", ["WRITE_FILE", "WriteFile", "writeFile", "write-file", "Write File"]
)
def test_a_name_in_another_case_or_spelling_is_the_tool(ctx: ToolContext, name: str) -> None:
    result = execute(ctx, name, {"path": "b.py", "content": "b"})
    assert result.ok and ran_as(result, name, "write_file")
    assert (ctx.root / "b.py").read_text() == "b"


def test_a_folder_is_made_as_part_of_writing_a_file(ctx: ToolContext) -> None:
    for alias in FOLDER_ALIASES:
        result = execute(ctx, alias, {"path": f"pkg/{alias}"})
        assert result.ok and result.changed, (alias, result.text)
        assert (ctx.root / "pkg" / alias).is_dir()
        assert "write_file creates missing folders itself" in result.text
    again = execute(ctx, "mkdir", {"path": "pkg/mkdir"})
    assert again.ok and not again.changed and "already exists" in again.text
    for outside in ("../escape", ".agent_context/x", "/tmp/x"):
        refused = execute(ctx, "create_dir", {"path": outside})
        assert not refused.ok, outside
    assert not (ctx.root.parent / "escape").exists()
    assert not (ctx.root / ".agent_context" / "x").exists()


def test_without_write_file_a_folder_name_means_no_tool(ctx: ToolContext) -> None:
    reading = catalog().select(["read_file", "list_dir"])
    result = reading.execute(ctx, "mkdir", {"path": "pkg"})
    assert not result.ok and result.text.startswith("unknown tool 'mkdir'")
    assert not (ctx.root / "pkg").exists()
    # An alias of a tool the run does not have is unknown too.
    assert reading.execute(ctx, "create_file", {"path": "x", "content": "x"}).ok is False
    assert not (ctx.root / "x").exists()


@pytest.mark.parametrize(
    ("name", "first"),
    [
        ("edit_file", "replace_in_file"),
        ("walk_directorywrite_filewrite_filewrite_file", "write_file"),  # ellmer#929
        ("readfiles", "read_file"),
        ("run_tests", "run_cmd"),
    ],
)
def test_any_other_name_is_refused_with_the_nearest_names_first(
    ctx: ToolContext, name: str, first: str
) -> None:
    before = sorted(path.name for path in ctx.root.iterdir())
    result = execute(ctx, name, {"path": "a.py", "content": "gone"})
    assert not result.ok
    assert result.text.startswith(f"unknown tool {name!r}; did you mean {first}")
    assert "Available tools: list_dir, read_file" in result.text
    assert sorted(path.name for path in ctx.root.iterdir()) == before
    assert (ctx.root / "a.py").read_text() == "print('a')\n"


def search(ctx: ToolContext, query: Annotated[str, "What to look for."]) -> ToolResult:
    """Search the web (a tool of the run's own, an MCP server's say)."""
    return ToolResult(True, f"web: {query}")


def test_a_runs_own_tool_is_never_shadowed_by_an_alias(ctx: ToolContext) -> None:
    tools = ToolRegistry([*catalog(), make_tool(search, Policy())])
    assert tools.execute(ctx, "search", {"query": "x"}).text == "web: x"
    assert tools.get("grep") is tools.get("search_files")


def test_arguments_under_other_names_are_read_and_said(ctx: ToolContext) -> None:
    result = execute(ctx, "write_file", {"file_path": "c.py", "contents": "c"})
    assert result.ok and result.text.startswith("(arguments read: file_path as path, contents")
    assert (ctx.root / "c.py").read_text() == "c"
    for key in ("filename", "file", "filepath"):
        assert execute(ctx, "read_file", {key: "c.py"}).ok, key
    for key in ("text", "code"):
        assert execute(ctx, "write_file", {"path": "d.py", key: "d"}).ok, key
    assert execute(ctx, "run_cmd", {"command": "python a.py"}).ok
    # Both the name and an alias of it: which one was meant is not clear.
    both = execute(ctx, "write_file", {"path": "e.py", "file_path": "f.py", "content": "e"})
    assert not both.ok and "unknown parameter 'file_path'" in both.text
    assert not (ctx.root / "e.py").exists() and not (ctx.root / "f.py").exists()


def test_arguments_in_the_other_obvious_shape_are_accepted(ctx: ToolContext) -> None:
    assert execute(ctx, "run_cmd", {"cmd": "python a.py", "timeout_sec": "30"}).ok
    assert execute(ctx, "run_cmd", {"cmd": ["python", "a.py"]}).ok
    assert execute(ctx, "run_cmd", {"cmd": "['python', 'a.py']"}).ok  # a list in XML text
    assert execute(ctx, "read_file", {"path": ["a.py"]}).ok
    assert execute(ctx, "read_file", {"path": "a.py", "end_line": "1"}).ok
    assert execute(ctx, "write_file", {"path": "n.txt", "content": 42}).ok
    assert (ctx.root / "n.txt").read_text() == "42"
    done = execute(ctx, "mark_subtask_complete", {"success": "True", "reason": ["ran it"]})
    assert done.verdict == (True, "ran it")
    # A list of lines is not obviously one text: refused, nothing written.
    lines = execute(ctx, "write_file", {"path": "l.txt", "content": ["a", "b"]})
    assert not lines.ok and "valid string" in lines.text and not (ctx.root / "l.txt").exists()


def test_spellings_of_one_call_sign_alike_for_the_loop_guard() -> None:
    written = canonical_call("write_file", {"path": "a.py", "content": "x"})
    assert canonical_call("create_file", {"file_path": "./a.py", "contents": "x"}) == written
    assert canonical_call("Write_File", {"path": "a.py", "content": "x"}) == written
    command = canonical_call("run_cmd", {"cmd": "python a.py"})
    assert canonical_call("bash", {"command": ["python", "a.py"]}) == command
    assert canonical_call("no_such_tool", {"x": 1}) == ("no_such_tool", {"x": 1})


def test_done_means_success_unless_the_model_says_otherwise(ctx: ToolContext) -> None:
    assert execute(ctx, "done", {"reason": "r"}).verdict == (True, "r")
    assert execute(ctx, "finish", {"success": False, "reason": "r"}).verdict == (False, "r")
    assert not execute(ctx, "mark_subtask", {"reason": "r"}).ok  # success is not implied


# ---- through the real loop, with what real small models sent (issue: "Real local models
# get the work done", items 2 and 9)

SERVED = [
    {"name": "tools:1.5b", "capabilities": ["completion", "tools"]},
    {"name": "no-tools:0.5b", "capabilities": ["completion"]},
]


@pytest.fixture(scope="module")
def server() -> Iterator[FakeServer]:
    rules = [
        {"kind": "chat", "match": "MATHX", "in": "all", "times": 1, "reply": {"tool_calls": [
            {"name": "create_dir", "arguments": {"path": "mathx"}},
            {"name": "create_file", "arguments": {
                "path": "mathx/game_logic.py", "content": "def play():\n    return 1\n"}},
        ]}},
        {"kind": "chat", "match": "TERMINAL", "times": 1, "reply": {
            "content": 'Mark_subtask_complete(success=true, reason="Open a terminal")'}},
        {"kind": "chat", "match": "", "reply": {"content": "nothing more"}},
    ]  # fmt: skip
    with FakeServer({"models": SERVED, "rules": rules}) as fake:
        yield fake


def _loop(server: FakeServer, root: Path, model: str, goal: str) -> list[dict[str, Any]]:
    """One round of the agent on `goal` and the calls it gave; the journal's records."""
    settings = Settings(ollama_host=server.url, model=model, verify=False, retry_deadline=5.0)
    journal = Journal(root)
    journal.load()
    journal.append("goal_started", goal=goal, model=model, settings={})
    journal.append("plan", tasks=[{"description": goal, "subtasks": [goal]}])
    llm = make_model(ModelConfig.of(settings), StopSignal())
    agent = Agent(journal, llm, settings, ToolContext(root), StopSignal())
    try:
        agent.step()
        while isinstance(next_due(agent.state), DueCall):
            agent.step()
        return list(journal.records())
    finally:
        journal.close()


def test_invented_tool_names_of_a_real_run_do_the_work(server: FakeServer, tmp_path: Path) -> None:
    records = _loop(server, tmp_path, "tools:1.5b", "Create the MATHX package")
    finished = [r for r in records if r["type"] == "action_finished"]
    assert [(r["tool"], r["ok"]) for r in finished] == [("create_dir", True), ("create_file", True)]
    assert "folder mathx/ created" in finished[0]["result"]
    assert finished[1]["result"].startswith("(create_file ran as write_file)")
    assert (tmp_path / "mathx" / "game_logic.py").read_text() == "def play():\n    return 1\n"
    started = [r["signature"] for r in records if r["type"] == "action_started"]
    assert started[1].startswith("write_file ")  # the loop guard signs what runs


def test_the_small_models_capitalised_python_call_is_a_call(
    server: FakeServer, tmp_path: Path
) -> None:
    records = _loop(server, tmp_path, "no-tools:0.5b", "Open a TERMINAL")
    rounds = [r for r in records if r["type"] == "llm_call" and r["purpose"] == "round"]
    assert rounds[0]["recogniser"] == "python"
    assert [c["name"] for c in rounds[0]["tool_calls"]] == ["mark_subtask_complete"]
    assert rounds[0]["tool_calls"][0]["arguments"] == {"success": True, "reason": "Open a terminal"}
    assert not [r for r in records if r["type"] == "feedback" and r.get("format_error")]
