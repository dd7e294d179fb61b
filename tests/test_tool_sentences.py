"""A call named with a sentence (localagent/tools/readings.py): Qwen2.5-Coder-0.5B on
llama-server named its calls after its subtask, "run python hello_world.py" and then
"run python", each with `{"cmd": "python hello_world.py"}`; both came back "unknown
tool" and the hello goal failed with its file written. A sentence whose verb says one
tool, with arguments that fit it, runs that tool and the observation shows the right
call; anything else runs nothing and the refusal shows the right call built from what
the model sent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import pytest
from support import backend_env, done, plan_rule, records, run_cli

from localagent.models.fake import FakeServer
from localagent.tools import ToolContext, ToolResult, canonical_call, execute
from localagent.tools.catalog import SMALL_MODEL_TOOLS, catalog
from localagent.tools.examples import example_call
from localagent.tools.registry import Policy, ToolRegistry, make_tool

GOAL = "Write a hello world script"
PLAN = plan_rule((GOAL, ["write_file hello_world.py", "run python hello_world.py"]))
# The replies of the real run, verbatim from its journal (rounds 1 to 4).
WROTE = (
    '{"name": "write_file hello_world.py", "arguments": {"path": "hello_world.py", '
    '"content": "print(\'Hello, World!\')"}'
)
RAN_THEN_WROTE_AGAIN = (
    '{"name": "run python hello_world.py", "arguments": {"cmd": "python hello_world.py"}}\n'
    '{"name": "write_file hello_world.py", "arguments": {"path": "hello_world.py", '
    '"content": "print(\'Hello, World!\')"}\n'
    '{"name": "write_file", "arguments": {"path": "hello_world.py", '
    '"content": "print(\'Hello, World!\')"}}\n'
)
RAN_TWICE = (
    '{"name": "run python hello_world.py", "arguments": {"cmd": "python hello_world.py"}}\n'
    '{"name": "run python", "arguments": {"cmd": "python hello_world.py"}}\n'
)
RAN_AS_RUN_PYTHON = '{"name": "run python", "arguments": {"cmd": "python hello_world.py"}}\n'
HELLO = "print('Hello, World!')\n"
RUN_CMD = '{"name": "run_cmd", "arguments": {"cmd": "python hello_world.py"}}'


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    root = tmp_path / "ws"
    root.mkdir()
    (root / ".agent_context").mkdir()
    (root / "hello_world.py").write_text(HELLO)
    return ToolContext(root)


def test_the_hello_goal_with_the_real_replies_completes(tmp_path: Path) -> None:
    # The real run's four rounds in order; each of the last three ran nothing there.
    scenario: dict[str, Any] = {"models": [{"name": "qwen2.5-coder:0.5b"}], "llama_cpp": True}
    real = [WROTE, RAN_THEN_WROTE_AGAIN, RAN_TWICE, RAN_AS_RUN_PYTHON]
    replies = [{"content": content} for content in real]
    scenario |= {"rules": [PLAN], "replies": replies, "default": done("it printed Hello")}
    with FakeServer(scenario) as server:
        given = {"OLLAMA_MODEL": "qwen2.5-coder:0.5b", "LOCALAGENT_VERIFY": "0"}
        env = backend_env("openai", server.url, LOCALAGENT_MAX_ROUNDS="6", **given)
        ran = run_cli(env, "start", GOAL, "-w", str(tmp_path), "--foreground")
        sent = server.chat_requests
    assert ran.returncode == 0, ran.stderr + ran.stdout
    assert "Traceback" not in ran.stderr
    finished = [r for r in records(tmp_path) if r["type"] == "action_finished"]
    runs = [r for r in finished if r["tool"].startswith("run python")]
    # The first run succeeds and, the model being small, ends its run subtask at once:
    # the rest of that reply is skipped and nothing is left to block.
    assert len(runs) == 1 and runs[0]["ok"]
    assert [r for r in records(tmp_path) if r["type"] == "action_blocked"] == []
    first = runs[0]["result"]
    assert f"ran as {RUN_CMD}" in first
    assert "Hello, World!" in first
    assert len(sent) == 3  # the plan and two rounds: nothing was left to ask
    completed = [r for r in records(tmp_path) if r["type"] == "subtask_completed"]
    assert [r.get("by") for r in completed] == ["write", "run"]


@pytest.mark.parametrize(
    ("name", "args", "shown"),
    [
        ("run python hello_world.py", {"cmd": "python hello_world.py"}, "Hello, World!"),
        ("run python", {"cmd": "python hello_world.py"}, "Hello, World!"),
        ("Run Python Script", {"command": "python hello_world.py"}, "Hello, World!"),
        ("python_run", {"cmd": "python hello_world.py"}, "Hello, World!"),  # fits run_cmd only
        ("show hello_world.py", {"path": "hello_world.py"}, HELLO.strip()),
        ("create hello.txt", {"path": "hello.txt", "content": "hi"}, "hello.txt"),
    ],
)
def test_a_sentence_whose_verb_and_arguments_say_one_tool_runs_it(
    ctx: ToolContext, name: str, args: dict[str, Any], shown: str
) -> None:
    result = execute(ctx, name, args)
    assert result.ok, result.text
    assert result.text.startswith(f'({name} is not a tool; it ran as {{"name": ')
    assert shown in result.text


def test_a_command_is_taken_from_a_name_only_when_it_is_a_whole_command(
    ctx: ToolContext,
) -> None:
    ran = execute(ctx, "run python hello_world.py", {})
    assert ran.ok and "Hello, World!" in ran.text
    assert '{"cmd": "python hello_world.py"}' in ran.text.split("\n")[0]
    # The same checks as any run_cmd: a script that is not there, a program not allowed.
    missing = execute(ctx, "run python gone.py", {})
    assert not missing.ok and "does not exist" in missing.text
    assert not execute(ctx, "execute rm hello_world.py", {}).ok
    assert (ctx.root / "hello_world.py").read_text() == HELLO
    # Words that are no file's name: another reading is possible, nothing runs.
    for name in ("run python to check", "run the tests", "run python"):
        refused = execute(ctx, name, {})
        assert not refused.ok and refused.text.startswith(f"unknown tool {name!r}"), name
        assert "Nothing ran. The right call looks like: " in refused.text


@pytest.mark.parametrize(
    ("name", "args", "right"),
    [
        # Two tools meant: which one is not clear.
        ("write and run", {"path": "x.py", "content": "x"}, '"name": "write_file"'),
        ("show_diff", {"path": "hello_world.py"}, None),
        # The verb's tool does not take these arguments.
        ("run_tests", {"path": "x.py", "content": "gone"}, '"name": "run_cmd"'),
        # A check named in the name: that check, on the file given.
        ("run_ruff_check", {"path": "tests/t.py"}, '{"cmd": "ruff check tests/t.py"}'),
        ("run_ruff_check", {}, '{"cmd": "ruff check ."}'),
        ("run_pytest", {"path": "tests/t.py"}, '{"cmd": "python -m pytest tests/t.py"}'),
        ("execute_script", {"path": "hello_world.py"}, '{"cmd": "python hello_world.py"}'),
        # The verb is not first and the arguments fit more than one tool.
        ("python_show", {"path": "hello_world.py"}, None),
        ("edit_file", {"path": "hello_world.py", "content": "y"}, '"name": "replace_in_file"'),
    ],
)
def test_any_other_sentence_runs_nothing_and_is_shown_the_right_call(
    ctx: ToolContext, name: str, args: dict[str, Any], right: str | None
) -> None:
    result = execute(ctx, name, args)
    assert not result.ok
    first, _, example = result.text.partition("\n")
    assert first.startswith(f"unknown tool {name!r}")
    assert example.startswith("Nothing ran. The right call looks like: {")
    assert right is None or right in example
    assert sorted(p.name for p in ctx.root.iterdir()) == [".agent_context", "hello_world.py"]
    assert (ctx.root / "hello_world.py").read_text() == HELLO


def test_a_sentence_means_only_the_runs_own_tools() -> None:
    small = catalog().select(SMALL_MODEL_TOOLS)
    assert small.get("move hello.py", {"src": "a", "dst": "b"}) is None
    assert small.get("run python", {"cmd": "python a.py"}) is small.get("run_cmd")
    assert small.get("run python") is None  # without arguments no sentence is read


def test_the_loop_guard_sees_a_sentence_as_the_call_it_runs() -> None:
    plain = canonical_call("run_cmd", {"cmd": "python hello_world.py"})
    assert canonical_call("run python", {"cmd": "python  hello_world.py"}) == plain
    assert canonical_call("run python hello_world.py", {}) == plain


def test_the_format_example_takes_its_command_from_the_subtask() -> None:
    small = catalog().select(SMALL_MODEL_TOOLS)
    shown = example_call(small, "run python -m pytest -q", "no call here")
    assert json.loads(shown.text) == {
        "name": "run_cmd",
        "arguments": {"cmd": "python -m pytest -q"},
    }
    script = example_call(small, "Run hello_world.py and check its output", "")
    assert json.loads(script.text)["arguments"] == {"cmd": "python hello_world.py"}


def search(ctx: ToolContext, query: Annotated[str, "What to look for."]) -> ToolResult:
    """Search the web (a tool of the run's own, an MCP server's say)."""
    return ToolResult(True, f"web: {query}")


def test_a_sentence_naming_another_tool_of_the_run_runs_nothing(ctx: ToolContext) -> None:
    tools = ToolRegistry([*catalog(), make_tool(search, Policy())])
    # search_files would take the query as its pattern: the server's search may be meant.
    result = tools.execute(ctx, "search the web", {"query": "hello"})
    assert not result.ok and result.text.startswith("unknown tool 'search the web'")
    assert catalog().execute(ctx, "search the web", {"query": "Hello"}).ok
