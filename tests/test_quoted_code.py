"""Code written in quotes is written without them. Qwen2.5-Coder-1.5B's hello on the CPU,
verbatim through the real CLI on the scripted fake server: its plan said "write_file
hello_world.py with the following content: 'print("Hello, world!")'", it wrote the quotes
too, and the script ran and printed nothing; ten rounds for hello."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support import plan_rule, records_of, small_model_goal

from localagent.tools.pywrite import unquoted

GOAL = "Write a hello world script"
STEP = "write_file hello_world.py with the following content: 'print(\"Hello, world!\")'"
WRITE = (
    '{{"name": "write_file", "arguments": {"path": "hello_world.py", "content": "\'print(\\"He'
    'llo, world!\\")\'"}}}'
)
RUN = '{{"name": "run_cmd", "arguments": {"cmd": "python hello_world.py"}}}'


def test_a_program_written_in_quotes_is_written_as_the_program(tmp_path: Path) -> None:
    plan = plan_rule((GOAL, [STEP, "run python hello_world.py"]))
    ran, _ = small_model_goal(
        tmp_path, GOAL, plan, [{"content": r} for r in (WRITE, RUN)], LOCALAGENT_MAX_ROUNDS="2"
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    (write,) = [r for r in records_of(tmp_path, "action_finished") if r["tool"] == "write_file"]
    assert "; its content was code in quotes, so it was written without them" in write["result"]
    printed = subprocess.run(
        [sys.executable, "hello_world.py"], cwd=tmp_path, capture_output=True, text=True
    )
    assert printed.stdout == "Hello, world!\n"


@pytest.mark.parametrize(
    ("content", "code"),
    [
        ("'print(\"Hello, world!\")'", 'print("Hello, world!")\n'),
        ('"""Areas of shapes."""', None),  # a docstring, no code
        ("'hello'", None),
        ("print('hi')", None),  # code already
        ("'def f(:'", None),  # not code inside
    ],
)
def test_what_counts_as_code_in_quotes(content: str, code: str | None) -> None:
    assert unquoted(content, "a.py") == code
    assert unquoted(content, "a.txt") is None
