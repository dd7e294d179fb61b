"""Formats built on a model's special tokens, seen when a server leaves the call in the
reply's text: gpt-oss (harmony), Mistral, DeepSeek, Kimi-K2, LFM2 and Gemma. Every
recogniser accepts only complete argument objects."""

from __future__ import annotations

import re
from typing import Any

from localagent.textcalls.base import Found, TextCallError, ToolCall, make_call
from localagent.textcalls.gemma import GemmaArguments
from localagent.textcalls.literals import NotLiteral
from localagent.textcalls.names import is_tool_name
from localagent.textcalls.pythonic import call_list
from localagent.textcalls.reasoning import harmony_messages
from localagent.textcalls.shapes import calls_in, ends_with_object
from localagent.textcalls.values import object_at, value_at, whole_object


def harmony_calls(text: str, known: set[str]) -> Found:
    """Family: gpt-oss. Real example (openai/harmony docs/format.md, "Receiving tool
    calls"): `<|start|>assistant<|channel|>commentary to=functions.get_weather
    <|constrain|>json<|message|>{"location":"San Francisco"}<|call|>`. The recipient may
    sit in the role header or the channel header; `<|call|>` ends the turn, so nothing
    after it counts; built-in recipients (python, browser) are not function calls."""
    found: Found = []
    for message in harmony_messages(text):
        recipient = message.recipient
        name = recipient.removeprefix("functions.")
        if message.body is not None and (
            recipient.startswith("functions.") or is_tool_name(name, known)
        ):
            arguments = whole_object(message.body)
            if arguments is None:
                raise TextCallError(f"the arguments of {name!r} are not one complete JSON object")
            found.append((text.find("to=" + recipient), make_call(name, arguments, known)))
            if message.terminator == "<|call|>":
                break
    return found


_MISTRAL_NAME = re.compile(r"\s*([A-Za-z_][\w.\-]*)\s*(?:\[CALL_ID\]\s*[\w-]*\s*)?(?:\[ARGS\])?")
_MISTRAL_STRIPPED = re.compile(r"[A-Za-z_][\w.\-]*\s*(?:\[CALL_ID\]\s*[\w-]*\s*)?\[ARGS\]")


def mistral_calls(text: str, known: set[str]) -> Found:
    """Family: Mistral, Devstral, Magistral, Ministral. Real examples (llama.cpp
    tests/test-chat.cpp, vLLM tests/tool_parsers/test_mistral_tool_parser.py):
    `[TOOL_CALLS]special_function[ARGS]{"arg1":1}`, `[TOOL_CALLS]special_function
    [CALL_ID]123456789[ARGS]{"arg1": 1}`, `[TOOL_CALLS] [{"name": "add", "arguments": …}]`,
    and `NAME[ARGS]{…}` when the server strips the `[TOOL_CALLS]` token, the first one
    only too (ml-explore/mlx-lm#1448: `get_weather[ARGS]{"city": "Paris"}[TOOL_CALLS]
    get_weather[ARGS]{"city": "Tokyo"}`)."""
    marked = [match.end() for match in re.finditer(r"\[TOOL_CALLS\]", text)]
    first = marked[0] - len("[TOOL_CALLS]") if marked else len(text)
    stripped = [match.start() for match in _MISTRAL_STRIPPED.finditer(text, 0, first)]
    found: Found = []
    done = 0
    for start in sorted(stripped + marked):
        if start < done:
            continue  # inside a call already read: its arguments may mention `x[ARGS]`
        calls, done = _mistral_at(text, start, known)
        found += [(start, call) for call in calls]
    return found


def _mistral_at(text: str, start: int, known: set[str]) -> tuple[list[ToolCall], int]:
    """The calls that start at `start` and the index just past them."""
    listed = value_at(text, start + len(text[start:]) - len(text[start:].lstrip()))
    if listed is not None and isinstance(listed[0], list | dict):
        return calls_in(listed[0], known), listed[1]
    head = _MISTRAL_NAME.match(text, start)
    arguments = object_at(text, head.end()) if head else None
    if head is None or arguments is None:
        raise TextCallError("a [TOOL_CALLS] call has no complete JSON arguments object")
    return [make_call(head.group(1), arguments[0], known)], arguments[1]


def _deepseek_token(words: str) -> str:
    return "<[｜|]" + words.replace("▁", "[▁_ ]") + "[｜|]>"


_DEEPSEEK_CALL = re.compile(
    _deepseek_token("tool▁call▁begin")
    + r"(.*?)"
    + _deepseek_token("tool▁sep")
    + r"(.*?)"
    + _deepseek_token("tool▁call▁end"),
    re.S,
)
DEEPSEEK_MARKER = re.compile(_deepseek_token("tool▁calls?▁begin"))
_LEADING_NAME = re.compile(r"\s*([A-Za-z_][\w.\-]*)")


def deepseek_calls(text: str, known: set[str]) -> Found:
    """Family: DeepSeek V3, R1, V3.1. Real examples (vLLM tests/tool_parsers/
    test_deepseekv3_tool_parser.py, test_deepseekv31_tool_parser.py):
    `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\\n```json\\n
    {"city": "Tokyo"}\\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>` and
    `<｜tool▁call▁begin｜>foo<｜tool▁sep｜>{"x":1}<｜tool▁call▁end｜>`."""
    found: Found = []
    for match in _DEEPSEEK_CALL.finditer(text):
        name, body = match.group(1).strip(), match.group(2)
        if name in ("", "function"):
            leading = _LEADING_NAME.match(body)
            name, body = (leading.group(1), body[leading.end() :]) if leading else ("", body)
        arguments = whole_object(body)
        if arguments is None:
            raise TextCallError(f"the arguments of {name!r} are not one complete JSON object")
        found.append((match.start(), make_call(name, arguments, known)))
    return found


_KIMI_CALL = re.compile(r"([^\s<>|]*)\s*<\|tool_call_argument_begin\|>")


def kimi_calls(text: str, known: set[str]) -> Found:
    """Family: Kimi-K2. Real example (vLLM tests/tool_parsers/test_kimi_k2_tool_parser.py):
    `<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0
    <|tool_call_argument_begin|>{"city": "Beijing"}<|tool_call_end|><|tool_calls_section_end|>`."""
    found: Found = []
    for match in _KIMI_CALL.finditer(text):
        name = re.sub(r":\d+$", "", match.group(1)).removeprefix("functions.")
        arguments = object_at(text, match.end())
        if not name or name.isdigit() or arguments is None:
            raise TextCallError("a Kimi tool call has no tool name or no complete JSON arguments")
        found.append((match.start(), make_call(name, arguments[0], known)))
    return found


_LFM2_CALL = re.compile(r"<\|tool_call_start\|>(.*?)<\|tool_call_end\|>", re.S)


def lfm2_calls(text: str, known: set[str]) -> Found:
    """Family: LiquidAI LFM2 / LFM2.5. Real example (vLLM tests/tool_parsers/
    test_lfm2_tool_parser.py): `<|tool_call_start|>[get_candidate_status(candidate_id=
    '12345')]<|tool_call_end|>`; a JSON list between the tokens is read too."""
    found: Found = []
    for match in _LFM2_CALL.finditer(text):
        body = match.group(1).strip()
        listed = call_list(body, known)
        if listed is None:
            decoded = value_at(body, 0)
            listed = calls_in(decoded[0], known) if decoded else []
        if not listed:
            raise TextCallError(
                "the calls between <|tool_call_start|> and <|tool_call_end|> "
                "are not a list of complete calls"
            )
        found += [(match.start(), call) for call in listed]
    return found


GEMMA_MARKER = re.compile(r"\bcall:([A-Za-z_][\w.\-]*)\s*\{")
_GEMMA_END = re.compile(r"<tool_call\|>|<end_function_call>")


def gemma_calls(text: str, known: set[str]) -> Found:
    """Family: Gemma 4, FunctionGemma. Real examples (vLLM tests/tool_parsers/
    test_gemma4_tool_parser.py, test_functiongemma_tool_parser.py):
    `<|tool_call>call:get_weather{location:<|"|>London<|"|>}<tool_call|>` and
    `<start_function_call>call:get_weather{location:<escape>London<escape>}<end_function_call>`."""
    found: Found = []
    for match in GEMMA_MARKER.finditer(text):
        cursor = GemmaArguments(text, match.end() - 1)
        try:
            arguments = cursor.value()
        except NotLiteral as exc:
            arguments = _closed_by_its_tag(text, match.end() - 1)
            if arguments is None:
                raise TextCallError(
                    f"the arguments of {match.group(1)!r} are incomplete: {exc}"
                ) from None
        found.append((match.start(), make_call(match.group(1), arguments, known)))
    return found


def _closed_by_its_tag(text: str, start: int) -> dict[str, Any] | None:
    """The arguments at `start` when only their final `}` is missing before the call's
    closing tag: the model ended the call, so nothing else is left out (ollama/ollama#17565:
    `call:read_files{files:[{path:<|"|>…<|"|>,start_line:1}]` then `<tool_call|>`)."""
    end = _GEMMA_END.search(text, start)
    if end is None:
        return None
    head = text[start : end.start()].rstrip() + "}"
    cursor = GemmaArguments(head, 0)
    try:
        value = cursor.value()
    except NotLiteral:
        return None
    if cursor.pos != len(head) or not isinstance(value, dict) or ends_with_object(value):
        return None
    return value
