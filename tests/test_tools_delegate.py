"""delegate: a coding-agent program the user configured, run in the workspace with its
timeout, and off unless one is configured."""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path

import psutil
import pytest
from support import TREE_SCRIPT, call, cli_env, done, plan_rule, records, run_cli

from localagent.config.runconfig import RUN_SETTINGS
from localagent.config.settings import Delegate
from localagent.config.userconfig import config_path, load_settings
from localagent.models.fake import FakeServer
from localagent.system.errors import UsageError
from localagent.system.sandbox import CommandPolicy
from localagent.tools import ToolContext, ToolResult, catalog, execute, run_tools

# A stand-in coding agent: does what the task says to the file it names, in its folder.
AGENT_SCRIPT = """
import sys
from pathlib import Path
task = sys.argv[1]
Path("done.txt").write_text(task + "\\n", encoding="utf-8")
print("agent did:", task)
sys.exit(3 if "fail" in task else 0)
"""


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def agent_script(ws: Path) -> Path:
    # In the workspace: a sandboxed agent sees a /tmp of its own, not the tests' folders.
    path = ws / "agent.py"
    path.write_text(AGENT_SCRIPT)
    return path


def run(root: Path, delegates: dict[str, tuple[tuple[str, ...], float]], **args: str) -> ToolResult:
    agents = {name: Delegate(command=c, timeout_sec=t) for name, (c, t) in delegates.items()}
    return execute(ToolContext(root, delegates=agents), "delegate", args)


def working_in(root: Path) -> list[int]:
    """The processes that still work in root."""
    found = []
    for proc in psutil.process_iter():
        try:
            if proc.status() != psutil.STATUS_ZOMBIE and Path(proc.cwd()) == root:
                found.append(proc.pid)
        except (psutil.Error, OSError):
            continue
    return found


def write_config(text: str) -> None:
    config_path().parent.mkdir(parents=True, exist_ok=True)
    config_path().write_text(text, encoding="utf-8")


def test_the_configured_agent_runs_in_the_workspace_with_the_task(
    ws: Path, agent_script: Path
) -> None:
    agents = {"helper": ((sys.executable, str(agent_script), "{task}"), 30.0)}
    task = "add a; then `rm -rf /` $(x) 'quoted'"  # one argument, never through a shell
    result = run(ws, agents, agent="helper", task=task)
    assert result.ok, result.text
    assert result.returncode == 0
    assert (ws / "done.txt").read_text(encoding="utf-8") == task + "\n"
    assert "agent did: " + task in result.text
    assert not result.facts


def test_the_placeholder_may_sit_inside_an_argument(ws: Path) -> None:
    script = ws / "opt.py"
    script.write_text("import sys\nprint(sys.argv[1:])\n")
    agents = {"opt": ((sys.executable, str(script), "--message={task}", "--yes"), 30.0)}
    result = run(ws, agents, agent="opt", task="fix it")
    assert result.ok and "['--message=fix it', '--yes']" in result.text


def test_a_failing_agent_gives_its_exit_code(ws: Path, agent_script: Path) -> None:
    agents = {"helper": ((sys.executable, str(agent_script), "{task}"), 30.0)}
    result = run(ws, agents, agent="helper", task="fail now")
    assert not result.ok and result.returncode == 3 and "exit code 3" in result.text


def test_a_timeout_kills_the_agent_and_its_children(ws: Path) -> None:
    tree = ws / "tree.py"
    tree.write_text(TREE_SCRIPT)
    agents = {"slow": ((sys.executable, str(tree), "{task}"), 1.0)}
    started = time.monotonic()
    result = run(ws, agents, agent="slow", task="0")
    assert time.monotonic() - started < 8
    assert not result.ok and result.returncode is None
    assert "timed out after 1s" in result.text
    # Inside a sandbox's PID namespace the printed pids are not this machine's.
    assert re.findall(r"pid=(\d+)", result.text), result.text
    deadline = time.monotonic() + 3
    while (left := working_in(ws)) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert left == []


def test_an_unknown_agent_lists_the_configured_ones(ws: Path, agent_script: Path) -> None:
    agents = {
        "aider": ((sys.executable, str(agent_script), "{task}"), 30.0),
        "codex": ((sys.executable, str(agent_script), "{task}"), 30.0),
    }
    result = run(ws, agents, agent="claude", task="x")
    assert not result.ok and "'claude'" in result.text and "aider, codex" in result.text
    assert not (ws / "done.txt").exists()


def test_bad_tasks_are_refused(ws: Path, agent_script: Path) -> None:
    agents = {"helper": ((sys.executable, str(agent_script), "{task}"), 30.0)}
    for task in ("", "  ", "--version", "a\x00b"):
        result = run(ws, agents, agent="helper", task=task)
        assert not result.ok and "task" in result.text, task
    assert not (ws / "done.txt").exists()


def test_a_missing_program_is_a_clear_observation(ws: Path) -> None:
    agents = {"gone": (("no-such-agent-4711", "{task}"), 30.0)}
    result = run(ws, agents, agent="gone", task="x")
    assert not result.ok and "no-such-agent-4711" in result.text and "not found" in result.text


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX executables (no .exe)")
def test_a_program_by_name_is_found_only_outside_the_workspace(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    planted = ws / "bin" / "helper-agent"
    planted.parent.mkdir()
    planted.write_text("#!/bin/sh\ntouch pwned\n")
    planted.chmod(0o755)
    (ws / "helper-agent").write_bytes(planted.read_bytes())
    (ws / "helper-agent").chmod(0o755)
    monkeypatch.chdir(ws)
    monkeypatch.setenv("PATH", os.pathsep.join([".", "bin", str(ws / "bin"), "/usr/bin", "/bin"]))
    result = run(ws, {"h": (("helper-agent", "{task}"), 30.0)}, agent="h", task="x")
    assert not result.ok and "not found" in result.text, result.text
    assert not (ws / "pwned").exists()
    installed = tmp_path / "installed"
    installed.mkdir()
    (installed / "helper-agent").write_text('#!/bin/sh\necho "ran: $1"\n')
    (installed / "helper-agent").chmod(0o755)
    monkeypatch.setenv("PATH", os.pathsep.join([".", str(installed), "/usr/bin", "/bin"]))
    # In a sandbox too, whose /tmp is its own: the program's folder stays in view.
    for sandbox in ("auto", "off"):
        agents = {"h": Delegate(command=("helper-agent", "{task}"))}
        ctx = ToolContext(ws, delegates=agents, commands=CommandPolicy(sandbox=sandbox))  # type: ignore[arg-type]
        found = execute(ctx, "delegate", {"agent": "h", "task": "x"})
        assert found.ok and "ran: x" in found.text, found.text


def test_off_unless_configured() -> None:
    assert "delegate" in catalog().names()
    assert "delegate" not in run_tools(None, {}).names()
    assert "delegate" not in run_tools(("read_file", "write_file"), {"aider": 1}).names()
    chosen = run_tools(None, {"aider": 1, "codex": 1})
    default = [tool.name for tool in catalog() if tool.policy.default]
    assert chosen.names() == [n for n in catalog().names() if n in default or n == "delegate"]
    spec = next(s for s in chosen.specs() if s.name == "delegate")
    assert "aider, codex" in spec.description
    assert "aider" not in str(catalog().get("delegate").spec)  # type: ignore[union-attr]
    policy = catalog().get("delegate").policy  # type: ignore[union-attr]
    assert (policy.resume, policy.spawns, policy.default) == ("never", True, False)


# ---- settings ------------------------------------------------------------------------


def test_delegates_load_from_the_config_file() -> None:
    write_config(
        '[delegates.aider]\ncommand = ["aider", "--message", "{task}", "--yes"]\n'
        '[delegates.codex]\ncommand = ["codex", "exec", "{task}"]\ntimeout_sec = 1200\n'
    )
    settings = load_settings()
    assert settings.delegates["aider"].command == ("aider", "--message", "{task}", "--yes")
    assert settings.delegates["aider"].timeout_sec == 600
    assert settings.delegates["codex"].timeout_sec == 1200
    assert "delegates" in RUN_SETTINGS
    assert load_settings().delegates == settings.delegates


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[delegates.a]\ncommand = []\n", "empty"),
        ('[delegates.a]\ncommand = ["aider", "--yes"]\n', "{task}"),
        ('[delegates.a]\ncommand = "aider {task}"\n', "list"),
        ('[delegates.a]\ncommand = ["aider", 3, "{task}"]\n', "list"),
        ('[delegates.a]\ncommand = ["", "{task}"]\n', "empty"),
        ('[delegates.a]\ncommand = ["{task}", "x"]\n', "program"),
        ('[delegates.a]\ncommand = ["bin/aider", "{task}"]\n', "absolute path"),
        ('[delegates.a]\ncommand = ["aider", "{task}"]\ntimeout_sec = "long"\n', "timeout_sec"),
        ('[delegates.a]\ncommand = ["aider", "{task}"]\ntimeout_sec = 0\n', "timeout_sec"),
        ('[delegates.a]\ncommand = ["aider", "{task}"]\ntimeout = 5\n', "timeout"),
        ('delegates = ["aider"]\n', "[delegates.NAME]"),
        ('[delegates."bad name"]\ncommand = ["aider", "{task}"]\n', "name"),
    ],
)
def test_bad_delegates_are_a_clear_usage_error(text: str, problem: str) -> None:
    write_config(text)
    with pytest.raises(UsageError) as caught:
        load_settings()
    assert "delegates" in caught.value.message and problem in caught.value.message


def test_the_delegate_tool_needs_a_configured_agent() -> None:
    with pytest.raises(UsageError, match=r"delegate.*\[delegates\.NAME\]"):
        load_settings(tools="read_file,delegate")


# ---- through the CLI -----------------------------------------------------------------


def test_the_model_delegates_through_the_cli(ws: Path, agent_script: Path) -> None:
    command = json.dumps([sys.executable, str(agent_script), "{task}"])
    write_config(f"[delegates.helper]\ncommand = {command}\ntimeout_sec = 60\n")
    scenario = {
        "rules": [
            plan_rule(("Delegate", ["Have the helper write done.txt"])),
            {"match": "agent did: write done.txt", "reply": done("the helper wrote done.txt")},
            {
                "match": "ACTIVE SUBTASK: Have the helper",
                "in": "last",
                "reply": call("delegate", agent="helper", task="write done.txt"),
            },
        ]
    }
    with FakeServer(scenario) as server:
        result = run_cli(cli_env(server.url), "start", "Delegate", "-w", str(ws), "--foreground")
        first_round = next(r for r in server.chat_requests if not r.get("format"))
    assert result.returncode == 0, result.stderr
    assert (ws / "done.txt").read_text(encoding="utf-8") == "write done.txt\n"
    tools = {t["function"]["name"]: t["function"] for t in first_round["tools"]}
    assert "Configured agents: helper." in tools["delegate"]["description"]
    recs = records(ws)
    assert recs[0]["settings"]["delegates"]["helper"]["command"][-1] == "{task}"
    started = next(r for r in recs if r["type"] == "action_started")
    assert started["tool"] == "delegate" and started["marker"]


def test_a_bad_delegate_in_the_config_file_exits_2(ws: Path) -> None:
    write_config('[delegates.helper]\ncommand = ["aider", "--yes"]\n')
    result = run_cli(cli_env("http://127.0.0.1:9"), "start", "x", "-w", str(ws), "--foreground")
    assert result.returncode == 2
    assert "delegates.helper.command" in result.stderr and "{task}" in result.stderr
