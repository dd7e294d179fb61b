"""Tools as our own type (`ToolSpec`); the backends write the wire shape. An MCP tool
whose parameter has no JSON type (`str | int`: anyOf) works with a model that has no
native tool calling: its text protocol lists the tool, in the first round and on resume."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from support import cli_env, plan_rule, records, run_cli

from localagent.config.userconfig import config_path
from localagent.models.fake import FakeServer

SERVER = Path(__file__).with_name("mcp_server.py")
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="the MCP server's stdio")


def _mcp_config() -> None:
    lines = ["[mcp.servers.t]", f"command = {json.dumps(sys.executable)}"]
    lines += [f"args = {json.dumps([str(SERVER)])}", 'tools = ["pick"]', "trusted = true"]
    config_path().parent.mkdir(parents=True, exist_ok=True)
    config_path().write_text("\n".join(lines) + "\n", encoding="utf-8")


def _text_call(name: str, **arguments: object) -> dict[str, object]:
    return {"content": json.dumps({"name": name, "arguments": arguments})}


TEXT_ONLY = {
    "models": [{"name": "gpt-oss:20b", "capabilities": ["completion"]}],
    "rules": [plan_rule(("Pick", ["Pick a value"]))],
    "replies": [
        _text_call("t__pick", value=3),
    ],
    "default": _text_call("mark_subtask_complete", success=True, reason="picked"),
}


@posix_only
def test_an_untyped_mcp_parameter_works_with_a_model_without_native_tools(tmp_path: Path) -> None:
    _mcp_config()
    with FakeServer(TEXT_ONLY) as server:
        env = cli_env(server.url, LOCALAGENT_VERIFY="0", LOCALAGENT_RETRY_DEADLINE="2")
        ran = run_cli(env, "start", "Pick a value", "-w", str(tmp_path), "--foreground")
        rounds = [r for r in server.chat_requests if not r.get("format")]
    assert ran.returncode == 0, ran.stdout + ran.stderr
    system = rounds[0]["messages"][0]["content"]
    assert "- t__pick(value: " in system, system
    assert all("tools" not in body for body in rounds)  # no native tools: nothing on the wire
    finished = [r for r in records(tmp_path) if r["type"] == "action_finished"]
    assert finished and finished[0]["result"] == "picked: 3", finished
