"""The verification runs the scripts the goal wrote that nothing shows to work, once each,
before the verdict: Qwen2.5-Coder-1.5B wrote hello_world.py, ended its one subtask with
an unchanged rewrite, and its own verdict (a small model's word is no evidence) left the
goal `unverified` after two plans for what it called unmet. A script's run is a fact for
the verdict, folded into the evidence like the model's runs, never a failure by itself."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from support import (
    VERIFIED,
    call,
    cli_env,
    done,
    plan_rule,
    records,
    records_of,
    run_cli,
    small_model_goal,
)

from localagent.models.fake import FakeServer

GOAL = "Write a hello world script"
HELLO = "print('Hello, World!')"
# Round 1 and 2 as the 1.5B sent them (doubled braces), verbatim.
WRITE = (
    '{{"name": "write_file", "arguments": {"path": "hello_world.py", '
    '"content": "print(\'Hello, World!\')"}}}'
)


def hello_run(ws: Path, verdict: dict[str, Any] = VERIFIED) -> Any:
    plan = plan_rule((GOAL, ["write_file hello_world.py with the following content: " + HELLO]))
    ran, asked = small_model_goal(
        ws, GOAL, plan, [{"content": WRITE}, {"content": WRITE}], LOCALAGENT_VERIFY="1",
        verdict=verdict,
    )  # fmt: skip
    return ran, asked


def test_the_script_nothing_ran_is_run_before_the_verdict(tmp_path: Path) -> None:
    ran, asked = hello_run(tmp_path)
    assert ran.returncode == 0, ran.stderr + ran.stdout
    [check] = records_of(tmp_path, "check_finished")
    assert (check["cmd"], check["source"], check["status"]) == (
        "python hello_world.py", "program", "ran",
    )  # fmt: skip
    assert check["returncode"] == 0 and "Hello, World!" in check["output"] and check["ok"]
    [verdict] = records_of(tmp_path, "verdict")
    assert (verdict["verdict"], verdict["verification"]) == ("VERIFIED", "verified")
    told = "\n".join(str(m["content"]) for m in asked[-1]["messages"])
    assert "the verification ran `python hello_world.py`: exit code 0: Hello, World!" in told
    assert "completed (verified)" in ran.stdout + ran.stderr


def test_a_script_of_a_plan_that_names_no_file_is_verified_by_its_run(tmp_path: Path) -> None:
    """Qwen2.5-Coder-0.5B's one-subtask plan, "Write a hello world script", names no file:
    the verification's run of the script it wrote printed "Hello, World!", and the goal
    still ended "unverified" (1 of 16 runs on the CPU)."""
    plan = plan_rule((GOAL, [GOAL]))
    ran, _ = small_model_goal(
        tmp_path, GOAL, plan, [{"content": WRITE}, {"content": WRITE}], LOCALAGENT_VERIFY="1",
        verdict=VERIFIED,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr + ran.stdout
    [check] = records_of(tmp_path, "check_finished")
    assert check["status"] == "ran" and "Hello, World!" in check["output"]
    [verdict] = records_of(tmp_path, "verdict")
    assert (verdict["verdict"], verdict["verification"]) == ("VERIFIED", "verified")


def test_a_script_that_crashes_is_a_fact_for_the_model_not_a_failure(tmp_path: Path) -> None:
    ws = tmp_path
    """wordcount.py reads sys.argv[1]: run without it, it crashes; the model judges."""
    script = "import sys\nprint(len(open(sys.argv[1]).read().split()))\n"
    scenario = {
        "rules": [plan_rule(("Count", ["Write wordcount.py"]))],
        "replies": [call("write_file", path="wordcount.py", content=script)],
        "default": done("written"),
        "verdict": VERIFIED,
    }
    with FakeServer(scenario) as server:
        args = ("start", "Write wordcount.py that counts a file's words", "-w", str(ws))
        result = run_cli(cli_env(server.url), *args, "--foreground")
    assert result.returncode == 0, result.stderr
    [check] = records_of(ws, "check_finished")
    assert check["status"] == "ran" and "IndexError" in check["summary"] and not check["ok"]
    [verdict] = records_of(ws, "verdict")
    assert (verdict["source"], verdict["then"]) == ("model", "complete")
    assert verdict["verification"] == "unverified"  # nothing shows it works


def test_scripts_that_read_input_modules_and_tests_are_not_run(tmp_path: Path) -> None:
    ws = tmp_path
    files = {
        "game.py": "choice = input('rock, paper or scissors? ')\nprint(choice)\n",
        "calc.py": "def add(a, b):\n    return a + b\n",
        "test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
        "pkg/__init__.py": "print('imported')\n",
    }
    replies = [call("write_file", path=p, content=c) for p, c in files.items()]
    scenario = {
        "rules": [plan_rule(("All", ["Write game.py, calc.py, test_calc.py and pkg/__init__.py"]))],
        "replies": [*replies, call("run_cmd", cmd="python -m pytest -q"), done("written")],
        "verdict": VERIFIED,
    }
    with FakeServer(scenario) as server:
        result = run_cli(cli_env(server.url), "start", "Write them", "-w", str(ws), "--foreground")
    assert result.returncode == 0, result.stderr
    assert [c["cmd"] for c in records_of(ws, "check_finished")] == ["python -m pytest -q"]


def test_a_check_of_the_user_s_means_no_script_is_run(tmp_path: Path) -> None:
    ws = tmp_path
    scenario = {
        "rules": [plan_rule(("Hello", ["Write hello.py"]))],
        "replies": [call("write_file", path="hello.py", content=HELLO + "\n")],
        "default": done("written"),
        "verdict": VERIFIED,
    }
    with FakeServer(scenario) as server:
        args = (
            "start",
            "Write hello.py",
            "-w",
            str(ws),
            "--foreground",
            "--check",
            "python hello.py",
        )
        result = run_cli(cli_env(server.url), *args)
    assert result.returncode == 0, result.stderr
    assert [(c["source"], c["ok"]) for c in records_of(ws, "check_finished")] == [("user", True)]
    assert [r["cmd"] for r in records(ws) if r["type"] == "check_started"] == ["python hello.py"]
