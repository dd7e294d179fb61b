"""A read subtask ends with its read: Qwen2.5-Coder-1.5B's plan for a bug to fix began
with "read_file stats.py" (on an H100, llama-server). It read the file, read it again,
was blocked on the third read; three blocks failed the subtask and the replan gave the
same read back, in 9 of 12 runs. Replayed verbatim on the scripted fake server through
the real CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support import plan_rule, records_of, small_model_goal

from localagent.loop.firststeps import see_first
from localagent.loop.subtasks import edited_file, looks, read_file_of
from localagent.verify.evidence import is_lookup

GOAL = (
    "python -m pytest fails in this folder: fix the bug in stats.py so that the tests pass, "
    "without changing test_stats.py"
)
STATS = (
    "def mean(values):\n    return sum(values) / len(values)\n\n\n"
    "def median(values):\n    ordered = sorted(values)\n    middle = len(ordered) // 2\n"
    "    return ordered[middle]\n"
)
PLAN = plan_rule(
    ("Read the file stats.py", ["read_file stats.py"]),
    ("Replace the bug in stats.py", ["replace_in_file stats.py to fix the bug"]),
    ("Run the pytest command", ["run python -m pytest"]),
)
READ = '{{"name": "read_file", "arguments": {"path": "stats.py"}}}'
PLACEHOLDER = (
    '{{"name": "replace_in_file", "arguments": {"path": "stats.py", "old": "old_text", '
    '"new": "new_text"}}}'
)


def test_the_first_read_of_a_read_subtask_ends_it(tmp_path: Path) -> None:
    """The read ends 1.1 (no block, no replan); the rounds after it still have the
    file's text in their prompt; an edit of text not in the file shows the short file
    whole. (A goal that names no tests: one that does runs them first.)"""
    (tmp_path / "stats.py").write_text(STATS)
    replies = [{"content": READ}, {"content": READ}, {"content": PLACEHOLDER}]
    goal = "Fix the bug in stats.py: median is wrong for lists of even length"
    ran, requests = small_model_goal(tmp_path, goal, PLAN, replies, LOCALAGENT_MAX_ROUNDS="4")
    assert ran.returncode is not None
    completed = records_of(tmp_path, "subtask_completed")
    first = records_of(tmp_path, "action_finished")[0]
    assert completed[0]["by"] == "read" and completed[0]["evidence"] == [first["seq"]]
    # the read is the subtask's work: verified, not "nothing was changed or run" (the
    # 1.5B's refactor plan on the CPU began "read_file shapes.py" and was called idle)
    assert completed[0]["verified"] is True and not completed[0].get("unverified"), completed[0]
    assert "SUBTASK COMPLETE: 1.1 (stats.py was read" in first["result"]
    assert records_of(tmp_path, "action_blocked") == []
    assert [p for p in records_of(tmp_path, "plan") if p.get("replace_from")] == []
    placeholder = records_of(tmp_path, "action_finished")[2]["result"]
    assert placeholder.startswith("old was not found in 'stats.py'")
    assert "; the file is:\n    1| def mean(values):\n" in placeholder
    assert placeholder.endswith("    8|     return ordered[middle]")
    later = [json.dumps(r) for r in requests[2:]]
    assert later and all("return ordered[middle]" in text for text in later)


def test_a_subtask_named_by_a_look_up_tool_asks_only_to_look() -> None:
    assert is_lookup(["read_file shapes.py"]) and is_lookup(["list_dir src"])
    assert is_lookup(["search_files for def area"]) and is_lookup(["git_diff shapes.py"])
    # the 1.5B's mathx replan (the CPU): its file's folder is no test run
    assert is_lookup(["read_file tests/test_mathx.py"])
    assert not is_lookup(["read_file tests/test_mathx.py and run the tests"])
    assert not is_lookup(["read_file shapes.py and fix the bug"])
    assert not is_lookup(["write_file shapes.py"]) and not is_lookup(["reader.py: add a test"])


def test_which_subtasks_are_one_read() -> None:
    assert read_file_of("read_file stats.py") == "stats.py"
    assert read_file_of("Read the file shapes.py.") == "shapes.py"
    assert read_file_of("read_file src/app.py") == "src/app.py"
    assert read_file_of("Read stats.py and fix the bug") == ""
    assert read_file_of("read_file a.py b.py") == ""
    assert read_file_of("Read the README") == ""
    # what the read is for (the 1.5B's refactor plan, verbatim), not more work
    assert read_file_of("read_file shapes.py to identify the area formulas") == "shapes.py"
    assert read_file_of("read_file shapes.py to find the formulas and replace them") == ""
    assert read_file_of("read_file shapes.py to fix the bug") == ""


TEST_STATS = (
    "from stats import mean, median\n\n\ndef test_mean():\n    assert mean([1, 2, 3, 4]) == 2.5\n"
    "\n\ndef test_median_even():\n    assert median([4, 1, 3, 2]) == 2.5\n"
)
# The fix, as the 1.5B would send it once it had the file's text.
FIX = {
    "name": "replace_in_file",
    "arguments": {
        "path": "stats.py",
        "old": "    return ordered[middle]\n",
        "new": (
            "    if len(ordered) % 2 == 0:\n"
            "        return (ordered[middle - 1] + ordered[middle]) / 2\n"
            "    return ordered[middle]\n"
        ),
    },
}


def test_an_edit_subtask_ends_with_the_edit_that_changes_its_file(tmp_path: Path) -> None:
    """The small model never calls mark_subtask_complete: "replace_in_file stats.py to fix
    the bug" ends with the first edit that changes stats.py (the tests run next and show
    whether it works); an edit that fails changes nothing and ends nothing."""
    (tmp_path / "stats.py").write_text(STATS)
    (tmp_path / "test_stats.py").write_text(TEST_STATS)
    tests = '{"name": "run_cmd", "arguments": {"cmd": "python -m pytest"}}'
    replies = [{"content": r} for r in (tests, READ, PLACEHOLDER, json.dumps(FIX), tests)]
    ran, _ = small_model_goal(tmp_path, GOAL, PLAN, replies, LOCALAGENT_MAX_ROUNDS="7")
    assert ran.returncode == 0, ran.stderr + ran.stdout
    done = records_of(tmp_path, "subtask_completed")
    assert [d.get("by") for d in done] == ["run", "read", "write", "run"]
    assert done[2]["reason"].startswith("stats.py is changed, which is all the subtask asks")
    assert "2 passed" in records_of(tmp_path, "action_finished")[-1]["result"]


def test_which_subtasks_are_one_edit() -> None:
    assert edited_file("replace_in_file stats.py to fix the bug") == "stats.py"
    assert edited_file("Fix the bug in stats.py") == "stats.py"
    refactor = (  # the 1.5B's step, verbatim: it moves code, not files
        "replace_in_file shapes.py to move the repeated area formulas into a single function "
        "area(kind, size)"
    )
    assert edited_file(refactor) == "shapes.py"
    assert edited_file("fix stats.py and run the tests") == ""
    assert edited_file("replace_in_file a.py and b.py") == ""
    assert edited_file("write_file stats.py") == ""


def test_tests_that_fail_after_the_edit_go_back_to_the_edit(tmp_path: Path) -> None:
    """The edit did not fix the bug: the tests fail on an assertion, and the model sends
    the same run again. With the small profile the run subtask fails then (nothing changed:
    the run could only fail the same way), and the replan, made without the model, is the
    edit again, naming what failed."""
    (tmp_path / "stats.py").write_text(STATS)
    (tmp_path / "test_stats.py").write_text(TEST_STATS)
    wrong = {
        "name": "replace_in_file",
        "arguments": {"path": "stats.py", "old": "ordered[middle]", "new": "ordered[middle - 1]"},
    }
    right = {
        "name": "replace_in_file",
        "arguments": {
            "path": "stats.py",
            "old": "    return ordered[middle - 1]\n",
            "new": FIX["arguments"]["new"],
        },
    }
    tests = '{"name": "run_cmd", "arguments": {"cmd": "python -m pytest"}}'
    replies = [tests, READ, json.dumps(wrong), tests, tests, READ, json.dumps(right), tests]
    scripted = [{"content": r} for r in replies]
    ran, requests = small_model_goal(tmp_path, GOAL, PLAN, scripted, LOCALAGENT_MAX_ROUNDS="10")
    assert ran.returncode == 0, ran.stderr + ran.stdout
    (failed,) = records_of(tmp_path, "subtask_failed")
    assert failed["reason"] == (
        "the tests still fail after the change to stats.py: "
        "median([4, 1, 3, 2]) must return 2.5 (it returned 2)"
    ), failed["reason"]
    (back,) = [p for p in records_of(tmp_path, "plan") if p.get("replace_from")]
    assert back["by"] == "handback"
    # The replan starts the window anew: the file is read again before the edit (the
    # 1.5B, shown only the assertion, sent it as the text to replace in stats.py).
    assert back["tasks"][0]["subtasks"] == [
        "read_file stats.py",
        "replace_in_file stats.py to fix the failing test: "
        "median([4, 1, 3, 2]) must return 2.5 (it returned 2)",
        "run python -m pytest",
    ]
    assert not records_of(tmp_path, "action_blocked") and failed["call"] == "5.1"
    done = records_of(tmp_path, "subtask_completed")
    assert [d.get("by") for d in done][-3:] == ["read", "write", "run"]
    assert "return ordered[middle - 1]" in json.dumps(requests[-2]["messages"][-4:])
    assert "2 passed" in records_of(tmp_path, "action_finished")[-1]["result"]


TESTS_RUN = '{"name": "run_cmd", "arguments": {"cmd": "python -m pytest"}}'


def fixed_after_a_look(ws: Path, plan: dict[str, Any]) -> tuple[list[str], list[Any]]:
    """GOAL in `ws` with this plan, the model running the tests, reading stats.py, fixing
    it and running the tests again, each step done by its call: the first task's steps as
    planned, and the chat requests."""
    (ws / "stats.py").write_text(STATS)
    (ws / "test_stats.py").write_text(TEST_STATS)
    replies = [{"content": r} for r in (TESTS_RUN, READ, json.dumps(FIX), TESTS_RUN)]
    ran, requests = small_model_goal(ws, GOAL, plan, replies, LOCALAGENT_MAX_ROUNDS="6")
    assert ran.returncode == 0, ran.stderr + ran.stdout
    (planned,) = records_of(ws, "plan")
    done = records_of(ws, "subtask_completed")
    assert [d.get("by") for d in done] == ["run", "read", "write", "run"]
    assert "2 passed" in records_of(ws, "action_finished")[-1]["result"]
    return planned["tasks"][0]["subtasks"], requests


def test_an_edit_of_a_file_the_plan_never_reads_is_planned_after_a_read(tmp_path: Path) -> None:
    """The 1.5B's fixtest plan on the CPU, verbatim, began with the edit: never shown
    stats.py, it sent `{"old": "old_text", "new": "new_text"}` until three strikes. In the
    small profile a read of the file comes first; its text is then in the edit's window."""
    first = "Write a named file stats.py in the current folder"
    plan = plan_rule(
        (first, ["replace_in_file stats.py to fix the bug"]),
        ("Run the command python -m pytest to check the tests", ["run python -m pytest"]),
    )
    steps, requests = fixed_after_a_look(tmp_path, plan)
    assert steps == [
        "run python -m pytest to see what fails",
        "read_file stats.py",
        "replace_in_file stats.py to fix the bug",
    ]
    assert "return ordered[middle]" in json.dumps(requests[3]["messages"])  # the edit's round


def test_a_goal_to_fix_failing_tests_first_runs_them_to_see_what_fails(tmp_path: Path) -> None:
    """The 1.5B's fixtest plans began with the read and the edit, the tests last: never
    shown what fails, it sent `mean` and `median` as they were as edits, 12 runs of 12. In
    the small profile the tests run first, and that run ends its step whatever they say:
    its output (median([4, 1, 3, 2]) gave 3) is in the edit's window."""
    steps, requests = fixed_after_a_look(tmp_path, PLAN)
    assert steps == ["run python -m pytest to see what fails", "read_file stats.py"]
    done = records_of(tmp_path, "subtask_completed")
    assert done[0]["reason"].startswith(
        "`python -m pytest` ran (FAILED test_stats.py::test_median_even - assert 3 == 2.5)"
    )
    assert "what fails is in its output" in done[0]["reason"]
    # The edit's round asks for the function the tests show wrong (`loop.rewrite`): it
    # names what failed, not "exit code 1" (the 1.5B, shown that, edited the test's
    # assertion into stats.py), with the function and the failing test.
    edit_round = requests[3]["messages"][-1]["content"]
    assert "median([4, 1, 3, 2]) must return 2.5 (it returned 3)" in edit_round
    assert "return ordered[middle]" in edit_round
    assert "assert median([4, 1, 3, 2]) == 2.5" in edit_round
    assert not records_of(tmp_path, "subtask_failed")


def test_which_plans_run_the_tests_before_the_first_edit() -> None:
    see = "run python -m pytest to see what fails"
    assert looks(see) and not looks("run python -m pytest") and not looks("read_file a.py")
    plans = {
        "edit first": [["replace_in_file stats.py to fix the bug", "run python -m pytest"]],
        "read, then edit": [["read_file stats.py"], ["replace_in_file stats.py to fix it"]],
        "tests first": [["run python -m pytest"], ["replace_in_file stats.py to fix it"]],
    }
    tasks = {
        name: [{"description": "d", "subtasks": list(s)} for s in p] for name, p in plans.items()
    }
    for name in plans:
        see_first(tasks[name], GOAL, see)
    assert tasks["edit first"][0]["subtasks"][0] == see
    assert tasks["read, then edit"][0]["subtasks"] == [see, "read_file stats.py"]
    assert tasks["tests first"][0]["subtasks"] == ["run python -m pytest"]
    # Not a goal to fix failing tests: no run is added.
    other = [{"description": "d", "subtasks": ["replace_in_file app.py to add a flag"]}]
    see_first(other, "Add a --verbose flag to app.py", see)
    assert other[0]["subtasks"] == ["replace_in_file app.py to add a flag"]


REFACTOR = (
    "Refactor shapes.py: the area formulas are repeated in total_area, largest and report; "
    "move them into one function area(kind, size) and use it in all three. Behaviour must "
    "not change: python -m pytest must still pass"
)


def test_a_write_over_a_file_the_goal_names_is_planned_after_a_read(tmp_path: Path) -> None:
    """The 1.5B's refactor plans on an H100, verbatim, began with a write of shapes.py:
    never shown it, the model wrote only `def area(...)` over it, refused because the tests
    import the rest, in 6 runs of 6. A write of a file the workspace holds comes after a
    read of it; a write of a new file does not."""
    (tmp_path / "shapes.py").write_text("def total_area(shapes):\n    return 0.0\n")
    write = (
        "write_file shapes.py to move the area formulas into one function area(kind, size) "
        "and use it in all three."
    )
    move = "Move the area formulas into one function area(kind, size) and use it in all three."
    plan = plan_rule(
        (move, [write, "run python -m pytest to ensure the behavior remains unchanged."]),
        ("Write notes", ["write_file notes.py with a note"]),
    )
    read = '{"name": "read_file", "arguments": {"path": "shapes.py"}}'
    small_model_goal(
        tmp_path, REFACTOR + " (notes.py too)", plan, [{"content": read}], LOCALAGENT_MAX_ROUNDS="2"
    )
    (planned,) = records_of(tmp_path, "plan")
    assert [t["subtasks"] for t in planned["tasks"]] == [
        [
            "read_file shapes.py",
            write,
            "run python -m pytest to ensure the behavior remains unchanged.",
        ],
        ["write_file notes.py with a note"],
    ]
    assert [d.get("by") for d in records_of(tmp_path, "subtask_completed")] == ["read"]


def test_a_read_whose_arguments_cannot_be_read_is_refused_however_often(tmp_path: Path) -> None:
    """The loop guard blocks the third such call; whether it is the step's read is asked
    of arguments that are no object (a JSON string cut short), and the answer is no: the
    run goes on, with the tool's word on the arguments (it stopped on an internal error)."""
    (tmp_path / "stats.py").write_text(STATS)
    cut = {"tool_calls": [{"name": "read_file", "arguments": '{"path": '}]}
    goal = "Fix the bug in stats.py: median is wrong for lists of even length"
    ran, _ = small_model_goal(tmp_path, goal, PLAN, [cut] * 3, LOCALAGENT_MAX_ROUNDS="3")
    assert "internal error" not in ran.stderr, ran.stderr
    results = [r["result"] for r in records_of(tmp_path, "action_finished")]
    assert results and all("not valid JSON" in r for r in results), results
    assert len(records_of(tmp_path, "action_blocked")) == 1
