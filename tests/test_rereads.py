"""A file object read to its end and read again gets nothing: the write says so, and it
does not end its write subtask. Qwen2.5-Coder-1.5B's wordcount-3 on the H200, verbatim
through the real CLI on the scripted fake server: its program printed "3 0 0", and the
goal ended "completed (unverified)" with its counts wrong."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support import plan_rule, real_goal, records_of, small_model_goal

from localagent.tools.mends.reads import mended as rereads_mended
from localagent.tools.rereads import note, rereads

GOAL = (
    "Write wordcount.py, a command-line program using argparse: python wordcount.py FILE "
    "prints the number of lines, words and characters in FILE; with --lines it prints "
    "only the number of lines"
)
# wordcount-3, round 5, verbatim.
TWICE = (
    '{{"name": "write_file", "arguments": {"path": "wordcount.py", "content": "import argpa'
    "rse\\nimport sys\\n\\ndef main(args):\\n    if args.lines:\\n        with open(args.fi"
    "le, 'r') as f:\\n            print(len(f.readlines()))\\n    else:\\n        with open"
    "(args.file, 'r') as f:\\n            print(len(f.readlines()), len(f.read().split()), "
    "len(f.read()))\\n\\nif __name__ == '__main__':\\n    parser = argparse.ArgumentParser"
    "(description='Count lines, words, and characters in a file.')\n    parser.add_argume"
    "nt('file', type=str, help='The file to count.')\n    parser.add_argument('--lines', "
    "action='store_true', help='Print only the number of lines.')\n    args = parser.pars"
    'e_args()\\n    main(args)"}}'
)
ONCE = (
    "import argparse\n\n\ndef main():\n    parser = argparse.ArgumentParser()\n"
    "    parser.add_argument('file')\n    parser.add_argument('--lines', action='store_true')\n"
    "    args = parser.parse_args()\n    with open(args.file) as f:\n        text = f.read()\n"
    "    if args.lines:\n        print(len(text.splitlines()))\n    else:\n"
    "        print(len(text.splitlines()), len(text.split()), len(text))\n\n\nmain()\n"
)


def test_a_second_read_of_a_file_read_to_its_end_is_written_as_one_read(tmp_path: Path) -> None:
    """With the small profile, a first read kept in no name gets a name of its own on the
    line above, and the reads after it use that name: the H200's program counts right."""
    steps = ["write_file wordcount.py with its code", "run python wordcount.py FILE"]
    small_model_goal(
        tmp_path, GOAL, plan_rule((GOAL, steps)), [{"content": TWICE}], LOCALAGENT_MAX_ROUNDS="1"
    )
    (result,) = [r["result"] for r in records_of(tmp_path, "action_finished")]
    assert result.startswith(
        "wrote 641 bytes to 'wordcount.py' (created); the file it opens was read to its end "
        "already, so a read after that would get nothing: it was written with `lines = "
        "f.readlines()` on a line of its own above line 10, `f.read()` as `''.join(lines)`\n"
    ), result
    assert "reads `f` to its end" not in result
    assert (
        "            lines = f.readlines()\n            print(len(lines), len(''.join("
        in (tmp_path / "wordcount.py").read_text()
    )
    ran = _counted(tmp_path)
    assert ran.stdout.split() == ["2", "3", "17"], ran.stdout + ran.stderr


# The CPU's wordcount (the 1.5B), round 6 verbatim: two reads in one `print`, the `'\n'`
# cut by a line break; told that the second read gets nothing, it wrote this back three
# times, and was blocked.
IN_ONE_PRINT = (
    '{{"name": "write_file", "arguments": {"path": "wordcount.py", "content": "import argparse'
    "\\nimport sys\\n\\ndef main(args):\\n    if args.lines:\\n        with open(args.file, "
    "'r') as f:\\n            print(len(f.readlines()))\\n    else:\\n        with open(args.f"
    "ile, 'r') as f:\\n            print(f.read().count('\\n') + 1 + len(f.read().split()))\\n"
    "\\nif __name__ == '__main__':\\n    parser = argparse.ArgumentParser(description='Count "
    "lines, words, and characters in a file.')\n    parser.add_argument('file', help='The fil"
    "e to count.')\n    parser.add_argument('--lines', action='store_true', help='Print only "
    "the number of lines.')\n    args = parser.parse_args()\\n    main(args)\"}}"
)


def test_two_reads_in_one_line_are_made_one(tmp_path: Path) -> None:
    steps = ["write_file wordcount.py with its code", "run python wordcount.py sample.txt"]
    small_model_goal(
        tmp_path,
        GOAL,
        plan_rule((GOAL, steps)),
        [{"content": IN_ONE_PRINT}],
        LOCALAGENT_MAX_ROUNDS="1",
    )
    (result,) = [r["result"] for r in records_of(tmp_path, "action_finished")]
    assert "it was written with `text = f.read()` on a line of its own above line 10, " in result
    assert "`f.read()` as `text`" in result and "reads `f` to its end" not in result
    text = (tmp_path / "wordcount.py").read_text()
    assert (
        "        with open(args.file, 'r') as f:\n            text = f.read()\n"
        "            print(text.count('\\n') + 1 + len(text.split()))\n"
    ) in text, text
    ran = _counted(tmp_path)
    assert ran.stdout.split() == ["6"], ran.stdout + ran.stderr  # its sum, read right


@pytest.mark.parametrize(
    ("source", "mended"),
    [
        (  # a conditional runs its reads out of the line's order
            "with open(p) as f:\n    print(len(f.read()) if x else 0, len(f.read()))\n",
            None,
        ),
        (  # a statement of two lines
            "with open(p) as f:\n    print(len(f.read()),\n          len(f.read()))\n",
            None,
        ),
        (  # every name it could take is taken
            "text = content = data = 1\nwith open(p) as f:\n    print(f.read(), f.read())\n",
            None,
        ),
        (
            "with open(p) as f:\n    n = len(f.read().split())\n    c = len(f.read())\n",
            "with open(p) as f:\n    text = f.read()\n    n = len(text.split())\n"
            "    c = len(text)\n",
        ),
    ],
)
def test_which_first_reads_get_a_name(source: str, mended: str | None) -> None:
    made = rereads_mended(source, "w.py")
    assert (made[0] if made else None) == mended


def test_the_note_stays_when_no_mend_is_certain(tmp_path: Path) -> None:
    """Without the small profile's mends, or where none is certain, the write says what
    the second read gets, and it ends no write step; the program written next is clean."""
    steps = ["write_file wordcount.py with its code", "run python wordcount.py FILE"]
    again = {"name": "write_file", "arguments": {"path": "wordcount.py", "content": ONCE}}
    # TWICE, its reads put in a conditional expression, which no mend touches
    unsure = TWICE.replace("len(f.readlines()), len", "len(f.readlines()) if f else 0, len")
    rounds = [{"content": unsure}, {"content": json.dumps(again)}]
    small_model_goal(tmp_path, GOAL, plan_rule((GOAL, steps)), rounds, LOCALAGENT_MAX_ROUNDS="2")
    results = [r["result"] for r in records_of(tmp_path, "action_finished")]
    assert "(created); but it reads `f`" in results[0], results[0]
    assert "at line 10 `f.readlines()` and again at line 10 `f.read()`" in results[0]
    done = records_of(tmp_path, "subtask_completed")
    first = records_of(tmp_path, "action_finished")[0]["seq"]
    assert len(done) == 1 and min(done[0]["evidence"]) > first  # the first write ended nothing
    assert "reads `f`" not in results[1]


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ("with open(p) as f:\n    a = f.read()\n    b = f.read()\n", True),
        ("with open(p) as f:\n    for line in f:\n        n += 1\n    s = f.read()\n", True),
        ("with open(p) as f:\n    a = f.read()\n    f.seek(0)\n    b = f.read()\n", False),
        ("with open(p) as f:\n    a = f.readline()\n    b = f.readline()\n", False),
        ("with open(p) as f:\n    a = f.read(10)\n    b = f.read(10)\n", False),
        (  # branches that exclude each other
            "with open(p) as f:\n    if x:\n        a = f.read()\n    else:\n"
            "        a = f.read()\n",
            False,
        ),
        ("with open(p) as f:\n    a = f.read()\nwith open(p) as f:\n    b = f.read()\n", False),
    ],
)
def test_which_reads_come_to_nothing(source: str, found: bool) -> None:
    assert bool(rereads(source)) is found


# wordcount on the CPU (this code's handback to the write), verbatim: the first read's
# text is kept in `lines`; told only that the second read gets nothing, the 1.5B wrote the
# same file again twice, and asked for `main` on its own, it sent it back unchanged. Told
# to use `lines` there, it fixed it (the CPU, temperature 0).
KEPT = (
    "import argparse\nimport sys\n\ndef main(args):\n    if args.lines:\n        with open(ar"
    "gs.file, 'r') as f:\n            lines = f.readlines()\n            print(len(lines))\n "
    "   else:\n        with open(args.file, 'r') as f:\n            lines = f.readlines()\n  "
    "          print(len(lines), len(' '.join(lines)), len(''.join(f.readlines())))\n\nif __"
    "name__ == '__main__':\n    parser = argparse.ArgumentParser(description='Count lines, w"
    "ords, and characters in a file.')\n    parser.add_argument('file', type=str, help='The "
    "file to count.')\n    parser.add_argument('--lines', action='store_true', help='Print o"
    "nly the number of lines.')\n    args = parser.parse_args()\n    main(args)"
)


@pytest.mark.parametrize(
    ("source", "said"),
    [
        (KEPT, "Line 11 already put it in `lines`: use `lines` at line 12, not a read"),
        (
            "with open('a') as f:\n    lines = f.readlines()\n    n = len(f.read())\n",
            "Line 2 already put it in `lines`: use `''.join(lines)` at line 3, not a read",
        ),
        (
            "with open('a') as f:\n    text = f.read()\n    n = len(f.readlines())\n",
            "Line 2 already put it in `text`: use `text.splitlines(keepends=True)` at line 3, "
            "not a read",
        ),
    ],
)
def test_the_note_says_which_variable_holds_what_was_read(source: str, said: str) -> None:
    text = note(source, "wordcount.py")
    assert said in text, text


def test_a_first_read_kept_nowhere_gets_the_general_advice() -> None:
    text = note("with open('a') as f:\n    print(len(f.read()), len(f.read()))\n", "w.py")
    assert text.endswith("Read the file once into a variable and use that"), text


# wordcount-1 on the CPU (the 1.5B), rounds 1-4, verbatim: a program that reads its file
# to its end three times, written in the step that writes it, then a sample, the --lines
# run (which printed the right count), and the claim that the write step is done.
THRICE = (
    '{{"name": "write_file", "arguments": {"path": "wordcount.py", "content": "import argpa'
    "rse\\nimport sys\\n\\ndef main(args):\\n    if args.lines:\\n        with open(args.file"
    ", 'r') as f:\\n            print(len(f.readlines()))\\n    else:\\n        with open(args"
    ".file, 'r') as f:\\n            print(f.read().count(' '))\\n            print(f.read()."
    "count('\\n'))\\n            print(len(f.read()))\\n\\ndef parse_args(args):\\n    parser "
    "= argparse.ArgumentParser(description='Count lines, words, and characters in a file.')"
    "\n    parser.add_argument('file', help='The file to count.')\n    parser.add_argument("
    "'--lines', action='store_true', help='Print only the number of lines.')\n    return pa"
    "rser.parse_args(args)\\n\\nif __name__ == '__main__':\\n    args = parse_args(sys.argv[1"
    ':])\\n    main(args)"}}'
)
SAMPLE_TEXT = (
    '{{"name": "write_file", "arguments": {"path": "sample.txt", "content": "Hello, world!\\n'
    'This is a sample text file.\\nIt contains multiple lines."}}}}'
)
LINES_RUN = '{{"name": "run_cmd", "arguments": {"cmd": "python wordcount.py --lines sample.txt"}}}}'
CLAIM = (
    '{{"name": "mark_subtask_complete", "arguments": {"success": true, "reason": "The active '
    'subtask is done successfully."}}}}'
)


def test_a_write_step_whose_file_reads_its_input_twice_is_not_done_on_a_claim(
    tmp_path: Path,
) -> None:
    goal = real_goal("wordcount").text
    steps = [
        "write_file wordcount.py with its code",
        "write_file sample.txt with a few lines of sample text",
        "run python wordcount.py --lines sample.txt",
    ]
    # THRICE, its first read put in a conditional expression, which no mend touches
    unsure = THRICE.replace("print(f.read().count(' '))", "print(f.read().count(' ') if f else 0)")
    assert unsure != THRICE
    rounds = [{"content": r} for r in (unsure, SAMPLE_TEXT, LINES_RUN, CLAIM)]
    small_model_goal(tmp_path, goal, plan_rule((goal, steps)), rounds, LOCALAGENT_MAX_ROUNDS="4")
    assert not records_of(tmp_path, "subtask_completed")
    (refused,) = [f for f in records_of(tmp_path, "feedback") if f.get("refused")]
    assert refused["evidence"][0].startswith(
        "wordcount.py: it reads `f` to its end at line 10 `f.read()` and again at line 11"
    ), refused["evidence"]


# A CPU wordcount run, round 13 verbatim: its first read kept in `lines`, the file read
# again twice after it; told to use `''.join(lines)`, it wrote this back four times.
KEPT_TWICE = (
    '{{"name": "write_file", "arguments": {"path": "wordcount.py", "content": "import argparse'
    "\\nimport sys\\n\\ndef main(args):\\n    if args.lines:\\n        with open(args.file, 'r')"
    " as f:\\n            lines = f.readlines()\\n            print(len(lines))\\n    else:\\n"
    "        with open(args.file, 'r') as f:\\n            lines = f.readlines()\\n            "
    "print(len(lines), len(f.read().split()), len(f.read()))\\n\\nif __name__ == '__main__':"
    "\\n    parser = argparse.ArgumentParser(description='Count lines, words, and characters "
    "in a file.')\n    parser.add_argument('file', help='The file to count.')\n    parser.add_"
    "argument('--lines', action='store_true', help='Print only the number of lines.')\n    "
    'args = parser.parse_args()\\n    main(args)"}}'
)


def test_a_read_after_the_file_was_read_into_a_name_is_written_as_that_name(
    tmp_path: Path,
) -> None:
    steps = ["write_file wordcount.py with its code", "run python wordcount.py sample.txt"]
    rounds = [{"content": KEPT_TWICE}]
    small_model_goal(tmp_path, GOAL, plan_rule((GOAL, steps)), rounds, LOCALAGENT_MAX_ROUNDS="1")
    (result,) = [r["result"] for r in records_of(tmp_path, "action_finished")]
    assert (
        "; the file it opens was read to its end already, so a read after that would get "
        "nothing: it was written with `f.read()` as `''.join(lines)`"
    ) in result, result
    assert "reads `f` to its end" not in result
    text = (tmp_path / "wordcount.py").read_text()
    assert "print(len(lines), len(''.join(lines).split()), len(''.join(lines)))" in text
    ran = _counted(tmp_path)
    assert ran.stdout.split() == ["2", "3", "17"], ran.stdout + ran.stderr


# The CPU's wordcount (the 1.5B), round 4 verbatim: `lines = f.readlines()`, then `f.read()`
# in the `else:` of `if args.lines:`, inside an f-string in single quotes (its `\n` cut by
# a line break); it printed "Characters: 0", and the goal ended "completed (unverified)".
IN_A_BRANCH = (
    '{{"name": "write_file", "arguments": {"path": "wordcount.py", "content": "import argparse'
    "\\nimport sys\\n\\ndef main():\\n    parser = argparse.ArgumentParser(description='Count l"
    "ines, words, and characters in a file.')\n    parser.add_argument('file', help='The file "
    "to count.')\n    parser.add_argument('--lines', action='store_true', help='Print only the"
    " number of lines.')\n    args = parser.parse_args()\\n\\n    with open(args.file, 'r', enc"
    "oding='utf-8') as f:\\n        lines = f.readlines()\\n        if args.lines:\\n         "
    "   print(len(lines))\\n        else:\\n            print(f'Lines: {len(lines)}, Words: {le"
    "n(lines) * 2}, Characters: {len(f.read())}\\n')\\n\\nif __name__ == '__main__':\\n    mai"
    'n()"}}'
)


def test_a_read_in_a_branch_after_a_read_to_the_end_is_written_as_its_name(
    tmp_path: Path,
) -> None:
    steps = ["write_file wordcount.py with its code", "run python wordcount.py sample.txt"]
    small_model_goal(
        tmp_path, GOAL, plan_rule((GOAL, steps)), [{"content": IN_A_BRANCH}],
        LOCALAGENT_MAX_ROUNDS="1",
    )  # fmt: skip
    (result,) = [r["result"] for r in records_of(tmp_path, "action_finished")]
    assert 'it was written with `f.read()` as `"".join(lines)`' in result, result
    text = (tmp_path / "wordcount.py").read_text()
    assert 'Characters: {len("".join(lines))}' in text, text
    ran = _counted(tmp_path)
    assert ran.stdout.strip() == "Lines: 2, Words: 4, Characters: 17", ran.stdout + ran.stderr


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ("with open(p) as f:\n    a = f.read()\n    if x:\n        b = f.read()\n", True),
        ("with open(p) as f:\n    a = f.read()\n    while x:\n        b = f.read()\n", True),
        (  # reset in the branch before its read
            "with open(p) as f:\n    a = f.read()\n    if x:\n        f.seek(0)\n"
            "        b = f.read()\n",
            False,
        ),
        ("with open(p) as f:\n    if x:\n        a = f.read()\n    b = f.read()\n", False),
    ],
)
def test_a_read_in_a_branch_after_a_read_to_the_end(source: str, found: bool) -> None:
    assert bool(rereads(source)) is found


def _counted(ws: Path) -> subprocess.CompletedProcess[str]:
    """wordcount.py run on a file of two lines, three words and 17 characters."""
    (ws / "s.txt").write_text("alpha beta\ngamma\n")
    run = [sys.executable, "wordcount.py", "s.txt"]
    return subprocess.run(run, cwd=ws, capture_output=True, text=True)
