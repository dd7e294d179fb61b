"""A program the goal asks for that calls none of its code is run by the verification,
and goes back to a write that calls it (small profile). Qwen2.5-Coder-1.5B's rock-paper-
scissors on the CPU (the code of 0f262ce), verbatim through the real CLI on the scripted
fake server: its replans had dropped the run step, its last rps_game.py defined
`play_game` and called nothing, the verification ran no check (it ran only scripts that
do something), and the goal ended "completed (unverified)" with a game that never plays."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest
from support import plan_rule, real_goal, records_of, small_model_goal

from localagent.tools import parsedargs
from localagent.verify.checks import idle_program, program_goal

GOAL = "Create a rock-paper-scissors game"
TASK = "Write the game logic in rps_game.py"
GAME = (
    '{{"name": "write_file", "arguments": {"path": "rps_game.py", "content": "import random\\n'
    "\\ndef play_game(player1, player2):\\n    choices = ['rock', 'paper', 'scissors']\\n    "
    "player1_choice = player1.lower()\\n    player2_choice = player2.lower()\\n    if "
    "player1_choice == player2_choice:\\n        return 'It's a tie!'\\n    elif (player1_"
    "choice == 'rock' and player2_choice == 'scissors') or (player1_choice == 'paper' and "
    "player2_choice == 'rock') or (player1_choice == 'scissors' and player2_choice == "
    "'paper'):\\n        return 'Player 1 wins!'\\n    else:\\n        return 'Player 2 wins!'"
    "}}}"
)
# The small verifier's word on it, as its record kept it: the plan's own task unmet.
VERDICT = {
    "content": json.dumps(
        {"verdict": "NOT_VERIFIED", "unmet": [TASK], "evidence": [], "next": "replan"}
    )
}


def test_a_game_that_calls_none_of_its_code_goes_back_to_a_write_that_calls_it(
    tmp_path: Path,
) -> None:
    plan = plan_rule((TASK, ["write_file rps_game.py with the game logic"]))
    small_model_goal(
        tmp_path, GOAL, plan, [{"content": GAME}], VERDICT,
        LOCALAGENT_VERIFY="1", LOCALAGENT_MAX_ROUNDS="3",
    )  # fmt: skip
    (check,) = records_of(tmp_path, "check_finished")[:1]
    assert check["cmd"] == "python rps_game.py" and check["source"] == "program"
    verdict = records_of(tmp_path, "verdict")[0]
    idle = (
        "`python rps_game.py` printed nothing: rps_game.py defines play_game and calls none "
        "of its code"
    )
    assert verdict["verdict"] == "NOT_VERIFIED" and idle in verdict["unmet"], verdict
    (back,) = [p for p in records_of(tmp_path, "plan") if p.get("by") == "handback"]
    assert back["tasks"][0]["subtasks"] == [
        "write_file rps_game.py that keeps its code and calls it at the end (under if "
        '__name__ == "__main__":)',
        "run python rps_game.py",
    ]
    assert not records_of(tmp_path, "goal_completed")


def test_which_goals_and_scripts_are_programs_that_do_nothing(tmp_path: Path) -> None:
    assert program_goal(GOAL) and program_goal("Write a hello world script")
    assert not program_goal("Write a function is_prime in primes.py")
    assert not program_goal("Create a Python package mathx with a command-line tool")
    (tmp_path / "game.py").write_text("def play():\n    print('rock')\n")
    assert idle_program(tmp_path, "game.py") == ["play"]
    (tmp_path / "main.py").write_text("from game import play\n\nplay()\n")
    assert idle_program(tmp_path, "game.py") == []  # a module main.py uses
    (tmp_path / "calls.py").write_text("def play():\n    print('rock')\n\n\nplay()\n")
    assert idle_program(tmp_path, "calls.py") == []


# wordcount, the code of 819bfac (the CPU), verbatim: `main(args)` reads the parsed command
# line, and nothing parses it or calls main.
UNPARSED = (
    '{{"name": "write_file", "arguments": {"path": "wordcount.py", "content": "import argparse'
    "\\nimport sys\\n\\ndef main(args):\\n    if args.lines:\\n        with open(args.file, 'r')"
    " as f:\\n            text = f.read()\\n            print(len(text.split().split()))\\n   "
    " else:\\n        with open(args.file, 'r') as f:\\n            text = f.read()\\n         "
    '   print(len(text.split().split()), len(text.split().split()), len(text))"}}}}'
)


def test_a_main_that_takes_the_parsed_command_line_is_told_the_parser_that_calls_it(
    tmp_path: Path,
) -> None:
    """Told only to make it call its code, the 1.5B wrote the same file again until it was
    blocked (twice on the CPU). The note gives the call that parses the command line, its
    argument and its flag read from main's code, and calls main; copied, the program runs
    (here into its own bug, `text.split().split()`)."""
    wordcount = real_goal("wordcount").text
    steps = [
        "write_file wordcount.py with its code",
        "run python wordcount.py --lines wordcount.py",
    ]
    run = {"name": "run_cmd", "arguments": {"cmd": "python wordcount.py --lines wordcount.py"}}
    replies = [{"content": UNPARSED}, {"content": json.dumps(run)}]
    small_model_goal(tmp_path, wordcount, plan_rule((wordcount, steps)), replies,
                     LOCALAGENT_MAX_ROUNDS="2")  # fmt: skip
    ran = next(r for r in records_of(tmp_path, "action_finished") if r["tool"] == "run_cmd")
    said = " To call main(parser.parse_args()) when it runs, send: "
    assert said in ran["result"], ran["result"]
    call = json.loads(ran["result"].split(said, 1)[1].splitlines()[0])
    assert call["arguments"]["new"].endswith(
        '\n\n\nif __name__ == "__main__":\n    parser = argparse.ArgumentParser()\n'
        '    parser.add_argument("file")\n    parser.add_argument("--lines", action="store_true")\n'
        "    main(parser.parse_args())"
    ), call
    script = tmp_path / "wordcount.py"
    old, new = call["arguments"]["old"], call["arguments"]["new"]
    script.write_text(script.read_text().replace(old, new, 1))
    out = subprocess.run(
        [sys.executable, str(script), "--lines", str(script)], capture_output=True, text=True
    )
    assert "AttributeError: 'list' object has no attribute 'split'" in out.stderr, out


@pytest.mark.parametrize(
    ("source", "parsed"),
    [
        ("def main(args):\n    print(open(args.path).read() if args.all else args.n)\n",
         ("main", ("path", "n"), ("all",))),
        ("def run(opts):\n    helper(opts)\n", None),  # handed on: not only read
        ("def main(args):\n    args.x = 1\n", None),  # changed
        ("def main(a, b):\n    print(a.x)\n", None),
        ("def f(args):\n    print(args.x)\n\ndef g(args):\n    print(args.y)\n", None),
    ],
)  # fmt: skip
def test_which_entry_takes_the_parsed_command_line(
    source: str, parsed: tuple[str, tuple[str, ...], tuple[str, ...]] | None
) -> None:
    assert parsedargs.entry(ast.parse(source), ("main", "run")) == parsed
