"""The real-model benchmark's judges (`scripts/realjudges.py`, `scripts/realgoals.py`)
on good and broken artefacts: each judge must be able to say "broken"."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"


@pytest.fixture
def scripts(monkeypatch: pytest.MonkeyPatch) -> dict[str, ModuleType]:
    monkeypatch.syspath_prepend(str(SCRIPTS))
    names = ("realjudges", "realgoals", "realstats", "bench_real")
    return {name: importlib.import_module(name) for name in names}


def judge(scripts: dict[str, ModuleType], key: str, ws: Path, files: dict[str, str]) -> Any:
    goal = scripts["realgoals"].GOALS[key]
    goal.plant(ws)
    for name, text in files.items():
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_text(text, encoding="utf-8")
    return goal.judge(ws)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    found = tmp_path / "ws"
    found.mkdir()
    return found


# ---- hello and rock-paper-scissors ---------------------------------------------------

GAME = """import random
MOVES = ["rock", "paper", "scissors"]
BEATS = {"rock": "scissors", "paper": "rock", "scissors": "paper"}
while True:
    you = input("rock, paper or scissors (q quits)? ").strip().lower()
    if you == "q":
        break
    if you not in MOVES:
        print("unknown move")
        continue
    me = random.choice(MOVES)
    if me == you:
        print(f"I chose {me}: a tie")
    elif BEATS[you] == me:
        print(f"I chose {me}: you win")
    else:
        print(f"I chose {me}: you lose")
"""
# The broken game: every function defined, none called; it prints nothing.
UNCALLED = """import random

def get_computer_choice():
    return random.choice(["rock", "paper", "scissors"])

def determine_winner(user, computer):
    if user == computer:
        return "It's a tie!"
    return "You win!" if (user, computer) in {("rock", "scissors")} else "You lose!"

def play_game():
    print(determine_winner(input("Your move: "), get_computer_choice()))
"""
# The 1.5B's game for two players, verbatim (it ended "completed (verified)").
TWO_PLAYERS = """import sys
import random

def play_game(player1, player2):
    choices = ['rock', 'paper', 'scissors']
    if player1 not in choices or player2 not in choices:
        return 'Invalid choice'
    if player1 == player2:
        return 'Tie'
    if (player1 == 'rock' and player2 == 'scissors') or (player1 == 'paper' and \
player2 == 'rock') or (player1 == 'scissors' and player2 == 'paper'):
        return 'Player 1 wins'
    else:
        return 'Player 2 wins'

def main():
    print('Welcome to Rock-Paper-Scissors!')
    player1 = input('Player 1, choose rock, paper, or scissors: ').lower()
    player2 = input('Player 2, choose rock, paper, or scissors: ').lower()
    result = play_game(player1, player2)
    print(f'Game result: {result}')

if __name__ == '__main__':
    main()"""
# Another of its games, verbatim in part: it names the winner as "Result: player2".
RESULT_LINE = """class RPSGame:
    def play(self, player1, player2):
        if player1 == player2:
            return 'draw'
        elif (player1, player2) in {('rock', 'scissors'), ('paper', 'rock')}:
            return 'player1'
        else:
            return 'player2'

if __name__ == '__main__':
    game = RPSGame()
    player1 = input('Player 1, choose rock, paper, or scissors: ').lower()
    player2 = input('Player 2, choose rock, paper, or scissors: ').lower()
    result = game.play(player1, player2)
    print(f'Result: {result}')
"""
# One more, verbatim: the winner printed alone, "player2", after both prompts.
BARE_WINNER = RESULT_LINE.replace(
    "print(f'Result: {result}')", "print(game.play(player1, player2))"
)
# Its prompts for both players and nothing after them: no round played.
PROMPTS_ONLY = (
    "a = input('Player 1, choose rock, paper, or scissors: ')\n"
    "b = input('Player 2, choose rock, paper, or scissors: ')\n"
)
RULES_ONLY = 'print("Rock beats scissors, scissors beats paper, paper beats rock. Win or lose!")\n'


@pytest.mark.parametrize(
    ("files", "works"),
    [
        ({"hello.py": 'print("Hello, world!")\n'}, True),
        ({"src/hello_world.py": 'print("hello")\n'}, True),
        ({"hello.py": 'def main():\n    print("Hello, world!")\n'}, False),  # prints nothing
        ({"hello.py": 'import sys\nprint("Hello")\nsys.exit(1)\n'}, False),
        ({"notes.txt": "print('hello')\n"}, False),
    ],
)
def test_the_hello_judge(
    scripts: dict[str, ModuleType], ws: Path, files: dict[str, str], works: bool
) -> None:
    found = judge(scripts, "hello", ws, files)
    assert found.works is works, found.reason


@pytest.mark.parametrize(
    ("files", "works"),
    [
        ({"rps.py": GAME}, True),
        ({"rps_game.py": TWO_PLAYERS}, True),
        ({"rps_game.py": RESULT_LINE}, True),
        ({"rps_game.py": BARE_WINNER}, True),
        ({"rps_game.py": PROMPTS_ONLY}, False),
        ({"rps.py": "input('Move: ')\nprint('Game result: Invalid choice')\n"}, False),
        ({"rock_paper_scissors.py": UNCALLED}, False),
        ({"game.py": RULES_ONLY}, False),  # names results, but plays no round
        ({"rps.py": "import sys\nprint(f'{sys.argv[1]} vs paper: you lose')\n"}, True),
    ],
)
def test_the_rock_paper_scissors_judge(
    scripts: dict[str, ModuleType], ws: Path, files: dict[str, str], works: bool
) -> None:
    found = judge(scripts, "rps", ws, files)
    assert found.works is works, found.reason


def test_a_game_that_never_ends_is_stopped_and_judged_on_what_it_printed(
    scripts: dict[str, ModuleType], ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scripts["realjudges"], "RUN_TIMEOUT", 1.5)
    endless = "import time\nwhile True:\n    time.sleep(0.1)\n"
    found = judge(scripts, "rps", ws, {"rps.py": endless})
    assert not found.works
    assert "ran past its timeout" in found.reason


# ---- mathx -----------------------------------------------------------------------

MATHX_INIT = '''"""Arithmetic."""


def add(a, b):
    return a + b


def subtract(a, b):
    return a - b


def multiply(a, b):
    return a * b


def divide(a, b):
    if b == 0:
        raise ValueError("division by zero")
    return a / b
'''
MATHX_TESTS = """import pytest

from mathx import add, divide


def test_add():
    assert add(1, 2) == 3


def test_divide_by_zero():
    with pytest.raises(ValueError):
        divide(1, 0)
"""


def test_the_mathx_judge_passes_a_package_whose_tests_pass_and_ruff_is_clean(
    scripts: dict[str, ModuleType], ws: Path
) -> None:
    files = {"mathx/__init__.py": MATHX_INIT, "tests/test_mathx.py": MATHX_TESTS}
    found = judge(scripts, "mathx", ws, files)
    assert found.works, found.reason


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (('raise ValueError("division by zero")', "raise ZeroDivisionError"), "not ValueError"),
        (('"""Arithmetic."""', '"""Arithmetic."""\nimport os'), "ruff"),
        (("return a * b", "return a + b"), "multiply(4, 3) gives 7"),
    ],
)
def test_the_mathx_judge_finds_what_is_broken(
    scripts: dict[str, ModuleType], ws: Path, change: tuple[str, str], reason: str
) -> None:
    files = {"mathx/__init__.py": MATHX_INIT.replace(*change), "tests/test_mathx.py": MATHX_TESTS}
    found = judge(scripts, "mathx", ws, files)
    assert not found.works
    assert reason in found.reason


def test_the_mathx_judge_takes_the_package_s_function_over_a_module_of_its_name(
    scripts: dict[str, ModuleType], ws: Path
) -> None:
    """The 1.5B's mathx on an H100 defined add in `__init__.py` and kept `add.py` too:
    `from mathx import add` is the function, which the judge once took for the module."""
    files = {
        "mathx/__init__.py": MATHX_INIT,
        "mathx/add.py": "def add(a, b):\n    return a + b\n",
        "tests/test_mathx.py": MATHX_TESTS,
    }
    found = judge(scripts, "mathx", ws, files)
    assert found.works, found.reason


def test_mathx_as_one_module_is_not_the_package_asked_for(
    scripts: dict[str, ModuleType], ws: Path
) -> None:
    found = judge(scripts, "mathx", ws, {"mathx.py": MATHX_INIT})
    assert not found.works
    assert "no package mathx" in found.reason


# ---- the benchmark's own goals -----------------------------------------------------

FIXED_STATS = """def mean(values):
    return sum(values) / len(values)


def median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2
"""
WORDCOUNT = """import argparse

parser = argparse.ArgumentParser()
parser.add_argument("file")
parser.add_argument("--lines", action="store_true")
args = parser.parse_args()
text = open(args.file).read()
if args.lines:
    print(len(text.splitlines()))
else:
    print(len(text.splitlines()), len(text.split()), len(text))
"""
REFACTORED = """def area(kind, size):
    if kind == "circle":
        return 3.14159 * size * size
    if kind == "square":
        return size * size
    return None


def total_area(shapes):
    return sum(area(k, s) for k, s in shapes if area(k, s) is not None)


def largest(shapes):
    known = [(area(k, s), (k, s)) for k, s in shapes if area(k, s) is not None]
    return max(known)[1] if known else None


def report(shapes):
    return "\\n".join(f"{k} {s}: {area(k, s):.2f}" for k, s in shapes if area(k, s) is not None)
"""
GREET = """import sys
if len(sys.argv) < 2:
    print("usage: python greet.py NAME", file=sys.stderr)
    sys.exit(2)
print(f"Hello, {sys.argv[1]}!")
"""


@pytest.mark.parametrize(
    ("key", "files", "works", "reason"),
    [
        ("fixtest", {}, False, "median([7, 1]) gives 7, not 4.0"),
        ("fixtest", {"stats.py": FIXED_STATS}, True, ""),
        ("fixtest", {"test_stats.py": "def test_nothing():\n    pass\n"}, False, "changed"),
        ("wordcount", {"wordcount.py": WORDCOUNT}, True, ""),
        (
            "wordcount",
            {"wordcount.py": WORDCOUNT.replace("if args.lines:", "if 0:")},
            False,
            "--lines",
        ),
        ("wordcount", {"tools/wc.py": WORDCOUNT}, False, "no wordcount.py"),
        ("refactor", {}, False, "not in exactly one place"),
        ("refactor", {"shapes.py": REFACTORED}, True, ""),
        (
            "refactor",
            {"shapes.py": REFACTORED.replace("return None", "return 0.0")},
            False,
            "report changed",
        ),
        ("greet", {"greet.py": GREET}, True, ""),
        ("greet", {"greet.py": GREET.replace("sys.exit(2)", "sys.exit(0)")}, False, "status 2"),
    ],
)
def test_the_judges_of_the_benchmarks_own_goals(
    scripts: dict[str, ModuleType],
    ws: Path,
    key: str,
    files: dict[str, str],
    works: bool,
    reason: str,
) -> None:
    found = judge(scripts, key, ws, files)
    assert found.works is works, found.reason
    assert reason in found.reason
