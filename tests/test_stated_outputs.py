"""What a goal says its script prints, checked against the runs. Qwen2.5-Coder-1.5B's
greet-5 on the H200, verbatim through the real CLI on the scripted fake server: told to end
with `raise SystemExit(2)` after its usage message, it put that line in place of the
message, in its function `greet`; `python greet.py` and `python greet.py World` then exited
2 and printed nothing, both runs counted, and the goal ended "completed (verified)"
(three runs of six so)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import VERIFIED, plan_rule, real_goal, records_of, small_model_goal

from localagent.verify.outputs import off_output, stated_output

GREET = real_goal("greet").text
# greet-5's nine rounds, verbatim.
ROUNDS = [
    (
        '```json\n{\n  "name": "write_file",\n  "arguments": {\n    "path": "greet.p'
        'y",\n    "content": "def greet(NAME):\\n    print(f\'Hello, {NAME}!\')\\n    retur'
        "n 0\\n\\nif __name__ == '__main__':\\n    import sys\\n    NAME = sys.argv[1] if len"
        "(sys.argv) > 1 else 'World'\\n    greet(NAME)\"\n  }\n}\n```"
    ),
    (
        '```json\n{\n  "name": "run_cmd",\n  "arguments": {\n    "cmd": "python gree'
        't.py"\n  }\n}\n```'
    ),
    ('```json\n{\n  "name": "read_file",\n  "arguments": {\n    "path": "greet.py"\n  }\n}\n```'),
    (
        '```json\n{\n  "name": "replace_in_file",\n  "arguments": {\n    "path": "gr'
        'eet.py",\n    "old": "def greet(NAME):",\n    "new": "def greet(NAME):\\n   '
        " print('Usage: python greet.py NAME')\\n    return 2\"\n  }\n}\n```"
    ),
    (
        '```json\n{\n  "name": "run_cmd",\n  "arguments": {\n    "cmd": "python gree'
        't.py"\n  }\n}\n```'
    ),
    ('```json\n{\n  "name": "read_file",\n  "arguments": {\n    "path": "greet.py"\n  }\n}\n```'),
    (
        '```json\n{\n  "name": "replace_in_file",\n  "arguments": {\n    "path": "gr'
        'eet.py",\n    "old": "print(\'Usage: python greet.py NAME\')",\n    "new": "ra'
        'ise SystemExit(2)"\n  }\n}\n```'
    ),
    (
        '```json\n{\n  "name": "run_cmd",\n  "arguments": {\n    "cmd": "python gree'
        't.py"\n  }\n}\n```'
    ),
    (
        '```json\n{\n  "name": "run_cmd",\n  "arguments": {\n    "cmd": "python gree'
        't.py World"\n  }\n}\n```'
    ),
]


def test_a_run_that_prints_not_what_the_goal_states_ends_nothing(tmp_path: Path) -> None:
    steps = ["write_file greet.py with its code", "run python greet.py", "run python greet.py NAME"]
    small_model_goal(
        tmp_path, GREET, plan_rule((GREET, steps)), [{"content": r} for r in ROUNDS], VERIFIED,
        LOCALAGENT_MAX_ROUNDS=str(len(ROUNDS)), LOCALAGENT_VERIFY="1",
    )  # fmt: skip
    failed = [f["reason"] for f in records_of(tmp_path, "subtask_failed")]
    # Its last edit is made as the addition the step asked for (`loop/stepedit`), so the
    # usage message stays; in its function greet, it is what `python greet.py World` prints.
    edits = [r for r in records_of(tmp_path, "action_finished") if r["tool"] == "replace_in_file"]
    assert "(made as an addition: the step says to add `raise SystemExit(2)`" in edits[-1]["result"]
    assert failed[-1] == (
        "the goal says `python greet.py NAME` prints Hello, NAME! and exits 0; `python greet.py "
        "World` printed `Usage: python greet.py NAME` (exit code 2), not `Hello, World!`"
    ), failed
    done = [d["reason"] for d in records_of(tmp_path, "subtask_completed")]
    assert all("exit code 2: Usage: " in d for d in done if "exit code 2" in d), done
    assert [g["verification"] for g in records_of(tmp_path, "goal_completed")] != ["verified"]


GOAL_PRINTS = stated_output(GREET)


@pytest.mark.parametrize(
    ("cmd", "code", "output", "whole", "wrong"),
    [
        ("python greet.py Ada", 0, "Hello, Ada!\n", True, ""),
        ("python greet.py NAME", 0, "Hello, NAME!\n", True, ""),
        (
            "python greet.py World",
            2,
            "",
            True,
            "printed nothing (exit code 2), not `Hello, World!`",
        ),
        ("python greet.py Ada", 0, "Hello, World!\n", True, "printed `Hello, World!`"),
        ("python greet.py Ada", 2, "Hello, Ada!\n", True, "`python greet.py Ada` exited 2"),
        ("python greet.py Ada", 0, "Bye", False, ""),  # a last line alone: its text unknown
        ("python greet.py", 2, "Usage: python greet.py NAME", True, ""),
        (
            "python greet.py",
            2,
            "",
            True,
            "prints a usage message; `python greet.py` printed nothing",
        ),
        ("python greet.py --help", 0, "usage", True, ""),  # another form
        ("python other.py Ada", 1, "", True, ""),
    ],
)
def test_what_a_run_must_print(cmd: str, code: int, output: str, whole: bool, wrong: str) -> None:
    said = off_output(GREET, cmd, code, output, whole)
    assert wrong in said if wrong else said == "", said


def test_which_goals_say_what_their_script_prints() -> None:
    assert GOAL_PRINTS is not None
    assert (GOAL_PRINTS.script, GOAL_PRINTS.names) == ("greet.py", ("NAME",))
    assert (GOAL_PRINTS.template, GOAL_PRINTS.status) == ("Hello, NAME!", 0)
    assert stated_output(real_goal("wordcount").text) is None  # it says, not shows, what
    assert stated_output("Write hello.py that prints Hello") is None  # no placeholder


# greet-1 on the CPU with this code, verbatim: its greet.py does what the goal asks, the
# plan ran it twice without arguments, and the verification's run with a name printed
# "Hello, Ada!"; the goal ended "completed (unverified)": the form with a name was
# "not run".
WORKS = (
    '{{"name": "write_file", "arguments": {"path": "greet.py", "content": "import sys\\n\\n'
    "if len(sys.argv) == 1:\\n    print('Usage: python greet.py NAME')\\n    sys.exit(2)\\n\\n"
    "name = sys.argv[1]\\nprint(f'Hello, {name}!')\\nsys.exit(0)\"}}}"
)
BARE = '{{"name": "run_cmd", "arguments": {"cmd": "python greet.py"}}}}'


def test_the_verification_s_run_with_a_name_is_the_form_s_evidence(tmp_path: Path) -> None:
    steps = ["write_file greet.py with its code", "run python greet.py", "run python greet.py"]
    ran, _ = small_model_goal(
        tmp_path, GREET, plan_rule((GREET, steps)), [{"content": r} for r in (WORKS, BARE, BARE)],
        VERIFIED, LOCALAGENT_MAX_ROUNDS="3", LOCALAGENT_VERIFY="1",
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    (check,) = records_of(tmp_path, "check_finished")
    assert (check["cmd"], check["output"]) == ("python greet.py Ada", "Hello, Ada!\n")
    (verdict,) = records_of(tmp_path, "verdict")
    assert verdict["verification"] == "verified", verdict
