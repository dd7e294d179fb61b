"""A verdict whose only finding is that argparse stopped the goal's option goes back to a
write that adds it, then the check's run, without the model. Qwen2.5-Coder-1.5B's
wordcount on the CPU (code of a2d3176), verbatim through the real CLI on the scripted fake
server: wordcount.py counted right but had no --lines; told only what was unmet, the model
planned its three steps anew, wrote it again without --lines, and the goal failed."""

from __future__ import annotations

from pathlib import Path

from support import real_goal, verdict_and_back

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
    unmet, back = verdict_and_back(tmp_path, GOAL, STEPS, [NO_OPTION, SAMPLE_WRITE, RUN])
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
