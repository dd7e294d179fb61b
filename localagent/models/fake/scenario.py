"""Scenario files: their fields, checked whole with a message that names the place of
each mistake (`rules[2].reply.delay`), and the defaults."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

DEFAULT_MODEL: dict[str, Any] = {
    "name": "gpt-oss:20b",
    "capabilities": ["completion", "tools", "thinking"],
    "context_length": 131072,
    "family": "gptoss",
}
DEFAULT_VERSION = "0.12.3"
DEFAULT_CHUNKS = 3
CHAT_PATHS = ("/api/chat", "/v1/chat/completions")
EMBED_PATHS = ("/api/embed", "/v1/embeddings")
EMBED_DIMS = 64

# bool is an int to Python, but never a count, a status or a delay here.
_CHECKS: dict[str, Callable[[Any], bool]] = {
    "a string": lambda v: isinstance(v, str),
    "an integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "a number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "true or false": lambda v: isinstance(v, bool),
    "a list": lambda v: isinstance(v, list),
    "an object": lambda v: isinstance(v, dict),
    "an object or a string": lambda v: isinstance(v, dict | str),
    "an object or null": lambda v: v is None or isinstance(v, dict),
    "a string or null": lambda v: v is None or isinstance(v, str),
    "an integer or null": lambda v: v is None or (isinstance(v, int) and not isinstance(v, bool)),
}
_SCENARIO_FIELDS = {
    "models": "a list",
    "version": "a string",
    "rules": "a list",
    "replies": "a list",
    "default": "an object or null",
    "verdict": "an object",
    "llama_cpp": "true or false",
    "lm_studio": "true or false",
    "response_format": "true or false",
    "api_key": "a string",
    "embed_body": "a string or null",
    "embed_delay": "a number",
    "prompt_cache": "true or false",
    "slots": "an integer",
}
_MODEL_FIELDS = {
    "name": "a string",
    "capabilities": "a list",
    "context_length": "an integer",
    "family": "a string",
    "parameter_size": "a string",
    "quantization_level": "a string",
}
VERIFIED = {"content": '{"verdict": "VERIFIED", "unmet": [], "evidence": [], "next": "finish"}'}
_RULE_FIELDS = {
    "match": "a string",
    "in": "a string",
    "kind": "a string",
    "times": "an integer or null",
    "reply": "an object",
}
_REPLY_FIELDS = {
    "content": "a string",
    "thinking": "a string",
    "tool_calls": "a list",
    "prompt_eval_count": "an integer",
    "eval_count": "an integer",
    "done_reason": "a string",
    "delay": "a number",
    "status": "an integer",
    "error": "a string",
    "drop": "true or false",
    "error_line": "a string",
    "chunks": "an integer",
    "chunk_delay": "a number",
    "endless": "true or false",
    "endless_line": "true or false",
    "drip": "true or false",
    "keepalive": "an integer",
    "whole": "true or false",
    "body": "a string",
    "body_status": "an integer",
    "content_type": "a string",
    "timings": "an object",
}
_CALL_FIELDS = {"name": "a string", "arguments": "an object or a string"}
GROUP_REF = re.compile(r"\$(?:\{(\w+)\}|(\d+))")


def load_scenario(path: Path) -> dict[str, Any]:
    """Read and validate a scenario file; any problem is a ValueError naming the file."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"cannot read scenario {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ValueError(f"{path}: not valid JSON: {exc}") from None
    try:
        return validate_scenario(data)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


def validate_scenario(data: object) -> dict[str, Any]:
    """Check a scenario and return a copy with every default filled in."""
    spec = _fields(data, "scenario", _SCENARIO_FIELDS)
    models = spec.get("models", [DEFAULT_MODEL])
    if not models:
        raise ValueError("models: list at least one model")
    default = spec.get("default")
    return {
        "models": [_model(item, f"models[{i}]") for i, item in enumerate(models)],
        "version": spec.get("version", DEFAULT_VERSION),
        "rules": [_rule(item, f"rules[{i}]") for i, item in enumerate(spec.get("rules", []))],
        "replies": [
            _reply(item, f"replies[{i}]") for i, item in enumerate(spec.get("replies", []))
        ],
        "default": None if default is None else _reply(default, "default"),
        "verdict": _reply(spec.get("verdict", VERIFIED), "verdict"),
        "llama_cpp": spec.get("llama_cpp", False),
        "lm_studio": spec.get("lm_studio", False),
        "response_format": spec.get("response_format", True),
        "api_key": spec.get("api_key", ""),
        "embed_body": spec.get("embed_body"),
        "embed_delay": spec.get("embed_delay", 0),
        "prompt_cache": spec.get("prompt_cache", False),
        "slots": spec.get("slots", 1),
    }


def _fields(value: object, where: str, fields: dict[str, str]) -> dict[str, Any]:
    """A copy of value after checking it is an object with only known, well-typed keys."""
    if not isinstance(value, dict):
        raise ValueError(f"{where}: expected an object, got {json.dumps(value, default=repr)}")
    for key, item in value.items():
        if key not in fields:
            raise ValueError(f"{where}: unknown key {key!r} (known: {', '.join(fields)})")
        if not _CHECKS[fields[key]](item):
            got = json.dumps(item, default=repr)
            raise ValueError(f"{where}.{key}: expected {fields[key]}, got {got}")
    return dict(value)


def _at_least(spec: dict[str, Any], key: str, minimum: float, where: str) -> None:
    if spec.get(key) is not None and spec[key] < minimum:
        raise ValueError(f"{where}.{key}: must be at least {minimum}, got {spec[key]}")


def _one_of(spec: dict[str, Any], key: str, choices: tuple[str, ...], where: str) -> str:
    value = spec.setdefault(key, choices[0])
    if value not in choices:
        raise ValueError(f"{where}.{key}: expected one of {', '.join(choices)}, got {value!r}")
    return value


def _model(value: object, where: str) -> dict[str, Any]:
    spec = _fields(value, where, _MODEL_FIELDS)
    if "name" not in spec:
        raise ValueError(f"{where}: a model needs a name")
    capabilities = spec.setdefault("capabilities", ["completion", "tools"])
    if not all(isinstance(item, str) for item in capabilities):
        raise ValueError(f"{where}.capabilities: expected a list of strings")
    _at_least(spec, "context_length", 1, where)
    spec["name"] = full_name(spec["name"])
    base, _, tag = spec["name"].partition(":")
    size = re.search(r"\d+(?:\.\d+)?[bm]", tag, re.I)
    spec.setdefault("context_length", 32768)
    spec.setdefault("family", re.sub(r"[^a-z0-9]", "", base.lower()) or "llama")
    spec.setdefault("parameter_size", size[0].upper() if size else "7B")
    spec.setdefault("quantization_level", "Q4_K_M")
    return spec


def full_name(name: str) -> str:
    return name if ":" in name else f"{name}:latest"


def _rule(value: object, where: str) -> dict[str, Any]:
    spec = _fields(value, where, _RULE_FIELDS)
    if "reply" not in spec:
        raise ValueError(f"{where}: a rule needs a reply")
    try:
        pattern = re.compile(spec.setdefault("match", ""), re.S)
    except re.error as exc:
        raise ValueError(f"{where}.match: bad regular expression: {exc}") from None
    _one_of(spec, "in", ("all", "last", "system"), where)
    _one_of(spec, "kind", ("any", "chat", "plan", "verify"), where)
    _at_least(spec, "times", 1, where)
    spec.setdefault("times", None)
    spec["reply"] = _reply(spec["reply"], f"{where}.reply")
    for text in _strings(spec["reply"]):
        for ref in GROUP_REF.finditer(text):
            if not _has_group(pattern, group_key(ref)):
                raise ValueError(f"{where}.reply: {ref[0]} names no group of the rule's match")
    return spec


def group_key(ref: re.Match[str]) -> int | str:
    key = ref[1] or ref[2]
    return int(key) if key.isdigit() else key


def _has_group(pattern: re.Pattern[str], key: int | str) -> bool:
    return key in pattern.groupindex if isinstance(key, str) else key <= pattern.groups


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    return [text for item in items for text in _strings(item)]


def _reply(value: object, where: str) -> dict[str, Any]:
    reply = _fields(value, where, _REPLY_FIELDS)
    minimums = (("prompt_eval_count", 0), ("eval_count", 0), ("chunks", 1), ("delay", 0))
    for key, minimum in (*minimums, ("keepalive", 0), ("chunk_delay", 0)):
        _at_least(reply, key, minimum, where)
    if "error" in reply or "status" in reply:
        if not 400 <= reply.setdefault("status", 500) <= 599:
            raise ValueError(
                f"{where}.status: expected an HTTP error status, got {reply['status']}"
            )
        reply.setdefault("error", "scripted error")
    calls = reply.get("tool_calls", [])
    reply["tool_calls"] = [
        _tool_call(call, f"{where}.tool_calls[{i}]") for i, call in enumerate(calls)
    ]
    return reply


def _tool_call(value: object, where: str) -> dict[str, Any]:
    # Calls copied from a real Ollama answer are wrapped in "function"; accept both shapes.
    if isinstance(value, dict) and set(value) == {"function"}:
        value, where = value["function"], f"{where}.function"
    call = _fields(value, where, _CALL_FIELDS)
    if "name" not in call:
        raise ValueError(f"{where}: a tool call needs a name")
    return {"name": call["name"], "arguments": call.get("arguments", {})}
