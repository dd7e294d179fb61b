"""A run step that says why it runs ("to check if the code is correct") is still one run:
Qwen2.5-Coder-1.5B's wordcount plan on the CPU, verbatim through the real CLI on the
scripted fake server. Its `python wordcount.py wordcount.py` printed its counts, the step
went on, the model ran the next step's command until three strikes, and the replan began
again with a read."""

from __future__ import annotations

from pathlib import Path

from support import plan_rule, real_goal, records_of, small_model_goal

from localagent.loop.subtasks import ran_by

GOAL = real_goal("wordcount").text
STEPS = [
    "write_file wordcount.py with the following code",
    "run python wordcount.py wordcount.py to check if the code is correct",
    "run python wordcount.py wordcount.py to check if the program works correctly with the "
    "--lines option",
]
WRITE = (
    '```json\n{\n  "name": "write_file",\n  "arguments": {\n    "path": "wordcount.py",\n    "'
    'content": "import argparse\\n\\ndef main():\\n    parser = argparse.ArgumentParser(descr'
    "iption='Print the number of lines, words, and characters in a file.')\n    parser.add_ar"
    "gument('FILE', type=str, help='The file to count.')\n    parser.add_argument('--lines', "
    "action='store_true', help='Print only the number of lines.')\n    args = parser.parse_ar"
    "gs()\\n\\n    with open(args.FILE, 'r', encoding='utf-8') as file:\\n        lines = fil"
    "e.readlines()\\n        words = len(lines)\\n        characters = sum(len(line) for line "
    "in lines)\\n\\n    if args.lines:\\n        print(len(lines))\\n    else:\\n        print("
    "f'Lines: {len(lines)}, Words: {words}, Characters: {characters}')\\n\\nif __name__ == '__"
    "main__':\\n    main()\"\n  }\n}\n```"
)
# Its words counted right: a run whose counts are wrong for the file it was given goes
# back to a write (tests/test_counted_outputs.py).
COUNTED = WRITE.replace("words = len(lines)", "words = len(''.join(lines).split())")
WHOLE = (
    '```json\n{\n  "name": "run_cmd",\n  "arguments": {\n    "cmd": "python wordcount.py word'
    'count.py"\n  }\n}\n```'
)
LINES = (
    '```json\n{\n  "name": "run_cmd",\n  "arguments": {\n    "cmd": "python wordcount.py word'
    'count.py --lines"\n  }\n}\n```'
)


def test_a_run_step_that_says_why_ends_with_its_run(tmp_path: Path) -> None:
    replies = [{"content": r} for r in (COUNTED, WHOLE, LINES)]
    small_model_goal(tmp_path, GOAL, plan_rule((GOAL, STEPS)), replies, LOCALAGENT_MAX_ROUNDS="3")
    done = [(r["by"], r["reason"]) for r in records_of(tmp_path, "subtask_completed")]
    assert [by for by, _ in done] == ["write", "run", "run"], done
    assert done[1][1].startswith("`python wordcount.py wordcount.py` ran"), done
    assert done[2][1].startswith("`python wordcount.py wordcount.py --lines` ran"), done
    assert records_of(tmp_path, "action_blocked") == []


def test_the_run_of_a_step_that_names_an_option_has_it(tmp_path: Path) -> None:
    """The --lines step is not done by the run without --lines."""
    replies = [{"content": r} for r in (COUNTED, WHOLE, WHOLE)]
    small_model_goal(tmp_path, GOAL, plan_rule((GOAL, STEPS)), replies, LOCALAGENT_MAX_ROUNDS="3")
    done = [r["by"] for r in records_of(tmp_path, "subtask_completed")]
    assert done == ["write", "run"], done


def test_what_a_run_step_runs() -> None:
    assert ran_by(STEPS[1]) == "wordcount.py"
    assert ran_by(STEPS[2]) == "wordcount.py"
    assert ran_by("run python app.py to see whether it starts") == "app.py"
    assert ran_by("run python app.py and fix what fails") == ""
    assert ran_by("run python app.py if it exists") == ""
    assert ran_by("run python check/update.py") == "check/update.py"  # its file is no verb
    # The 1.5B's plan on the CPU (code of 1a86c32), verbatim: "expected" is no output.
    step = "run python wordcount.py wordcount.py to ensure it works as expected"
    assert ran_by(step) == "wordcount.py"
    assert ran_by("run python app.py to make sure that the app works correctly") == "app.py"
    assert ran_by("run python app.py to check that it prints the total") == ""
    assert ran_by("run python app.py and check the output is as expected") == ""
