"""What resuming a state would run: the programs its settings name and the calls it owes.

Shown before a journal another agent wrote is adopted, so every value is read as
untrusted: any shape, printed as escaped JSON (no control characters reach the
terminal) and clipped.
"""

from __future__ import annotations

import json
from typing import Any

from localagent.state.due import pending_calls
from localagent.state.model import State

SHOWN_CHARS = 300


def shown(value: Any) -> str:
    """`value` as one line of escaped JSON, clipped."""
    text = json.dumps(value, ensure_ascii=True, default=repr)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."


def _table(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _mcp(settings: dict[str, Any]) -> list[str]:
    found = []
    for name, server in _table(_table(settings.get("mcp")).get("servers")).items():
        server = _table(server)
        if server.get("url") is not None:
            what = f"connects to {shown(server.get('url'))}"
            if server.get("headers"):
                what += f" sending the headers {shown(server.get('headers'))}"
        else:
            what = f"runs {shown([server.get('command'), *(server.get('args') or [])])}"
            if server.get("env"):
                what += f" with the environment {shown(server.get('env'))}"
        found.append(f"MCP server {shown(name)}: {what}")
    return found


def _settings(settings: dict[str, Any]) -> list[str]:
    found = [
        f"talks to the model server at {shown(settings[key])}, sending it the workspace's code"
        for key in ("ollama_host", "base_url")
        if settings.get(key) is not None
    ]
    found += _mcp(settings)
    for name, delegate in _table(settings.get("delegates")).items():
        found.append(f"delegate {shown(name)}: runs {shown(_table(delegate).get('command'))}")
    labels = {
        "allowed_commands": "commands the model may run",
        "checks": "goal checks",
        "tools": "tools",
    }
    for key, label in labels.items():
        if settings.get(key):
            found.append(f"{label}: {shown(settings[key])}")
    if settings.get("prompts"):
        names = sorted(_table(settings["prompts"])) or settings["prompts"]
        found.append(f"its own prompts (replacing {shown(names)})")
    return found


def _owed(state: State) -> list[str]:
    found = []
    if state.open_action is not None:
        action = state.open_action
        found.append(f"an interrupted call, settled first: {action.tool} {shown(action.args)}")
    for call in pending_calls(state):
        found.append(f"an owed tool call: {shown(call.get('name'))} {shown(call.get('arguments'))}")
    if state.verifying is not None:
        for check in state.verifying.checks:
            if check.get("id") not in state.verifying.results:
                found.append(f"an owed goal check: {shown(check.get('cmd'))}")
    return found


def would_run(state: State) -> list[str]:
    """One line for each program, setting that chooses programs, and owed call."""
    return _settings(_table(state.settings)) + _owed(state)
