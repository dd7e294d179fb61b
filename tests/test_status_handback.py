"""A run of the goal's script without arguments that exits with another status than the
goal states does not end its run subtask: it goes back to a read and the one edit that
ends the script so, made without the model.

Qwen2.5-Coder-1.5B's greet.py on the H200 (greet-4, verbatim below) printed its usage
and exited 0; `python greet.py` was taken as done, the verification found the status
wrong, and each plan the model made for that wrote the program again, worse: a hard-coded
name, the function alone (four of six runs failed so)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support import VERIFIED, call, plan_rule, records_of, small_model_goal

from localagent.verify.statusfix import status_fix

GREET = (
    "Write greet.py: python greet.py NAME prints Hello, NAME! and exits 0; run without "
    "arguments it prints a usage message and exits with status 2"
)
# greet-4, round 3, verbatim.
WRITE = (
    '```json\n{\n  "name": "write_file",\n  "arguments": {\n    "path": "greet.py",\n    '
    "\"content\": \"def greet(NAME):\\n    print(f'Hello, {NAME}!')\\n\\nif __name__ == '__"
    "main__':\\n    import sys\\n    if len(sys.argv) > 1:\\n        greet(sys.argv[1])\\n "
    "   else:\\n        print('Usage: python greet.py NAME')\"\n  }\n}\n```"
)
RUN = (
    '```json\n{\n  "name": "run_cmd",\n  "arguments": {\n    "cmd": "python greet.py"\n  }\n}\n```'
)
USAGE = "print('Usage: python greet.py NAME')"
EDIT = call(
    "replace_in_file",
    path="greet.py",
    old=f"        {USAGE}",
    new=f"        {USAGE}\n        raise SystemExit(2)",
)
STEP = (
    "replace_in_file greet.py so that, without arguments, it exits with status 2: after the "
    f"line `{USAGE}` add the line `raise SystemExit(2)`"
)


def _run(ws: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "greet.py", *args], cwd=ws, capture_output=True, text=True, timeout=30
    )


@pytest.mark.parametrize(
    "steps",
    [
        # the plan runs it without arguments: that run fails its subtask at once
        ["write_file greet.py with its code", "run python greet.py", "run python greet.py NAME"],
        # it does not: the verification's run finds the status, and only that
        ["write_file greet.py with its code", "run python greet.py NAME"],
    ],
)
def test_a_wrong_exit_status_goes_back_to_the_one_line_that_ends_it(
    tmp_path: Path, steps: list[str]
) -> None:
    plan = plan_rule((GREET, steps))
    named = json.dumps({"name": "run_cmd", "arguments": {"cmd": "python greet.py Ada"}})
    first = [WRITE, RUN, named] if len(steps) == 3 else [WRITE, named]
    rounds = [{"content": r} for r in first]
    rounds += [call("read_file", path="greet.py"), EDIT, call("run_cmd", cmd="python greet.py")]
    rounds += [{"content": named}]
    ran, _ = small_model_goal(
        tmp_path, GREET, plan, rounds, VERIFIED,
        LOCALAGENT_MAX_ROUNDS=str(len(rounds) + 2), LOCALAGENT_VERIFY="1",
    )  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    backs = [p for p in records_of(tmp_path, "plan") if p.get("by") == "handback"]
    assert len(backs) == 1, backs
    subtasks = [s for t in backs[0]["tasks"] for s in t["subtasks"]]
    assert subtasks[:3] == ["read_file greet.py", STEP, "run python greet.py"], subtasks
    if len(steps) == 3:  # the run with status 0 ended nothing
        failed = records_of(tmp_path, "subtask_failed")
        assert failed[0]["reason"].startswith("the goal says greet.py run without arguments")
        done = [c["reason"] for c in records_of(tmp_path, "subtask_completed")]
        assert not any("exit code 0: Usage" in r for r in done), done
    else:
        assert records_of(tmp_path, "verdict")[0]["verification"] == "failed"
    assert records_of(tmp_path, "goal_completed")
    assert _run(tmp_path).returncode == 2
    assert _run(tmp_path, "Ada").stdout.strip() == "Hello, Ada!"


@pytest.mark.parametrize(
    ("source", "line", "new"),
    [
        (f"if x:\n    {USAGE}\n    sys.exit(1)\n", "sys.exit(1)", "sys.exit(2)"),
        (f"if x:\n    {USAGE}\n\n    exit()\n", "exit()", "exit(2)"),
        (f"if x:\n    {USAGE}\nprint('done')\n", "", "raise SystemExit(2)"),
    ],
)
def test_the_line_after_the_usage_message(source: str, line: str, new: str) -> None:
    fix = status_fix(source, 2)
    assert fix is not None and (fix.usage, fix.line, fix.new) == (USAGE, line, new)


def test_no_change_is_named_where_none_is_clear() -> None:
    assert status_fix(f"if x:\n    {USAGE}\n    sys.exit(2)\n", 2) is None  # already so
    assert status_fix(f"{USAGE}\n{USAGE}\n", 2) is None  # two usage messages
    assert status_fix("print('Hello')\n", 2) is None  # none


# greet-1 on the CPU, verbatim: rounds 3, 4, 6 and 7 (the 1.5B's own program, its run,
# then, after the read the hand-back asks for, the line it was told to add put in place of
# the usage message).
CPU_WRITE = (
    '{{"name": "write_file", "arguments": {"path": "greet.py", "content": "import sys\\n\\nd'
    "ef greet(NAME):\\n    print(f'Hello, {NAME}!')\\n\\ndef main():\\n    if len(sys.argv) >"
    " 1:\\n        greet(sys.argv[1])\\n    else:\\n        print('Usage: python greet.py NAM"
    "E')\\n\\nif __name__ == '__main__':\\n    main()\"}}}}"
)
CPU_RUN = '{{"name": "run_cmd", "arguments": {"cmd": "python greet.py"}}}}'
IN_PLACE = (
    '{{"name": "replace_in_file", "arguments": {"path": "greet.py", "old": "print(\'Usage: '
    'python greet.py NAME\')", "new": "raise SystemExit(2)"}}}'
)


def test_the_line_to_add_sent_in_place_of_the_one_to_keep_is_added(tmp_path: Path) -> None:
    plan = plan_rule((GREET, ["write_file greet.py with the given code", "run python greet.py"]))
    named = json.dumps({"name": "run_cmd", "arguments": {"cmd": "python greet.py Ada"}})
    rounds = [{"content": r} for r in (CPU_WRITE, CPU_RUN)]
    rounds += [call("read_file", path="greet.py"), {"content": IN_PLACE}]
    rounds += [{"content": CPU_RUN}, {"content": named}]
    ran, _ = small_model_goal(
        tmp_path, GREET, plan, rounds, VERIFIED,
        LOCALAGENT_MAX_ROUNDS=str(len(rounds) + 2), LOCALAGENT_VERIFY="1",
    )  # fmt: skip
    edits = [r for r in records_of(tmp_path, "action_finished") if r["tool"] == "replace_in_file"]
    assert edits[0]["args"]["new"] == f"{USAGE}\n        raise SystemExit(2)"
    assert (
        "(made as an addition: the step says to add `raise SystemExit(2)` after "
        f"`{USAGE}`, which stays)"
    ) in edits[0]["result"]
    assert ran.returncode == 0, ran.stdout + ran.stderr
    without = _run(tmp_path)
    assert (without.returncode, without.stdout.strip()) == (2, "Usage: python greet.py NAME")
    assert _run(tmp_path, "Ada").stdout.strip() == "Hello, Ada!"


def test_the_line_to_change_is_changed_when_the_one_before_it_is_sent(tmp_path: Path) -> None:
    """The same misreading of the other step the hand-back makes (not a verbatim reply)."""
    source = (
        "import sys\n\n\ndef main():\n    if len(sys.argv) > 1:\n        print(f'Hello, "
        f"{{sys.argv[1]}}!')\n    else:\n        {USAGE}\n        sys.exit(1)\n\n\nmain()\n"
    )
    plan = plan_rule((GREET, ["write_file greet.py with the given code", "run python greet.py"]))
    rounds = [call("write_file", path="greet.py", content=source), {"content": CPU_RUN}]
    rounds += [call("read_file", path="greet.py")]
    rounds += [call("replace_in_file", path="greet.py", old=USAGE, new="sys.exit(2)")]
    rounds += [{"content": CPU_RUN}, call("run_cmd", cmd="python greet.py Ada")]
    ran, _ = small_model_goal(
        tmp_path, GREET, plan, rounds, VERIFIED,
        LOCALAGENT_MAX_ROUNDS=str(len(rounds) + 2), LOCALAGENT_VERIFY="1",
    )  # fmt: skip
    edits = [r for r in records_of(tmp_path, "action_finished") if r["tool"] == "replace_in_file"]
    assert edits[0]["args"]["old"] == "sys.exit(1)"
    assert "(made on `sys.exit(1)`: the step says to change it" in edits[0]["result"]
    assert ran.returncode == 0, ran.stdout + ran.stderr
    without = _run(tmp_path)
    assert (without.returncode, without.stdout.strip()) == (2, "Usage: python greet.py NAME")
