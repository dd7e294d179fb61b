"""What a real small model (Qwen2.5-Coder-0.5B on llama-server) answered, through the real
CLI and the real model client, the fake server sending each reply as the model wrote it:
a reply that runs away repeating itself, a JSON call missing its last brace, the format
example copied back, an invented tool name."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from support import backend_env, done, messages_text, plan_rule, records, run_cli

from localagent.models.fake import FakeServer
from localagent.models.loops import LoopCut, loop_start, rows_start
from localagent.textcalls import parse_reply
from localagent.tools.aliases import unknown_tool
from localagent.tools.catalog import SMALL_MODEL_TOOLS
from localagent.verify.evidence import is_lookup

GOAL = "Write hello.py that prints hi"
PLAN = plan_rule(("Write hello.py", ["write_file hello.py that prints hi"]))
# The 0.5B's call, written as JSON text in the content.
HELLO_CALL = '{"name": "write_file", "arguments": {"path": "hello.py", "content": "print(\'hi\')"}}'
# ... and then the same sentence until the length cap, about 2,000 tokens.
RUNAWAY = "\nI have written the file hello.py that prints hi."
KNOWN = {*SMALL_MODEL_TOOLS, "mark_subtask_complete"}


def run_hello(ws: Path, replies: list[dict[str, Any]], backend: str = "ollama", **env: str) -> Any:
    scenario = {"models": [{"name": "qwen2.5-coder:0.5b"}], "llama_cpp": backend == "openai"}
    scenario |= {"rules": [PLAN], "replies": replies, "default": done("written")}
    with FakeServer(scenario) as server:
        given = {"OLLAMA_MODEL": "qwen2.5-coder:0.5b", "LOCALAGENT_VERIFY": "0"}
        environ = backend_env(backend, server.url, **{**given, "LOCALAGENT_MAX_ROUNDS": "4", **env})
        ran = run_cli(environ, "start", GOAL, "-w", str(ws), "--foreground")
        return ran, server.chat_requests


def rounds(ws: Path) -> list[dict[str, Any]]:
    return [r for r in records(ws) if r["type"] == "llm_call" and r["purpose"] == "round"]


@pytest.mark.parametrize("backend", ["ollama", "openai"])
def test_a_reply_that_repeats_itself_is_cut_and_its_call_runs(tmp_path: Path, backend: str) -> None:
    content = HELLO_CALL + RUNAWAY * 160
    reply = {"content": content, "chunks": 400}
    ran, sent = run_hello(tmp_path, [reply], backend)
    assert ran.returncode == 0, ran.stderr
    assert (tmp_path / "hello.py").read_text() == "print('hi')"
    first = rounds(tmp_path)[0]
    assert first["cut_off"] == "loop"
    assert first["content"].count(RUNAWAY) <= 1 and first["content"].startswith(HELLO_CALL)
    assert "repeated the same text" in messages_text(sent[-1])  # the model is told


def test_a_reply_cut_inside_a_file_s_content_is_told_to_write_a_shorter_file(
    tmp_path: Path,
) -> None:
    """Qwen2.5-Coder-1.5B's mathx test file, a parametrize table of doubling numbers, was
    cut at the length cap three times running, each time told "no long explanations"."""
    rows = "".join(f"    ({2**i}, 2, {2 ** (i + 1)}),\n" for i in range(40))
    cut = '{"name": "write_file", "arguments": {"path": "hello.py", "content": "import pytest\\n'
    cut += json.dumps(rows)[1:-1]
    replies = [{"content": cut, "done_reason": "length"}, {"content": HELLO_CALL}]
    ran, sent = run_hello(tmp_path, replies, "openai")
    assert ran.returncode == 0, ran.stderr
    assert rounds(tmp_path)[0]["cut_off"] == "length"
    told = messages_text(sent[-1])
    assert "inside a file's content. Write a shorter file: fewer cases" in told
    assert "no long explanations" not in told


# The 1.5B's mathx test file (b931a98, Ollama API, the CPU), verbatim: five rows of
# numbers over and over, 1,452 characters when the cap of 1,024 tokens cut it, 100 s.
TABLE_HEAD = (
    '{{"name": "write_file", "arguments": {"path": "tests/test_mathx.py", "content": "import '
    "pytest\\n\\n@pytest.mark.parametrize('a, b, expected', [\\n    (1, 2, 3),\\n    (2, 3, 5)"
    ",\\n    (5, 5, 25),\\n    (0, 1, 0),\\n    (1, 0, 0),\\n    (1, -1, -2),\\n    (-1, -1, "
    "1),\\n    (-1, 1, -2),\\n    (1, -2, -1),\\n    (-2, 1, -1),\\n    (-2, -1, 1),\\n    "
    "(0, 0, 0),\\n    (1.5, 2.5, 4.5),\\n    (2.5, 1.5, 4.5),\\n    (5.5, 5.5, 27.5),\\n    "
    "(0.1, 0.2, 0.21),\\n    (0.2, 0.1, 0.21),\\n    (0.1, -0.2, -0.21),\\n    (-0.2, -0.1, "
    "-0.21),\\n    (-0.1, 0.2, -0.21),\\n    (0.2, -0.1, -0.21),\\n"
)
TABLE_UNIT = (
    "    (0.1, -0.2, -0.21),\\n    (-0.2, 0.1, -0.21),\\n    (-0.2, -0.1, -0.21),\\n    "
    "(-0.1, 0.2, -0.21),\\n    (0.2, -0.1, -0.21),\\n"
)
TABLE = TABLE_HEAD + TABLE_UNIT * 7 + "    (0."


def _streamed(text: str, pieces: int) -> tuple[LoopCut, int]:
    """The text fed to a LoopCut in `pieces` even pieces (a token each): (it, the
    characters read when it cut, or all of them)."""
    looped, bounds = LoopCut(), [round(i * len(text) / pieces) for i in range(pieces + 1)]
    for start, end in itertools.pairwise(bounds):
        if looped.add(text[start:end]):
            return looped, end
    return looped, len(text)


def test_a_loop_of_short_tokens_is_cut_by_its_tokens() -> None:
    assert len(TABLE) == 1452
    looped, read = _streamed(TABLE, 1024)  # as the engine sent it: 1,024 tokens
    assert read < 1100 and looped.cut is not None, read
    assert looped.text() == TABLE[: looped.cut]  # the rows before the loop and one copy
    assert len(TABLE_HEAD) < looped.cut < len(TABLE_HEAD) + 2 * len(TABLE_UNIT)
    # The same characters in long tokens span fewer than MIN_SPAN: no loop yet.
    assert _streamed(TABLE, 360)[0].cut is None
    # Rows of numbers that neither repeat nor count on are no loop, in tokens as short.
    rows = "".join(f"    ({i % 7}, {i * i % 11}, {i % 5}),\\n" for i in range(80))
    assert _streamed(rows, len(rows))[0].cut is None


# The 1.5B's mathx test file (0c8d102, the CPU), verbatim: rows that count on, each the
# one above plus (2, 2, 4), to row 62 at the cap of 1,024 tokens, 40 s; 4 of 48 mathx runs
# wrote such a table.
COUNTING = (
    '{{"name": "write_file", "arguments": {"path": "tests/test_mathx.py", "content": "import '
    "pytest\\n\\n@pytest.mark.parametrize('a, b, expected', [\\n"
    + "".join(f"    ({i}, {i + 1}, {2 * i + 1}),\\n" for i in range(1, 125, 2))
    + "    ("
)


def test_rows_that_count_on_are_cut_as_a_loop(tmp_path: Path) -> None:
    assert len(COUNTING) == 1378
    looped, read = _streamed(COUNTING, 1024)  # as the engine sent it: 1,024 tokens
    assert looped.cut is not None and read < 0.6 * len(COUNTING), read
    assert looped.text().endswith("(3, 4, 7),\\n    (5, 6, 11),\\n"), looped.text()
    replies = [{"content": COUNTING, "chunks": 1024}, {"content": HELLO_CALL}]
    ran, sent = run_hello(tmp_path, replies)
    assert ran.returncode == 0, ran.stderr
    first = rounds(tmp_path)[0]
    assert first["cut_off"] == "loop" and first["completion_tokens"] < 600, first
    assert "inside a file's content. Write a shorter file: fewer cases" in messages_text(sent[2])


@pytest.mark.parametrize(
    ("rows", "cut"),
    [
        # A file's numbered lines echoed, `186 |` on: one number, but a numbered line.
        ("".join(f"{i} |\n" for i in range(150, 210)), True),
        ("".join(f"    ({i}, {i + 1}, {2 * i + 1}),\n" for i in range(0, 60, 2)), True),
        # Numbers alone, one to a line: a list the goal may ask for.
        ("".join(f"{i}\n" for i in range(1, 101)), False),
        # One shape, but the numbers do not count on.
        ("".join(f"    ({i % 7}, {i * 3 % 11}),\n" for i in range(60)), False),
        # Counting on, but fewer rows than MIN_ROWS.
        ("".join(f"    ({i}, {2 * i}),\n" for i in range(20)), False),
        # The same row again and again is the other loop's (a long enough span).
        ("    (1, 2, 3),\n" * 40, False),
    ],
    ids=["numbered", "table", "numbers", "not-counting", "few", "same"],
)
def test_which_rows_are_cut(rows: str, cut: bool) -> None:
    assert (rows_start("x = [\n" + rows) is not None) is cut


def test_a_write_cut_by_its_loop_is_told_to_be_shorter(tmp_path: Path) -> None:
    replies = [{"content": TABLE, "chunks": 1024}, {"content": HELLO_CALL}]
    ran, sent = run_hello(tmp_path, replies)
    assert ran.returncode == 0, ran.stderr
    first = rounds(tmp_path)[0]
    assert first["cut_off"] == "loop" and first["completion_tokens"] < 800, first
    told = messages_text(sent[-1])
    assert "(it repeated the same text over and over; replies are capped at " in told
    assert "inside a file's content. Write a shorter file: fewer cases" in told
    # Its runaway is not shown again for the model to copy: a line says what it was.
    assert "(0.1, -0.2, -0.21)" not in told
    mine = [m["content"] for m in sent[2]["messages"] if m["role"] == "assistant"]  # round 2
    assert mine == [
        "[my reply: a write_file call of tests/test_mathx.py whose content ran on until it "
        "was cut off; nothing was written]"
    ]


def test_a_write_of_the_example_s_placeholder_is_refused(tmp_path: Path) -> None:
    """The 0.5B's hello (the CPU, 1315a89), verbatim: it copied the format example's
    `"content": "<content>"` into hello_world.py, and wrote it again until blocked."""
    copied = '{"name": "write_file", "arguments": {"path": "hello.py", "content": "<content>"}}'
    ran, _ = run_hello(tmp_path, [{"content": copied}, {"content": HELLO_CALL}], "openai")
    assert ran.returncode == 0, ran.stderr
    first = next(r for r in records(tmp_path) if r["type"] == "action_finished")
    assert not first["ok"], first
    said = "`<content>` is the example's placeholder, not the content of 'hello.py'"
    assert said in first["result"], first["result"]
    assert (tmp_path / "hello.py").read_text() == "print('hi')"


def test_the_small_profile_caps_every_reply(tmp_path: Path) -> None:
    ran, sent = run_hello(tmp_path / "a", [{"content": HELLO_CALL}], "openai")
    assert ran.returncode == 0, ran.stderr
    assert {request["max_tokens"] for request in sent} == {1024}
    ran, sent = run_hello(tmp_path / "b", [{"content": HELLO_CALL}], LOCALAGENT_NUM_PREDICT="600")
    assert ran.returncode == 0, ran.stderr
    assert {request["options"]["num_predict"] for request in sent} == {600}  # a lower one wins


@pytest.mark.parametrize(
    "text",
    [
        "x = 1\n" + "-" * 80 + "\n" + "=" * 200 + "\ny = 2\n",  # rulers
        "".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(200)),  # alike, not same
        "| a | b |\n" + "|---|---|\n" * 3 + "| 1 | 2 |\n",
        "print('hi')\n" * 20,  # twenty copies of a short line: a short span
    ],
    ids=["rulers", "similar-functions", "table", "short-span"],
)
def test_text_that_only_looks_repetitive_is_not_cut(text: str) -> None:
    assert loop_start(text) is None


def test_the_copy_kept_is_whole_lines() -> None:
    # The text before the loop ends like the unit does: the kept copy still ends its line.
    call = '{"name": "read_file", "arguments": {"path": "a.py"}}\n'
    text = "Reading it:\n}\n" + call * 60
    assert text[: loop_start(text)] == "Reading it:\n}\n" + call
    looped = LoopCut()
    for start in range(0, len(text), 7):
        if looped.add(text[start : start + 7]):
            break
    assert looped.text() == "Reading it:\n}\n" + call
    assert start < len(text) // 2  # read no further than needed


def test_a_call_sent_again_and_again_is_cut_after_two_copies() -> None:
    """Qwen2.5-Coder-0.5B's verbatim loop: the same call, every other copy missing its
    last brace. A tool call the same twice in one reply adds nothing (the loop guard runs
    it once), so reading stops after the second copy of the unit, not after 1,200
    characters: about 400 tokens, five minutes of a loaded CPU, were spent on it."""
    args = '"arguments": {"path": "hello_world.py", "content": "print(\'Hello, world!\')"}'
    unit = '{"name": "write_file", ' + args + "\n" + '{"name": "write_file", ' + args + "}\n"
    looped = LoopCut()
    text = unit * 40
    for start in range(0, len(text), 4):
        if looped.add(text[start : start + 4]):
            break
    assert looped.text() == unit
    assert start < 2 * len(unit) + 130  # one look past the second copy
    # A file whose lines repeat a call-like record is not cut before the long span.
    record = '{"name": "a", "arguments": []},\n'
    assert loop_start("[\n" + record * 4) is None


def test_a_json_call_missing_its_last_brace_runs(tmp_path: Path) -> None:
    ran, _ = run_hello(tmp_path, [{"content": HELLO_CALL[:-1]}])
    assert ran.returncode == 0, ran.stderr
    assert (tmp_path / "hello.py").read_text() == "print('hi')"
    assert rounds(tmp_path)[0]["recogniser"] == "json"


@pytest.mark.parametrize(
    "content",
    [
        HELLO_CALL[:-2],  # the arguments' brace too
        HELLO_CALL[:-1] + "\nThis creates hello.py.",  # more follows: not just the last brace
        '{"name": "write_file", "arguments": {"path": "hello.py", "content": "print(1)"',
        '{"name": "write_file", "arguments": {"path": "a.py", "extra": {"k": 1}',
        '{"name": "write_file"',  # no arguments: the brace may be theirs
        # Its brace may be the one missing: {"b": 1}, "c": 2 is a call too.
        '{"name": "write_file", "arguments": {"path": "a.py", "a": {"b": 1, "c": 2}}',
        '{"name": "write_file", "arguments": {"path": "a.py"}, "content": "x"',  # whose content?
    ],
    ids=[
        "two-missing",
        "prose-after",
        "arguments-open",
        "nested-open",
        "no-arguments",
        "ends-with-object",
        "argument-outside",
    ],
)
def test_a_call_missing_more_than_its_last_brace_never_runs(content: str) -> None:
    parsed = parse_reply(content, KNOWN)
    assert parsed.calls == [] and parsed.problem


def test_the_last_call_missing_its_brace_joins_the_complete_ones() -> None:
    first = '{"name": "read_file", "arguments": {"path": "a.py"}}\n'
    parsed = parse_reply(first + HELLO_CALL[:-1] + "\n```", KNOWN)
    assert [call.name for call in parsed.calls] == ["read_file", "write_file"]


def test_the_format_example_is_a_real_call_and_a_copied_placeholder_is_named(
    tmp_path: Path,
) -> None:
    # The 0.5B copied the feedback's example back, word for word, for nine rounds.
    copied = '```json\n{"name": "TOOL_NAME", "arguments": {...}}\n```'
    example = '{"name": "write_file", "arguments": {"path": "hello.py", "content": "<content>"}}'
    replies = [{"content": copied}, {"content": example}, done("written"), {"content": HELLO_CALL}]
    ran, sent = run_hello(tmp_path, replies, LOCALAGENT_MAX_ROUNDS="6")
    assert ran.returncode == 0, ran.stderr
    feedback = [r for r in records(tmp_path) if r["type"] == "feedback"]
    assert feedback[0]["format_error"] and "placeholder TOOL_NAME" in feedback[0]["text"]
    told = feedback[0]["text"]
    assert example in told and "TOOL_NAME" not in told.split("\n", 1)[1]
    assert told in messages_text(sent[2])  # plan, the copy, then told
    # Copied as it is, the example runs, and its placeholder is refused as the content.
    write = next(r for r in records(tmp_path) if r["type"] == "action_finished")
    assert "`<content>` is the example's placeholder" in write["result"], write
    assert "hello.py does not exist" in feedback[1]["text"] and feedback[1]["refused"]
    assert (tmp_path / "hello.py").read_text() == "print('hi')"


@pytest.mark.parametrize(
    ("name", "nearest"),
    [("generate_code", "write_file"), ("text_editor", "write_file"), ("TOOL_NAME", None)],
)
def test_an_invented_tool_name_is_answered_with_the_nearest_names(
    name: str, nearest: str | None
) -> None:
    reply = json.dumps({"name": name, "arguments": {"path": "hello.py"}})
    parsed = parse_reply(reply, KNOWN)
    if nearest is None:  # the placeholder names no tool: nothing runs, the model is told
        assert parsed.calls == [] and "placeholder" in parsed.problem
        return
    assert [call.name for call in parsed.calls] == [name]
    said = unknown_tool(name, sorted(KNOWN))
    assert said.split("did you mean ")[1].startswith(nearest)


def test_a_look_up_subtask_is_done_by_its_look_up(tmp_path: Path) -> None:
    """The 1.5B's plans hold look-ups; each got one "NOT ACCEPTED YET" and ended unverified
    although the look-up was all they asked for."""
    (tmp_path / "cli.py").write_text("def parse_args(argv):\n    return argv\n")
    (tmp_path / "README.md").write_text("# cli\n")
    subtasks = ["Find where parse_args is defined", "Read README"]
    replies = [
        {"content": '{"name": "search_files", "arguments": {"pattern": "def parse_args"}}'},
        done("parse_args is defined in cli.py, line 1"),
        {"content": '{"name": "read_file", "arguments": {"path": "README.md"}}'},
        done("README.md says the tool is called cli"),
    ]
    scenario = {"rules": [plan_rule(("Look", subtasks))], "replies": replies, "default": done()}
    with FakeServer(scenario) as server:
        env = backend_env("ollama", server.url, LOCALAGENT_VERIFY="0")
        ran = run_cli(
            env, "start", "Find out how cli.py parses", "-w", str(tmp_path), "--foreground"
        )
    assert ran.returncode == 0, ran.stderr
    recs = records(tmp_path)
    assert not [r for r in recs if r["type"] == "feedback" and r.get("nudged")]
    completed = [r for r in recs if r["type"] == "subtask_completed"]
    assert [r["verified"] for r in completed] == [True, True]


@pytest.mark.parametrize(
    ("subtask", "lookup"),
    [
        ("Find where add is defined", True),  # `add` is a name here, not a verb
        ("Read README.md to understand the project", True),
        ("List the files in the workspace", True),
        ("Read main.py and fix the bug", False),
        ("Check that the tests pass", False),
        ("Read README to learn how to run it", False),
        ("hello.py prints hi", False),
        ("Define add in mathx/core.py", False),
    ],
)
def test_what_is_a_look_up(subtask: str, lookup: bool) -> None:
    assert is_lookup([subtask]) is lookup


# Qwen2.5-Coder-1.5B's first round of "Create a rock-paper-scissors game", verbatim: the
# content's closing quote is missing, then the braces of every object; round 2 sent the
# same in a fence with one object less opened. Both were "no valid JSON tool call".
RPS_CONTENT = (
    "import random\\n"
    "\\n"
    "def play_game(player1, player2):\\n"
    "    choices = ['rock', 'paper', 'scissors']\\n"
    "    player1_choice = player1.lower()\\n"
    "    player2_choice = player2.lower()\\n"
    "    if player1_choice == player2_choice:\\n"
    "        return 'It's a tie!'\\n"
    "    elif (player1_choice == 'rock' and player2_choice == 'scissors')"
    " or (player1_choice == 'paper' and player2_choice == 'rock')"
    " or (player1_choice == 'scissors' and player2_choice == 'paper'):\\n"
    "        return 'Player 1 wins!'\\n"
    "    else:\\n"
    "        return 'Player 2 wins!'"
)
RPS_ARGS = '"arguments": {"path": "rps_game.py", "content": "' + RPS_CONTENT


@pytest.mark.parametrize(
    "content",
    [
        '{{"name": "write_file", ' + RPS_ARGS + "}}}",
        '```json\n{"name": "write_file", ' + RPS_ARGS + "}}}\n```",
    ],
    ids=["doubled-brace", "fenced"],
)
def test_a_call_whose_last_string_is_not_closed_runs(content: str) -> None:
    [call] = parse_reply(content, KNOWN).calls
    assert call.name == "write_file" and call.arguments["path"] == "rps_game.py"
    assert call.arguments["content"] == json.loads('"' + RPS_CONTENT + '"')
    assert call.arguments["content"].endswith("return 'Player 2 wins!'")


@pytest.mark.parametrize(
    "content",
    [
        '{"name": "write_file", "arguments": {"path": "a.js", "content": "x = {a: {}}}',
        '{"name": "write_file", "arguments": {"path": "a.py", "content": "x = {}}',
        '{"name": "write_file", "arguments": {"path": "a.py", "content": "print(1)}',
        '{"name": "write_file", "arguments": {"path": "a.py", "content": "[1, 2]"}, "x": "y}}',
    ],
    ids=["own-braces", "own-brace-short", "one-brace-short", "another-string"],
)
def test_a_string_left_open_is_never_guessed_where_its_end_is_unclear(content: str) -> None:
    assert parse_reply(content, KNOWN).calls == []


# Qwen2.5-Coder-0.5B's rps round on the CPU, verbatim: a write_file call as JSON whose
# content never ends, its code ending in a line `mark_subtask_complete(success=True, ...)`.
CALL_IN_CODE = (
    '{"name": "write_file rps_game.py with the game logic", "arguments": {"path": "rps_g'
    'ame.py", "content": "def rock_paper_scissors():\n    import random\n    import time'
    '\n\n    def get_user_choice():\n        user_input = input("Enter your choice (rock'
    ', paper, scissors): ")\n        return user_input.lower()\n\n    def get_computer_c'
    'hoice():\n        choices = ["rock", "paper", "scissors"]\n        return random.ch'
    "oice(choices)\n\n    def play_game():\n        user_choice = get_user_choice()\n   "
    '     computer_choice = get_computer_choice()\n        print(f"You chose {user_choic'
    'e} and the computer chose {computer_choice}")\n\n        if user_choice == computer'
    '_choice:\n            print("It\'s a tie!")\n        elif user_choice == "rock":\n '
    '           if computer_choice == "scissors":\n                print("You win!")\n  '
    '          else:\n                print("You lose!")\n        elif user_choice == "p'
    'aper":\n            if computer_choice == "rock":\n                print("You win!"'
    ')\n            else:\n                print("You lose!")\n        elif user_choice '
    '== "scissors":\n            if computer_choice == "paper":\n                print("'
    'You win!")\n            else:\n                print("You lose!")\n\n    play_game('
    ')\n    time.sleep(2)\n    print("Game over!")\n    print("Thanks for playing!")\n  '
    '  mark_subtask_complete(success=True, reason="The game is over.")\n}'
)


def test_a_call_in_the_code_of_a_call_that_could_not_be_read_never_runs(tmp_path: Path) -> None:
    """The line was read as the model's call and ran: twice, and the second claim ended the
    step, so the goal ended "completed" with a game that called nothing. A call that starts
    inside a JSON call that could not be read may be its argument: nothing runs, and the
    model is told the format."""
    parsed = parse_reply(CALL_IN_CODE, KNOWN)
    assert parsed.calls == [] and "no valid JSON tool call" in parsed.problem
    ran, sent = run_hello(tmp_path, [{"content": CALL_IN_CODE}] * 2)
    assert ran.returncode in (0, 1), ran.stderr
    assert not [r for r in records(tmp_path) if r["type"] == "subtask_completed"
                and r.get("reason") == "The game is over."]  # fmt: skip
    assert "no valid JSON tool call" in messages_text(sent[2])
