"""A write of a program that leaves out the `__main__` block the file had keeps that block
(small profile): Qwen2.5-Coder-1.5B's wordcount.py on the CPU, verbatim through the real
CLI on the scripted fake server (the code of 819bfac)."""

from __future__ import annotations

import json
from pathlib import Path

from support import plan_rule, real_goal, records_of, small_model_goal

WORDCOUNT = real_goal("wordcount").text
OPENS_FILE = (
    '{{"name": "write_file", "arguments": {"path": "wordcount.py", "content": "import argpa'
    "rse\\nimport sys\\n\\ndef main(args):\\n    if args.lines:\\n        with open(args.fi"
    "le, 'r') as f:\\n            print(len(f.readlines()))\\n    else:\\n        with op"
    "en(args.file, 'r') as f:\\n            print(len(f.readlines()), len(f.split()), len"
    "(f.encode()))\\n\\nif __name__ == '__main__':\\n    parser = argparse.ArgumentParser"
    "(description='Count lines, words, and characters in a file.')\n    parser.add_argume"
    "nt('file', help='The file to count.')\n    parser.add_argument('--lines', action"
    "='store_true', help='Print only the number of lines.')\n    args = parser.parse_ar"
    'gs()\\n    main(args)"}}'
)
WITHOUT_BLOCK = (
    '{{"name": "write_file", "arguments": {"path": "wordcount.py", "content": "import argpa'
    "rse\\nimport sys\\n\\ndef main(args):\\n    if args.lines:\\n        with open(args.fi"
    "le, 'r') as f:\\n            text = f.read()\\n            print(len(text.split()))\\n"
    "    else:\\n        with open(args.file, 'r') as f:\\n            text = f.read()\\n"
    "            print(len(text.split()), len(text.split().split()), len(text)}}}}"
)


def test_a_write_without_the_main_block_the_file_had_keeps_it(tmp_path: Path) -> None:
    """Its write that fixed the line that raised left out the block that parsed the
    command line and called main: "no longer calls its code when run", and the run
    printed nothing until the model was blocked. Now the block stays, and the run runs
    main (into the model's next bug, `text.split().split()`)."""
    steps = ["write_file wordcount.py with its code", "run python wordcount.py wordcount.py"]
    run = {"name": "run_cmd", "arguments": {"cmd": "python wordcount.py wordcount.py"}}
    replies = [{"content": OPENS_FILE}, {"content": WITHOUT_BLOCK}, {"content": json.dumps(run)}]
    small_model_goal(tmp_path, WORDCOUNT, plan_rule((WORDCOUNT, steps)), replies,
                     LOCALAGENT_MAX_ROUNDS="3")  # fmt: skip
    writes = [r for r in records_of(tmp_path, "action_finished") if r["tool"] == "write_file"]
    assert len(writes) == 2, writes
    said = "it left out the `if __name__ == '__main__':` block the file had"
    assert said in writes[1]["result"], writes[1]["result"]
    assert "no longer calls its code" not in writes[1]["result"]
    text = (tmp_path / "wordcount.py").read_text()
    assert "text = f.read()" in text and text.rstrip().endswith("    main(args)"), text
    ran = [r for r in records_of(tmp_path, "action_finished") if r["tool"] == "run_cmd"]
    assert "AttributeError: 'list' object has no attribute 'split'" in ran[-1]["result"], ran
