"""Tool calls written as text: the shapes models use in practice, and what is refused."""

from __future__ import annotations

import json

import orjson
import pytest

from localagent.textcalls import TextCallError, ToolCall, parse_text_calls
from localagent.tools import tool_names

KNOWN = set(tool_names())
WRITE = {"path": "a.py", "content": "print('hi')\n"}


def test_fenced_json_is_a_call() -> None:
    content = (
        "I will write the file now.\n```json\n"
        + json.dumps({"name": "write_file", "arguments": WRITE})
        + "\n```\nThat is all."
    )
    assert parse_text_calls(content, KNOWN) == [ToolCall("write_file", WRITE)]


def test_bare_json_is_a_call() -> None:
    content = json.dumps({"name": "list_dir", "arguments": {"path": "."}})
    assert parse_text_calls(content, KNOWN) == [ToolCall("list_dir", {"path": "."})]


@pytest.mark.parametrize(
    "obj",
    [
        {"name": "write_file", "arguments": WRITE},
        {"tool": "write_file", "args": WRITE},
        {"name": "write_file", "parameters": WRITE},
        {"function": {"name": "write_file", "arguments": WRITE}},
        {"type": "function", "function": {"name": "write_file", "arguments": json.dumps(WRITE)}},
        {"name": "write_file", "arguments": json.dumps(WRITE)},
    ],
    ids=["name-arguments", "tool-args", "name-parameters", "function", "openai", "string-args"],
)
def test_the_common_key_variants(obj: dict) -> None:
    content = "```json\n" + json.dumps(obj) + "\n```"
    assert parse_text_calls(content, KNOWN) == [ToolCall("write_file", WRITE)]


def test_several_calls_in_order() -> None:
    first = json.dumps({"name": "write_file", "arguments": WRITE})
    second = json.dumps({"name": "run_cmd", "arguments": {"cmd": "python a.py"}})
    fenced = f"```json\n{first}\n```\nthen\n```json\n{second}\n```"
    listed = f"[{first}, {second}]"
    expected = [ToolCall("write_file", WRITE), ToolCall("run_cmd", {"cmd": "python a.py"})]
    assert parse_text_calls(fenced, KNOWN) == expected
    assert parse_text_calls(listed, KNOWN) == expected


def test_a_call_without_arguments_gets_an_empty_object() -> None:
    assert parse_text_calls('{"name": "list_dir"}', KNOWN) == [ToolCall("list_dir", {})]


@pytest.mark.parametrize(
    "content",
    [
        "",
        "I am thinking about the problem.",
        "The config is {broken",
        '{"name": "Alice", "age": 31}',
        '{"tasks": [{"description": "x"}]}',
        "```python\nprint('no call here')\n```",
    ],
)
def test_prose_and_unrelated_json_are_no_calls(content: str) -> None:
    assert parse_text_calls(content, KNOWN) == []


@pytest.mark.parametrize(
    "content",
    [
        'Calling write_file {"path": "a.py", "content": "x"',
        '```json\n{"name": "write_file", "arguments": {"path": "a.py",}}\n```',
        '{"name": "write_file", "arguments": "{not json"}',
        '{"name": "write_file", "arguments": [1, 2]}',
    ],
    ids=["truncated", "trailing-comma", "string-args-broken", "args-not-object"],
)
def test_a_mentioned_tool_with_broken_json_is_an_error(content: str) -> None:
    with pytest.raises(TextCallError):
        parse_text_calls(content, KNOWN)


def test_an_unknown_name_with_arguments_is_passed_on() -> None:
    # The tool registry answers unknown tools with an error the model can read.
    content = '{"name": "delete_everything", "arguments": {"path": "."}}'
    assert parse_text_calls(content, KNOWN) == [ToolCall("delete_everything", {"path": "."})]


def test_nesting_past_the_parsers_limit_is_an_error_not_a_crash() -> None:
    with pytest.raises(TextCallError):
        parse_text_calls('{"name": "write_file", "arguments": ' + "[" * 5000, KNOWN)
    deep_string = json.dumps({"name": "write_file", "arguments": "[" * 5000})
    with pytest.raises(TextCallError, match="not valid JSON"):
        parse_text_calls(deep_string, KNOWN)


def test_a_lone_surrogate_escape_becomes_encodable_text() -> None:
    content = '{"name": "write_file", "arguments": {"path": "a.txt", "content": "half \\ud800"}}'
    [found] = parse_text_calls(content, KNOWN)
    assert found.arguments["path"] == "a.txt"
    assert found.arguments["content"].startswith("half ")
    orjson.dumps(found.arguments)  # what the journal does with it
