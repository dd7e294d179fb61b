"""Choosing the reply to a chat request: the first rule that matches and has uses left,
else the next of `replies`, else `verdict` for a verdict request, else `default`."""

from __future__ import annotations

import re
import threading
from typing import Any

from localagent.models.fake.scenario import GROUP_REF, group_key


class Script:
    """Picks the reply for each chat request; its counters are shared by all connections."""

    def __init__(self, scenario: dict[str, Any]) -> None:
        self._rules = [(rule, re.compile(rule["match"], re.S)) for rule in scenario["rules"]]
        self._uses_left: list[int | None] = [rule["times"] for rule in scenario["rules"]]
        self._replies: list[dict[str, Any]] = scenario["replies"]
        self._next_reply = 0
        self._default: dict[str, Any] | None = scenario["default"]
        self._verdict: dict[str, Any] = scenario["verdict"]
        self._lock = threading.Lock()

    def choose(self, body: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
        kind = _kind(body)
        with self._lock:
            for index, (rule, pattern) in enumerate(self._rules):
                if self._uses_left[index] == 0:
                    continue
                if rule["kind"] != kind and (rule["kind"] != "any" or kind == "verify"):
                    continue
                found = pattern.search(_rule_text(body, rule["in"]))
                if found is None:
                    continue
                if self._uses_left[index] is not None:
                    self._uses_left[index] -= 1
                return f"rules[{index}]", _substitute(rule["reply"], found)
            if kind == "verify":
                return "verdict", self._verdict
            if self._next_reply < len(self._replies):
                self._next_reply += 1
                return f"replies[{self._next_reply - 1}]", self._replies[self._next_reply - 1]
        if self._default is None:
            return "exhausted", None
        return "default", self._default


def _kind(body: dict[str, Any]) -> str:
    """ "verify" for a verdict request (its schema has a `verdict`), "plan" for any other
    structured-output request, "chat" otherwise."""
    schema = body.get("format")
    response_format = body.get("response_format")
    if isinstance(response_format, dict):  # OpenAI's structured output
        schema = (response_format.get("json_schema") or {}).get("schema") or {"type": "object"}
    if not schema:
        return "chat"
    properties = schema.get("properties") if isinstance(schema, dict) else None
    return "verify" if isinstance(properties, dict) and "verdict" in properties else "plan"


def request_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body.get("messages") or [] if isinstance(m, dict)]


def content_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else ""


def _rule_text(body: dict[str, Any], source: str) -> str:
    messages = request_messages(body)
    if source == "last":
        return content_text(messages[-1]) if messages else ""
    if source == "system":
        return next((content_text(m) for m in messages if m.get("role") == "system"), "")
    return "\n\n".join(content_text(m) for m in messages)


def _substitute(value: Any, found: re.Match[str]) -> Any:
    if isinstance(value, str):
        return GROUP_REF.sub(lambda ref: found.group(group_key(ref)) or "", value)
    if isinstance(value, dict):
        return {key: _substitute(item, found) for key, item in value.items()}
    if isinstance(value, list):
        return [_substitute(item, found) for item in value]
    return value
