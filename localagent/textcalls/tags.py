"""Formats built on XML-like tags or a name line: Qwen3-Coder, GLM, Llama 3.1 /
Functionary `<function=…>`, `<tool_call name=…>`, LM Studio, Hermes and Functionary v3.2.
A call needs its closing tag or a complete JSON object: a cut-off call is never run."""

from __future__ import annotations

import re
from typing import Any

from localagent.textcalls.base import Found, TextCallError, make_call
from localagent.textcalls.names import is_tool_name
from localagent.textcalls.shapes import calls_in
from localagent.textcalls.values import object_at, value_at, whole_object

_NAME = r"[A-Za-z_][\w.\-]*"
_GLM_CALL = re.compile(rf"<tool_call>\s*({_NAME})\s*((?:<arg_key>.*?)?)</tool_call>", re.S)
_GLM_PAIR = re.compile(r"<arg_key>(.*?)</arg_key>\s*<arg_value>(.*?)</arg_value>", re.S)
GLM_MARKER = re.compile(rf"<arg_key>|<tool_call>\s*{_NAME}\s*</tool_call>")


def glm_calls(text: str, known: set[str]) -> Found:
    """Family: GLM 4.5/4.6/4.7. Real example (vLLM tests/tool_parsers/
    test_glm4_moe_tool_parser.py): `<tool_call>get_weather\\n<arg_key>city</arg_key>\\n
    <arg_value>Beijing</arg_value>\\n</tool_call>`. Values stay text: the tool's argument
    model converts them ("2" to 2) as it does for every call."""
    found: Found = []
    for match in _GLM_CALL.finditer(text):
        pairs = {key.strip(): value for key, value in _GLM_PAIR.findall(match.group(2))}
        found.append((match.start(), make_call(match.group(1), pairs, known)))
    if not found and "<arg_key>" in text:
        raise TextCallError("a <tool_call> with <arg_key> pairs is not closed by </tool_call>")
    return found


_QWEN_FUNCTION = re.compile(r"<function=([^>\n]+)>(.*?)(</function>|</tool_call>|\Z)", re.S)
_QWEN_PARAMETER = re.compile(r"<parameter=([^>\n]+)>(.*?)(</parameter>|(?=<parameter=)|\Z)", re.S)
QWEN_MARKER = re.compile(r"<function=[^>\n]+>\s*(?:<parameter=|</function>|</tool_call>|\Z)")


def qwen_xml_calls(text: str, known: set[str]) -> Found:
    """Family: Qwen3-Coder, Qwen3.5, Qwen3-Next (XML). Real example (vLLM tests/
    tool_parsers/test_qwen3coder_tool_parser.py): `<tool_call>\\n<function=get_current_weather>
    \\n<parameter=city>\\nDallas\\n</parameter>\\n</function>\\n</tool_call>`, also without the
    opening `<tool_call>` (ollama/ollama#18530). One newline around a value is markup."""
    found: Found = []
    for match in _QWEN_FUNCTION.finditer(text):
        if match.group(2).lstrip().startswith("{"):
            continue  # <function=NAME>{json}: the Llama 3.1 form
        name = match.group(1).strip()
        if not match.group(3):
            raise TextCallError(f"the <function={name}> call is not closed: it may be cut off")
        arguments = {}
        for parameter in _QWEN_PARAMETER.finditer(match.group(2)):
            value = parameter.group(2).removeprefix("\n")
            closed = parameter.group(3) == "</parameter>"
            arguments[parameter.group(1).strip()] = (
                value.removesuffix("\n") if closed else value.rstrip("\n")
            )
        found.append((match.start(), make_call(name, arguments, known)))
    return found


_DSML = r"(?:[|｜]+DSML[|｜]+)?"  # DeepSeek V3.2's namespace: <｜DSML｜invoke ...>
_INVOKE = re.compile(rf"<{_DSML}invoke\s+name=\"([^\"<>]+)\"\s*>(.*?)</{_DSML}invoke\s*>", re.S)
_INVOKE_PARAMETER = re.compile(
    rf"<{_DSML}parameter\s+name=\"([^\"<>]+)\"([^>]*)>(.*?)</{_DSML}parameter\s*>", re.S
)
INVOKE_MARKER = re.compile(rf"<{_DSML}invoke\s+name=")


def invoke_calls(text: str, known: set[str]) -> Found:
    """Family: DeepSeek V3.2 (DSML) and DeepSeek prompted with XML calls. Real examples
    (ochafik/minja#11): `<｜DSML｜function_calls>\\n<｜DSML｜invoke name="get_datetime">\\n
    <｜DSML｜parameter name="timezone" string="true">Asia/Shanghai</｜DSML｜parameter>\\n
    </｜DSML｜invoke>\\n</｜DSML｜function_calls>`; (zed-industries/zed#38412) `<invoke
    name="list_directory">\\n  <parameter name="path" string="true">site</parameter>\\n
    </invoke>`. A value marked `string="false"` is JSON; an invoke holding anything but
    complete parameters is refused."""
    found: Found = []
    for match in _INVOKE.finditer(text):
        body, arguments = match.group(2), {}
        for parameter in _INVOKE_PARAMETER.finditer(body):
            arguments[parameter.group(1)] = _invoke_value(parameter.group(3), parameter.group(2))
        if _INVOKE_PARAMETER.sub("", body).strip():
            raise TextCallError(
                f"the <invoke name={match.group(1)!r}> call holds more than "
                "complete <parameter> elements"
            )
        found.append((match.start(), make_call(match.group(1), arguments, known)))
    if not found:
        raise TextCallError("an <invoke name=...> call is not closed by </invoke>")
    return found


def _invoke_value(text: str, attributes: str) -> Any:
    value = text.removeprefix("\n").removesuffix("\n")
    if re.search(r"\bstring\s*=\s*\"false\"", attributes):
        decoded = value_at(value.strip(), 0)
        if decoded is not None and not value.strip()[decoded[1] :].strip():
            return decoded[0]
    return value


_FUNCTION_TAG = re.compile(
    rf"<(function|tool_call)(?:=|\s+name=)[\"']?({_NAME})[\"']?\s*>\s*(?=\{{)"
)
FUNCTION_TAG_MARKER = re.compile(
    rf"<(?:function|tool_call)(?:=|\s+name=)[\"']?{_NAME}[\"']?\s*>\s*\{{"
)


def function_tag_calls(text: str, known: set[str]) -> Found:
    """Family: Llama 3.1 (custom tools), Functionary v3.1, Hermes variants. Real examples
    (llama.cpp tests/test-chat.cpp): `<function=special_function>{"arg1": 1}</function>`,
    `<function name="special_function">\\n{"arg1": 1}\\n</function>`; and
    `<tool_call name="NAME">{…}</tool_call>`."""
    found: Found = []
    for match in _FUNCTION_TAG.finditer(text):
        arguments = object_at(text, match.end())
        if arguments is None:
            raise TextCallError(
                f"the arguments of {match.group(2)!r} are not a complete JSON object"
            )
        found.append((match.start(), make_call(match.group(2), arguments[0], known)))
    return found


_LMSTUDIO = re.compile(rf"\[(TOOL_REQUEST|{_NAME})\](.*?)\[END_TOOL_REQUEST\]", re.S)
LMSTUDIO_MARKER = re.compile(r"\[(?:END_)?TOOL_REQUEST\]")


def lmstudio_calls(text: str, known: set[str]) -> Found:
    """Family: LM Studio's default tool format for models without a native one. Real
    example (LM Studio tool-use docs): `[TOOL_REQUEST]{"name": "get_delivery_date",
    "arguments": {"order_id": "123"}}[END_TOOL_REQUEST]`; some models put the tool name in
    the opening bracket: `[read]\\n{"path":"/tmp/file.txt"}\\n[END_TOOL_REQUEST]`."""
    found: Found = []
    for match in _LMSTUDIO.finditer(text):
        body = whole_object(match.group(2))
        if body is None:
            raise TextCallError("a [TOOL_REQUEST] block does not hold one complete JSON object")
        if match.group(1) == "TOOL_REQUEST":
            found += [(match.start(), call) for call in calls_in(body, known)]
        else:
            found.append((match.start(), make_call(match.group(1), body, known)))
    return found


_HERMES = re.compile(r"<(?:tool_call|\|tool_call\||function_call)>\s*(?:```(?:json)?\s*)?")
HERMES_MARKER = re.compile(r"<(?:tool_call|\|tool_call\||function_call)>")


def hermes_calls(text: str, known: set[str]) -> Found:
    """Family: Hermes 2/3, Qwen 2.5/3, Granite 3.x, most Ollama templates. Real examples
    (llama.cpp tests/test-chat.cpp, vLLM test_granite_tool_parser.py): `<tool_call>\\n
    {"name": "special_function", "arguments": {"arg1": 1}}\\n</tool_call>` and
    `<|tool_call|> [{"name": "get_weather", "arguments": {"city": "Tokyo"}}]`; Hermes 2 Pro
    also opens with `<function_call>` (llama.cpp's parser accepts it)."""
    found: Found = []
    for match in _HERMES.finditer(text):
        decoded = value_at(text, match.end())
        if decoded is not None:
            found += [(match.start(), call) for call in calls_in(decoded[0], known)]
    return found


_RECIPIENT = re.compile(rf"\s*({_NAME})[ \t]*\n?(?=\s*\{{)")


def functionary_calls(text: str, known: set[str]) -> Found:
    """Family: Functionary v3.2 (and a Mistral reply whose `[TOOL_CALLS]` was stripped).
    Real examples (llama.cpp tests/test-chat.cpp): `special_function\\n{"arg1": 1}` and
    `all\\nHello, world!\\nWhat's up?>>>special_function\\n{"arg1": 1}\\n`. Without `>>>`
    the whole reply must be one known name followed by one JSON object."""
    segments = text.split(">>>")
    found: Found = []
    offset = 0
    for index, segment in enumerate(segments):
        head = _RECIPIENT.match(segment)
        arguments = whole_object(segment[head.end() :]) if head else None
        explicit = index > 0
        if head and arguments is not None and (explicit or is_tool_name(head.group(1), known)):
            found.append((offset, make_call(head.group(1), arguments, known)))
        elif explicit and head and head.group(1) != "all":
            raise TextCallError(
                f"the arguments of {head.group(1)!r} are not a complete JSON object"
            )
        offset += len(segment) + 3
    return found
