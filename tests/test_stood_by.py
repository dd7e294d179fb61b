"""The model stands by its code: asked for the function its own test shows wrong, it gives
it back unchanged, and the hand-back goes to the test's expected values (small profile,
`loop/stoodback.py`).

Qwen2.5-Coder-1.5B's mathx tests on the CPU held the row `(5, 0, -5)` for subtract. Asked
alone, it said subtract(5, 0) returns -5, the test's value, so the hand-back went to
mathx/subtract.py, which was right; asked for the function fixed, it gave `return a - b`
back, and then the same code block, no call, every round until the round limit (twice in
18 runs). Here the run of `test_own_tests`, the model standing by the test's value
when asked alone and by the code when asked for the function fixed."""

from __future__ import annotations

import subprocess
from pathlib import Path

from support import (
    backend_env,
    cli_args,
    done,
    plan_rule,
    records_of,
    run_cli,
    small_model_goal,
    wait_for,
)
from test_own_tests import (
    ADD,
    DIVIDE,
    INIT,
    MATHX,
    MULTIPLY,
    PLAN,
    READ_TESTS,
    SUBTRACT,
    TABLES,
    TESTS_RUN,
)

from localagent.models.fake import FakeServer

READ_SUBTRACT = '{{"name": "read_file", "arguments": {"path": "mathx/subtract.py"}}}'
# The reply to the request for the function fixed: the function as the file has it.
SAME = "```python\ndef subtract(a, b):\n    return a - b\n```"


def _run(ws: Path, rewritten: str) -> list[dict]:
    replies = [INIT, TABLES, ADD, DIVIDE, MULTIPLY, SUBTRACT, TESTS_RUN, TESTS_RUN]
    replies += ["1"]  # subtract(1, 2), asked alone: the test's value
    replies += [READ_SUBTRACT, rewritten]
    replies += ["6", "4", "0.5", "1.5", "1.0"]  # the other tables' rows, asked alone
    replies += [READ_TESTS]
    rounds = [{"content": c} for c in replies]
    small_model_goal(ws, MATHX, plan_rule((MATHX, PLAN)), rounds, LOCALAGENT_MAX_ROUNDS="13")
    return records_of(ws, "plan")


def test_the_function_given_back_unchanged_sends_the_hand_back_to_the_test(
    tmp_path: Path,
) -> None:
    plans = _run(tmp_path, SAME)
    failed = [r["reason"] for r in records_of(tmp_path, "subtask_failed")]
    assert any("the model gave it back unchanged" in r for r in failed), failed
    code, test = plans[-2]["tasks"][0]["subtasks"], plans[-1]["tasks"][0]["subtasks"]
    assert code[:2] == ["read_file mathx/subtract.py", code[1]], code
    assert code[1].startswith("replace_in_file mathx/subtract.py to fix the failing test")
    assert plans[-1].get("by") == "handback", plans[-1]
    table = "@pytest.mark.parametrize('a, b, expected', [{}, (3, 2, 1), (2, 2, 0), {}, {}])"
    old = table.format("(1, 2, 1)", "(0, 2, 0)", "(2, 0, 0)")
    new = table.format("(1, 2, -1)", "(0, 2, -2)", "(2, 0, 2)")
    assert test[:2] == [
        "read_file tests/test_mathx.py",
        "replace_in_file tests/test_mathx.py to fix the value its test expects: subtract(1, 2) "
        f"returns -1, not 1: replace `{old}` with `{new}` (and each other expected value in "
        "it that is wrong the same way)",
    ], test
    assert test[2].startswith("replace_in_file tests/test_mathx.py") and "multiply(3, 2)" in test[2]
    assert test[3].startswith("replace_in_file tests/test_mathx.py") and "divide(1, 2)" in test[3]
    # the edit of the code is not given back: the run of the tests follows the test's edits
    assert test[4] == "run python -m pytest to ensure the tests pass", test
    assert not any("mathx/subtract.py" in step for step in test), test
    written = (tmp_path / "mathx" / "subtract.py").read_text()
    assert written == "def subtract(a, b):\n    return a - b"


def test_a_function_given_back_changed_is_the_edit_as_before(tmp_path: Path) -> None:
    """A reply that changes the function is the round's edit: no hand-back to the test."""
    changed = "```python\ndef subtract(a, b):\n    return b - a\n```"
    plans = _run(tmp_path, changed)
    failed = [r["reason"] for r in records_of(tmp_path, "subtask_failed")]
    assert not any("gave it back unchanged" in r for r in failed), failed
    assert (tmp_path / "mathx" / "subtract.py").read_text() == (
        "def subtract(a, b):\n    return b - a"
    )
    assert not any(
        "tests/test_mathx.py to fix the value" in step
        for plan in plans
        for step in plan["tasks"][0]["subtasks"]
    ), plans


def test_a_run_killed_before_the_hand_back_is_made_makes_the_same_one(tmp_path: Path) -> None:
    """Killed (-9) while the hand-back's first question waits for its answer, after the
    edit subtask failed: resumed, the replan reads from the journal that the model stood by
    subtract, and gives the same plan as the run never killed."""
    whole = tmp_path / "whole"
    expected = _run(whole, SAME)[-1]["tasks"]
    assert expected[0]["subtasks"][0] == "read_file tests/test_mathx.py", expected
    replies = [INIT, TABLES, ADD, DIVIDE, MULTIPLY, SUBTRACT, TESTS_RUN, TESTS_RUN]
    replies += ["1", READ_SUBTRACT, SAME]
    rounds: list[dict] = [{"content": c} for c in replies]
    rounds += [{"content": "6", "delay": 30}]  # the killed run waits on this one
    rounds += [{"content": c} for c in ["6", "4", "0.5", "1.5", "1.0", READ_TESTS]]
    scenario = {"models": [{"name": "qwen2.5-coder:0.5b"}], "llama_cpp": True}
    scenario |= {"rules": [plan_rule((MATHX, PLAN))], "replies": rounds, "default": done("done")}
    killed = tmp_path / "killed"
    with FakeServer(scenario) as server:
        given = {"OLLAMA_MODEL": "qwen2.5-coder:0.5b", "LOCALAGENT_VERIFY": "0"}
        env = backend_env("openai", server.url, LOCALAGENT_MAX_ROUNDS="13", **given)
        # Its progress lines go nowhere: a pipe nobody reads fills (4 KiB on Windows) and
        # stops the run.
        args = cli_args("start", MATHX, "-w", str(killed), "--foreground")
        proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            # the plan, the replies, and the question the delayed answer keeps waiting
            wait_for(lambda: len(server.chat_requests) == len(replies) + 2, timeout=120)
        finally:
            proc.kill()
            proc.wait(timeout=30)
        assert records_of(killed, "subtask_failed")[-1]["reason"].startswith("asked for subtract")
        resumed = run_cli(env, "resume", "-w", str(killed), "--foreground")
        assert "Traceback" not in resumed.stderr  # it ends at its round limit, as scripted
        assert "round limit of 13 reached" in resumed.stderr, resumed.stderr
    assert records_of(killed, "plan")[-1]["tasks"] == expected
