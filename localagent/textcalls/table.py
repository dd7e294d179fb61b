"""The table of recognisers, one per family shape, tried in a fixed order.

Each is tried when its trigger appears in the reply (after the reasoning is removed).
Of those that find calls, the one whose first call starts earliest wins, the table order
breaking ties: so a JSON call whose written file mentions `<tool_call>` stays a JSON call.
When none finds a call but a recogniser's marker is there, the reply tried a call: the
problem names the marker and shows the exact expected format."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from localagent.textcalls import pythonic, shapes, tags, tokens
from localagent.textcalls.base import Found, Parsed, TextCallError
from localagent.textcalls.reasoning import after_reasoning


@dataclass(frozen=True)
class Recogniser:
    name: str
    family: str
    trigger: re.Pattern[str]  # when to try it
    marker: re.Pattern[str] | None  # a sign the reply meant a call in this format
    expected: str  # the exact format, shown to the model when its call could not be read
    read: Callable[[str, set[str]], Found]


def _pattern(text: str) -> re.Pattern[str]:
    return re.compile(text, re.M)


def _entry(
    name: str,
    family: str,
    marker: re.Pattern[str] | None,
    expected: str,
    read: Callable[[str, set[str]], Found],
    trigger: re.Pattern[str] | None = None,
) -> Recogniser:
    """A table entry; by default the recogniser is tried where its marker appears."""
    return Recogniser(name, family, trigger or marker or _pattern("."), marker, expected, read)


_KEY_VALUE = '{"key": "value"}'
RECOGNISERS = (
    _entry(
        "harmony",
        "gpt-oss harmony",
        _pattern(r"\bto=functions\."),
        "<|start|>assistant<|channel|>commentary to=functions.TOOL_NAME <|constrain|>json"
        f"<|message|>{_KEY_VALUE}<|call|>",
        tokens.harmony_calls,
        trigger=_pattern(r"\bto=\S"),
    ),
    _entry(
        "mistral",
        "Mistral",
        _pattern(r"\[TOOL_CALLS\]|\[ARGS\]"),
        f"[TOOL_CALLS]TOOL_NAME[ARGS]{_KEY_VALUE}",
        tokens.mistral_calls,
    ),
    _entry(
        "deepseek",
        "DeepSeek",
        tokens.DEEPSEEK_MARKER,
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>TOOL_NAME\n```json\n"
        f"{_KEY_VALUE}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        tokens.deepseek_calls,
    ),
    _entry(
        "kimi",
        "Kimi-K2",
        _pattern(r"<\|tool_call_argument_begin\|>|<\|tool_calls_section_begin\|>"),
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.TOOL_NAME:0"
        f"<|tool_call_argument_begin|>{_KEY_VALUE}<|tool_call_end|><|tool_calls_section_end|>",
        tokens.kimi_calls,
        trigger=_pattern(r"<\|tool_call_argument_begin\|>"),
    ),
    _entry(
        "lfm2",
        "LFM2",
        _pattern(r"<\|tool_call_start\|>"),
        '<|tool_call_start|>[TOOL_NAME(key="value")]<|tool_call_end|>',
        tokens.lfm2_calls,
    ),
    _entry(
        "gemma",
        "Gemma",
        tokens.GEMMA_MARKER,
        '<|tool_call>call:TOOL_NAME{key:<|"|>value<|"|>}<tool_call|>',
        tokens.gemma_calls,
    ),
    _entry(
        "glm",
        "GLM",
        tags.GLM_MARKER,
        "<tool_call>TOOL_NAME\n<arg_key>key</arg_key>\n<arg_value>value</arg_value>\n</tool_call>",
        tags.glm_calls,
    ),
    _entry(
        "qwen3-xml",
        "Qwen3-Coder XML",
        tags.QWEN_MARKER,
        "<tool_call>\n<function=TOOL_NAME>\n<parameter=key>\nvalue\n</parameter>\n</function>\n"
        "</tool_call>",
        tags.qwen_xml_calls,
    ),
    _entry(
        "invoke",
        "DeepSeek XML",
        tags.INVOKE_MARKER,
        '<function_calls>\n<invoke name="TOOL_NAME">\n<parameter name="key" string="true">value'
        "</parameter>\n</invoke>\n</function_calls>",
        tags.invoke_calls,
    ),
    _entry(
        "function-tag",
        "Llama 3.1 / Functionary",
        tags.FUNCTION_TAG_MARKER,
        f"<function=TOOL_NAME>{_KEY_VALUE}</function>",
        tags.function_tag_calls,
    ),
    _entry(
        "lmstudio",
        "LM Studio",
        tags.LMSTUDIO_MARKER,
        f'[TOOL_REQUEST]{{"name": "TOOL_NAME", "arguments": {_KEY_VALUE}}}[END_TOOL_REQUEST]',
        tags.lmstudio_calls,
    ),
    _entry(
        "hermes",
        "Hermes / Qwen",
        tags.HERMES_MARKER,
        f'<tool_call>\n{{"name": "TOOL_NAME", "arguments": {_KEY_VALUE}}}\n</tool_call>',
        tags.hermes_calls,
    ),
    _entry(
        "functionary",
        "Functionary v3.2",
        _pattern(r">>>\s*[A-Za-z_]"),
        f">>>TOOL_NAME\n{_KEY_VALUE}",
        tags.functionary_calls,
        trigger=_pattern(r"\{"),
    ),
    _entry(
        "python",
        "Python call syntax",
        pythonic.PYTHON_MARKER,
        '[TOOL_NAME(key="value")]',
        pythonic.python_calls,
        trigger=_pattern(r"[\w.]\s*\("),
    ),
    _entry(
        "json",
        "JSON",
        None,
        f'{{"name": "TOOL_NAME", "arguments": {_KEY_VALUE}}}',
        shapes.json_calls,
        trigger=_pattern(r"[{\[]"),
    ),
)


def _problem(recogniser: Recogniser, marker: str, detail: str) -> str:
    if recogniser.marker is None:
        return detail
    why = detail or "the call is incomplete or its arguments are not one complete object"
    return (
        f"it starts a {recogniser.family} tool call ({marker.strip()[:40]}) that could not be "
        f"read: {why}. That format is exactly: {recogniser.expected}"
    )


# The start of a call written as JSON: `{"name": ...`, `{{"name": ...` (doubled braces).
_JSON_CALL = re.compile(r'\{\s*(?:\{\s*)?"name"\s*:')


def _attempt(text: str) -> int:
    """Where a JSON call the text tries starts, or -1."""
    found = _JSON_CALL.search(text)
    return found.start() if found else -1


def parse_reply(content: str, known: set[str]) -> Parsed:
    """The tool calls written in a reply's text, the format they came in, and, when the
    reply tried a call that could not be read, what went wrong (for the model). A call
    that starts after a call that could not be read may be part of it (an argument that
    holds a call), so then nothing runs: the model is told the format instead."""
    text = after_reasoning(content)
    best: tuple[int, int, Recogniser, Found] | None = None
    problem = ""
    broken: tuple[int, str] | None = None  # the earliest call that could not be read
    for rank, recogniser in enumerate(RECOGNISERS):
        if not recogniser.trigger.search(text):
            continue
        try:
            found = recogniser.read(text, known)
            detail = ""
        except TextCallError as exc:
            found, detail = [], str(exc)
        start = min((offset for offset, _ in found), default=-1)
        if found and (best is None or start < best[0]):
            best = (start, rank, recogniser, found)
        marker = recogniser.marker.search(text) if recogniser.marker else None
        if not found and (marker or (detail and recogniser.marker is None)):
            said = _problem(recogniser, marker.group(0) if marker else "", detail)
            problem = problem or said
            # Where the call that could not be read starts: its marker, or for a JSON
            # call, its opening `{"name":`.
            at = marker.start() if marker else _attempt(text) if detail else -1
            if detail and at >= 0 and (broken is None or at < broken[0]):
                broken = (at, said)
    if broken is not None and best is not None and broken[0] < best[0]:
        return Parsed([], None, broken[1])
    if best is None:
        return Parsed([], None, problem)
    return Parsed([call for _, call in best[3]], best[2].name, "")
