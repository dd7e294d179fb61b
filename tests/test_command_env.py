"""What a command's environment holds: a short allow-list of localagent's variables, the
workspace's virtual environment, and what `pass_env` adds; never keys or tokens."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from support import call, cli_env, done, plan_rule, records, run_cli

from localagent.config.settings import Delegate
from localagent.models.fake import FakeServer
from localagent.system.sandbox import CommandPolicy
from localagent.system.workspace_env import venv_program
from localagent.tools import ToolContext, ToolResult, execute

SECRETS = {
    "LOCALAGENT_API_KEY": "sk-localagent-secret",
    "OPENAI_API_KEY": "sk-openai-secret",
    "GITHUB_TOKEN": "ghp-secret",
    "DEPLOY_SECRET": "deploy-secret",
    "AWS_SECRET_ACCESS_KEY": "aws-secret",
}
ENV_SCRIPT = """
import json, os
print(json.dumps(dict(os.environ), sort_keys=True))
"""


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "env.py").write_text(ENV_SCRIPT, encoding="utf-8")
    return root


def seen_env(result: ToolResult) -> dict[str, str]:
    assert result.ok, result.text
    return json.loads(result.text.split("\n", 1)[1])


def run_env(root: Path, **policy: object) -> dict[str, str]:
    ctx = ToolContext(root, commands=CommandPolicy(**policy))  # type: ignore[arg-type]
    return seen_env(execute(ctx, "run_cmd", {"cmd": "python env.py"}))


@pytest.mark.parametrize("sandbox", ["auto", "off"])
def test_keys_and_tokens_never_reach_a_command(
    ws: Path, monkeypatch: pytest.MonkeyPatch, sandbox: str
) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:1")
    env = run_env(ws, sandbox=sandbox)
    assert not set(SECRETS) & set(env), env
    assert "OLLAMA_HOST" not in env and "LOCALAGENT_HOME" not in env
    assert "PATH" in env and env.get("PYTHONUTF8") == "1"


def test_pass_env_adds_names_and_patterns(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy:3128")
    monkeypatch.setenv("CORP_ONE", "1")
    monkeypatch.setenv("CORP_TWO", "2")
    monkeypatch.setenv("OTHER", "3")
    env = run_env(ws, pass_env=("HTTPS_PROXY", "CORP_*"))
    assert env["HTTPS_PROXY"] == "http://proxy:3128"
    assert env["CORP_ONE"] == "1" and env["CORP_TWO"] == "2"
    assert "OTHER" not in env


def test_the_workspace_environment_comes_first(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VIRTUAL_ENV", "/localagent/own/venv")
    python = venv_program(ws / ".venv", "python")
    python.parent.mkdir(parents=True)
    try:
        python.symlink_to(sys.executable)
    except OSError as exc:  # Windows without the symlink privilege
        pytest.skip(f"cannot make a link to the interpreter here: {exc}")
    env = run_env(ws)
    assert env["VIRTUAL_ENV"] == str(ws / ".venv")
    assert env["PATH"].startswith(str(python.parent))
    plain = ws.parent / "plain"
    plain.mkdir()
    (plain / "env.py").write_text(ENV_SCRIPT, encoding="utf-8")
    assert "VIRTUAL_ENV" not in run_env(plain)  # localagent's own is never passed on


def test_a_delegate_gets_the_variables_its_section_names(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-for-the-agent")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-secret")
    agents = {
        "helper": Delegate(
            command=(sys.executable, str(ws / "env.py"), "{task}"), pass_env=("OPENAI_API_KEY",)
        )
    }
    ctx = ToolContext(ws, delegates=agents)
    result = execute(ctx, "delegate", {"agent": "helper", "task": "show"})
    env = json.loads(result.text.split("\n", 1)[1])
    assert env["OPENAI_API_KEY"] == "sk-for-the-agent"
    assert "GITHUB_TOKEN" not in env


def test_a_key_printed_by_a_command_never_reaches_the_journal(ws: Path) -> None:
    scenario = {
        "rules": [
            plan_rule(("Show", ["Print the environment"])),
            {"match": "exit code 0", "in": "all", "reply": done("printed")},
            {
                "match": "ACTIVE SUBTASK",
                "in": "last",
                "reply": call("run_cmd", cmd="python env.py"),
            },
        ]
    }
    with FakeServer(scenario) as server:
        env = cli_env(server.url, LOCALAGENT_API_KEY="sk-run-secret", MY_TOKEN="tok-secret")
        result = run_cli(env, "start", "Show", "-w", str(ws), "--foreground")
        prompts = json.dumps(server.chat_requests)
    assert result.returncode == 0, result.stderr
    finished = next(r for r in records(ws) if r["type"] == "action_finished")
    assert '"PATH"' in finished["result"]
    for folder in (ws / ".agent_context",):
        for path in folder.rglob("*"):
            if path.is_file():
                data = path.read_bytes()
                assert b"sk-run-secret" not in data and b"tok-secret" not in data, path
    assert "sk-run-secret" not in prompts and "tok-secret" not in prompts
