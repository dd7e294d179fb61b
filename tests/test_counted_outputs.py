"""A run of the goal's script that prints fewer numbers than the goal says it counts ends
no step: it goes back to a write that prints them all. Qwen2.5-Coder-1.5B's wordcount on
the CPU (code of ee4806d), verbatim through the real CLI on the scripted fake server: its
wordcount.py printed the one number `15` for the lines, words and characters of its
sample; the run ended its step, and the goal "completed (unverified)"."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support import (
    VERIFIED,
    handed_back,
    plan_rule,
    real_goal,
    records_of,
    small_model_goal,
    verdict_and_back,
)

from localagent.loop.subtasks import edited_file
from localagent.verify import counts
from localagent.verify.counts import stated_counts
from localagent.verify.outputs import off_run

GOAL = real_goal("wordcount").text
WRITE_STEP = (
    "write_file wordcount.py again, changed so that it opens and reads the file it is given, "
    "keeping its --lines option"
)
RUN_STEP = "run python wordcount.py sample.txt"
# Rounds 6 and 7 of wordcount-1, verbatim.
ONE_NUMBER = (
    '{{"name": "write_file", "arguments": {"path": "wordcount.py", "content": "import argpa'
    "rse\\nimport sys\\n\\ndef main(args):\\n    if args.lines:\\n        with open(args.fil"
    "e, 'r') as f:\\n            print(len(f.readlines()))\\n    else:\\n        with open(a"
    "rgs.file, 'r') as f:\\n            print(f.read().count('\\n') + 1 + len(f.read().spli"
    "t()))\\n\\nif __name__ == '__main__':\\n    parser = argparse.ArgumentParser(descripti"
    "on='Count lines, words, and characters in a file.')\n    parser.add_argument('file', "
    "type=str, help='The file to count.')\n    parser.add_argument('--lines', action='stor"
    "e_true', help='Count only the number of lines.')\n    args = parser.parse_args()\\n  "
    '  main(args)"}}'
)
RUN = '{{"name": "run_cmd", "arguments": {"cmd": "python wordcount.py sample.txt"}}}}'
SAMPLE = "Hello, world!\nThis is a sample text file.\nIt contains multiple lines."


def test_a_run_that_prints_one_number_for_three_goes_back_to_the_write(tmp_path: Path) -> None:
    (tmp_path / "sample.txt").write_text(SAMPLE)
    rounds = [{"content": r} for r in (ONE_NUMBER, RUN)]
    plan = plan_rule((GOAL, [WRITE_STEP, RUN_STEP]))
    small_model_goal(tmp_path, GOAL, plan, rounds, LOCALAGENT_MAX_ROUNDS="2")
    run = [r for r in records_of(tmp_path, "action_finished") if r["tool"] == "run_cmd"]
    assert run and run[0]["result"].startswith("exit code 0\n15\n"), run
    assert not records_of(tmp_path, "subtask_completed")[1:], "the run ended its step"
    (failed,) = records_of(tmp_path, "subtask_failed")
    assert failed["reason"] == (
        "the goal says `python wordcount.py FILE` prints the number of lines, words and "
        "characters in FILE, three numbers; `python wordcount.py sample.txt` printed `15`, "
        "one number"
    ), failed
    assert handed_back(tmp_path) == [
        "write_file wordcount.py again, changed so that it prints each number the goal asks "
        "for: the number of lines, words and characters in the file it is given, each on a "
        "line of its own, keeping its --lines option",
        RUN_STEP,
    ]


# wordcount-1 on the CPU (code of 1a86c32), rounds 1 and 2, verbatim: `words = len(lines)`
# (three runs of four), run on itself.
WORDS_AS_LINES = (
    '{{"name": "write_file", "arguments": {"path": "wordcount.py", "content": "import argpa'
    "rse\\n\\ndef main(args):\\n    with open(args.file, 'r', encoding='utf-8') as f:\\n  "
    "      lines = f.readlines()\\n        words = len(lines)\\n        chars = sum(len(li"
    "ne) for line in lines)\\n        print(f'Number of lines: {len(lines)}\\nNumber of wo"
    "rds: {words}\\nNumber of characters: {chars}')\\n\\nif __name__ == '__main__':\\n  "
    "  parser = argparse.ArgumentParser(description='Count lines, words, and characters in "
    "a file.')\n    parser.add_argument('file', type=str, help='The file to count.')\n    "
    'args = parser.parse_args()\\n    main(args)"}}'
)
ON_ITSELF = '{{"name": "run_cmd", "arguments": {"cmd": "python wordcount.py wordcount.py"}}}}'
ITS_RUN = "run python wordcount.py wordcount.py to ensure it works as expected"


def test_a_run_whose_word_count_is_wrong_goes_back_to_the_line_that_counts_it(
    tmp_path: Path,
) -> None:
    fixed = WORDS_AS_LINES.replace("words = len(lines)", "words = len(''.join(lines).split())")
    rounds = [{"content": r} for r in (WORDS_AS_LINES, ON_ITSELF, fixed)]
    plan = plan_rule((GOAL, ["write_file wordcount.py with the following code", ITS_RUN]))
    small_model_goal(tmp_path, GOAL, plan, rounds, LOCALAGENT_MAX_ROUNDS="3")
    done = [r["by"] for r in records_of(tmp_path, "subtask_completed")]
    assert done == ["write", "write"], done  # a write of the file ends the hand-back's step
    (failed,) = records_of(tmp_path, "subtask_failed")
    # The file's counts as it was then (its write was mended: one line more): its lines and
    # characters as the program printed them, its words another number.
    said = re.fullmatch(
        r"the goal says `python wordcount\.py FILE` prints the number of lines, words and "
        r"characters in FILE; wordcount\.py has (\d+) lines, (\d+) words and (\d+) "
        r"characters, and `python wordcount\.py wordcount\.py` printed `Number of lines: \1 "
        r"Number of words: \1 Number of characters: \3`: no number right for the words",
        failed["reason"],
    )
    assert said is not None and said[1] != said[2], failed
    lines, words, chars = said.groups()
    printed = f"Number of lines: {lines} Number of words: {lines} Number of characters: {chars}"
    # The one line that counts the words is certain: the step is its edit, not a write of
    # the whole program, which the 1.5B wrote again with the words counted wrong another way.
    steps = handed_back(tmp_path)
    assert edited_file(steps[0]) == "wordcount.py"
    assert steps == [
        "replace_in_file wordcount.py to count the words right: replace `words = len(lines)` "
        "with `words = sum(len(line.split()) for line in lines)` (the file it was given has "
        f"{lines} lines, {words} words and {chars} characters, and it printed `{printed}`)",
        ITS_RUN,
    ]


# wordcount-1 on the CPU (code of 83815f5), round 10, verbatim: its counts right at last,
# and `--lines` prints them all as well.
ALL_FOR_LINES = (
    '{{"name": "write_file", "arguments": {"path": "wordcount.py", "content": "import argpa'
    "rse\\nimport sys\\n\\ndef count_lines_words_chars(file_path):\\n    lines = 0\\n  "
    "  words = 0\\n    characters = 0\\n\\n    with open(file_path, 'r', encoding='utf-8') "
    "as file:\\n        for line in file:\\n            lines += 1\\n            words += "
    "len(line.split())\\n            characters += len(line)\\n\\n    print(f'Lines: {line"
    "s}, Words: {words}, Characters: {characters}')\\n\\nif __name__ == '__main__':\\n    "
    "parser = argparse.ArgumentParser(description='Count lines, words, and characters in a "
    "file.')\n    parser.add_argument('file_path', help='The file to count lines, words, and"
    " characters in.')\n    parser.add_argument('--lines', action='store_true', help='Print "
    "only the number of lines.')\n    args = parser.parse_args()\\n\\nif args.lines:\\n  "
    "  count_lines_words_chars(args.file_path)\\nelse:\\n    count_lines_words_chars(args.fi"
    'le_path)\\n"}}'
)
SAMPLE_WRITE = (
    '{"name": "write_file", "arguments": {"path": "sample.txt", "content": "alpha beta\\n'
    'gamma\\n"}}'
)
RUN_SAMPLE = '{"name": "run_cmd", "arguments": {"cmd": "python wordcount.py sample.txt"}}'


def test_the_verification_s_run_with_the_option_that_prints_one_count_checks_it(
    tmp_path: Path,
) -> None:
    steps = ["write_file wordcount.py with its code", "write_file sample.txt", RUN_STEP]
    rounds = [{"content": r} for r in (ALL_FOR_LINES, SAMPLE_WRITE, RUN_SAMPLE)]
    small_model_goal(
        tmp_path, GOAL, plan_rule((GOAL, steps)), rounds, VERIFIED,
        LOCALAGENT_MAX_ROUNDS="3", LOCALAGENT_VERIFY="1",
    )  # fmt: skip
    done = [r["by"] for r in records_of(tmp_path, "subtask_completed")]
    assert done == ["write", "write", "run"], done  # its counts are right
    verdict = records_of(tmp_path, "verdict")[0]
    assert verdict["verdict"] == "NOT_VERIFIED", verdict
    assert (
        "the goal says `python wordcount.py --lines FILE` prints only the number of lines, one "
        "number; `python wordcount.py --lines sample.txt` printed `Lines: 2, Words: 3, "
        "Characters: 17`, three numbers"
    ) in verdict["unmet"], verdict


@pytest.mark.parametrize(
    ("text", "printed", "wrong"),
    [
        ("a b\nc\n", "2 3 6", ""),
        ("a b\nc", "2 3 5", ""),  # no line break at its end: 2 lines or 1
        ("a b\nc", "1 3 5", ""),
        ("a b\nc\n", "Lines: 2, Words: 2, Chars: 6", "the words"),
        ("a b\nc\n", "2 3 3", "the characters"),  # the words' letters alone
        # bare numbers in another order: which is which is lost; labelled ones say it
        ("a b\nc\n", "6 3 2", "(2 3 6)"),
        ("a b\nc\n", "Words: 3, Chars: 6, Lines: 2", ""),
        # wordcount-1 on the CPU (the code of e340e5c): verified, and broken
        (
            "Hello, world!\nThis is a sample text file.\nIt contains multiple lines.",
            "12 69 3",
            "(3 12 69)",
        ),
        ("a b\nc\n", "9 9 9", "the lines, the words and the characters"),
        # wordcount-1 on the CPU (code of 7980279), its sample and run: its spaces for words
        ("Hello, world!\nThis is a sample text.\nAnother line.", "3 6 50", "the words"),
    ],
)
def test_which_counts_of_a_file_are_right(
    tmp_path: Path, text: str, printed: str, wrong: str
) -> None:
    (tmp_path / "in.txt").write_text(text, newline="")  # the same bytes on Windows
    found = off_run(GOAL, "python wordcount.py in.txt", f"exit code 0\n{printed}\n", tmp_path)
    if wrong.startswith("("):
        assert found.endswith(f": not in the order the goal states them {wrong}"), found
    else:
        assert found.endswith(f"no number right for {wrong}") if wrong else found == "", found


def test_the_one_count_the_option_prints_is_checked_against_the_file(tmp_path: Path) -> None:
    (tmp_path / "in.txt").write_text("a b\nc\n")
    assert off_run(GOAL, "python wordcount.py --lines in.txt", "exit code 0\n2\n", tmp_path) == ""
    wrong = off_run(GOAL, "python wordcount.py --lines in.txt", "exit code 0\n3\n", tmp_path)
    assert wrong == (
        "the goal says `python wordcount.py --lines FILE` prints only the number of lines; "
        "in.txt has 2 lines, and `python wordcount.py --lines in.txt` printed `3`: no number "
        "right for the lines"
    )


def test_a_file_outside_the_workspace_is_not_counted(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "in.txt").write_text("a b\nc\n")
    (tmp_path / "ws" / "in.txt").symlink_to(tmp_path / "in.txt")
    assert (
        off_run(GOAL, "python wordcount.py in.txt", "exit code 0\n9 9 9\n", tmp_path / "ws") == ""
    )


@pytest.mark.parametrize(
    ("cmd", "result", "wrong"),
    [
        ("python wordcount.py sample.txt", "exit code 0\n15\n", "printed `15`, one number"),
        ("python wordcount.py sample.txt", "exit code 0\n(no output)\n", "printed nothing"),
        ("python wordcount.py data2.txt", "exit code 0\ndata2.txt: 3\n", "one number"),
        ("python wordcount.py sample.txt", "exit code 0\nLines: 3\nWords: 10\nChars: 57\n", ""),
        ("python wordcount.py sample.txt", "exit code 0\n3 10 57 sample.txt\n", ""),
        ("python wordcount.py --lines sample.txt", "exit code 0\n3\n", ""),  # another form
        ("python wordcount.py sample.txt", "exit code 1\nTraceback ...\n", ""),  # a crash
        ("python other.py sample.txt", "exit code 0\n15\n", ""),
        ("python wordcount.py --lines sample.txt", "exit code 0\n3 10 57\n", "three numbers"),
        ("python wordcount.py sample.txt --lines", "exit code 0\nTrue\n", "no numbers"),
        ("python wordcount.py --lines sample.txt", "exit code 0\nLines: 3\n", ""),
        ("python wordcount.py --other sample.txt", "exit code 0\n3 10 57\n", ""),
    ],
)
def test_how_many_numbers_a_run_must_print(
    tmp_path: Path, cmd: str, result: str, wrong: str
) -> None:
    found = off_run(GOAL, cmd, result, tmp_path)  # no such file here: the numbers alone
    assert (wrong in found) if wrong else found == "", found


def test_which_goals_say_what_their_script_counts() -> None:
    counted = stated_counts(GOAL)
    assert counted is not None and counted.counted == ("lines", "words", "characters")
    assert stated_counts("python count.py FILE prints the number of lines in FILE") is None
    assert stated_counts("python greet.py NAME prints Hello, NAME!") is None
    two = stated_counts("python stats.py FILE prints the count of words and unique words")
    assert two is not None and two.counted == ("words", "unique words")


# wordcount-1 on the CPU (code of 946655f), verbatim: stdin counted, handed back, then its
# file counted right; the verification's `--lines` run printed the file's 2 lines, and
# the goal ended "completed (unverified)" for want of a run of that form by the model.
STDIN_COUNT = (
    '{{"name": "write_file", "arguments": {"path": "wordcount.py", "content": "import argpars'
    "e\\nimport sys\\n\\ndef main(args):\\n    if args.lines:\\n        print(len(sys.stdin.readli"
    "nes()))\\n    else:\\n        print(len(sys.stdin.readlines()), len(sys.stdin.read().split"
    "()), len(sys.stdin.read()))\\n\\nif __name__ == '__main__':\\n    parser = argparse.Argumen"
    "tParser(description='Count lines, words, and characters in a file.')\n    parser.add_argu"
    "ment('file', help='The file to count.')\n    parser.add_argument('--lines', action='store"
    "_true', help='Print only the number of lines.')\n    args = parser.parse_args()\\n    main"
    '(args)"}}'
)
SAMPLE_41 = (
    '{{"name": "write_file", "arguments": {"path": "sample.txt", "content": "Hello, world!\\nT'
    'his is a sample text file."}}}}'
)
OPENS_IT = (
    '{{"name": "write_file", "arguments": {"path": "wordcount.py", "content": "import argpars'
    "e\\nimport sys\\n\\ndef main(args):\\n    if args.lines:\\n        with open(args.file, 'r') "
    "as f:\\n            print(len(f.readlines()))\\n    else:\\n        with open(args.file, 'r"
    "') as f:\\n            print(len(f.readlines()), len(f.read().split()), len(f.read()))\\n\\"
    "nif __name__ == '__main__':\\n    parser = argparse.ArgumentParser(description='Count lin"
    "es, words, and characters in a file.')\n    parser.add_argument('file', help='The file to"
    " count.')\n    parser.add_argument('--lines', action='store_true', help='Print only the n"
    "umber of lines.')\n    args = parser.parse_args()\\n    main(args)\"}}"
)
RUN_41 = '{{"name": "run_cmd", "arguments": {"cmd": "python wordcount.py sample.txt"}}}}'


def test_the_verification_s_run_whose_counts_are_the_file_s_is_its_form_s_run(
    tmp_path: Path,
) -> None:
    steps = [
        "write_file wordcount.py with its code",
        "write_file sample.txt with a few lines of sample text",
        "run python wordcount.py sample.txt",
    ]
    rounds = [{"content": r} for r in (STDIN_COUNT, SAMPLE_41, RUN_41, OPENS_IT, RUN_41)]
    ran, _ = small_model_goal(
        tmp_path, GOAL, plan_rule((GOAL, steps)), rounds, VERIFIED,
        LOCALAGENT_MAX_ROUNDS="5", LOCALAGENT_VERIFY="1",
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    checks = [(c["cmd"], c["output"]) for c in records_of(tmp_path, "check_finished")]
    assert checks == [("python wordcount.py --lines sample.txt", "2\n")], checks
    (done,) = records_of(tmp_path, "goal_completed")
    assert done["verification"] == "verified", done


# wordcount-1 on the CPU (code of f591421), verbatim: its words and characters alone, its
# run step the `--lines` form; the verification's run of the other form printed two
# numbers, and the model's replans planned the same three steps until the goal failed.
TWO_OF_THREE = (
    '{{"name": "write_file", "arguments": {"path": "wordcount.py", "content": "import argpars'
    "e\\nimport sys\\n\\ndef main(args):\\n    if args.lines:\\n        with open(args.file, 'r') "
    "as f:\\n            lines = f.readlines()\\n            print(len(lines))\\n    else:\\n    "
    "    with open(args.file, 'r') as f:\\n            words = f.read().split()\\n            p"
    "rint(len(words))\\n            print(len(f.read()))\\n\\nif __name__ == '__main__':\\n    pa"
    "rser = argparse.ArgumentParser(description='Count lines, words, or characters in a file."
    "')\n    parser.add_argument('file', type=str, help='The file to count.')\n    parser.add_a"
    "rgument('--lines', action='store_true', help='Count lines.')\n    args = parser.parse_arg"
    's()\\n    main(args)"}}'
)
SAMPLE_69 = (
    '{{"name": "write_file", "arguments": {"path": "sample.txt", "content": "Hello, world!\\nT'
    'his is a sample text file.\\nIt contains multiple lines."}}'
)
LINES_RUN = '{{"name": "run_cmd", "arguments": {"cmd": "python wordcount.py --lines sample.txt"}}}'


def test_a_verdict_on_the_verification_s_counts_goes_back_to_a_write_and_that_run(
    tmp_path: Path,
) -> None:
    steps = [
        "write_file wordcount.py with its code",
        "write_file sample.txt with a few lines of sample text",
        "run python wordcount.py --lines sample.txt",
    ]
    unmet, back = verdict_and_back(tmp_path, GOAL, steps, [TWO_OF_THREE, SAMPLE_69, LINES_RUN])
    assert unmet == [
        "the goal says `python wordcount.py FILE` prints the number of lines, words and "
        "characters in FILE, three numbers; `python wordcount.py sample.txt` printed `12 69`, "
        "two numbers"
    ], unmet
    assert back.get("by") == "handback", back
    write = (
        "write_file wordcount.py again, changed so that it prints each number the goal asks "
        "for: the number of lines, words and characters in the file it is given, each on a "
        "line of its own, keeping its --lines option"
    )
    assert back["tasks"] == [
        {"description": write, "subtasks": [write, "run python wordcount.py sample.txt"]}
    ]


def test_a_run_of_the_one_count_option_that_prints_all_goes_back_to_a_write(
    tmp_path: Path,
) -> None:
    lines_run = (
        '{"name": "run_cmd", "arguments": {"cmd": "python wordcount.py --lines sample.txt"}}'
    )
    steps = [
        "write_file wordcount.py with its code",
        "write_file sample.txt",
        "run python wordcount.py --lines sample.txt",
    ]
    rounds = [{"content": r} for r in (ALL_FOR_LINES, SAMPLE_WRITE, lines_run)]
    small_model_goal(tmp_path, GOAL, plan_rule((GOAL, steps)), rounds, LOCALAGENT_MAX_ROUNDS="3")
    (failed,) = records_of(tmp_path, "subtask_failed")
    assert failed["reason"].startswith(
        "the goal says `python wordcount.py --lines FILE` prints only the number of lines, one "
        "number; `python wordcount.py --lines sample.txt` printed `Lines: 2, Words: 3, "
        "Characters: 17`, three numbers"
    ), failed
    back = records_of(tmp_path, "plan")[-1]
    assert back.get("by") == "handback", back
    assert back["tasks"][0]["subtasks"] == [
        "write_file wordcount.py again, changed so that with --lines it prints only the number "
        "of lines, one number, keeping its --lines option",
        "run python wordcount.py --lines sample.txt",
    ]


# wordcount-1 on the CPU (code of dd932bd), its last write, its sample and its run,
# verbatim: the program printed `5`, `10` and `34`, each on a line of its own.
SEPARATE = (
    '{{"name": "write_file", "arguments": {"path": "wordcount.py", "content": "import'
    " argparse\\nimport sys\\n\\ndef count_lines(file_path):\\n    with open(file_path, '"
    "r') as f:\\n        return len(f.readlines())\\n\\ndef count_words(file_path):\\n   "
    " with open(file_path, 'r') as f:\\n        return len(f.read().split())\\n\\ndef co"
    "unt_characters(file_path):\\n    with open(file_path, 'r') as f:\\n        return "
    "len(f.read())\\n\\ndef main(args):\\n    if args.lines:\\n        print(count_lines("
    "args.file))\\n    else:\\n        print(count_lines(args.file))\\n        print(cou"
    "nt_words(args.file))\\n        print(count_characters(args.file)\\n\\ndef parse_arg"
    "s(args):\\n    parser = argparse.ArgumentParser(description='Count lines, words, "
    "and characters in a file.')\n    parser.add_argument('file', help='The file to co"
    "unt.')\n    parser.add_argument('--lines', action='store_true', help='Print only "
    "the number of lines.')\n    return parser.parse_args(args)\\n\\nif __name__ == '__m"
    "ain__':\\n    args = parse_args(sys.argv[1:])\\n    main(args)\"}}"
)
FIVE_LINES = (
    '{{"name": "write_file", "arguments": {"path": "sample.txt", "content": "line 1\\n'
    'line 2\\nline 3\\nline 4\\nline 5"}}}}'
)
RUN = '{{"name": "run_cmd", "arguments": {"cmd": "python wordcount.py sample.txt"}}}'


def test_the_verification_reads_all_a_counting_run_printed(tmp_path: Path) -> None:
    """The journal keeps a run's last line only, and `34` alone proves no count: the
    goal ended "completed (unverified)" with three right counts. The verification runs
    that command again itself and reads all it prints."""
    steps = [
        "write_file wordcount.py with its code",
        "write_file sample.txt with a few lines of sample text",
        "run python wordcount.py sample.txt",
    ]
    rounds = [{"content": r} for r in (SEPARATE, FIVE_LINES, RUN)]
    ran, _ = small_model_goal(
        tmp_path, GOAL, plan_rule((GOAL, steps)), rounds, VERIFIED,
        LOCALAGENT_MAX_ROUNDS="3", LOCALAGENT_VERIFY="1",
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    (started,) = records_of(tmp_path, "verify_started")
    assert [c["cmd"] for c in started["checks"]] == [
        "python wordcount.py --lines sample.txt",
        "python wordcount.py sample.txt",
    ]
    outputs = [c["output"] for c in records_of(tmp_path, "check_finished")]
    assert outputs == ["5\n", "5\n10\n34\n"]
    (done,) = records_of(tmp_path, "goal_completed")
    assert done["verification"] == "verified", done


# wordcount-7 on the CPU (the 1.5B), round 12, verbatim.
WORDS_AS_LINES_7 = (
    '{{"name": "write_file", "arguments": {"path": "wordcount.py", "content": "import argpars'
    "e\\nimport sys\\n\\ndef main(args):\\n    if args.lines:\\n        with open(args.file, 'r') "
    "as f:\\n            lines = f.readlines()\\n            print(len(lines))\\n    else:\\n    "
    "    with open(args.file, 'r') as f:\\n            lines = f.readlines()\\n            word"
    "s = len(lines)\\n            chars = sum(len(line) for line in lines)\\n            print(f"
    "'Lines: {len(lines)}, Words: {words}, Characters: {chars}')\\n\\nif __name__ == '__main__"
    "':\\n    parser = argparse.ArgumentParser(description='Count lines, words, and characters "
    "in a file.')\n    parser.add_argument('file', help='The file to count.')\n    parser.add_"
    "argument('--lines', action='store_true', help='Print only the number of lines.')\n    ar"
    'gs = parser.parse_args()\\n    main(args)"}}'
)


def test_a_verdict_on_a_count_the_run_got_wrong_goes_back_to_the_edit_and_that_run(
    tmp_path: Path,
) -> None:
    """wordcount-7 on the CPU: the verification's run counted the words as the lines, and
    the hand-back was the edit of the line alone, no run after it (its finding says
    "..., and `python wordcount.py sample.txt` printed ..."): the edit, made, ended no
    step, and the model sent it again until blocked, twice, until the round limit."""
    steps = [
        "write_file wordcount.py with its code",
        "write_file sample.txt with a few lines of sample text",
        "run python wordcount.py --lines sample.txt",
    ]
    unmet, back = verdict_and_back(tmp_path, GOAL, steps, [WORDS_AS_LINES_7, SAMPLE_69, LINES_RUN])
    assert len(unmet) == 1 and unmet[0].endswith("no number right for the words"), unmet
    assert back.get("by") == "handback", back
    (task,) = back["tasks"]
    assert edited_file(task["subtasks"][0]) == "wordcount.py"
    assert task["subtasks"][1:] == ["run python wordcount.py sample.txt"], task


def test_counts_the_file_cannot_tell_apart_prove_nothing(tmp_path: Path) -> None:
    """wordcount-3 on the CPU: the model's sample.txt was `line1` to `line5`, one word a
    line, and its program counted the words as the lines: `lines: 5, words: 5, chars: 29`
    was every count right for that file, the verification's own run of `--lines` passed,
    and the goal ended "completed (verified)" with a program that counts 3 words for 10.
    Where the file has as many of two things it counts, a run proves neither."""
    (tmp_path / "sample.txt").write_text("line1\nline2\nline3\nline4\nline5", newline="")
    cmd, printed = "python wordcount.py sample.txt", "lines: 5, words: 5, chars: 29"
    assert not counts.proven(GOAL, cmd, printed, tmp_path)
    assert off_run(GOAL, cmd, f"exit code 0\n{printed}\n", tmp_path) == ""  # nor wrong
    (tmp_path / "sample.txt").write_text("a b\nc d e\n", newline="")
    assert counts.proven(GOAL, cmd, "lines: 2, words: 5, chars: 10", tmp_path)


# wordcount-3 on the CPU (the code of ec248c0), verbatim: its sample, one word a line, its
# last write, which counts the words as the lines, and its run.
ONE_WORD_LINES = (
    '{{"name": "write_file", "arguments": {"path": "sample.txt", "content": "line1\\nline2\\n'
    'line3\\nline4\\nline5"}}}}'
)
WORDS_AS_LINES_3 = (
    '{{"name": "write_file", "arguments": {"path": "wordcount.py", "content": "import'
    " argparse\\nimport sys\\n\\ndef main(args):\\n    if args.lines:\\n        with open("
    "args.file, 'r') as f:\\n            lines = f.readlines()\\n            print(len("
    "lines))\\n    else:\\n        with open(args.file, 'r') as f:\\n            lines ="
    " f.readlines()\\n            words = len(lines)\\n            chars = sum(len(line"
    ") for line in lines)\\n            print(f'lines: {len(lines)}, words: {words}, c"
    "hars: {chars}')\\n\\nif __name__ == '__main__':\\n    parser = argparse.ArgumentPar"
    "ser(description='Count lines, words, and characters in a file.')\n    parser.add_"
    "argument('file', type=str, help='The file to count.')\n    parser.add_argument('-"
    "-lines', action='store_true', help='Print only the number of lines.')\n    args ="
    ' parser.parse_args()\\n    main(args)"}}'
)
RUN_3 = '{{"name": "run_cmd", "arguments": {"cmd": "python wordcount.py sample.txt"}}}'


def test_a_sample_that_cannot_tell_the_counts_apart_verifies_nothing(tmp_path: Path) -> None:
    steps = [
        "write_file wordcount.py with its code",
        "write_file sample.txt with a few lines of sample text",
        "run python wordcount.py sample.txt",
    ]
    small_model_goal(
        tmp_path, GOAL, plan_rule((GOAL, steps)),
        [{"content": r} for r in (WORDS_AS_LINES_3, ONE_WORD_LINES, RUN_3)], VERIFIED,
        LOCALAGENT_MAX_ROUNDS="3", LOCALAGENT_VERIFY="1",
    )  # fmt: skip
    (verdict, *_) = records_of(tmp_path, "verdict")
    assert verdict["verification"] != "verified", verdict
    ended = records_of(tmp_path, "goal_completed")
    assert not [r for r in ended if r["verification"] == "verified"], ended
