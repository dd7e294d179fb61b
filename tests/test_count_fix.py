"""The one line of a counting script that counts a thing wrong (`verify/countfix.py`):
Qwen2.5-Coder-1.5B's wordcount.py programs on the CPU, verbatim."""

from __future__ import annotations

from pathlib import Path

from support import plan_rule, real_goal, records_of, small_model_goal

from localagent.verify.countfix import count_fix

# wordcount-2 at 85ccc74: its words estimated from the first line.
ESTIMATED = """import argparse
import sys

def main(args):
    if args.lines:
        with open(args.file, 'r') as f:
            lines = f.readlines()
            print(f'Lines: {len(lines)}')
    else:
        with open(args.file, 'r') as f:
            lines = f.readlines()
            words = len(lines) * len(lines[0].split())
            characters = sum(len(line) for line in lines)
            print(f'Lines: {len(lines)} Words: {words} Characters: {characters}')
"""
# wordcount-3 at d932f85 (its main): the words as the lines, the lines read two ways.
AS_LINES = """def main(args):
    if args.lines:
        with open(args.file, 'r') as f:
            lines = f.read().splitlines()
            print(len(lines))
    else:
        with open(args.file, 'r') as f:
            lines = f.readlines()
            words = len(lines)
            characters = sum(len(line) for line in lines)
            print(f'Lines: {len(lines)}, Words: {words}, Characters: {characters}')
"""


def test_the_line_that_counts_the_words_wrong_is_named_with_its_fix() -> None:
    assert count_fix(ESTIMATED, "words") == (
        "words = len(lines) * len(lines[0].split())",
        "words = sum(len(line.split()) for line in lines)",
    )
    assert count_fix(ESTIMATED, "characters") is None  # counted so already
    assert count_fix(ESTIMATED, "lines") is None  # no line assigns them
    # A text read whole: its words are its split.
    text = ESTIMATED.replace("lines = f.readlines()", "text = f.read()").replace(
        "words = len(lines) * len(lines[0].split())", "words = text.count(' ')"
    )
    assert count_fix(text, "words") == ("words = text.count(' ')", "words = len(text.split())")


def test_no_fix_where_the_read_it_counts_from_is_not_one() -> None:
    """AS_LINES reads `lines` as `f.read().splitlines()` and as `f.readlines()`: both are
    lines of the file, but two reads are not certain; one read, and it is."""
    assert count_fix(AS_LINES, "words") is None
    one = AS_LINES.replace("lines = f.read().splitlines()", "lines = f.readlines()")
    assert count_fix(one, "words") == (
        "words = len(lines)",
        "words = sum(len(line.split()) for line in lines)",
    )
    assert count_fix(one, "unique words") is None
    assert count_fix("def main(:\n", "words") is None


def test_a_plan_that_runs_nothing_gets_the_goal_s_command_line(tmp_path: Path) -> None:
    """wordcount-1 at 18ea3f0, verbatim: the plan was "write_file wordcount.py" eight
    times. Nothing ran the program, the verification had no file to give it, and the goal
    ended "completed (unverified)" with a wordcount.py that raised AttributeError. The
    goal's command line is run last, on a sample written before it."""
    goal = real_goal("wordcount").text
    small_model_goal(
        tmp_path, goal, plan_rule((goal, ["write_file wordcount.py"] * 8)), [],
        LOCALAGENT_MAX_ROUNDS="1",
    )  # fmt: skip
    (plan,) = records_of(tmp_path, "plan")
    assert plan["tasks"][0]["subtasks"] == [
        *["write_file wordcount.py"] * 6,
        "write_file sample.txt with a few lines of sample text",
        "run python wordcount.py sample.txt",
    ]
