"""A program's run shows that it runs, not that the numbers it prints are right: with a
small verifier and no test, a goal whose proof is such a run stays unverified.
Qwen2.5-Coder-1.5B's wordcount-2 on the H200, replayed verbatim on the scripted fake
server through the real CLI: its rewrite counted words as `len(lines)`, printed
"lines: 21, words: 21, chars: 745" for its own source, and the goal ended "completed
(verified)" (two of six runs so)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from support import VERIFIED, plan_rule, records_of, small_model_goal

from localagent.state.ledger import CheckRun, Write
from localagent.verify.stated import computed

WORDCOUNT = (
    "Write wordcount.py, a command-line program using argparse: python wordcount.py FILE "
    "prints the number of lines, words and characters in FILE; with --lines it prints "
    "only the number of lines"
)
# wordcount-2, round 5, verbatim: words = len(lines).
LINES_AS_WORDS = (
    '{{"name": "write_file", "arguments": {"path": "wordcount.py", "content": "import argpa'
    "rse\\nimport sys\\n\\ndef main(args):\\n    if args.lines:\\n        with open(args.fi"
    "le, 'r') as f:\\n            lines = f.readlines()\\n            print(len(lines))\\n"
    "    else:\\n        with open(args.file, 'r') as f:\\n            lines = f.readlines("
    ")\\n            words = len(lines)\\n            chars = sum(len(line) for line in li"
    "nes)\\n            print(f'lines: {len(lines)}, words: {words}, chars: {chars}')\\n"
    "\\nif __name__ == '__main__':\\n    parser = argparse.ArgumentParser(description='Co"
    "unt lines, words, and characters in a file.')\n    parser.add_argument('file', type="
    "str, help='The file to count.')\n    parser.add_argument('--lines', action='store_tr"
    "ue', help='Count only the number of lines.')\n    args = parser.parse_args()\\n    m"
    'ain(args)"}}'
)
# Its words counted right: a run whose counts are wrong for the file it was given goes
# back to a write (tests/test_counted_outputs.py); right ones are still only its word.
WORDS_RIGHT = LINES_AS_WORDS.replace("words = len(lines)", "words = len(''.join(lines).split())")
RUN = '{{"name": "run_cmd", "arguments": {"cmd": "python wordcount.py wordcount.py"}}}}'
LINES = '{{"name": "run_cmd", "arguments": {"cmd": "python wordcount.py --lines wordcount.py"}}}}'


def test_a_run_printing_counts_nothing_checked_leaves_the_goal_unverified(
    tmp_path: Path,
) -> None:
    steps = [
        "write_file wordcount.py with its code",
        "run python wordcount.py wordcount.py",
        "run python wordcount.py --lines wordcount.py",
    ]
    rounds = [WORDS_RIGHT, RUN, LINES]
    assert WORDS_RIGHT != LINES_AS_WORDS
    # What it counts has no one meaning for a file here: its counts, right or not, vouch
    # for nothing (with lines, words and characters they would: tests/test_counted_outputs).
    goal = WORDCOUNT.replace("words and characters", "words and sentences")
    ran, _ = small_model_goal(
        tmp_path, goal, plan_rule((goal, steps)), [{"content": r} for r in rounds],
        VERIFIED, LOCALAGENT_MAX_ROUNDS=str(len(rounds)), LOCALAGENT_VERIFY="1",
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    finished = [r["result"] for r in records_of(tmp_path, "action_finished")]
    assert any("words: " in r and "exit code 0" in r for r in finished), finished
    (verdict,) = records_of(tmp_path, "verdict")
    assert verdict["verification"] == "unverified", verdict
    (done,) = records_of(tmp_path, "goal_completed")
    assert done["verification"] == "unverified"
    said = ran.stdout + ran.stderr
    assert "NOT VERIFIED: `python wordcount.py wordcount.py` printed `lines: " in said, said
    assert "no test checks them" in said


def _ledger(*runs: tuple[str, str, int], tests: int = 0) -> SimpleNamespace:
    checks = {
        cmd: CheckRun(cmd=cmd, kind="script", seq=seq, subtask=1, passed=True, summary=summary)
        for cmd, summary, seq in runs
    }
    if tests:
        checks["pytest"] = CheckRun(
            cmd="pytest", kind="pytest", seq=tests, subtask=1, passed=True, summary="2 passed"
        )
    return SimpleNamespace(checks=checks, writes={"wordcount.py": Write(seq=5, subtask=1)})


@pytest.mark.parametrize(
    ("goal", "summary", "seq", "tests", "found"),
    [
        (WORDCOUNT, "exit code 0: lines: 21, words: 21, chars: 745", 6, 0, True),
        (WORDCOUNT, "exit code 0: lines: 21, words: 21, chars: 745", 4, 0, False),  # stale
        (WORDCOUNT, "exit code 0: lines: 21, words: 21, chars: 745", 6, 7, False),  # tested
        (WORDCOUNT, "exit code 0: Hello, World!", 6, 0, False),
        ("Write wordcount.py that prints 21", "exit code 0: 21", 6, 0, False),  # stated
        (WORDCOUNT, "inconclusive: it printed nothing", 6, 0, False),
        (WORDCOUNT, "exit code 0: 0", 6, 0, True),
    ],
)
def test_which_runs_show_values_nothing_checked(
    goal: str, summary: str, seq: int, tests: int, found: bool
) -> None:
    ledger = _ledger(("python wordcount.py wordcount.py", summary, seq), tests=tests)
    assert bool(computed(goal, ledger)) is found
    # the numbers of the command line are the ones it was given, not computed
    given = _ledger(("python wordcount.py 3", "exit code 0: 3", 6))
    assert computed(WORDCOUNT, given) == []
