"""A plan made without the model (a hand-back) does not spend the model's replans.

Qwen2.5-Coder-1.5B's greet.py on the H200 (greet-2), its round replies replayed verbatim
through the real CLI on the scripted fake server: its run without arguments raised
IndexError (back to the write), the rewrite called nothing (back to the write), the next
raised NameError; both replans were spent by then, and that failure, at round 10 of 24,
ended the goal."""

from __future__ import annotations

from pathlib import Path

from support import plan_rule, records_of, small_model_goal

GREET = (
    "Write greet.py: python greet.py NAME prints Hello, NAME! and exits 0; run without "
    "arguments it prints a usage message and exits with status 2"
)
STEPS = [
    "write_file greet.py with its code",
    "run python greet.py",
    "run python greet.py with arguments",
]
REPLIES = [
    (
        '{{"name": "write_file", "arguments": {"path": "greet.py", "content": "import sys\\n\\n'
        "def greet(name):\\n    print(f'Hello, {name}!')\\n    sys.exit(0)\\n\\nif __name__ == "
        "'__main__':\\n    name = sys.argv[1]\\n    greet(name)\"}}}"
    ),
    '{{"name": "run_cmd", "arguments": {"cmd": "python greet.py"}}}}',
    '{{"name": "run_cmd", "arguments": {"cmd": "python greet.py"}}}}',
    (
        '{{"name": "write_file", "arguments": {"path": "greet.py", "content": "def greet(NAME):'
        "\\n    print(f'Hello, {NAME}!')\\n    return 0\"}}}"
    ),
    '{{"name": "run_cmd", "arguments": {"cmd": "python greet.py"}}}',
    (
        '{{"name": "write_file", "arguments": {"path": "greet.py", "content": "def greet(NAME):'
        "\\n    print(f'Hello, {NAME}!')\\nif __name__ == '__main__':\\n    greet(NAME)\"}}}"
        "}"
    ),
    '{{"name": "run_cmd", "arguments": {"cmd": "python greet.py"}}}}',
    '{{"name": "run_cmd", "arguments": {"cmd": "python greet.py"}}}}',
]


def test_hand_backs_leave_the_model_its_replans(tmp_path: Path) -> None:
    # The third write (`greet(NAME)`, NAME bound nowhere) no longer ends its subtask, so
    # its runs come inside it: the model's last run, sent three more times, is blocked
    # until the subtask fails.
    replies = [*REPLIES, *[REPLIES[-1]] * 3]
    small_model_goal(
        tmp_path, GREET, plan_rule((GREET, STEPS)), [{"content": r} for r in replies],
        LOCALAGENT_MAX_ROUNDS=str(len(replies) + 1),
    )  # fmt: skip
    failed = records_of(tmp_path, "subtask_failed")
    assert [f["replan"] for f in failed] == [True, True, True]
    assert "NameError: name 'NAME' is not defined" in failed[2]["reason"]
    plans = [p for p in records_of(tmp_path, "plan") if p.get("replace_from")]
    # Two hand-backs; the third failure names nothing a hand-back answers, and the model's
    # replans are left for it.
    assert [p.get("by") for p in plans] == ["handback", "handback", None]


WORDCOUNT = (
    "Write wordcount.py, a command-line program using argparse: python wordcount.py FILE "
    "prints the number of lines, words and characters in FILE; with --lines it prints "
    "only the number of lines"
)
# Qwen2.5-Coder-1.5B's wordcount on the CPU (the code of 4993148), verbatim: a program that
# calls nothing, then one that counts sys.stdin, then one that counts spaces as words.
WORDCOUNT_REPLIES = [
    (
        '{{"name": "write_file", "arguments": {"path": "wordcount.py", "content": "im'
        "port argparse\\n\\ndef main(args):\\n    with open(args.file, 'r') as f:\\n     "
        "   lines = f.readlines()\\n        words = sum(len(line.split()) for line in "
        "lines)\\n        chars = sum(len(line) for line in lines)\\n        print(f'Li"
        "nes: {len(lines)}\\nWords: {words}\\nCharacters: {chars}')\"}}"
    ),
    (
        '{{"name": "write_file", "arguments": {"path": "sample.txt", "content": "Hell'
        'o, world!\\nThis is a sample text file."}}}}'
    ),
    ('{{"name": "run_cmd", "arguments": {"cmd": "python wordcount.py sample.txt"}}}}'),
    (
        '{{"name": "write_file", "arguments": {"path": "wordcount.py", "content": "im'
        "port argparse\\nimport sys\\n\\ndef main(args):\\n    if args.lines:\\n        pr"
        "int(len(sys.stdin.readlines()))\\n    else:\\n        print(len(sys.stdin.read"
        "lines()), len(sys.stdin.read().split()), len(sys.stdin.read()))\\n\\nif __name"
        "__ == '__main__':\\n    parser = argparse.ArgumentParser(description='Count l"
        "ines, words, and characters in a file.')\n    parser.add_argument('file', typ"
        "e=str, help='The file to count.')\n    parser.add_argument('--lines', action="
        "'store_true', help='Print only the number of lines.')\n    args = parser.pars"
        'e_args()\\n    main(args)"}}'
    ),
    ('{{"name": "run_cmd", "arguments": {"cmd": "python wordcount.py sample.txt"}}}}'),
    (
        '{{"name": "write_file", "arguments": {"path": "wordcount.py", "content": "im'
        "port argparse\\nimport sys\\n\\ndef main(args):\\n    if args.lines:\\n        wi"
        "th open(args.file, 'r') as f:\\n            print(len(f.readlines()))\\n    el"
        "se:\\n        with open(args.file, 'r') as f:\\n            print(f.read().cou"
        "nt('\\n') + 1)\\n            print(f.read().count(' '))\\n            print(len"
        "(f.read()))\\n\\nif __name__ == '__main__':\\n    parser = argparse.ArgumentPar"
        "ser(description='Count lines, words, and characters in a file.')\n    parser."
        "add_argument('file', type=str, help='The file to count.')\n    parser.add_arg"
        "ument('--lines', action='store_true', help='Print only the number of lines.'"
        ')\n    args = parser.parse_args()\\n    main(args)"}}'
    ),
    (
        '{{"name": "run_cmd", "arguments": {"cmd": "python wordcount.py sample.txt"}}'
        '}}\nMark_subtask_complete(success=True, reason="The program executed successf'
        'ully and completed as requested")'
    ),
]


def test_a_third_failure_the_evidence_names_is_still_handed_back(tmp_path: Path) -> None:
    """Two hand-backs (the program called nothing, then never opened its file) were the
    most, so the third failure, `2 6 41` for 8 words, went to the model's replan, which
    wrote the same count again until the round limit. Hand-backs are capped at twice the
    replans: the third is the write that counts the words."""
    steps = [
        "write_file wordcount.py with its code",
        "write_file sample.txt with a few lines of sample text",
        "run python wordcount.py sample.txt",
    ]
    small_model_goal(
        tmp_path, WORDCOUNT, plan_rule((WORDCOUNT, steps)),
        [{"content": r} for r in WORDCOUNT_REPLIES], LOCALAGENT_MAX_ROUNDS="8",
    )  # fmt: skip
    failed = records_of(tmp_path, "subtask_failed")
    assert "no number right for the words" in failed[-1]["reason"], failed[-1]["reason"]
    plans = [p for p in records_of(tmp_path, "plan") if p.get("replace_from")]
    assert [p.get("by") for p in plans] == ["handback"] * 3
    assert not [c for c in records_of(tmp_path, "llm_call") if c["purpose"] == "replan"]
    # No line assigns the words (`print(text.count(' '))`): the step is the write, and it
    # says how Python counts them.
    assert plans[-1]["tasks"][0]["subtasks"][0].startswith(
        "write_file wordcount.py again, changed so that it counts the words right (with "
        "`text = f.read()`: the words are `len(text.split())`): the file it was given has "
    ), plans[-1]
