"""A Python file written indented as a whole is written at the margin. Qwen2.5-Coder-1.5B's
wordcount.py on the CPU, verbatim through the real CLI on the scripted fake server: its
content in three quotes, every line four spaces in, so the file stopped at "unexpected
indent"; told so, it sent the same write again."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support import plan_rule, records_of, small_model_goal

from localagent.tools import mends, pywrite
from localagent.tools.mends.indent import dedented

GOAL = (
    "Write wordcount.py, a command-line program using argparse: python wordcount.py FILE "
    "prints the number of lines, words and characters in FILE; with --lines it prints "
    "only the number of lines"
)
WRITE = (
    '```json\n{\n  "name": "write_file",\n  "arguments": {\n    "path": "wordcount.py",\n'
    '    "content": """\n    #!/usr/bin/env python\n    import argparse\n    import sys\n\n'
    "    def main():\n        parser = argparse.ArgumentParser(description='Count lines, "
    "words, and characters in a file')\n        parser.add_argument('file', type=str, "
    "help='The file to count')\n        args = parser.parse_args()\n\n        with open("
    "args.file, 'r', encoding='utf-8') as file:\n            lines = file.readlines()\n"
    "            words = file.read().split()\n            characters = len(file.read())\n"
    '\n        print(f"Lines: {len(lines)}")\n        print(f"Words: {len(words)}")\n'
    "        print(f\"Characters: {characters}\")\n\n    if __name__ == '__main__':\n"
    '        main()\n    """\n  }\n}\n```'
)


def test_a_file_indented_as_a_whole_is_written_at_the_margin(tmp_path: Path) -> None:
    plan = plan_rule((GOAL, ["write_file wordcount.py with its code"]))
    ran, _ = small_model_goal(tmp_path, GOAL, plan, [{"content": WRITE}], LOCALAGENT_MAX_ROUNDS="1")
    assert "Traceback" not in ran.stderr, ran.stderr
    (write,) = [r for r in records_of(tmp_path, "action_finished") if r["tool"] == "write_file"]
    assert (
        "every line was indented 4 spaces, so it was written without that indent"
        in (write["result"])
    )
    assert "syntax error" not in write["result"]
    source = (tmp_path / "wordcount.py").read_text(encoding="utf-8")
    assert source.startswith("#!/usr/bin/env python\nimport argparse\n")
    (tmp_path / "sample.txt").write_text("one two\nthree\n", encoding="utf-8")
    counted = subprocess.run(
        [sys.executable, "wordcount.py", "sample.txt"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert counted.returncode == 0, counted.stderr
    # and its second read of the file mended too (`mends.reads`)
    assert counted.stdout == "Lines: 2\nWords: 3\nCharacters: 14\n"


@pytest.mark.parametrize(
    ("content", "name", "written"),
    [
        ("\n    import os\n\n    print(os.sep)\n    ", "a.py", "import os\n\nprint(os.sep)\n"),
        ("    x = 1\n", "a.pyw", "x = 1\n"),
        ("    x = 1\n", "a.txt", None),  # not Python
        ("import os\n", "a.py", None),  # parses as it is
        ("    x = 1\n  y = 2\n", "a.py", None),  # no indent every line shares that mends it
        ("    def f(:\n", "a.py", None),  # does not parse at the margin either
    ],
)
def test_what_is_written_at_the_margin(content: str, name: str, written: str | None) -> None:
    assert dedented(content, name) == written


GREET = (
    "Write greet.py: python greet.py NAME prints Hello, NAME! and exits 0; run without "
    "arguments it prints a usage message and exits with status 2"
)
# Round 1 of a greet run on the CPU (code of 0c8d102), verbatim: `sys.exit(2)` indented
# under a top-level `print`. Told "unexpected indent", the 1.5B changed the 2 to a 0, ran
# the file, and wrote it back as it was until the round limit.
GREET_WRITE = (
    '{{"name": "write_file", "arguments": {"path": "greet.py", "content": "import sys\\n\\n'
    "if len(sys.argv) > 1:\\n    print(f'Hello, {sys.argv[1]}!')\\n    sys.exit(0)\\n\\n"
    "print('Usage: python greet.py NAME')\\n    sys.exit(2)\"}}}"
)


def test_a_line_indented_under_a_statement_is_aligned_with_it(tmp_path: Path) -> None:
    plan = plan_rule((GREET, ["write_file greet.py with its code"]))
    rounds = [{"content": GREET_WRITE}]
    ran, _ = small_model_goal(tmp_path, GREET, plan, rounds, LOCALAGENT_MAX_ROUNDS="1")
    assert "Traceback" not in ran.stderr, ran.stderr
    (write,) = [r for r in records_of(tmp_path, "action_finished") if r["tool"] == "write_file"]
    assert "syntax error" not in write["result"], write["result"]
    assert (
        "; `    sys.exit(2)` did not compile, so it was written as `sys.exit(2)`"
        in (write["result"])
    ), write["result"]
    path = tmp_path / "greet.py"
    bare = subprocess.run([sys.executable, str(path)], capture_output=True, text=True)
    assert (bare.returncode, bare.stdout) == (2, "Usage: python greet.py NAME\n")
    named = subprocess.run([sys.executable, str(path), "Ada"], capture_output=True, text=True)
    assert (named.returncode, named.stdout) == (0, "Hello, Ada!\n")


@pytest.mark.parametrize(
    ("content", "fixed"),
    [
        ("x = 1\n    y = x\n", "x = 1\ny = x\n"),
        # Inside a function: aligned with the statement above it, still in the function.
        ("def f():\n    x = 1\n        return x\n", "def f():\n    x = 1\n    return x\n"),
        # A comment and a blank line between them do not count.
        ("x = 1\n# set\n\n    y = x\n", "x = 1\n# set\n\ny = x\n"),
        # Two lines written so: each is aligned in turn.
        ("x = 1\n    y = x\n    z = y\n", "x = 1\ny = x\nz = y\n"),
        # The same line twice: the lines before it tell them apart.
        (
            "if a:\n    b()\n    go(0)\nc()\n    go(0)\n",
            "if a:\n    b()\n    go(0)\nc()\ngo(0)\n",
        ),
        # A line that only an opener above it would make right: aligned, it still fails.
        ("x = (1,\n  2)\n      y = x\n", None),
    ],
)
def test_which_lines_indented_under_a_statement_are_mended(content: str, fixed: str | None) -> None:
    made = pywrite.mended(content, "m.py")
    assert (made[-1][2] if made else None) == fixed
    # Each mend is told as the one line it changed.
    notes = [mends.mend_note(line, new) for line, new, _ in made]
    assert all(n.startswith("; `    ") and "\n" not in n for n in notes), notes
