"""A string a small model cut with a line break it meant as `\\n` is written joined.

In a call's JSON, `\\n` is a line break; the two characters `\\n` in the code are `\\\\n`.
Qwen2.5-Coder-1.5B wrote the first in 5 of 6 wordcount runs on the H200, was told the
f-string did not compile, sent the same write again until three strikes (two runs ran out
of time on it). Replayed verbatim on the scripted fake server through the real CLI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support import plan_rule, records_of, small_model_goal

from localagent.tools import pywrite
from localagent.tools.syntaxfix import compile_problem

GOAL = (
    "Write wordcount.py, a command-line program using argparse: python wordcount.py FILE "
    "prints the number of lines, words and characters in FILE; with --lines it prints only "
    "the number of lines"
)
# wordcount-4's first round, verbatim (its braces doubled, as the model wrote them).
WRITE = (
    '{{"name": "write_file", "arguments": {"path": "wordcount.py", "content": "import argparse'
    "\\n\\ndef main(args):\\n    with open(args.file, 'r', encoding='utf-8') as f:\\n        "
    "lines = f.readlines()\\n        words = sum(len(line.split()) for line in lines)\\n       "
    " characters = sum(len(line) for line in lines)\\n        print(f'Number of lines: "
    "{len(lines)}\\nNumber of words: {words}\\nNumber of characters: {characters}')\"}}"
)
PRINTS = (
    "        print(f'Number of lines: {len(lines)}\\nNumber of words: {words}"
    "\\nNumber of characters: {characters}')"
)


def test_a_string_cut_by_line_breaks_is_written_joined(tmp_path: Path) -> None:
    step = "write_file wordcount.py with the argparse program"
    replies = [{"content": WRITE}]
    ran, _ = small_model_goal(
        tmp_path, GOAL, plan_rule((GOAL, [step])), replies, LOCALAGENT_MAX_ROUNDS="1"
    )
    # Its main() is called by nothing yet (the model's next step): the goal is not done.
    assert "round limit of 1 reached" in ran.stderr, ran.stdout + ran.stderr
    result = records_of(tmp_path, "action_finished")[0]["result"]
    assert result.startswith("wrote 337 bytes to 'wordcount.py' (created); a line break in ")
    assert "ended its string, so it was written as `\\n`" in result
    assert "syntax error" not in result
    written = (tmp_path / "wordcount.py").read_text()
    assert PRINTS in written.splitlines()
    sample = tmp_path / "sample.txt"
    sample.write_text("one two\nthree\n")
    code = f"{written}\nimport types\nmain(types.SimpleNamespace(file={str(sample)!r}))\n"
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert shown.stdout == "Number of lines: 2\nNumber of words: 3\nNumber of characters: 14\n"


# A CPU wordcount run's first round, verbatim: the three-line f-string's `print(` is
# never closed (the JSON string itself is not ended either). It sent this write 3 times.
UNCLOSED = (
    '{{"name": "write_file", "arguments": {"path": "wordcount.py", "content": "import argparse'
    "\\n\\ndef main():\\n    parser = argparse.ArgumentParser(description='Print the number "
    "of lines, words, and characters in a file.')\\n    parser.add_argument('file', type=str, "
    "help='The file to count lines, words, and characters in.')\\n    parser.add_argument("
    "'--lines', action='store_true', help='Print only the number of lines.')\\n    args = "
    "parser.parse_args()\\n\\n    with open(args.file, 'r', encoding='utf-8') as f:\\n        "
    "lines = f.readlines()\\n        words = len(lines)\\n        characters = sum(len(line) "
    "for line in lines)\\n\\n    if args.lines:\\n        print(f'Number of lines: "
    "{len(lines)}')\\n    else:\\n        print(f'Number of lines: {len(lines)}\\nNumber of "
    "words: {words}\\nNumber of characters: {characters}\\n'}}}"
)


def _first_write(workspace: Path, reply: str) -> str:
    """The result of the reply's write, the only round of a one-step goal."""
    step = "write_file wordcount.py with its code"
    ran, _ = small_model_goal(
        workspace, GOAL, plan_rule((GOAL, [step])), [{"content": reply}],
        LOCALAGENT_MAX_ROUNDS="1",
    )  # fmt: skip
    assert "round limit of 1 reached" in ran.stderr, ran.stdout + ran.stderr
    return records_of(workspace, "action_finished")[0]["result"]


def test_a_cut_string_whose_bracket_was_left_open_is_joined_and_closed(tmp_path: Path) -> None:
    result = _first_write(tmp_path, UNCLOSED)
    assert "ended its string, so it was written as `\\n`, and `)` added at its end" in result
    assert "syntax error" not in result
    written = (tmp_path / "wordcount.py").read_text()
    assert compile_problem(written, "wordcount.py")[0] is None
    assert written.splitlines()[-1] == (
        "        print(f'Number of lines: {len(lines)}\\nNumber of words: {words}"
        "\\nNumber of characters: {characters}\\n')"
    )


# A CPU wordcount run's first round, verbatim: above the three-line f-string, the
# `print(count_characters(args.file)` of main's third case lacks its `)`. The compiler
# reports the string only; joined, the file failed on that line, so no fix was made or
# offered, and the model sent this write five times, then the goal failed.
HIDDEN = (
    '{{"name": "write_file", "arguments": {"path": "wordcount.py", "content": "import arg'
    "parse\\nimport sys\\n\\ndef count_lines(file):\\n    return sum(1 for line in open(file,"
    " 'r'))\\n\\ndef count_words(file):\\n    return sum(len(line.split()) for line in open("
    "file, 'r'))\\n\\ndef count_characters(file):\\n    return sum(len(line) for line in ope"
    "n(file, 'r'))\\n\\ndef main(args):\\n    if args.lines:\\n        print(count_lines(args"
    ".file))\\n    elif args.words:\\n        print(count_words(args.file))\\n    elif args."
    "characters:\\n        print(count_characters(args.file)\\n    else:\\n        print(f'N"
    "umber of lines: {count_lines(args.file)}\\nNumber of words: {count_words(args.file)}\\"
    "nNumber of characters: {count_characters(args.file)}')\\n\\ndef parse_args(args):\\n   "
    " parser = argparse.ArgumentParser(description='Count lines, words, and characters in"
    " a file.')\n    parser.add_argument('file', type=str, help='The file to count lines, "
    "words, and characters in.')\n    parser.add_argument('--lines', action='store_true', "
    "help='Count only the number of lines.')\n    parser.add_argument('--words', action='s"
    "tore_true', help='Count only the number of words.')\n    parser.add_argument('--chara"
    "cters', action='store_true', help='Count only the number of characters.')\n    return"
    " parser.parse_args(args)\\n\\nif __name__ == '__main__':\\n    args = parse_args(sys.ar"
    'gv[1:])\\n    main(args)"}}'
)


def test_a_cut_string_hiding_an_error_above_it_is_joined_and_that_line_fixed(
    tmp_path: Path,
) -> None:
    result = _first_write(tmp_path, HIDDEN)
    assert "syntax error" not in result, result
    assert "ended its string, so it was written as `\\n`" in result
    assert "`print(count_characters(args.file)` did not compile" in result, result
    written = (tmp_path / "wordcount.py").read_text()
    assert "        print(count_characters(args.file))" in written.splitlines()
    sample = tmp_path / "sample.txt"
    sample.write_text("one two\nthree\n")
    shown = subprocess.run(
        [sys.executable, "wordcount.py", "sample.txt"], cwd=tmp_path, capture_output=True, text=True
    )
    assert shown.stdout == "Number of lines: 2\nNumber of words: 3\nNumber of characters: 14\n"


# A CPU wordcount run's replanned write, verbatim: `count('\\n')` with its `\\n` a line
# break in the JSON, in both of main's cases. No one edit named the cut line, so none was
# made or offered; the model sent this write until blocked, and the goal failed.
DOUBLED = (
    '{{"name": "write_file", "arguments": {"path": "wordcount.py", "content": "import'
    " argparse\\nimport sys\\n\\ndef main(args):\\n    if args.lines:\\n        print(args"
    ".file.read().count('\\n'))\\n    else:\\n        print(args.file.read().count('\\n')"
    ")\\n        print(args.file.read().count(' '))\\n        print(len(args.file.read("
    ")))\\n\\nif __name__ == '__main__':\\n    parser = argparse.ArgumentParser(descript"
    "ion='Count lines, words, and characters in a file.')\n    parser.add_argument('fi"
    "le', type=argparse.FileType('r'), help='The file to count.')\n    parser.add_argu"
    "ment('--lines', action='store_true', help='Print only the number of lines.')\n   "
    ' args = parser.parse_args()\\n    main(args)"}}'
)


def test_a_string_cut_the_same_way_twice_is_joined_in_both_places(tmp_path: Path) -> None:
    result = _first_write(tmp_path, DOUBLED)
    assert "syntax error" not in result, result
    assert "ended its string, so it was written as `\\n`" in result
    written = (tmp_path / "wordcount.py").read_text()
    assert written.splitlines().count("        print(args.file.read().count('\\n'))") == 2
    (tmp_path / "sample.txt").write_text("one two\nthree\n")
    shown = subprocess.run(
        [sys.executable, "wordcount.py", "--lines", "sample.txt"],
        cwd=tmp_path, capture_output=True, text=True,
    )  # fmt: skip
    assert shown.stdout == "2\n", shown.stdout + shown.stderr


def test_a_cut_string_in_several_places_is_offered_as_one_edit_of_each() -> None:
    content = "def f(a):\n    if a:\n        print('\n')\n    print('\n')\n"
    problem = compile_problem(content, "f.py")[0] or ""
    assert problem.endswith(
        '; this fixes it: {"name": "replace_in_file", "arguments": {"path": "f.py", '
        '"old": "print(\'\\n\')", "new": "print(\'\\\\n\')", "count": 2}}'
    ), problem


def test_a_write_that_is_not_mended_is_offered_both_fixes_in_turn() -> None:
    content = "def f(a):\n    print(a\n    return f'x: {a}\ny'\n"
    problem = compile_problem(content, "f.py")[0] or ""
    assert "unterminated" in problem and "these fix it, one after the other: " in problem
    first, second = problem.split("these fix it, one after the other: ")[1].split(" then ")
    assert '"new": "return f\'x: {a}\\\\ny\'"' in first, first
    assert '"old": "print(a", "new": "print(a)"' in second, second
    fixed = content.replace("\n    return f'x: {a}\ny'", "\n    return f'x: {a}\\ny'")
    assert compile_problem(fixed.replace("print(a\n", "print(a)\n"), "f.py")[0] is None


@pytest.mark.parametrize(
    ("content", "fixed"),
    [
        # wordcount-1: `count('\n')` cut in two.
        (
            "with open(name) as f:\n    print(f.read().count('\n'))\n",
            "    print(f.read().count('\\n'))",
        ),
        # wordcount-3: the last of three lines of one f-string.
        ("c = 3\nprint(f'Characters: {c}\n')\n", "print(f'Characters: {c}\\n')"),
        # Two strings cut in one file: each is joined.
        ("a = 'x\ny'\nb = \"p\nq\"\n", 'b = "p\\nq"'),
        # The same cut line twice: both are joined.
        ("x = 'a\n'\nx = 'a\n'\n", "x = 'a\\n'"),
    ],
)
def test_which_cut_strings_are_joined(content: str, fixed: str) -> None:
    made = pywrite.mended(content, "count.py")
    assert made, content
    final = made[-1][2]
    assert compile_problem(final, "count.py")[0] is None
    assert fixed in final.splitlines()


@pytest.mark.parametrize(
    "content",
    [
        "x = 'abc\ny = 2\n",  # a quote never closed: no join makes it compile
        "x = 'abc\n",  # nothing to join
    ],
)
def test_a_string_no_join_closes_is_left_to_the_model(content: str) -> None:
    assert pywrite.mended(content, "x.py") == []
    assert "unterminated string literal" in (compile_problem(content, "x.py")[0] or "")
