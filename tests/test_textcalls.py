"""Tool calls written as text: the shapes models use in practice, and what is refused."""

from __future__ import annotations

import json

import orjson
import pytest

from localagent.textcalls import (
    RECOGNISERS,
    TextCallError,
    ToolCall,
    clean_tool_name,
    lenient_arguments,
    parse_reply,
    parse_text_calls,
)
from localagent.textcalls.literals import NotLiteral
from localagent.textcalls.smalljson import loose_json
from localagent.tools import catalog

KNOWN = set(catalog().names())
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
        '{"name": "write_file", "arguments": "{not json"}',
        '{"name": "write_file", "arguments": [1, 2]}',
    ],
    ids=["truncated", "string-args-broken", "args-not-object"],
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


@pytest.mark.parametrize(
    "content",
    [
        "```json\n{'name': 'write_file', 'arguments': "
        "{'path': 'a.py', 'content': \"print('hi')\\n\"}}\n```",
        '{"name": "write_file", "arguments": {"path": "a.py", "content": "print(\'hi\')\\n",},}',
        '{"name": "write_file", "arguments": '
        "\"{'path': 'a.py', 'content': \\\"print('hi')\\\\n\\\"}\"}",
    ],
    ids=["single-quotes", "trailing-commas", "python-dict-in-string"],
)
def test_python_literal_dicts_are_read_safely(content: str) -> None:
    # Complete Python literals are unambiguous; they are read with ast, never evaluated.
    assert parse_text_calls(content, KNOWN) == [ToolCall("write_file", WRITE)]


def test_code_in_a_python_literal_is_never_run(tmp_path) -> None:
    marker = tmp_path / "ran"
    for content in (
        f"[run_cmd(cmd=__import__('os').system('touch {marker}'))]",
        f"{{'name': 'run_cmd', 'arguments': {{'cmd': __import__('os').system('touch {marker}')}}}}",
    ):
        assert parse_reply(content, KNOWN).calls == []
    assert not marker.exists()


def test_a_written_file_may_hold_code_fences() -> None:
    readme = "# Demo\n\n```python\nprint('hi')\n```\n\nRun it with ```python demo.py```.\n"
    call = {"name": "write_file", "arguments": {"path": "README.md", "content": readme}}
    content = "I will write the README.\n```json\n" + json.dumps(call, indent=2) + "\n```"
    parsed = parse_reply(content, KNOWN)
    assert parsed.calls == [ToolCall("write_file", call["arguments"])]
    assert parsed.recogniser == "json"


def test_a_written_file_that_mentions_other_formats_stays_one_json_call() -> None:
    text = "Models write <tool_call>{...}</tool_call> or [TOOL_CALLS]NAME[ARGS]{...}.\n"
    call = {"name": "write_file", "arguments": {"path": "formats.md", "content": text}}
    assert parse_text_calls(json.dumps(call), KNOWN) == [ToolCall("write_file", call["arguments"])]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('<think>{"name": "run_cmd", "arguments": {"cmd": "rm -rf build"}}</think>Done.', []),
        ('<think>maybe {"name": "run_cmd", "arguments": {"cmd": "make"}}', []),
        ('[THINK][TOOL_CALLS]run_cmd[ARGS]{"cmd": "make"}[/THINK]I am done.', []),
        (
            '<|channel|>analysis<|message|>{"name": "run_cmd", "arguments": {"cmd": "make"}}'
            "<|end|><|start|>assistant<|channel|>final<|message|>Nothing to run.",
            [],
        ),
        (
            '<think>first {"name": "run_cmd", "arguments": {"cmd": "make"}}</think>\n'
            '{"name": "list_dir", "arguments": {"path": "."}}',
            [ToolCall("list_dir", {"path": "."})],
        ),
    ],
    ids=["closed-think", "unclosed-think", "mistral-think", "harmony-analysis", "after-think"],
)
def test_only_what_follows_the_reasoning_counts(content: str, expected: list[ToolCall]) -> None:
    assert parse_reply(content, KNOWN).calls == expected


@pytest.mark.parametrize(
    "content",
    [
        "I will answer with JSON: the result is an object with a name and arguments.",
        '{"name": "Alice"}',
        'Here is package.json:\n```json\n{"name": "my-app", "version": "1.0.0", '
        '"scripts": {"test": "pytest"}, "dependencies": {"left-pad": "^1.3.0"}}\n```',
        "```bash\nrun_cmd --cmd 'ls -la'\n```",
        "See [read_file](docs/tools.md#read_file) and [list_dir](docs/tools.md) for details.",
        '{"path": "a.py", "content": "print(1)"}',
        '{"name": "write_file", "description": "Write a file", "parameters": '
        '{"type": "object", "properties": {"path": {"type": "string"}}}}',
        "```python\ndef list_dir(path):\n    return []\n\nlist_dir(path='.')\n```",
    ],
    ids=[
        "prose",
        "a-name",
        "package-json",
        "bash-block",
        "markdown-links",
        "arguments-without-name",
        "tool-definition",
        "python-code",
    ],
)
def test_what_is_never_a_call(content: str) -> None:
    assert parse_reply(content, KNOWN).calls == []


def test_an_unknown_name_in_a_clear_call_shape_goes_to_the_registry() -> None:
    # Never fuzzy-matched: the registry refuses it and lists the real tools.
    for content in (
        '[TOOL_CALLS]delete_everything[ARGS]{"path": "."}',
        '<tool_call>\n{"name": "delete_everything", "arguments": {"path": "."}}\n</tool_call>',
        "<function=delete_everything>\n<parameter=path>\n.\n</parameter>\n</function>",
    ):
        assert parse_reply(content, KNOWN).calls == [ToolCall("delete_everything", {"path": "."})]
    assert parse_reply('{"name": "delete_everything"}', KNOWN).calls == []


def test_a_tool_calls_wrapper_is_unwrapped() -> None:
    content = json.dumps(
        {"tool_calls": [{"type": "function", "function": {"name": "list_dir", "arguments": "{}"}}]}
    )
    assert parse_reply(content, KNOWN) == parse_reply(content, KNOWN)
    assert parse_text_calls(content, KNOWN) == [ToolCall("list_dir", {})]


@pytest.mark.parametrize(
    ("content", "recogniser"),
    [
        ('[TOOL_CALLS]list_dir[ARGS]{"path": "."}', "mistral"),
        (
            "<tool_call>\n<function=list_dir>\n<parameter=path>\n.\n</parameter>\n</function>",
            "qwen3-xml",
        ),
        (
            "<tool_call>list_dir\n<arg_key>path</arg_key>\n<arg_value>.</arg_value>\n</tool_call>",
            "glm",
        ),
        ('<tool_call>\n{"name": "list_dir", "arguments": {"path": "."}}\n</tool_call>', "hermes"),
        ('<function=list_dir>{"path": "."}</function>', "function-tag"),
        (
            '[TOOL_REQUEST]{"name": "list_dir", "arguments": {"path": "."}}[END_TOOL_REQUEST]',
            "lmstudio",
        ),
        ('list_dir\n{"path": "."}', "functionary"),
        ("[list_dir(path='.')]", "python"),
        ("```python\nlist_dir(path='.')\n```", "python"),
        ("<|tool_call_start|>[list_dir(path='.')]<|tool_call_end|>", "lfm2"),
        ('<|tool_call>call:list_dir{path:<|"|>.<|"|>}<tool_call|>', "gemma"),
        (
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.list_dir:0"
            '<|tool_call_argument_begin|>{"path": "."}<|tool_call_end|><|tool_calls_section_end|>',
            "kimi",
        ),
        (
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>list_dir\n```json\n"
            '{"path": "."}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
            "deepseek",
        ),
        (
            "<|channel|>commentary to=functions.list_dir <|constrain|>json"
            '<|message|>{"path": "."}<|call|>',
            "harmony",
        ),
        (
            '<function_calls>\n<invoke name="list_dir">\n<parameter name="path" string="true">.'
            "</parameter>\n</invoke>\n</function_calls>",
            "invoke",
        ),
        ('{"name": "list_dir", "arguments": {"path": "."}}', "json"),
    ],
)
def test_each_format_names_its_recogniser(content: str, recogniser: str) -> None:
    parsed = parse_reply(content, KNOWN)
    assert parsed == type(parsed)([ToolCall("list_dir", {"path": "."})], recogniser, "")


def test_every_recogniser_documents_its_family_and_a_real_example() -> None:
    names = [recogniser.name for recogniser in RECOGNISERS]
    assert len(names) == len(set(names))
    for recogniser in RECOGNISERS:
        doc = recogniser.read.__doc__ or ""
        assert "Family:" in doc and "example" in doc.lower(), recogniser.name


def test_a_broken_call_names_its_marker_and_the_exact_format() -> None:
    parsed = parse_reply('[TOOL_CALLS]write_file[ARGS]{"path": "a.py", "content": "x', KNOWN)
    assert parsed.calls == [] and parsed.recogniser is None
    assert "[TOOL_CALLS]" in parsed.problem
    assert '[TOOL_CALLS]TOOL_NAME[ARGS]{"key": "value"}' in parsed.problem
    with pytest.raises(TextCallError, match="Mistral"):
        parse_text_calls('[TOOL_CALLS]write_file[ARGS]{"path": "a.py", "content": "x', KNOWN)
    assert parse_reply("Just prose, no call.", KNOWN).problem == ""


def test_hermes_function_call_tags_are_read_and_a_broken_one_named() -> None:
    # Hermes 2 Pro opens a call with <function_call> too (llama.cpp tests/test-chat.cpp).
    whole = '<function_call>\n{"name": "list_dir", "arguments": {"path": "."}}\n</function_call>'
    assert parse_reply(whole, KNOWN).calls == [ToolCall("list_dir", {"path": "."})]
    assert parse_reply(whole, KNOWN).recogniser == "hermes"
    cut = parse_reply('```json\n<function_call> { "name" : "list_dir"', KNOWN)
    assert cut.calls == [] and "<function_call>" in cut.problem


def test_harmony_stops_at_the_first_call_token() -> None:
    content = (
        "<|start|>assistant<|channel|>commentary to=functions.list_dir <|constrain|>json"
        '<|message|>{"path": "."}<|call|>'
        "<|start|>assistant<|channel|>commentary to=functions.run_cmd <|constrain|>json"
        '<|message|>{"cmd": "rm -rf ."}<|call|>'
    )
    assert parse_reply(content, KNOWN).calls == [ToolCall("list_dir", {"path": "."})]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("functions.read_file", "read_file"),
        ("read_file<|channel|>commentary", "read_file"),
        ("<|constrain|>read_file", "read_file"),
        ("  list_dir\n", "list_dir"),
        ("functions.read_file:0", "read_file"),
        ("functions.launch_rockets", "functions.launch_rockets"),
        ("read_file write_file", "read_file write_file"),
        ("read_fil", "read_fil"),
        # Letter case and separators are spelling, not another name.
        ("Mark_subtask_complete", "mark_subtask_complete"),
        ("READ_FILE", "read_file"),
        ("readFile", "read_file"),
        ("Read File", "read_file"),
        ("functions.Read-File", "read_file"),
        ("Read_File Write_File", "Read_File Write_File"),
        ("create_file", "create_file"),  # an alias: the registry runs it and says so
    ],
)
def test_clean_tool_name_only_strips_markup(name: str, expected: str) -> None:
    assert clean_tool_name(name, KNOWN) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('{"path": "a.py"} I will read this file now.', {"path": "a.py"}),
        ("{'path': 'a.py', 'max_bytes': None}", {"path": "a.py", "max_bytes": None}),
        ('```json\n{"path": "a.py"}\n```', {"path": "a.py"}),
        ('"{\\"path\\": \\"a.py\\"}"', {"path": "a.py"}),
        ("", {}),
        ('{"path": "a.py"}{"path": "b.py"}', None),
        ('{"path": "a.py"', None),
        ("not json", None),
        ("[1, 2]", None),
    ],
)
def test_lenient_arguments(raw: str, expected: dict | None) -> None:
    assert lenient_arguments(raw) == expected


def test_many_unclosed_braces_are_read_quickly() -> None:
    import time

    content = "{ not json " * 20000 + 'and then {"name": "list_dir", "arguments": {}}'
    started = time.monotonic()
    assert parse_text_calls(content, KNOWN) == [ToolCall("list_dir", {})]
    assert time.monotonic() - started < 2.0


def test_the_small_models_capitalised_python_call_is_a_call() -> None:
    # Qwen2.5-0.5B answered every round this way (issue "Real local models get the work
    # done", item 9): true/false/True/False/null/None are the literal values.
    content = 'Mark_subtask_complete(success=true, reason="Open a terminal")'
    parsed = parse_reply(content, KNOWN)
    assert parsed.recogniser == "python"
    assert parsed.calls == [
        ToolCall("mark_subtask_complete", {"success": True, "reason": "Open a terminal"})
    ]
    assert parse_reply("READ_FILE(path='a.py', max_bytes=None)", KNOWN).calls == [
        ToolCall("read_file", {"path": "a.py", "max_bytes": None})
    ]


def test_python_calls_joined_by_a_semicolon_are_each_a_call() -> None:
    content = "write_file(path='a.py', content='x'); run_cmd(cmd='python a.py')"
    assert parse_reply(content, KNOWN).calls == [
        ToolCall("write_file", {"path": "a.py", "content": "x"}),
        ToolCall("run_cmd", {"cmd": "python a.py"}),
    ]
    # One statement that is not a call to a tool and the line is code, not calls.
    assert parse_reply("write_file(path='a.py', content='x'); print('hi')", KNOWN).calls == []


def test_an_alias_or_a_title_in_a_call_shape_is_a_call() -> None:
    assert parse_reply('create_file(path="a.py", content="x")', KNOWN).calls == [
        ToolCall("create_file", {"path": "a.py", "content": "x"})
    ]
    title = '{"name": "Write File", "arguments": {"path": "a.py", "content": "x"}}'
    assert parse_reply(title, KNOWN).calls == [
        ToolCall("write_file", {"path": "a.py", "content": "x"})
    ]
    assert parse_reply('{"name": "done"}', KNOWN).calls == [ToolCall("done", {})]
    assert parse_reply("print('hello')\nopen(file='x')", KNOWN).calls == []


def test_a_call_inside_a_call_that_could_not_be_read_never_runs() -> None:
    # A cut-off Qwen3-Coder call whose argument holds a call: what was meant is unclear.
    content = (
        "<tool_call>\n<function=write_file>\n<parameter=path>\nplan.json\n</parameter>\n"
        '<parameter=content>\n[{"name": "run_cmd", "arguments": {"cmd": "pytest"}}]\n'
    )
    parsed = parse_reply(content, KNOWN)
    assert parsed.calls == []
    assert "Qwen3-Coder XML" in parsed.problem and "That format is exactly" in parsed.problem


def test_an_invoke_call_is_read_only_when_complete() -> None:
    whole = (
        '<invoke name="read_file">\n<parameter name="path" string="true">a.py</parameter>\n'
        '<parameter name="max_bytes" string="false">10</parameter>\n</invoke>'
    )
    assert parse_reply(whole, KNOWN).calls == [
        ToolCall("read_file", {"path": "a.py", "max_bytes": 10})
    ]
    for end in range(len(whole)):
        assert parse_reply(whole[:end], KNOWN).calls == [], end
    broken = parse_reply('<invoke name="read_file">\n<parameter name="path">a.py\n</invoke>', KNOWN)
    assert broken.calls == [] and '<invoke name="TOOL_NAME">' in broken.problem


# Qwen2.5-Coder-1.5B's rewrite of its game, verbatim (llama-server, OpenAI API): the
# Python escape `\'` unescaped for JSON, and raw line breaks in the string after it.
# Strict JSON refused it, and the model sent the same call three times.
ESCAPED_APOSTROPHE = (
    '{{"name": "write_file", "arguments": {"path": "rps_game.py",'
    ' "content": "import sys\\nimport os\\nimport random\\n\\ndef pla'
    "y_game():\\n    player1 = input('Player 1, choose rock, paper"
    ", or scissors: ').lower()\\n    player2 = input('Player 2, ch"
    "oose rock, paper, or scissors: ').lower()\\n\\n    if player1 "
    "== player2:\\n        print('It\\'s a tie!')\n    elif (player1"
    " == 'rock' and player2 == 'scissors') or (player1 == 'paper'"
    " and player2 == 'rock') or (player1 == 'scissors' and player"
    "2 == 'paper'):\\n        print('Player 1 wins!')\n    else:\\n "
    "       print('Player 2 wins!')\\n\\nif __name__ == '__main__':"
    '\\n    play_game()"}}'
)


def test_a_backslash_json_has_no_escape_for_is_kept_as_written() -> None:
    parsed = parse_reply(ESCAPED_APOSTROPHE, {"write_file", "run_cmd"})
    (call,) = parsed.calls
    assert (call.name, call.arguments["path"], parsed.recogniser) == (
        "write_file",
        "rps_game.py",
        "json",
    )
    content = call.arguments["content"]
    assert "        print('It\\'s a tie!')\n    elif (player1" in content
    compile(content, "rps_game.py", "exec")  # the program the model meant
    for end in range(len(ESCAPED_APOSTROPHE)):  # a reply cut off: that call or none
        assert parse_reply(ESCAPED_APOSTROPHE[:end], {"write_file"}).calls in ([], [call])


CALL = '{"name": "write_file", "arguments": {"path": "a.py", "content": "%s"}}'


@pytest.mark.parametrize(
    ("written", "content"),
    [
        (r"re.compile('\d+')", r"re.compile('\d+')"),  # kept as written
        (r"a\\'b", r"a\'b"),  # an escaped backslash, then an apostrophe
        ("x\ny", "x\ny"),  # a line break inside the string
        (r"tab\there", "tab\there"),  # what JSON does define still means it
    ],
)
def test_loose_json_reads_only_what_has_one_meaning(written: str, content: str) -> None:
    (call,) = parse_reply(CALL % written, {"write_file"}).calls
    assert call.arguments["content"] == content


def test_loose_json_refuses_what_is_still_not_json() -> None:
    for source in ('{"a": "b\\"}', '{"a": "\\u12"}', "{'a': 1, }x", '{"a": 1} {"b": 2}'):
        with pytest.raises(NotLiteral):
            loose_json(source)


# Qwen2.5-Coder-1.5B's reply, verbatim, three rounds in a row: quotes inside the content
# that it did not escape.
STRAY = (
    '```json\n{"name": "write_file", "arguments": {"path": "mathx/divide.py", "content": '
    '"def divide(a, b): if b == 0: raise ValueError("Cannot divide by zero")"}}\n```'
)


def test_quotes_a_string_holds_unescaped_are_its_own() -> None:
    (call,) = parse_reply(STRAY, KNOWN).calls
    assert call == ToolCall(
        "write_file",
        {
            "path": "mathx/divide.py",
            "content": 'def divide(a, b): if b == 0: raise ValueError("Cannot divide by zero")',
        },
    )
    # Where a quote ends a string, the rest is read as JSON: x = "a" keeps both quotes.
    (call,) = parse_reply('{"name": "write_file", "arguments": {"path": "a.py", '
                          '"content": "x = "a""}}', KNOWN).calls  # fmt: skip
    assert call.arguments["content"] == 'x = "a"'


# Qwen2.5-Coder-1.5B's wordcount on the CPU, verbatim, three replies running: an f-string
# left open, `print(f"Lines: ... {chars})`, inside the content's JSON string.
FQUOTE = (
    '```json\n{\n  "name": "write_file",\n  "arguments": {\n    "path": "wordcount.py'
    '",\n    "content": "#!/usr/bin/env python3\\nimport argparse\\nimport sys\\n\\nde'
    "f main(args):\\n    if args.lines:\\n        with open(args.file, 'r') as f:\\n"
    "            lines = f.readlines()\\n            print(len(lines))\\n    else:\\n"
    "        with open(args.file, 'r') as f:\\n            lines = f.readlines()\\n"
    "            words = len(lines) * len(lines[0].split())\\n            chars = "
    'sum(len(line) for line in lines)\\n            print(f"Lines: {len(lines)}, W'
    "ords: {words}, Characters: {chars})\\n\\ndef parse_args(args):\\n    parser = a"
    "rgparse.ArgumentParser(description='Count lines, words, and characters in a "
    "file.')\n    parser.add_argument('file', help='The file to count.')\n    parse"
    "r.add_argument('--lines', action='store_true', help='Print only the number o"
    "f lines.')\n    return parser.parse_args(args)\\n\\nif __name__ == '__main__':\n"
    '    args = parse_args(sys.argv[1:])\n    main(args)\\n"\n  }\n}\n```'
)


def test_a_quote_left_open_in_a_call_s_string_is_the_string_s_own() -> None:
    """Its brackets do not close to a reader of quotes; read as the object of a call,
    the open quote is the content's own (the write then closes the f-string: see
    test_open_quotes)."""
    (call,) = parse_reply(FQUOTE, KNOWN).calls
    assert call.name == "write_file" and call.arguments["path"] == "wordcount.py"
    content = call.arguments["content"]
    assert '            print(f"Lines: {len(lines)}, Words: {words}, Characters: {chars})\n' in (
        content
    )
    assert content.endswith("    args = parse_args(sys.argv[1:])\n    main(args)\n")


@pytest.mark.parametrize(
    "content",
    [
        # A quote before a colon ends the string: what follows is then no JSON.
        '{"name": "write_file", "arguments": {"path": "a.py", "content": "d = {"k": 1}"}}',
        # Never closed: the model may not have finished.
        '{"name": "write_file", "arguments": {"path": "a.py", "content": "say "hi"',
    ],
)
def test_unescaped_quotes_that_leave_doubt_give_no_call(content: str) -> None:
    assert parse_reply(content, KNOWN).calls == []


# Qwen2.5-Coder-1.5B's reply, verbatim (on an H100): the file's content as a Python string
# in three quotes, inside its JSON, three rounds in a row and three more after a replan.
TRIPLE = '''```json
{
  "name": "write_file",
  "arguments": {
    "path": "rps_game.py",
    "content": """
class RockPaperScissors:
    def __init__(self):
        self.choices = ['rock', 'paper', 'scissors']

    def play(self, player1, player2):
        if player1 not in self.choices or player2 not in self.choices:
            return "Invalid choice. Please choose rock, paper, or scissors."
        if player1 == player2:
            return "It's a tie!"
        if (player1 == 'rock' and player2 == 'scissors') or \\
           (player1 == 'paper' and player2 == 'rock') or \\
           (player1 == 'scissors' and player2 == 'paper'):
            return "Player 1 wins!"
        else:
            return "Player 2 wins!"
    """
  }
}
```'''


def test_a_string_in_three_quotes_is_read_as_python_reads_it() -> None:
    (call,) = parse_reply(TRIPLE, KNOWN).calls
    assert call.name == "write_file" and call.arguments["path"] == "rps_game.py"
    content = call.arguments["content"]
    assert content.startswith("\nclass RockPaperScissors:\n") and 'return "It\'s a tie!"' in content
    compile(content, "rps_game.py", "exec")  # the line continuations joined, as Python does
    # Never closed: no call.
    assert parse_reply(TRIPLE.replace('    """\n  }', "  }"), KNOWN).calls == []


# Qwen2.5-Coder-1.5B's refactor edit on the CPU (350101c), verbatim: its strings in three
# quotes, and a `;` between the value of "old" and the key "new" where JSON has a comma.
# Three replies of it in a row were "no valid JSON tool call", and the subtask failed.
SEMICOLON = (
    '{{"name": "replace_in_file", "arguments": {"path": "shapes.py", "old": """Ar'
    'eas of shapes given as (kind, size) pairs; unknown kinds are left out."""; "'
    'new": """def area(kind, size):\n    if kind == "circle":\n        return 3.141'
    '59 * size * size\n    elif kind == "square":\n        return size * size\n    e'
    "lse:\n        return None\n\ndef total_area(shapes):\n    total = 0.0\n    for ki"
    "nd, size in shapes:\n        total += area(kind, size)\n    return total\n\ndef "
    "largest(shapes):\n    best, best_area = None, -1.0\n    for kind, size in shap"
    'es:\n        if kind == "circle":\n            this = area(kind, size)\n       '
    ' elif kind == "square":\n            this = area(kind, size)\n        else:\n  '
    "          continue\n        if this > best_area:\n            best, best_area "
    "= (kind, size), this\n    return best\n\ndef report(shapes):\n    lines = []\n   "
    ' for kind, size in shapes:\n        if kind == "circle":\n            lines.ap'
    'pend(f"{kind} {size}: {area(kind, size):.2f}")\n        elif kind == "square"'
    ':\n            lines.append(f"{kind} {size}: {area(kind, size):.2f}")\n    ret'
    'urn "\\n".join(lines)"""}}}'
)


def test_a_semicolon_between_a_string_and_the_next_key_is_the_comma() -> None:
    (call,) = parse_reply(SEMICOLON, KNOWN).calls
    assert call.name == "replace_in_file" and call.arguments["path"] == "shapes.py"
    assert call.arguments["old"] == (
        "Areas of shapes given as (kind, size) pairs; unknown kinds are left out."
    )
    assert call.arguments["new"].startswith('def area(kind, size):\n    if kind == "circle"')
    assert call.arguments["new"].endswith('    return "\\n".join(lines)')
    compile(call.arguments["new"], "shapes.py", "exec")
    # A `;` inside a string stays there; one before no key reads as nothing.
    assert "pairs; unknown" in call.arguments["old"]
    assert parse_reply(SEMICOLON.replace('"""; "new"', '"""; new'), KNOWN).calls == []


# Qwen2.5-Coder-1.5B's refactor on the CPU (fe61f7b), verbatim: two edits in one call's
# arguments, each key twice. JSON keeps the last of each, so one edit ran as if it were
# the call; sent four times, two blocked.
TWICE = (
    '```json\n{\n  "name": "replace_in_file",\n  "arguments": {\n    "path": "shapes.py",\n'
    '    "old": "area(\'circle\', size)",\n    "new": "area(\'circle\', size)",\n'
    '    "old": "area(\'square\', size)",\n    "new": "area(\'square\', size)"\n  }\n}\n```'
)


def test_a_call_that_gives_an_argument_twice_runs_nothing() -> None:
    read = parse_reply(TWICE, KNOWN)
    assert read.calls == [] and read.problem, read
    # Python's own dictionaries, and a key twice at the call's top level, the same.
    assert parse_reply(TWICE.replace('"old"', "'old'"), KNOWN).calls == []
    twice = '{"name": "read_file", "name": "write_file", "arguments": {"path": "a.py"}}'
    assert parse_reply(twice, KNOWN).calls == []
    once = '{"name": "replace_in_file", "arguments": {"path": "a.py", "old": "a", "new": "b"}}'
    assert parse_reply(once, KNOWN).calls


# Qwen2.5-Coder-1.5B's reply on the CPU, verbatim (mathx, "write_file mathx/__init__.py
# with the docstring for the mathx package"): `"""\` and a line break start the text on
# the next line, as in Python; the backslash is not the file's.
CONTINUED = '''```json
{
  "name": "write_file",
  "arguments": {
    "path": "mathx/__init__.py",
    "content": """\\
# mathx package

This package provides basic mathematical functions.
"""
  }
}
```'''


def test_a_string_in_three_quotes_may_start_on_its_next_line() -> None:
    (call,) = parse_reply(CONTINUED, KNOWN).calls
    assert call.arguments["content"] == (
        "# mathx package\n\nThis package provides basic mathematical functions.\n"
    )


# Qwen2.5-Coder-1.5B's writes on an H100, verbatim: `It\'s` escaped for Python inside a
# JSON string. Read as a Python literal, the backslash was lost and the file failed to
# compile ("unterminated string literal"); the second one also never closes its string.
ESCAPED = (
    '{{"name": "write_file", "arguments": {"path": "rps_game.py", "content": "import random'
    "\\n\\ndef play_game():\\n    choices = ['rock', 'paper', 'scissors']\\n    "
    "computer_choice = random.choice(choices)\\n    player_choice = input('Enter your choice "
    "(rock, paper, or scissors): ').lower()\\n    if player_choice == computer_choice:\\n    "
    "    print('It\\'s a tie!')\\n    elif (player_choice == 'rock' and computer_choice == "
    "'scissors') or (player_choice == 'paper' and computer_choice == 'rock') or "
    "(player_choice == 'scissors' and computer_choice == 'paper'):\\n        print('You "
    "win!')\\n    else:\\n        print('You lose!')\"}}}"
)
UNCLOSED = (
    '{{"name": "write_file", "arguments": {"path": "rps_game.py", "content": "import random'
    "\\n\\ndef play_game():\\n    choices = ['rock', 'paper', 'scissors']\\n    "
    "user_choice = input('Enter your choice (rock, paper, or scissors): ').lower()\\n    "
    "if user_choice == random.choice(choices):\\n        return 'It\\'s a tie!'\\n    "
    "else:\\n        return 'You lose!'}}}}"
)


@pytest.mark.parametrize("reply", [ESCAPED, UNCLOSED], ids=["closed", "never-closed"])
def test_a_python_escape_inside_a_json_string_is_kept(reply: str) -> None:
    (call,) = parse_reply(reply, KNOWN).calls
    content = call.arguments["content"]
    assert "'It\\'s a tie!'" in content
    compile(content, "rps_game.py", "exec")


# refactor-1 on the CPU, round 19, verbatim: its strings in three quotes end with four.
FOUR_QUOTED = (
    '{{"name": "replace_in_file", "arguments": {"path": "shapes.py", "old":'
    ' """def area(kind, size):\n    if kind == "circle":\n        return 3.14'
    '159 * size * size\n    elif kind == "square":\n        return size * siz'
    "e\n    else:\n        return None\ndef total_area(shapes):\n    total = 0."
    "0\n    for kind, size in shapes:\n        total += area(kind, size)\n    "
    "return total\n\ndef largest(shapes):\n    best, best_area = None, -1.0\n  "
    '  for kind, size in shapes:\n        if kind == "circle":\n            t'
    'his = area(kind, size)\n        elif kind == "square":\n            this'
    " = area(kind, size)\n        else:\n            continue\n        if this"
    " > best_area:\n            best, best_area = (kind, size), this\n    ret"
    "urn best\n\ndef report(shapes):\n    lines = []\n    for kind, size in sha"
    'pes:\n        if kind == "circle":\n            lines.append(f"{kind} {s'
    'ize}: {area(kind, size):.2f}")\n        elif kind == "square":\n        '
    '    lines.append(f"{kind} {size}: {area(kind, size):.2f}")\n    return '
    '"\\n".join(lines)"""", "new": """def area(kind, size):\n    if kind == "'
    'circle":\n        return 3.14159 * size * size\n    elif kind == "square'
    '":\n        return size * size\n    else:\n        return None\ndef total_'
    "area(shapes):\n    total = 0.0\n    for kind, size in shapes:\n        to"
    "tal += area(kind, size)\n    return total\n\ndef largest(shapes):\n    bes"
    "t, best_area = None, -1.0\n    for kind, size in shapes:\n        if kin"
    'd == "circle":\n            this = area(kind, size)\n        elif kind ='
    '= "square":\n            this = area(kind, size)\n        else:\n        '
    "    continue\n        if this > best_area:\n            best, best_area "
    "= (kind, size), this\n    return best\n\ndef report(shapes):\n    lines = "
    '[]\n    for kind, size in shapes:\n        if kind == "circle":\n        '
    '    lines.append(f"{kind} {size}: {area(kind, size):.2f}")\n        eli'
    'f kind == "square":\n            lines.append(f"{kind} {size}: {area(ki'
    'nd, size):.2f}")\n    return "\\n".join(lines)"""}}'
)


# refactor-1 on the CPU (code of ee4806d), rounds 2 and 3, verbatim: told the format
# after each, the same four quotes three replies in a row.
FOUR_DOCSTRING = (
    '{{"name": "replace_in_file", "arguments": {"path": "shapes.py", "old": """Areas of sha'
    'pes given as (kind, size) pairs; unknown kinds are left out."""", "new": """def area(k'
    'ind, size):\n    if kind == "circle":\n        return 3.14159 * size * size\n    eli'
    'f kind == "square":\n        return size * size\n    else:\n        return None\n"""'
    "}}}}"
)
FOUR_AREA = FOUR_DOCSTRING.replace(
    "Areas of shapes given as (kind, size) pairs; unknown kinds are left out.",
    'def area(kind, size):\n    if kind == "circle":\n        return 3.14159 * size * siz'
    'e\n    elif kind == "square":\n        return size * size\n    else:\n        retur'
    "n None\n",
)


@pytest.mark.parametrize(
    ("reply", "old"),
    [
        (FOUR_QUOTED, '    return "\\n".join(lines)'),
        (
            FOUR_DOCSTRING,
            "Areas of shapes given as (kind, size) pairs; unknown kinds are left out.",
        ),
        (FOUR_AREA, "    else:\n        return None\n"),
    ],
)
def test_a_string_ended_with_four_quotes_ends_with_three_as_python_reads_it(
    reply: str, old: str
) -> None:
    parsed = parse_reply(reply, KNOWN)
    assert [c.name for c in parsed.calls] == ["replace_in_file"], parsed.problem
    assert parsed.calls[0].arguments["old"].endswith(old), parsed.calls[0].arguments
    assert parsed.calls[0].arguments["new"].startswith("def area(kind, size):\n")


def test_four_quotes_that_end_no_value_give_no_call_and_say_so() -> None:
    reply = '{"name": "write_file", "arguments": {"path": "a.py", "content": """x = 1"""" + "y"}}'
    parsed = parse_reply(reply, KNOWN)
    assert parsed.calls == []
    assert parsed.problem.endswith(
        'a string in three quotes there ends with four (`""""`); end it with three, or send '
        "the text as one JSON string"
    ), parsed.problem
