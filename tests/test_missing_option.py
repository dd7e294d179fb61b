"""A verdict whose only finding is that argparse stopped the goal's option goes back to a
write that adds it, then the check's run, without the model. Qwen2.5-Coder-1.5B's
wordcount on the CPU (code of a2d3176), verbatim through the real CLI on the scripted fake
server: wordcount.py counted right but had no --lines; told only what was unmet, the model
planned its three steps anew, wrote it again without --lines, and the goal failed."""

from __future__ import annotations

from pathlib import Path

import support
from support import VERIFIED, handed_back, plan_rule, real_goal, records_of, small_model_goal

GOAL = real_goal("wordcount").text
STEPS = [
    "write_file wordcount.py with its code",
    "write_file sample.txt with a few lines of sample text",
    "run python wordcount.py sample.txt",
]
# Rounds 1 to 3 of wordcount-2, verbatim.
NO_OPTION = (
    '{{"name": "write_file", "arguments": {"path": "wordcount.py", "content": "import'
    " argparse\\n\\ndef main(args):\\n    with open(args.file, 'r', encoding='utf-8') as"
    " file:\\n        lines = file.readlines()\\n        words = len(' '.join(lines).sp"
    "lit())\\n        characters = sum(len(line) for line in lines)\\n        print(f'L"
    "ines: {len(lines)}\\nWords: {words}\\nCharacters: {characters}')\\n\\nif __name__ =="
    " '__main__':\\n    parser = argparse.ArgumentParser(description='Count lines, wor"
    "ds, and characters in a file.')\n    parser.add_argument('file', type=str, help='"
    "The file to count.')\n    args = parser.parse_args()\\n    main(args)\"}}"
)
SAMPLE_WRITE = (
    '{{"name": "write_file", "arguments": {"path": "sample.txt", "content": "Hello, w'
    'orld!\\nThis is a sample text file."}}}}'
)
RUN = '{{"name": "run_cmd", "arguments": {"cmd": "python wordcount.py sample.txt"}}}}'


def test_a_verdict_on_an_option_argparse_lacks_goes_back_to_a_write_that_adds_it(
    tmp_path: Path,
) -> None:
    unmet, back = support.verdict_and_back(tmp_path, GOAL, STEPS, [NO_OPTION, SAMPLE_WRITE, RUN])
    assert unmet == [
        "goal check `python wordcount.py --lines sample.txt` failed: exit code 2: "
        "wordcount.py: error: unrecognized arguments: --lines"
    ], unmet
    assert back.get("by") == "handback", back
    write = (
        "write_file wordcount.py again, changed so that its argparse takes --lines "
        "(`parser.add_argument('--lines', action='store_true')`): with --lines it prints "
        "only the number of lines"
    )
    assert back["tasks"] == [
        {"description": write, "subtasks": [write, "run python wordcount.py --lines sample.txt"]}
    ]


# Rounds 11 to 13 of a later wordcount-2 (the code of ab0b434), verbatim: after a replan,
# wordcount.py written again without --lines, and its run with --lines.
FILE_TYPE = (
    '```json\n{\n  "name": "write_file",\n  "arguments": {\n    "path": "wordcount.py",\n '
    '   "content": "#!/usr/bin/env python3\\nimport argparse\\nimport sys\\n\\ndef main(a'
    "rgs):\\n    lines = args.file.readlines()\\n    words = sum(len(line.split()) for "
    "line in lines)\\n    chars = sum(len(line) for line in lines)\\n    print(f'Lines:"
    " {len(lines)}, Words: {words}, Characters: {chars}')\\n\\nif __name__ == '__main__"
    "':\\n    parser = argparse.ArgumentParser(description='Count lines, words, and ch"
    "aracters in a file.')\n    parser.add_argument('file', type=argparse.FileType('r'"
    "), help='The file to count.')\n    args = parser.parse_args()\\n    main(args)\"\n  "
    "}\n}\n```"
)
LONGER_SAMPLE = (
    '```json\n{\n  "name": "write_file",\n  "arguments": {\n    "path": "sample.txt",\n   '
    ' "content": "This is a sample text file.\\nIt contains multiple lines of text.\\nE'
    'ach line has a different length."\n  }\n}\n```'
)
RUN_LINES = (
    '```json\n{\n  "name": "run_cmd",\n  "arguments": {\n    "cmd": "python wordcount.py '
    'sample.txt --lines"\n  }\n}\n```'
)


def test_a_run_argparse_stops_on_an_unknown_option_is_no_success(tmp_path: Path) -> None:
    """`python wordcount.py sample.txt --lines` exited 2 with "unrecognized arguments:
    --lines"; the run subtask counted it "ran and succeeded", it covered the --lines form,
    so the verification did not run that form, and the small verifier's VERIFIED stood:
    "completed (verified)" with no --lines. The run fails: no subtask ends on it, the
    same run sent again fails the subtask, and the hand-back is the write that adds the
    option, then the run."""
    steps = [
        "write_file wordcount.py with its code",
        "write_file sample.txt with its content",
        "run python wordcount.py sample.txt --lines",
    ]
    rounds = [{"content": r} for r in (FILE_TYPE, LONGER_SAMPLE, RUN_LINES, RUN_LINES)]
    ran, _ = small_model_goal(
        tmp_path, GOAL, plan_rule((GOAL, steps)), rounds, VERIFIED,
        LOCALAGENT_MAX_ROUNDS="4", LOCALAGENT_VERIFY="1",
    )  # fmt: skip
    assert ran.returncode != 0, ran.stdout
    (run,) = [r for r in records_of(tmp_path, "action_finished") if r["tool"] == "run_cmd"]
    assert run["result"].startswith(
        "exit code 2\nusage: wordcount.py [-h] file\nwordcount.py: error: unrecognized "
        "arguments: --lines"
    ), run["result"]
    assert "SUBTASK COMPLETE" not in run["result"], run["result"]
    assert [c.get("by") for c in records_of(tmp_path, "subtask_completed")] == ["write", "write"]
    assert not records_of(tmp_path, "goal_completed")
    (failed,) = records_of(tmp_path, "subtask_failed")
    assert failed["reason"] == "wordcount.py has no --lines option: argparse stopped the run on it"
    assert handed_back(tmp_path) == [
        "write_file wordcount.py again, changed so that its argparse takes --lines "
        "(`parser.add_argument('--lines', action='store_true')`): with --lines it prints "
        "only the number of lines",
        "run python wordcount.py sample.txt --lines",
    ]
