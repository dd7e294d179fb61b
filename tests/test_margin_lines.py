"""A function's last lines written at the margin are written inside it (small profile):
Qwen2.5-Coder-1.5B's wordcount.py on the CPU, verbatim through the real CLI on the
scripted fake server (the code of f4c28aa)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support import plan_rule, real_goal, records_of, small_model_goal

from localagent.tools.mends import margin

WORDCOUNT = real_goal("wordcount").text
# Its last write: `def main():` parses the command line into `args`, and the code that
# uses it follows at the margin. Every run raised "NameError: name 'args' is not
# defined", and the goal failed on it.
MARGIN = (
    '{{"name": "write_file", "arguments": {"path": "wordcount.py", "content": "import arg'
    "parse\\nimport sys\\nimport re\\n\\ndef count_lines_words_chars(file_path):\\n    with op"
    "en(file_path, 'r', encoding='utf-8') as file:\\n        lines = file.readlines()\\n   "
    "     words = re.findall(r'\x08\\\\w+\x08', ''.join(lines))\\n        chars = len(''.join(line"
    "s))\\n        return len(lines), len(words), chars\\n\\ndef main():\\n    parser = argpa"
    "rse.ArgumentParser(description='Count lines, words, and characters in a file.')\\n   "
    " parser.add_argument('file_path', type=str, help='The file to count.')\\n    parser.a"
    "dd_argument('--lines', action='store_true', help='Print only the number of lines.')\\"
    "n    args = parser.parse_args()\\n\\nif args.lines:\\n    lines, _, _ = count_lines_wor"
    "ds_chars(args.file_path)\\n    print(lines)\\nelse:\\n    lines, words, chars = count_l"
    "ines_words_chars(args.file_path)\\n    print(f'{lines}: {words}: {chars}')\"}}}}"
)


def test_a_function_s_lines_at_the_margin_are_written_inside_it(tmp_path: Path) -> None:
    steps = ["write_file wordcount.py with its code"]
    small_model_goal(tmp_path, WORDCOUNT, plan_rule((WORDCOUNT, steps)),
                     [{"content": MARGIN}], LOCALAGENT_MAX_ROUNDS="1")  # fmt: skip
    result = records_of(tmp_path, "action_finished")[0]["result"]
    said = "the lines after main read `args`, which only main binds, but were written at the"
    assert said in result, result
    text = (tmp_path / "wordcount.py").read_text()
    body = text.split("def main():\n", 1)[1].splitlines()
    assert "    if args.lines:" in body and "        print(f'{lines}: {words}: {chars}')" in body
    (tmp_path / "sample.txt").write_text("one two\nthree\n")
    code = f"{text}\nimport sys\nsys.argv[1:] = ['sample.txt']\nmain()\n"
    ran = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert ran.returncode == 0 and "NameError" not in ran.stderr, ran.stderr
    assert ran.stdout.startswith("2: "), ran.stdout


@pytest.mark.parametrize(
    "content",
    [
        "def f(x):\n    y = x\n\nprint(f(3))\n",  # reads nothing of f's own
        "def f(x):\n    y = x\nz = y\ndef g():\n    return z\n",  # z is used by g
        "def f(x):\n    return x\nprint(y)\n",  # f does not bind y either
        "def f(x):\n    y = x\nprint(y, '''a\nb''')\n",  # a string across lines
        "y = 1\ndef f(x):\n    y = x\nprint(y)\n",  # the module binds y above
        "def f(x): y = x\nprint(y)\n",  # a body on the def's line
        "import os\ndef f(x):\n    y = x\nprint(y)\n",  # as it should be: written inside
    ],
)
def test_which_lines_at_the_margin_are_put_inside_the_function(content: str) -> None:
    found = margin.indented("f.py", content)
    if content.startswith("import os"):
        assert found is not None and "\n    print(y)\n" in found[0], found
    else:
        assert found is None, found


def test_a_return_at_the_margin_goes_back_into_its_function() -> None:
    found = margin.indented("f.py", "def f(x):\n    if x:\n        return 1\nreturn 0\n")
    assert found is not None and found[0].endswith("        return 1\n    return 0\n"), found
    assert margin.indented_note(found[1], found[2]).startswith("; the lines after f return")
