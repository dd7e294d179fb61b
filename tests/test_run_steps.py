"""Run steps as they work: Qwen2.5-Coder-1.5B's mathx plans said `run pytest
tests/test_mathx.py` (pytest started as a program cannot import the workspace's package)
and it ran `ruff tests/test_mathx.py` five times, blocked from the third on, with the
note that names `ruff check` only in the first run's result. On an H100, llama-server,
16 runs; replayed verbatim on the scripted fake server through the real CLI."""

from __future__ import annotations

from pathlib import Path

from support import records_of, ruff_step

from localagent.loop import plancheck
from localagent.loop.subtasks import runnable

GOAL = (
    "Create a Python package mathx with the functions add, subtract, multiply and divide "
    "(divide raises ValueError when dividing by zero), with pytest tests in "
    "tests/test_mathx.py; the tests must pass with pytest and ruff check must be clean"
)


def test_a_plan_s_runs_of_pytest_and_ruff_are_the_commands_that_work() -> None:
    steps = [
        "write_file mathx/__init__.py",
        "run pytest tests/test_mathx.py",
        "run ruff tests/test_mathx.py",
    ]
    checked = plancheck.check([{"description": GOAL, "subtasks": steps}], GOAL, ["write_file"])
    assert checked.tasks[0]["subtasks"] == [
        "write_file mathx/__init__.py",
        "run python -m pytest tests/test_mathx.py",
        "run ruff check tests/test_mathx.py",
    ]
    assert runnable("run pytest -q") == "run python -m pytest -q"
    # The 1.5B's greet and wordcount plans, verbatim: then it ran the whole sentence.
    said = "run python greet.py NAME prints Hello, NAME! and exits 0"
    assert runnable(said) == "run python greet.py NAME"
    said = "run python greet.py without arguments prints a usage message and exits with status 2"
    assert runnable(said) == "run python greet.py"
    said = "Run python check.py 1 and see it pass"  # no words of what it does: as it is
    assert runnable(said) == said
    assert (
        runnable("run python rps_game.py with input rock")
        == "run python rps_game.py with input rock"
    )
    for same in (
        "run python -m pytest",
        "run ruff check .",
        "write_file tests/test_x.py with pytest tests",
        "run touch mathx",  # no file: a folder, or nothing this can tell
    ):
        assert runnable(same) == same
    # The 1.5B's mathx replan on the CPU, verbatim: touch is no command a run may use.
    assert runnable("run touch mathx/__init__.py") == "write_file mathx/__init__.py with its code"
    assert (
        runnable("run touch tests/test_mathx.py") == "write_file tests/test_mathx.py with its code"
    )


def test_ruff_without_its_check_command_is_the_check_step_s_run(tmp_path: Path) -> None:
    """Told the command, the model sent its own again: it now runs as `ruff check`."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_mathx.py").write_text("def test_add():\n    assert 1 + 2 == 3\n")
    ruff = '{{"name": "run_cmd", "arguments": {"cmd": "ruff tests/test_mathx.py"}}}'
    ruff_step(tmp_path, GOAL, "run ruff check tests/test_mathx.py", ruff)
    (ran,) = records_of(tmp_path, "action_finished")
    assert ran["ok"] and "ran as `ruff check tests/test_mathx.py`" in ran["result"]
    assert records_of(tmp_path, "subtask_completed") and not records_of(tmp_path, "action_blocked")


def test_a_fix_goal_s_step_that_writes_its_file_is_the_edit() -> None:
    """The 1.5B's plan on the CPU, verbatim: for a bug to fix in stats.py, "write_file
    stats.py"; it then wrote a stub over it (refused since, but the plan stayed)."""
    goal = (
        "python -m pytest fails in this folder: fix the bug in stats.py so that the tests "
        "pass, without changing test_stats.py"
    )
    plan = [
        {
            "description": "Write a named file stats.py to fix the bug in stats.py so that "
            "the tests pass.",
            "subtasks": ["write_file stats.py"],
        },
        {
            "description": "Run python -m pytest to check if the bug is fixed.",
            "subtasks": ["run python -m pytest"],
        },
    ]
    tools = ["read_file", "write_file", "replace_in_file", "run_cmd"]
    checked = plancheck.check(plan, goal, tools)
    assert checked.problems == []
    assert [t["subtasks"] for t in checked.tasks] == [
        ["replace_in_file stats.py to fix the bug"],
        ["run python -m pytest"],
    ]
    # The step as the 1.5B wrote it in another CPU run, verbatim.
    said = [
        {
            "description": "Write stats.py with the bug fixed",
            "subtasks": ["write_file stats.py to fix the bug"],
        }
    ]
    fixed = plancheck.check(said, goal, tools)
    assert fixed.tasks[0]["subtasks"] == ["replace_in_file stats.py to fix the bug"]
    # A file the goal does not name, or a goal that fixes nothing, keeps its write.
    other = plancheck.check(
        [{"description": "d", "subtasks": ["write_file notes.txt"]}], goal, tools
    )
    assert other.tasks[0]["subtasks"] == ["write_file notes.txt"]
    new = plancheck.check(
        [{"description": "d", "subtasks": ["write_file stats.py"]}], "Write stats.py", tools
    )
    assert new.tasks[0]["subtasks"] == ["write_file stats.py"]
