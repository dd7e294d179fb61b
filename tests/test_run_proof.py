"""A run shows a program works only when its output holds something of its own and the
files it was given exist. Qwen2.5-Coder-1.5B's runs on an H100 (llama-server, 16 runs of
each goal), replayed verbatim on the scripted fake server through the real CLI: each of
these ended "completed (verified)" with a broken program."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support import VERIFIED, plan_rule, records_of, small_model_goal

from localagent.loop.firststeps import sample_first
from localagent.state.checkruns import outcome, run_facts
from localagent.tools import pyscript, runproof
from localagent.tools.loaderror import file_as_text

RPS = "Create a rock-paper-scissors game"
RPS_PLAN = plan_rule(
    (
        "Write a named file rps_game.py with the game logic",
        ["write_file rps_game.py with the game logic"],
    ),
    ("Run python rps_game.py", ["run python rps_game.py"]),
)
# The 1.5B's rounds, verbatim: the game returns its result and never prints it; told the
# game calls nothing, it added a `__main__` block that drops the result, three times.
MAIN_BLOCK = (
    '{{"name": "replace_in_file", "arguments": {"path": "rps_game.py", "old": "        return '
    "'You lose!'\", \"new\": \"        return 'You lose!'\\n\\n\\nif __name__ == "
    '\\"__main__\\":\\n    play_game()"}}}'
)
RPS_ROUNDS = [
    '{{"name": "write_file", "arguments": {"path": "rps_game.py", "content": "import random\\n'
    "\\ndef play_game():\\n    choices = ['rock', 'paper', 'scissors']\\n    computer_choice = "
    "random.choice(choices)\\n    user_choice = input('Enter your choice (rock, paper, or "
    "scissors): ').lower()\\n    if user_choice == computer_choice:\\n        return 'It's a "
    "tie!'\\n    elif (user_choice == 'rock' and computer_choice == 'scissors') or (user_choice"
    " == 'paper' and computer_choice == 'rock') or (user_choice == 'scissors' and "
    "computer_choice == 'paper'):\\n        return 'You win!'\\n    else:\\n        return "
    "'You lose!'}}}",
    '{{"name": "replace_in_file", "arguments": {"path": "rps_game.py", "old": "\'It\'s a tie!\'",'
    ' "new": "\\"It\'s a tie!\\""}}}',
    '{{"name": "run_cmd", "arguments": {"cmd": "python rps_game.py"}}}',
    MAIN_BLOCK,
    '{{"name": "run_cmd", "arguments": {"cmd": "python rps_game.py"}}}',
    MAIN_BLOCK,
    '{{"name": "run_cmd", "arguments": {"cmd": "python rps_game.py", "stdin": "rock\\n"}}}',
]
PRINT_IT = {
    "name": "replace_in_file",
    "arguments": {"path": "rps_game.py", "old": "    play_game()", "new": "    print(play_game())"},
}


def results(ws: Path) -> list[str]:
    return [r["result"] for r in records_of(ws, "action_finished")]


def test_a_game_that_drops_its_result_is_not_checked_by_its_prompts(tmp_path: Path) -> None:
    """Fed "rock", the game printed only its prompt: no evidence, and the note gives the
    edit that prints the result. The repeated `__main__` block is refused (the game had
    asked three times for a move). The note's edit copied, the game names a result and
    its run ends the subtask."""
    play = {"name": "run_cmd", "arguments": {"cmd": "python rps_game.py", "stdin": "rock\n"}}
    replies = [*RPS_ROUNDS, json.dumps(PRINT_IT), json.dumps(play)]
    ran, _ = small_model_goal(
        tmp_path, RPS, RPS_PLAN, [{"content": r} for r in replies], LOCALAGENT_MAX_ROUNDS="12"
    )
    assert ran.returncode == 0, ran.stderr + ran.stdout
    seen = results(tmp_path)
    # Calling nothing, it is told the call that prints what play_game returns.
    assert '\\nif __name__ == \\"__main__\\":\\n    print(play_game())"' in seen[2]
    assert seen[5].startswith("'rps_game.py' already has new (line 12) where old is")
    fed = seen[6]
    assert "NOTE: rps_game.py printed only its input prompts, no result of its own" in fed
    assert fed.endswith(
        " play_game() returns its result, but the call drops it; to print it, send: "
        + json.dumps(PRINT_IT)
    )
    game = (tmp_path / "rps_game.py").read_text()
    assert game.count("__main__") == 1 and game.endswith("    print(play_game())")
    completed = records_of(tmp_path, "subtask_completed")
    # The run that printed nothing went back to a write (the handback), which the
    # `__main__` block ended; the run that printed a result ends the run subtask.
    assert [c.get("by") for c in completed] == ["write", "write", "run"]
    assert completed[-1]["evidence"] == [records_of(tmp_path, "action_finished")[-1]["seq"]]
    assert any(w in seen[-1] for w in ("You win!", "You lose!", "It's a tie!"))


WORDCOUNT = (
    "Write wordcount.py, a command-line program using argparse: python wordcount.py FILE "
    "prints the number of lines, words and characters in FILE; with --lines it prints "
    "only the number of lines"
)
# The 1.5B's program, verbatim: it reads stdin, not FILE; run on a file that did not
# exist, it printed "0", and the goal ended "completed (verified)".
STDIN_COUNT = (
    "import argparse\nimport sys\n\ndef main(args):\n    if args.lines:\n"
    "        print(len(sys.stdin.readlines()))\n    else:\n"
    "        print(len(sys.stdin.readlines()), len(sys.stdin.read().split()), "
    "len(sys.stdin.read()))\n\nif __name__ == '__main__':\n"
    "    parser = argparse.ArgumentParser(description='Count lines, words, and characters "
    "in a file.')\n    parser.add_argument('FILE', type=str, help='The file to count.')\n"
    "    parser.add_argument('--lines', action='store_true', help='Print only the number of "
    "lines.')\n    args = parser.parse_args()\n    main(args)"
)


def test_a_run_on_a_file_that_does_not_exist_checks_nothing(tmp_path: Path) -> None:
    """`python wordcount.py --lines file.txt` with no file.txt: exit code 0, "0". The run
    says the file does not exist; its subtask is not done by it, and the completion
    claim the 1.5B sent next is not accepted on it."""
    plan = plan_rule(
        (
            "Write wordcount.py with its code",
            [
                "write_file wordcount.py with its code",
                # (a step on the goal's FILE gets a sample written first: see below)
                "run python wordcount.py on a file",
            ],
        )
    )
    write = {"name": "write_file", "arguments": {"path": "wordcount.py", "content": STDIN_COUNT}}
    replies = [
        json.dumps(write),
        '{{"name": "run_cmd", "arguments": {"cmd": "python wordcount.py --lines file.txt"}}}}',
        '{{"name": "mark_subtask_complete", "arguments": {"success": true, "reason": "The '
        'subtask is done as expected."}}}',
    ]
    small_model_goal(
        tmp_path, WORDCOUNT, plan, [{"content": r} for r in replies], LOCALAGENT_MAX_ROUNDS="4"
    )
    seen = results(tmp_path)
    assert seen[1].startswith("exit code 0\n0\n")
    assert "NOTE: file.txt does not exist in the workspace, so this run read no input" in seen[1]
    completed = records_of(tmp_path, "subtask_completed")
    assert completed[0].get("by") == "write"
    assert all(c["verified"] is False for c in completed[1:])
    (claim,) = [r for r in records_of(tmp_path, "feedback") if "NOT ACCEPTED" in r["text"]]
    assert (
        "`python wordcount.py --lines file.txt` shows nothing yet: file.txt does not exist"
        in claim["text"]
    )
    assert [g["verification"] for g in records_of(tmp_path, "goal_completed")] in (
        [],
        ["unverified"],
    )


# A program that reads the file it is given.
OPEN_COUNT = (
    "import argparse\n\nparser = argparse.ArgumentParser()\nparser.add_argument('file')\n"
    "parser.add_argument('--lines', action='store_true')\nargs = parser.parse_args()\n"
    "text = open(args.file).read()\nif args.lines:\n    print(len(text.splitlines()))\n"
    "else:\n    print(len(text.splitlines()), len(text.split()), len(text))\n"
)
# The 1.5B's run on an H100, verbatim: six times, told each time test.txt did not exist.
TEST_TXT = '{"name": "run_cmd", "arguments": {"cmd": "python wordcount.py test.txt"}}'


def test_a_run_on_a_missing_file_is_offered_the_write_of_a_sample(tmp_path: Path) -> None:
    """The note gives the write_file call of a small sample, ready to copy, and the run
    to make next; copied, the run shows the program's counts and ends its subtask (a step
    that names the program and its file, as the 1.5B's replan did)."""
    plan = plan_rule(
        (WORDCOUNT, ["write_file wordcount.py with its code", "run python wordcount.py test.txt"])
    )
    write = {"name": "write_file", "arguments": {"path": "wordcount.py", "content": OPEN_COUNT}}
    sample = {
        "name": "write_file",
        "arguments": {
            "path": "test.txt",
            "content": "the quick brown fox\njumps over the lazy dog\n",
        },
    }
    replies = [json.dumps(write), TEST_TXT, json.dumps(sample), TEST_TXT]
    small_model_goal(
        tmp_path, WORDCOUNT, plan, [{"content": r} for r in replies], LOCALAGENT_MAX_ROUNDS="5"
    )
    seen = results(tmp_path)
    # The call comes last: told "Then run ..." after it, the 1.5B ran the program three
    # times on the file it had not written (the CPU).
    assert seen[1].endswith(
        "write a small sample file first, then run `python wordcount.py test.txt`. To write "
        "one, send: " + json.dumps(sample)
    ), seen[1]
    assert seen[3].startswith("exit code 0\n2 9 44\n")
    by = [c.get("by") for c in records_of(tmp_path, "subtask_completed")]
    assert by == ["write", "write", "run"]  # the plan's run got the sample's write before it
    # The goal's placeholder gets a sample of its own name, and the run on it.
    assert runproof.sample_file("FILE")[0] == "sample.txt"
    assert runproof.on_samples("python wordcount.py --lines FILE", ["FILE"]) == (
        "python wordcount.py --lines sample.txt"
    )
    assert runproof.sample_file("data/in.csv") == ("data/in.csv", "name,count\napples,3\npears,5\n")


def test_a_run_step_on_the_goal_s_placeholder_gets_a_sample_written_first(
    tmp_path: Path,
) -> None:
    """The 1.5B's wordcount plans on the CPU, verbatim: "run python wordcount.py FILE".
    Run on a file that did not exist, its program failed, and offered the sample's
    write_file call, the model ran the same command until three strikes. The plan gets
    the sample's write before the run, and the run is on it."""
    plan = plan_rule(
        (WORDCOUNT, ["write_file wordcount.py with its code", "run python wordcount.py FILE"])
    )
    write = {"name": "write_file", "arguments": {"path": "wordcount.py", "content": OPEN_COUNT}}
    sample = {"name": "write_file", "arguments": {"path": "sample.txt", "content": "a b\nc\n"}}
    run = '{"name": "run_cmd", "arguments": {"cmd": "python wordcount.py sample.txt"}}'
    replies = [json.dumps(write), json.dumps(sample), run]
    ran, _ = small_model_goal(
        tmp_path, WORDCOUNT, plan, [{"content": r} for r in replies], LOCALAGENT_MAX_ROUNDS="4"
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    (planned,) = records_of(tmp_path, "plan")
    assert planned["tasks"][0]["subtasks"] == [
        "write_file wordcount.py with its code",
        "write_file sample.txt with a few lines of sample text",
        "run python wordcount.py sample.txt",
    ]
    assert results(tmp_path)[2].startswith("exit code 0\n2 3 6\n")
    by = [c.get("by") for c in records_of(tmp_path, "subtask_completed")]
    assert by == ["write", "write", "run"]


# The 1.5B's wordcount.py on the CPU, verbatim (the write's call as it sent it) but for
# its last count, `len(f.read())` after `f.readlines()`, which its write names now
# (`test_rereads.py`): it calls `f.split()` on the file it opened, and ran it until
# strikes, in 2 runs of 2.
SPLIT = (
    '{{"name": "write_file", "arguments": {"path": "wordcount.py", "content": "import argpa'
    "rse\\nimport sys\\n\\ndef main(args):\\n    if args.lines:\\n        with open(args.fi"
    "le, 'r') as f:\\n            print(len(f.readlines()))\\n    else:\\n        with op"
    "en(args.file, 'r') as f:\\n            print(len(f.readlines()), len(f.split()))"
    "\\n\\nif __name__ == '__main__':\\n    parser = argparse.ArgumentParser(d"
    "escription='Count lines, words, and characters in a file.')\n    parser.add_argument"
    "('file', type=str, help='The file to count.')\n    parser.add_argument('--lines'"
    ", action='store_true', help='Print only the number of lines.')\n    args = parser."
    'parse_args()\\n    main(args)"}}'
)


def test_a_program_that_raises_as_it_runs_goes_back_to_its_write(tmp_path: Path) -> None:
    """In the small profile an error its own code raised (not only one on loading)
    fails the run step at the first blocked repeat, and the replan, made without the
    model, is the write of the program again, naming the error."""
    plan = plan_rule(
        (WORDCOUNT, ["write_file wordcount.py with its code", "run python wordcount.py FILE"])
    )
    sample = {"name": "write_file", "arguments": {"path": "sample.txt", "content": "a b\nc\n"}}
    run = '{"name": "run_cmd", "arguments": {"cmd": "python wordcount.py sample.txt"}}'
    fixed = {"name": "write_file", "arguments": {"path": "wordcount.py", "content": OPEN_COUNT}}
    replies = [SPLIT, json.dumps(sample), run, run, run, json.dumps(fixed), run]
    ran, _ = small_model_goal(
        tmp_path, WORDCOUNT, plan, [{"content": r} for r in replies], LOCALAGENT_MAX_ROUNDS="8"
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    error = "AttributeError: '_io.TextIOWrapper' object has no attribute 'split'"
    (failed,) = records_of(tmp_path, "subtask_failed")
    assert failed["reason"].startswith(f"the run stopped on an error in wordcount.py: {error}")
    (back,) = [p for p in records_of(tmp_path, "plan") if p.get("replace_from")]
    assert back["by"] == "handback"
    assert back["tasks"][0]["subtasks"][:2] == [
        f"write_file wordcount.py again, changed so that it no longer raises {error} (an "
        "open file has no split: in its `with open(...) as f:` block, take its text with "
        "`text = f.read()`, then `text.split()`)"
        ", keeping its --lines option",
        "run python wordcount.py sample.txt",
    ]
    assert results(tmp_path)[-1].startswith("exit code 0\n2 3 6\n")


@pytest.mark.parametrize(
    ("error", "said"),
    [
        (
            "AttributeError: '_io.TextIOWrapper' object has no attribute 'splitlines'",
            "an open file has no splitlines: in its `with open(...) as f:` block, take its text "
            "with `text = f.read()`, then `text.splitlines()`",
        ),
        (
            "TypeError: object of type '_io.TextIOWrapper' has no len()",
            "an open file has no len(): in its `with open(...) as f:` block, take its text with "
            "`text = f.read()`, then `len(text)`",
        ),
        ("AttributeError: '_io.TextIOWrapper' object has no attribute 'frobnicate'", ""),
        (
            "AttributeError: 'list' object has no attribute 'split'",
            "a list has no split: `.split()`, `.splitlines()` and `.readlines()` give lists, "
            "so split the text once: `len(text.split())` counts its words",
        ),
        (
            "AttributeError: 'list' object has no attribute 'strip'",
            "a list has no strip: `.split()`, `.splitlines()` and `.readlines()` give lists: "
            "call strip on the text, or on each item of the list",
        ),
        ("AttributeError: 'list' object has no attribute 'frobnicate'", ""),
        ("AttributeError: 'str' object has no attribute 'split_words'", ""),
    ],
)
def test_what_a_file_used_as_its_text_is_told(error: str, said: str) -> None:
    assert file_as_text(error) == said


def test_a_program_that_never_opens_its_file_goes_back_to_its_write(tmp_path: Path) -> None:
    """The 1.5B's wordcount.py counted sys.stdin; told its run showed nothing, it ran it
    again with stdin "test" until three strikes (the CPU). In the small profile that run
    fails the step at once, and the replan, made without the model, is the write; it
    names the option the goal states (told only to open the file, the 1.5B wrote it
    again without --lines, on the H200 and on the CPU)."""
    plan = plan_rule(
        (WORDCOUNT, ["write_file wordcount.py with its code", "run python wordcount.py FILE"])
    )
    stdin = {"name": "write_file", "arguments": {"path": "wordcount.py", "content": STDIN_COUNT}}
    sample = {"name": "write_file", "arguments": {"path": "sample.txt", "content": "a b\nc\n"}}
    run = '{"name": "run_cmd", "arguments": {"cmd": "python wordcount.py sample.txt"}}'
    fixed = {"name": "write_file", "arguments": {"path": "wordcount.py", "content": OPEN_COUNT}}
    replies = [json.dumps(stdin), json.dumps(sample), run, json.dumps(fixed), run]
    ran, _ = small_model_goal(
        tmp_path, WORDCOUNT, plan, [{"content": r} for r in replies], LOCALAGENT_MAX_ROUNDS="6"
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    (failed,) = records_of(tmp_path, "subtask_failed")
    assert failed["reason"] == (
        "wordcount.py: its code never opens sample.txt, the file it was given"
    ), failed["reason"]
    (back,) = [p for p in records_of(tmp_path, "plan") if p.get("replace_from")]
    assert back["by"] == "handback"
    assert back["tasks"][0]["subtasks"][:2] == [
        "write_file wordcount.py again, changed so that it opens and reads the file it is given, "
        "keeping its --lines option",
        "run python wordcount.py sample.txt",
    ]
    assert results(tmp_path)[-1].startswith("exit code 0\n2 3 6\n")


def test_which_run_steps_get_a_sample_first() -> None:
    def planned(steps: list[str], there: tuple[str, ...] = ()) -> list[str]:
        tasks = [{"description": "d", "subtasks": list(steps)}]
        sample_first(tasks, lambda path: path in there, lambda path: f"write {path}")
        return tasks[0]["subtasks"]

    assert planned(["run python wc.py --lines INPUT_FILE"]) == [
        "write sample.txt",
        "run python wc.py --lines sample.txt",
    ]
    assert planned(["run python wc.py data.csv"]) == ["write data.csv", "run python wc.py data.csv"]
    assert planned(["run python wc.py data.csv"], ("data.csv",)) == ["run python wc.py data.csv"]
    steps = ["write_file sample.txt with three lines", "run python wc.py sample.txt"]
    assert planned(steps) == steps  # written by a step before
    assert planned(["run python report.py out.csv"]) == ["run python report.py out.csv"]
    assert planned(["run python -m pytest"]) == ["run python -m pytest"]


def test_a_run_on_a_file_its_code_never_opens_checks_nothing(tmp_path: Path) -> None:
    """Given a file that exists, the 1.5B's stdin counter printed "0 0 0", and its other
    program counted the characters of the file's name: neither read the file, and the
    run says so, ending nothing."""
    for name, program, how in (
        ("stdin", STDIN_COUNT, " (it reads sys.stdin, which this run left empty)"),
        ("name", TEXT_COUNT, ""),
    ):
        ws = tmp_path / name
        ws.mkdir()
        (ws / "test.txt").write_text(runproof.SAMPLE_TEXT)
        plan = plan_rule(
            (WORDCOUNT, ["write_file wordcount.py with its code", "run python wordcount.py"])
        )
        write = {"name": "write_file", "arguments": {"path": "wordcount.py", "content": program}}
        replies = [json.dumps(write), TEST_TXT]
        small_model_goal(
            ws, WORDCOUNT, plan, [{"content": r} for r in replies], LOCALAGENT_MAX_ROUNDS="3"
        )
        ran = results(ws)[1]
        assert ran.startswith("exit code 0\n"), ran
        assert ran.endswith(
            f"NOTE: wordcount.py was given test.txt, but its code never opens a file{how}, so "
            "this run does not show that it works on test.txt: make it open the file it is "
            "given (for example `with open(args.file) as f:`), then run it again."
        ), ran
        assert [c.get("by") for c in records_of(ws, "subtask_completed")][:2] == ["write"], name
    opened = (
        "import sys\nprint(len(open(sys.argv[1]).read()))",
        "import json, sys\nprint(json.load(open(sys.argv[1])))",
    )
    for source in opened:
        script = pyscript.parse(source)
        assert (
            script is not None
            and runproof.unopened(tmp_path / "stdin", ["w.py", "test.txt"], script) == []
        )


# The 1.5B's next two programs on an H100, verbatim: one run as `python wordcount.py FILE`
# (the goal's own name for the file; "0 0 0"), one as `python wordcount.py --help` (it
# counts the characters of its argument). Each ended "completed (verified)".
FILE_RUN = '{{"name": "run_cmd", "arguments": {"cmd": "python wordcount.py FILE"}}}}'
HELP_RUN = '{{"name": "run_cmd", "arguments": {"cmd": "python wordcount.py --help"}}}}'
TEXT_COUNT = (
    "import argparse\nimport sys\nimport os\nimport re\n\ndef main(args):\n    if args.lines:\n"
    "        print(len(args.text.splitlines()))\n    else:\n        print(len(args.text."
    "splitlines()), len(args.text.split()), len(args.text))\n\nif __name__ == '__main__':\n"
    "    parser = argparse.ArgumentParser(description='Count lines, words, and characters in "
    "a file.')\n    parser.add_argument('text', type=str, help='The file to count.')\n"
    "    parser.add_argument('--lines', action='store_true', help='Print only the number of "
    "lines.')\n    args = parser.parse_args()\n    main(args)"
)


def test_a_run_on_the_goal_s_placeholder_or_for_the_usage_checks_nothing(tmp_path: Path) -> None:
    for name, program, run, note in (
        ("file", STDIN_COUNT, FILE_RUN, "NOTE: FILE does not exist in the workspace"),
        (
            "help",
            TEXT_COUNT,
            HELP_RUN,
            "NOTE: this run printed only the usage text of wordcount.py",
        ),
    ):
        ws = tmp_path / name
        ws.mkdir()
        subtask = "run python wordcount.py " + ("FILE" if name == "file" else "--help")
        plan = plan_rule((WORDCOUNT, ["write_file wordcount.py with its code", subtask]))
        write = {"name": "write_file", "arguments": {"path": "wordcount.py", "content": program}}
        replies = [{"content": json.dumps(write)}, {"content": run}]
        small_model_goal(ws, WORDCOUNT, plan, replies, LOCALAGENT_MAX_ROUNDS="2")
        seen = results(ws)
        assert seen[1].startswith("exit code 0\n") and note in seen[1], seen[1]
        assert "SUBTASK COMPLETE" not in seen[1]
        completed = records_of(ws, "subtask_completed")
        assert [c.get("by") for c in completed] == ["write"]
        assert [g["verification"] for g in records_of(ws, "goal_completed")] in ([], ["unverified"])


def test_what_a_run_shows_is_judged_from_its_facts() -> None:
    """The ledger's judgement of a run: facts that say it proves nothing make it
    inconclusive, whatever its exit code; facts of another command do not."""
    text = "exit code 0\nEnter your choice: "
    facts = {
        "ran": ["python g.py"],
        "fed": ["python g.py"],
        "unproven": ["it printed only its input prompts, no result"],
    }
    assert outcome("python g.py", text, *run_facts(facts, "python g.py")) == (
        None,
        "inconclusive: it printed only its input prompts, no result",
    )
    assert outcome("python h.py", "exit code 0\nhi", *run_facts(facts, "python h.py")) == (
        True,
        "exit code 0: hi",
    )


def test_which_calls_drop_a_result_and_which_files_are_missing(tmp_path: Path) -> None:
    source = (
        "def play():\n    return 'win'\n\ndef show():\n    print('x')\n    return 1\n\n"
        "def none():\n    return None\n\nplay()\nshow()\nnone()\n"
    )
    script = pyscript.parse(source)
    assert script is not None and script.dropped == [("play", "play()\n")]
    assert runproof.fix_text("g.py", script).endswith(
        json.dumps(
            {
                "name": "replace_in_file",
                "arguments": {"path": "g.py", "old": "play()\n", "new": "print(play())\n"},
            }
        )
    )
    assert runproof.own_output("Move? Move? ", pyscript.parse("a = input('Move? ')")) == ""
    (tmp_path / "in.txt").write_text("x")
    words = runproof.script_words("python -u count.py in.txt out.csv --lines 3 -o x.json")
    assert words[0] == "count.py"
    assert runproof.missing_inputs(tmp_path, words) == ["out.csv", "x.json"]
    assert runproof.script_words("pytest a.py") == []


# Qwen2.5-Coder-1.5B on the CPU, verbatim: the same mismatched bracket in every write of
# its game, the fix it was offered never copied; 16 rounds, failed.
BRACKET = (
    '{{"name": "write_file", "arguments": {"path": "rps_game.py", "content": "import random\\n'
    "\\ndef play_game(player1, player2):\\n    choices = ['rock', 'paper', 'scissors']\\n    "
    "if player1 not in choices or player2 not in choices:\\n        return 'Invalid choice'\\n"
    "    if player1 == player2:\\n        return 'Tie'\\n    if (player1 == 'rock' and player2"
    " == 'scissors') or (player1 == 'paper' and player2 == 'rock') or (player1 == 'scissors'"
    " and player2 == 'paper'):\\n        return 'Player 1 wins'\\n    else:\\n        return "
    "'Player 2 wins'\\n\\nif __name__ == '__main__':\\n    player1 = input('Player 1: rock, "
    "paper, or scissors? ').lower()\\n    player2 = input('Player 2: rock, paper, or "
    "scissors? ').lower()\\n    print(play_game(player1, player2)}\"}}"
)


def test_a_small_model_s_write_gets_the_one_line_syntax_fix_made(tmp_path: Path) -> None:
    """In the small profile the write makes the fix itself and says so; the game then
    plays a round for two players."""
    play = {"name": "run_cmd", "arguments": {"cmd": "python rps_game.py", "stdin": "rock\npaper\n"}}
    replies = [{"content": BRACKET}, {"content": json.dumps(play)}]
    ran, _ = small_model_goal(tmp_path, RPS, RPS_PLAN, replies, LOCALAGENT_MAX_ROUNDS="4")
    assert ran.returncode == 0, ran.stderr + ran.stdout
    wrote = results(tmp_path)[0]
    assert (
        "; `print(play_game(player1, player2)}` did not compile, so it was written as "
        "`print(play_game(player1, player2))`" in wrote
    )
    assert "syntax error" not in wrote
    assert (tmp_path / "rps_game.py").read_text().endswith("print(play_game(player1, player2))")
    assert "Player 2 wins" in results(tmp_path)[1]
    assert [c.get("by") for c in records_of(tmp_path, "subtask_completed")] == ["write", "run"]


GREET = (
    "Write greet.py: python greet.py NAME prints Hello, NAME! and exits 0; run without "
    "arguments it prints a usage message and exits with status 2"
)
# The 1.5B's greet.py on an H100, verbatim: its usage message exits 0. The run was taken
# as a fact, never compared with the status the goal states, and the goal ended
# "completed (verified)".
USAGE_EXITS_0 = (
    '{{"name": "write_file", "arguments": {"path": "greet.py", "content": "def greet(NAME):'
    "\\n    print(f'Hello, {NAME}!')\\nif __name__ == '__main__':\\n    import sys\\n    if "
    "len(sys.argv) > 1:\\n        greet(sys.argv[1])\\n    else:\\n        print('Usage: python "
    "greet.py NAME')\"}}}}"
)


def verified_greet(ws: Path, plan: dict[str, Any], rounds: list[str]) -> None:
    """GREET run with these rounds, verified, the small verifier saying VERIFIED."""
    replies = [{"content": r} for r in rounds]
    small_model_goal(
        ws, GREET, plan, replies, VERIFIED, LOCALAGENT_MAX_ROUNDS="3", LOCALAGENT_VERIFY="1"
    )


def test_a_goal_s_stated_exit_status_is_checked_against_the_run(tmp_path: Path) -> None:
    plan = plan_rule((GREET, ["write_file greet.py with its code", "run python greet.py"]))
    run = '{{"name": "run_cmd", "arguments": {"cmd": "python greet.py"}}}}'
    verified_greet(tmp_path, plan, [USAGE_EXITS_0, run])
    # The run itself fails its subtask now (`test_status_handback.py`); its summary is the
    # program's output, not the note the loop added after it.
    failed = records_of(tmp_path, "subtask_failed")
    assert failed and failed[0]["reason"] == (
        "the goal says greet.py run without arguments exits with status 2; `python greet.py` "
        "exited 0 (exit code 0: Usage: python greet.py NAME); without arguments it must end "
        "with `sys.exit(2)`"
    )
    assert [g["verification"] for g in records_of(tmp_path, "goal_completed")] != ["verified"]


# The 1.5B's greet.py on an H100, verbatim: run only as `python greet.py NAME`, it greets
# "World" without arguments and exits 0; the small verifier said VERIFIED.
GREETS_WORLD = (
    '```json\n{\n  "name": "write_file",\n  "arguments": {\n    "path": "greet.py",\n    '
    '"content": "def greet(NAME):\\n    print(f\'Hello, {NAME}!\')\\n    return 0\\n\\nif '
    "__name__ == '__main__':\\n    import sys\\n    NAME = sys.argv[1] if len(sys.argv) > 1 "
    "else 'World'\\n    sys.exit(greet(NAME))\"\n  }\n}\n```"
)


def test_the_verification_runs_the_script_whose_exit_status_the_goal_states(
    tmp_path: Path,
) -> None:
    """No run without arguments followed the last write: the verification makes it, and
    its exit status, not the one the goal states, refuses the goal."""
    plan = plan_rule((GREET, ["write_file greet.py with its code", "run python greet.py NAME"]))
    run = (
        '```json\n{\n  "name": "run_cmd",\n  "arguments": {\n    "cmd": "python greet.py '
        'NAME"\n  }\n}\n```'
    )
    verified_greet(tmp_path, plan, [GREETS_WORLD, run])
    assert "Hello, NAME!" in results(tmp_path)[1]
    started = records_of(tmp_path, "verify_started")[0]
    assert {"cmd": "python greet.py", "source": "program"} in [
        {k: c[k] for k in ("cmd", "source")} for c in started["checks"]
    ]
    (check, *_) = records_of(tmp_path, "check_finished")
    assert check["cmd"] == "python greet.py" and check["returncode"] == 0
    verdicts = records_of(tmp_path, "verdict")
    assert verdicts[0]["verdict"] == "NOT_VERIFIED" and verdicts[0]["source"] == "checks"
    assert (
        "the goal says greet.py run without arguments exits with status 2; `python greet.py` "
        "exited 0 (exit code 0: Hello, World!); without arguments it must end with "
        "`sys.exit(2)`"
    ) in verdicts[0]["unmet"]
    assert [g["verification"] for g in records_of(tmp_path, "goal_completed")] != ["verified"]


def test_the_input_a_waiting_program_is_offered_comes_from_its_prompt() -> None:
    """The 1.5B's game on an H100, run without stdin three times, then blocked: the note's
    example ran `python game.py`; the call offered now is the game's own, with an answer
    its prompt offers."""
    ended = (
        "Enter your choice (rock, paper, or scissors): Traceback (most recent call last):\n"
        '  File "rps_game.py", line 6, in play_game\n'
        "    user_choice = input('Enter your choice (rock, paper, or scissors): ').lower()\n"
        "EOFError: EOF when reading a line\n"
    )
    assert runproof.sample_input(ended) == "rock\n"
    # Asked whether to go on, the answer that stops: "y" plays again into the next EOF.
    assert runproof.sample_input("Play again? [y/n] EOFError") == "n\n"
    assert runproof.sample_input("Continue (yes/no)? EOFError") == "no\n"
    # An answer to each prompt of the source, then the choice that quits, if one is offered:
    # a game that asks in a loop ends instead of dying on the end of its input.
    two = [
        "Player 1, choose rock, paper, or scissors: ",
        "Player 2, choose rock, paper, or scissors: ",
    ]
    assert runproof.sample_answers(two) == "rock\npaper\n"
    assert runproof.sample_answers(["Enter rock, paper, scissors or quit: "]) == "rock\nquit\n"
    assert runproof.sample_answers([]) == "test\n"
    assert runproof.sample_input("How many rounds? EOFError") == "1\n"
    assert runproof.sample_input("Your name: EOFError") == "test\n"


# The 1.5B's game on an H100, verbatim, then its run without stdin, sent until blocked.
WAITS = (
    '```json\n{"name": "write_file", "arguments": {"path": "rps_game.py", "content": "import '
    "random\\n\\ndef play_game():\\n    choices = ['rock', 'paper', 'scissors']\\n    "
    "computer_choice = random.choice(choices)\\n    user_choice = input('Enter your choice "
    "(rock, paper, or scissors): ').lower()\\n\\n    if user_choice == computer_choice:\\n"
    "        print(f'It\\\\'s a tie! You chose {user_choice} and the computer chose "
    "{computer_choice}.')\n    elif (user_choice == 'rock' and computer_choice == 'scissors') "
    "or (user_choice == 'paper' and computer_choice == 'rock') or (user_choice == 'scissors' "
    "and computer_choice == 'paper'):\n        print(f'You win! You chose {user_choice} and "
    "the computer chose {computer_choice}.')\n    else:\n        print(f'You lose! You chose "
    "{user_choice} and the computer chose {computer_choice}.')\\n\\nif __name__ == "
    "'__main__':\\n    play_game()\"}}\n```"
)
NO_STDIN = '```json\n{"name": "run_cmd", "arguments": {"cmd": "python rps_game.py"}}\n```'


def test_a_game_run_again_without_its_input_runs_with_an_answer_to_each_prompt(
    tmp_path: Path,
) -> None:
    """Told the call with input, the 1.5B sent its run without stdin three more times, and
    the strikes failed the step. The repeat runs with an answer to the game's prompt; the
    run completes the step."""
    plan = plan_rule(
        ("Write the game", ["write_file rps_game.py with the game logic"]),
        ("Run it", ["run python rps_game.py"]),
    )
    replies = [{"content": r} for r in (WAITS, NO_STDIN, NO_STDIN)]
    small_model_goal(tmp_path, RPS, plan, replies, LOCALAGENT_MAX_ROUNDS="3")
    offered = '{"name": "run_cmd", "arguments": {"cmd": "python rps_game.py", "stdin": "rock\\n"}}'
    first, again = [r for r in records_of(tmp_path, "action_finished") if r["tool"] == "run_cmd"]
    assert first["result"].endswith(f"e.g. send: {offered}"), first["result"]
    assert again["args"] == {"cmd": "python rps_game.py", "stdin": "rock\n"}
    assert "You chose rock" in again["result"]
    assert 'so it ran with stdin "rock\\n", an answer to each' in again["result"]
    assert not records_of(tmp_path, "action_blocked")
    assert [r["by"] for r in records_of(tmp_path, "subtask_completed")] == ["write", "run"]


# The 1.5B's two-player game on the CPU, verbatim (its `\if` mended as it is written):
# run without stdin, then again.
TWO_PLAYERS = (
    '{{"name": "write_file", "arguments": {"path": "rps_game.py", "content": "import ran'
    "dom\\n\\ndef play_game(player1, player2):\\n    choices = ['rock', 'paper', 'scisso"
    "rs']\\n    if player1 not in choices or player2 not in choices:\\n        return 'I"
    "nvalid choice'\\n    if player1 == player2:\\n        return 'Tie'\\n    if (player"
    "1 == 'rock' and player2 == 'scissors') or (player1 == 'paper' and player2 == 'rock'"
    ") or (player1 == 'scissors' and player2 == 'paper'):\\n        return 'Player 1 win"
    "s'\\n    else:\\n        return 'Player 2 wins'\\n\\ndef main():\\n    print('Welco"
    "me to Rock-Paper-Scissors!')\\n    player1 = input('Player 1, choose rock, paper, o"
    "r scissors: ').lower()\\n    player2 = input('Player 2, choose rock, paper, or scis"
    "sors: ').lower()\\n    result = play_game(player1, player2)\\n    print(result)\\n\\i"
    "f __name__ == '__main__':\\n    main()\\n\"}}"
)
RUN = '{{"name": "run_cmd", "arguments": {"cmd": "python rps_game.py"}}}'


def test_each_player_s_prompt_gets_its_own_answer(tmp_path: Path) -> None:
    plan = plan_rule(
        ("Write and run the game", ["write_file rps_game.py", "run python rps_game.py"])
    )
    replies = [{"content": r} for r in (TWO_PLAYERS, RUN, RUN)]
    small_model_goal(tmp_path, RPS, plan, replies, LOCALAGENT_MAX_ROUNDS="3")
    runs = [r for r in records_of(tmp_path, "action_finished") if r["tool"] == "run_cmd"]
    assert [r["args"].get("stdin") for r in runs] == [None, "rock\npaper\n"]
    assert "Player 2 wins" in runs[1]["result"]
    # The first run's note offers the same answers: one for each player's prompt.
    assert runs[0]["result"].endswith('"stdin": "rock\\npaper\\n"}}'), runs[0]["result"]
    assert [r["by"] for r in records_of(tmp_path, "subtask_completed")] == ["write", "run"]


def test_a_run_given_input_that_a_crash_cut_short_is_not_run_again(
    tmp_path: Path,
) -> None:
    plan = plan_rule(
        ("Write and run the game", ["write_file rps_game.py", "run python rps_game.py"])
    )
    replies = [{"content": r} for r in (TWO_PLAYERS, RUN, RUN)]
    small_model_goal(tmp_path, RPS, plan, replies, LOCALAGENT_MAX_ROUNDS="3")
    history = tmp_path / ".agent_context" / "history.jsonl"
    lines = history.read_bytes().splitlines(keepends=True)
    fed = [i for i, line in enumerate(lines) if b'"said"' in line]
    history.write_bytes(b"".join(lines[: fed[0] + 1]))  # as a kill -9 right after it leaves it
    (tmp_path / ".agent_context" / "state.json").unlink()
    small_model_goal(tmp_path, RPS, plan, [], LOCALAGENT_MAX_ROUNDS="3")
    # A command is never run twice: the model is told the run given input was cut short.
    runs = [r for r in records_of(tmp_path, "action_finished") if r["tool"] == "run_cmd"]
    assert [r["args"].get("stdin") for r in runs] == [None]
    (cut,) = records_of(tmp_path, "action_interrupted")
    assert cut["args"] == {"cmd": "python rps_game.py", "stdin": "rock\npaper\n"}


# The 1.5B's greet.py on the CPU, verbatim: what the goal asks for.
GREETS = (
    '{"name": "write_file", "arguments": {"path": "greet.py", "content": "def greet(NAME):\\n    '
    "print(f'Hello, {NAME}!')\\n    return 0\\n\\nif __name__ == '__main__':\\n    import sys\\n"
    "    if len(sys.argv) > 1:\\n        greet(sys.argv[1])\\n    else:\\n        print('Usage: "
    "python greet.py NAME')\\n        sys.exit(2)\"}}"
)


@pytest.mark.parametrize(
    ("unmet", "then"),
    [([GREET], "complete"), ([], "complete"), (["run python greet.py with arguments"], "replan")],
)
def test_a_small_verifier_that_names_only_the_goal_does_not_send_the_work_back(
    tmp_path: Path, unmet: list[str], then: str
) -> None:
    """The checks showed the 1.5B's greet.py works (its run with a name, the
    verification's run without one exiting 2); the 1.5B verifier said NOT_VERIFIED, unmet:
    the goal's own text, and the replan had the program written again as the function
    alone. A doubt that names something in particular still sends the work back (on an
    H100, "run python greet.py with arguments" did, and the run then verified)."""
    plan = plan_rule((GREET, ["write_file greet.py with its code", "run python greet.py Ada"]))
    run = '{"name": "run_cmd", "arguments": {"cmd": "python greet.py Ada"}}'
    doubt = {"verdict": "NOT_VERIFIED", "unmet": unmet, "evidence": [], "next": "replan"}
    replies = [{"content": GREETS}, {"content": run}]
    small_model_goal(
        tmp_path,
        GREET,
        plan,
        replies,
        {"content": json.dumps(doubt)},
        LOCALAGENT_MAX_ROUNDS="3",
        LOCALAGENT_VERIFY="1",
    )
    # the verification's own runs: without arguments, and with a name (`verify.outputs`)
    checks = {c["cmd"]: c["returncode"] for c in records_of(tmp_path, "check_finished")}
    assert checks == {"python greet.py": 2, "python greet.py Ada": 0}
    verdict = records_of(tmp_path, "verdict")[0]
    assert (verdict["source"], verdict["then"]) == ("model", then)
    if then == "complete":
        assert verdict["verification"] == "partial"
        assert verdict["note"].startswith("PARTIAL: the checks show the goal's work")
        assert records_of(tmp_path, "goal_completed")[0]["verification"] == "partial"
        assert len(records_of(tmp_path, "plan")) == 1


# rps-16 on the H200, verbatim: the replan's tasks, its write (the apostrophe mended), its
# runs, and the 1.5B verifier's unmet item, the plan's own first task.
GAME_TASK = "Write the game logic in rps_game.py"
GAME_WRITE = (
    '```json\n{"name": "write_file", "arguments": {"path": "rps_game.py", "content": "import '
    "random\\n\\ndef play_game():\\n    choices = ['rock', 'paper', 'scissors']\\n    "
    "computer_choice = random.choice(choices)\\n    user_choice = input('Enter your choice "
    "(rock, paper, or scissors): ').lower()\\n\\n    if user_choice == computer_choice:\\n    "
    "    print(f'It's a tie! You chose {user_choice} and the computer chose "
    "{computer_choice}.')\n    elif (user_choice == 'rock' and computer_choice == 'scissors') "
    "or (user_choice == 'paper' and computer_choice == 'rock') or (user_choice == 'scissors' "
    "and computer_choice == 'paper'):\n        print(f'You win! You chose {user_choice} and "
    "the computer chose {computer_choice}.')\n    else:\n        print(f'You lose! You chose "
    "{user_choice} and the computer chose {computer_choice}.')\n\nif __name__ == "
    "'__main__':\\n    play_game()\"}}\n```"
)
GAME_RUNS = [
    '```json\n{"name": "run_cmd", "arguments": {"cmd": "python rps_game.py"}}\n```',
    '```json\n{"name": "run_cmd", "arguments": {"cmd": "python rps_game.py", "stdin": '
    '"rock\\n"}}\n```',
]


@pytest.mark.parametrize(
    ("unmet", "then"),
    [([GAME_TASK], "complete"), (["run python rps_game.py"], "complete"),
     (["The game never says who won"], "replan")],
)  # fmt: skip
def test_a_small_verifier_that_names_only_a_plan_step_does_not_send_the_work_back(
    tmp_path: Path, unmet: list[str], then: str
) -> None:
    """The game played ("You lose! You chose rock and the computer chose paper."); the
    1.5B verifier said NOT_VERIFIED, unmet: "Write the game logic in rps_game.py", the
    task its plan had just done, and the replans for it wrote the game over with a stub
    (rps-16, rps-2: the goal ended without a game that plays)."""
    plan = plan_rule(
        (GAME_TASK, ["write_file rps_game.py with the game logic"]),
        ("Run python rps_game.py to test the game logic", ["run python rps_game.py"]),
    )
    doubt = {"verdict": "NOT_VERIFIED", "unmet": unmet, "evidence": [48], "next": "replan"}
    replies = [{"content": GAME_WRITE}, *({"content": run} for run in GAME_RUNS)]
    small_model_goal(
        tmp_path, RPS, plan, replies, {"content": json.dumps(doubt)},
        LOCALAGENT_MAX_ROUNDS="4", LOCALAGENT_VERIFY="1",
    )  # fmt: skip
    ran = [r for r in records_of(tmp_path, "action_finished") if r["tool"] == "run_cmd"]
    assert "You chose rock and the computer chose" in ran[-1]["result"]
    verdict = records_of(tmp_path, "verdict")[0]
    assert (verdict["source"], verdict["then"]) == ("model", then)
    if then == "complete":
        assert verdict["verification"] == "partial"
        assert records_of(tmp_path, "goal_completed")[0]["verification"] == "partial"
        assert len(records_of(tmp_path, "plan")) == 1
        assert "play_game()" in (tmp_path / "rps_game.py").read_text()
    else:
        assert len(records_of(tmp_path, "plan")) == 2


# wordcount, the code of 8157965 (the CPU), verbatim: the program written in its write step,
# a sample, and its run.
SPLIT_IN_STEP = (
    '{{"name": "write_file", "arguments": {"path": "wordcount.py", "content": "#!/usr/bin'
    "/env python3\\nimport argparse\\nimport sys\\n\\ndef main(args):\\n    if args.lines"
    ":\\n        with open(args.file, 'r') as f:\\n            print(len(f.readlines())"
    ")\\n    else:\\n        with open(args.file, 'r') as f:\\n            print(len(f."
    "readlines()), len(f.split()), len(f.read()))\\n\\nif __name__ == '__main__':\\n   "
    " parser = argparse.ArgumentParser(description='Count lines, words, and characters i"
    "n a file.')\n    parser.add_argument('file', help='The file to count.')\n    pa"
    "rser.add_argument('--lines', action='store_true', help='Print only the number o"
    "f lines.')\n    args = parser.parse_args()\\n    main(args)\"}}"
)
SAMPLE_IN_STEP = (
    '{{"name": "write_file", "arguments": {"path": "test.txt", "content": "the quick brow'
    'n fox\\njumps over the lazy dog\\n"}}}}'
)
RUN_IN_STEP = '{{"name": "run_cmd", "arguments": {"cmd": "python wordcount.py test.txt"}}}}'


def test_a_run_that_used_an_open_file_as_its_text_says_where_to_take_its_text(
    tmp_path: Path,
) -> None:
    """Run within the write step, its `f.split()` raised, and the model swapped split and
    splitlines until the round limit: the hand-back that names the fix follows only a
    failed run step. The run's own result names it now."""
    replies = [{"content": c} for c in (SPLIT_IN_STEP, SAMPLE_IN_STEP, RUN_IN_STEP)]
    small_model_goal(tmp_path, WORDCOUNT, plan_rule((WORDCOUNT, [WORDCOUNT])), replies,
                     LOCALAGENT_MAX_ROUNDS="3")  # fmt: skip
    ran = [r["result"] for r in records_of(tmp_path, "action_finished") if r["tool"] == "run_cmd"]
    assert ran and ran[-1].endswith(
        "NOTE: in wordcount.py, an open file has no split: in its `with open(...) as f:` "
        "block, take its text with `text = f.read()`, then `text.split()`."
    ), ran


# wordcount, the code of f4c28aa (the CPU), verbatim: told to take the open file's text,
# it split the text twice. It wrote `len(text.split().split())` again in every write
# until the round limit, told only the error.
SPLIT_TWICE = (
    '{{"name": "write_file", "arguments": {"path": "wordcount.py", "content": "import arg'
    "parse\\nimport sys\\n\\ndef main(args):\\n    if args.lines:\\n        with open(args.fil"
    "e, 'r') as f:\\n            text = f.read()\\n            print(len(text.split()))\\n  "
    "  else:\\n        with open(args.file, 'r') as f:\\n            text = f.read()\\n     "
    "       print(len(text.split()), len(text.split().split()), len(text))\\n\\nif __name__"
    " == '__main__':\\n    parser = argparse.ArgumentParser(description='Count lines, word"
    "s, and characters in a file.')\n    parser.add_argument('file', type=str, help='The f"
    "ile to count.')\n    parser.add_argument('--lines', action='store_true', help='Print "
    "only the number of lines.')\n    args = parser.parse_args()\\n    main(args)\"}}"
)


def test_a_list_used_as_text_is_told_to_split_the_text_once(tmp_path: Path) -> None:
    plan = plan_rule(
        (WORDCOUNT, ["write_file wordcount.py with its code", "run python wordcount.py FILE"])
    )
    sample = {"name": "write_file", "arguments": {"path": "sample.txt", "content": "a b\nc\n"}}
    run = '{"name": "run_cmd", "arguments": {"cmd": "python wordcount.py sample.txt"}}'
    replies = [SPLIT_TWICE, json.dumps(sample), run, run]
    small_model_goal(tmp_path, WORDCOUNT, plan, [{"content": r} for r in replies],
                     LOCALAGENT_MAX_ROUNDS="4")  # fmt: skip
    said = (
        "a list has no split: `.split()`, `.splitlines()` and `.readlines()` give lists, so "
        "split the text once: `len(text.split())` counts its words"
    )
    ran = [r["result"] for r in records_of(tmp_path, "action_finished") if r["tool"] == "run_cmd"]
    assert ran and ran[0].endswith(f"NOTE: in wordcount.py, {said}."), ran
    (back,) = [p for p in records_of(tmp_path, "plan") if p.get("replace_from")]
    assert back["by"] == "handback"
    assert f"has no attribute 'split' ({said})" in back["tasks"][0]["subtasks"][0], back


def test_an_unchanged_write_of_a_file_whose_run_raised_does_not_end_its_step(
    tmp_path: Path,
) -> None:
    """The 1.5B's wordcount on the CPU (the code of 8a94ec8): its run raised
    AttributeError, and the write step after it ended with the same content, twice; the
    run raised again each time, and the goal failed. Now such a rewrite ends no step and
    says what its last run stopped on."""
    plan = plan_rule(
        (WORDCOUNT, ["write_file wordcount.py with its code", "run python wordcount.py FILE"])
    )
    sample = {"name": "write_file", "arguments": {"path": "sample.txt", "content": "a b\nc\n"}}
    run = '{"name": "run_cmd", "arguments": {"cmd": "python wordcount.py sample.txt"}}'
    replies = [SPLIT, json.dumps(sample), run, run, run, SPLIT]
    small_model_goal(tmp_path, WORDCOUNT, plan, [{"content": r} for r in replies],
                     LOCALAGENT_MAX_ROUNDS="6")  # fmt: skip
    writes = [r for r in records_of(tmp_path, "action_finished") if r["tool"] == "write_file"]
    last = writes[-1]["result"]
    assert last.startswith("'wordcount.py' already has this content"), last
    assert last.endswith(
        "NOTE: wordcount.py is unchanged, and its last run stopped on AttributeError: "
        "'_io.TextIOWrapper' object has no attribute 'split' (an open file has no split: in "
        "its `with open(...) as f:` block, take its text with `text = f.read()`, then "
        "`text.split()`): this step is done when wordcount.py is written changed so that it "
        "does not"
    ), last
    done = [r.get("by") for r in records_of(tmp_path, "subtask_completed")]
    assert done.count("write") == 2, done  # the first write and the sample's, not the rewrite


# wordcount-3 on the CPU (code of 12f6447), verbatim: its wordcount.py before, which
# counts sys.stdin, and the write it sent in the replan's step that the hand-back for
# that had made, "... again, changed so that it opens and reads the file it is given".
STDIN_BEFORE = (
    "import argparse\nimport sys\n\ndef main(args):\n    if args.lines:\n        print(len(sys."
    "stdin.readlines()))\n    else:\n        print(f'{len(sys.stdin.readlines())} {len(sys.std"
    "in.read().split())} {len(sys.stdin.read())}')\n\nif __name__ == '__main__':\n    parser ="
    " argparse.ArgumentParser(description='Count lines, words, and characters in a file.')\n "
    "   parser.add_argument('file', type=str, help='The file to count.')\n    parser.add_argu"
    "ment('--lines', action='store_true', help='Print only the number of lines.')\n    args ="
    " parser.parse_args()\n    main(args)"
)
STDIN_AGAIN = (
    '{{"name": "write_file", "arguments": {"path": "wordcount.py", "content": "import'
    " argparse\\nimport sys\\n\\ndef main(args):\\n    if args.lines:\\n        print(len("
    "sys.stdin.readlines()))\\n    else:\\n        print(f'{len(sys.stdin.readlines())}"
    " {len(sys.stdin.read().split())} {len(sys.stdin.read())}')\"}}}}"
)


def test_an_unchanged_write_that_still_opens_no_file_does_not_end_the_step_to_open_it(
    tmp_path: Path,
) -> None:
    """The same content written again ended that step twice, and the verification's runs
    found once more that its code never opens the file it is given."""
    (tmp_path / "wordcount.py").write_text(STDIN_BEFORE)
    steps = [
        "write_file wordcount.py with its code",
        "write_file wordcount.py again, changed so that it opens and reads the file it is "
        "given, keeping its --lines option",
        "run python wordcount.py sample.txt",
    ]
    read = '{"name": "read_file", "arguments": {"path": "wordcount.py"}}'  # the plan's read
    small_model_goal(
        tmp_path, WORDCOUNT, plan_rule((WORDCOUNT, steps)),
        [{"content": r} for r in (read, STDIN_AGAIN, STDIN_AGAIN)], LOCALAGENT_MAX_ROUNDS="3",
    )  # fmt: skip
    done = [r["reason"] for r in records_of(tmp_path, "subtask_completed")]
    assert done == [
        "wordcount.py was read, which is all the subtask asks",
        "wordcount.py is written, which is all the subtask asks",
    ], done
    last = records_of(tmp_path, "action_finished")[-1]["result"]
    assert last.startswith("'wordcount.py' already has this content"), last
    assert last.endswith(
        "NOTE: wordcount.py is unchanged, and its code still opens no file: this step is done "
        "when wordcount.py is written changed so that it does not"
    ), last
