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
    # Two hand-backs, then the third failure (a hand-back again, but two is the most) is
    # the model's replan.
    assert [p.get("by") for p in plans] == ["handback", "handback", None]
