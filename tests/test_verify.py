"""Verified completion (SPEC §11): the completion gate, goal checks and the verdict,
end to end through the CLI against the fake model server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support import (
    call,
    cli_env,
    done,
    messages_text,
    plan_rule,
    record_types,
    records,
    run_cli,
    start_cli,
    wait_for,
)

from localagent.models.fake import FakeServer
from localagent.state.checkruns import check_kind, judge
from localagent.verify.evidence import named_files

GREETING = "Hello, world!\n"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


def of_type(recs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [r for r in recs if r["type"] == kind]


def verify_requests(server: FakeServer) -> list[dict[str, Any]]:
    return [r for r in server.chat_requests if "verdict" in str(r.get("format") or "")]


def notes_scenario(reason: str) -> dict[str, Any]:
    """A model that writes notes.txt, reads it back and says it is done."""
    return {
        "rules": [plan_rule(("Notes", ["Write notes.txt"]))],
        "replies": [
            call("write_file", path="notes.txt", content="n\n"),
            call("read_file", path="notes.txt"),
            done(reason),
        ],
    }


def status_json(env: dict[str, str], ws: Path) -> dict[str, Any]:
    result = run_cli(env, "status", "-w", str(ws), "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


# ---- judging evidence ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("cmd", "kind"),
    [
        ("python -m pytest -q", "pytest"),
        ("pytest tests/", "pytest"),
        ("python3 -m unittest discover", "unittest"),
        ("ruff check .", "ruff"),
        ("python game.py --rounds 3", "script"),
        ("python -m pip install rich", None),
        ("ruff --version", None),
        ("git status", None),
    ],
)
def test_which_commands_are_checks(cmd: str, kind: str | None) -> None:
    assert check_kind(cmd) == kind


@pytest.mark.parametrize(
    ("kind", "code", "output", "passed"),
    [
        ("pytest", 0, "...\n3 passed in 0.02s\n", True),
        ("pytest", 1, "F..\n1 failed, 2 passed in 0.05s\n", False),
        # A wrapper that exits 0 while its tests fail did not pass.
        ("script", 0, "running the suite\n1 failed, 4 passed\n", False),
        ("unittest", 0, "Ran 3 tests in 0.001s\n\nFAILED (failures=1)\n", False),
        ("pytest", 0, "1 passed, 1 error in 0.1s\n", False),
        ("ruff", 0, "All checks passed!\n", True),
        ("script", 0, "Traceback (most recent call last):\n  ...\nValueError: bad\n", False),
        ("script", 1, "Traceback (most recent call last):\nEOFError: EOF when reading\n", None),
        ("script", None, "still running", None),
        # A script's exit code is a fact, not a verdict; printing nothing shows nothing.
        ("script", 2, "usage: greet.py NAME\n", True),
        ("script", 0, "(no output)", None),
        ("script", 1, "(no output)", True),
        ("pytest", None, "", False),
        # Nothing was tested: no evidence either way.
        ("pytest", 5, "no tests ran in 0.01s\n", None),
        ("unittest", 5, "\nRan 0 tests in 0.000s\n\nNO TESTS RAN\n", None),
    ],
)
def test_a_check_passes_by_its_exit_code_and_its_summary(
    kind: str, code: int | None, output: str, passed: bool | None
) -> None:
    assert judge(kind, code, output)[0] is passed


def test_named_outputs_are_files_the_text_names() -> None:
    assert named_files("Write game.py and tests/test_game.py; see README.md.") == [
        "game.py",
        "tests/test_game.py",
        "README.md",
    ]
    assert named_files("Use version 1.2 of the e.g. approach") == []
    assert named_files("Delete old.py and keep new.py") == []  # removal: nothing must exist


# ---- the completion gate -----------------------------------------------------------


def test_a_claim_without_the_named_file_is_refused_until_it_exists(ws: Path) -> None:
    scenario = {
        "rules": [plan_rule(("Game", ["Write game.py with a play() function"]))],
        "replies": [
            done("game.py is written"),
            call(
                "write_file",
                path="game.py",
                content="def play():\n    return 'rock'\n\n\nprint(play())\n",
            ),
            call("run_cmd", cmd="python game.py"),
            done("game.py is written and runs"),
        ],
    }
    with FakeServer(scenario) as server:
        result = run_cli(cli_env(server.url), "start", "Make a game", "-w", str(ws), "--foreground")
        sent = [r for r in server.chat_requests if not r.get("format")]
    assert result.returncode == 0, result.stderr
    recs = records(ws)
    refused = [r for r in of_type(recs, "feedback") if r.get("refused")]
    assert len(refused) == 1 and "game.py does not exist" in refused[0]["text"]
    assert "game.py does not exist" in messages_text(sent[1])  # the model was told
    completed = of_type(recs, "subtask_completed")
    assert len(completed) == 1 and completed[0]["verified"] is True
    assert recs[-1]["type"] == "goal_completed" and recs[-1]["verification"] == "verified"


def test_an_edit_after_a_passing_test_gets_one_nudge_then_a_rerun(ws: Path) -> None:
    calc = "def add(a, b):\n    return a + b\n"
    test = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    scenario = {
        "rules": [plan_rule(("Calc", ["Write calc.py with add() and make its tests pass"]))],
        "replies": [
            call("write_file", path="calc.py", content=calc),
            call("write_file", path="test_calc.py", content=test),
            call("run_cmd", cmd="python -m pytest -q"),
            call(
                "write_file",
                path="calc.py",
                content=calc + "\n\ndef sub(a, b):\n    return a - b\n",
            ),
            done("tests pass"),
            call("run_cmd", cmd="python -m pytest -q"),
            done("tests pass after the change"),
        ],
    }
    with FakeServer(scenario) as server:
        result = run_cli(cli_env(server.url), "start", "Calculator", "-w", str(ws), "--foreground")
    assert result.returncode == 0, result.stderr
    recs = records(ws)
    nudges = [r for r in of_type(recs, "feedback") if r.get("nudged")]
    assert len(nudges) == 1
    assert "`python -m pytest -q` ran before the last change to calc.py" in nudges[0]["text"]
    runs = [r for r in of_type(recs, "action_finished") if r["tool"] == "run_cmd"]
    assert len(runs) == 2 and all(r["returncode"] == 0 for r in runs)  # never blocked
    assert of_type(recs, "subtask_completed")[0]["verified"] is True
    # Tests exist, so the goal check runs them once more.
    check = of_type(recs, "check_finished")
    assert [(c["cmd"], c["status"]) for c in check] == [("python -m pytest -q", "passed")]
    assert recs[-1]["verification"] == "verified"


def test_a_second_claim_without_checking_is_accepted_as_unverified(ws: Path) -> None:
    scenario = {
        "rules": [plan_rule(("Tool", ["Write tool.py"]))],
        "replies": [call("write_file", path="tool.py", content="print('t')\n"), done("written")],
        "default": done("written, really"),
    }
    with FakeServer(scenario) as server:
        result = run_cli(cli_env(server.url), "start", "A tool", "-w", str(ws), "--foreground")
    assert result.returncode == 0, result.stderr
    recs = records(ws)
    nudge = [r for r in of_type(recs, "feedback") if r.get("nudged")]
    assert len(nudge) == 1 and "tool.py was written but never run or read" in nudge[0]["text"]
    completed = of_type(recs, "subtask_completed")
    assert completed[0]["verified"] is False
    assert completed[0]["unverified"] == ["tool.py was written but never run or read"]


def test_a_text_file_written_needs_no_reading_back(ws: Path) -> None:
    scenario = {
        "rules": [plan_rule(("Notes", ["Write notes.txt"]))],
        "replies": [call("write_file", path="notes.txt", content="n\n"), done("written")],
    }
    with FakeServer(scenario) as server:
        result = run_cli(cli_env(server.url), "start", "Notes", "-w", str(ws), "--foreground")
    assert result.returncode == 0, result.stderr
    recs = records(ws)
    assert "feedback" not in record_types(ws)
    assert of_type(recs, "subtask_completed")[0]["verified"] is True


# ---- goal checks and the verdict -------------------------------------------------------


def test_output_that_differs_from_expected_is_not_verified_without_asking_the_model(
    ws: Path,
) -> None:
    (ws / "expected.txt").write_text(GREETING)
    fixing = "ACTIVE SUBTASK: Make main.py"
    fix = [
        call("write_file", path="main.py", content="print('Hello, world!')\n"),
        call("run_cmd", cmd="python main.py"),
        done("it prints exactly expected.txt now"),
    ]
    scenario = {
        "rules": [
            plan_rule(("Fix", ["Make main.py print exactly expected.txt"]), match="still unmet"),
            plan_rule(("Greeter", ["Write main.py that prints the greeting"])),
            *({"match": fixing, "in": "last", "times": 1, "reply": reply} for reply in fix),
        ],
        "replies": [
            call("write_file", path="main.py", content="print('Hello world')\n"),
            call("run_cmd", cmd="python main.py"),
            done("main.py prints the greeting"),
        ],
    }
    with FakeServer(scenario) as server:
        result = run_cli(cli_env(server.url), "start", "Greeter", "-w", str(ws), "--foreground")
        asked = verify_requests(server)
    assert result.returncode == 0, result.stderr
    recs = records(ws)
    verdicts = of_type(recs, "verdict")
    assert [(v["verdict"], v["source"]) for v in verdicts] == [
        ("NOT_VERIFIED", "checks"),
        ("VERIFIED", "model"),
    ]
    assert "differs from expected.txt: line 1: expected 'Hello, world!'" in verdicts[0]["unmet"][0]
    # The hard failure needed no model: the only verdict request is the second one.
    assert len(asked) == 1
    plans = of_type(recs, "plan")
    assert plans[1]["unmet"] == verdicts[0]["unmet"]
    state = json.loads((ws / ".agent_context" / "state.json").read_text())
    assert [t["status"] for t in state["goal"]["tasks"]] == ["completed", "completed"]
    assert state["verification"] == "verified"
    assert (ws / "main.py").read_text() == "print('Hello, world!')\n"


def test_a_garbage_verdict_twice_leaves_the_deterministic_verdict(ws: Path) -> None:
    scenario = {
        **notes_scenario("written and read back"),
        "verdict": {"content": "Looks good to me! VERIFIED"},
    }
    with FakeServer(scenario) as server:
        result = run_cli(cli_env(server.url), "start", "Notes", "-w", str(ws), "--foreground")
        asked = verify_requests(server)
    assert result.returncode == 0, result.stderr
    assert len(asked) == 2
    assert all(r["options"]["temperature"] == 0 for r in asked)
    # held to the schema, and each of its keys told
    assert asked[0]["format"]["properties"]["verdict"]["enum"] == ["VERIFIED", "NOT_VERIFIED"]
    turn = asked[0]["messages"][-1]["content"]
    assert all(f"\n{key}: " in turn for key in ("verdict", "unmet", "evidence", "next"))
    verdict = of_type(records(ws), "verdict")
    assert [(v["verdict"], v["source"]) for v in verdict] == [("VERIFIED", "checks")]


def test_checks_that_keep_failing_end_the_goal_failed_after_two_replans(ws: Path) -> None:
    (ws / "check.py").write_text("import sys\nprint('2 requirements unmet')\nsys.exit(1)\n")
    scenario = {"rules": [plan_rule(("Fix", ["Make the check pass"]))], "default": done("done")}
    with FakeServer(scenario) as server:
        env = cli_env(server.url)
        args = ("start", "Pass the check", "-w", str(ws), "--foreground")
        result = run_cli(env, *args, "--check", "python check.py")
        asked = verify_requests(server)
    assert result.returncode == 1
    assert "checks still fail after 2 replans" in result.stderr
    assert "python check.py" in result.stderr
    recs = records(ws)
    assert [v["then"] for v in of_type(recs, "verdict")] == ["replan", "replan", "fail"]
    assert [bool(p.get("unmet")) for p in of_type(recs, "plan")] == [False, True, True]
    assert len(of_type(recs, "check_finished")) == 3 and not asked
    assert "goal_completed" not in record_types(ws)
    info = status_json(env, ws)
    assert (info["status"], info["verification"]) == ("failed", "failed")


def test_a_check_whose_script_was_never_written_is_reported_as_not_run(ws: Path) -> None:
    # A check the allow-list refuses never gets this far (test_first_hour): `start` refuses
    # it. A script the goal was to write can only be found missing at the end.
    scenario = {
        **notes_scenario("written"),
    }
    with FakeServer(scenario) as server:
        env = cli_env(server.url)
        args = ("start", "Notes", "-w", str(ws), "--foreground", "--check", "python check.py")
        result = run_cli(env, *args)
    assert result.returncode == 0, result.stderr
    (check,) = of_type(records(ws), "check_finished")
    assert check["status"] == "not_run" and "'check.py' does not exist" in check["summary"]
    assert "goal completed (unverified)" in result.stderr
    assert status_json(env, ws)["verification"] == "unverified"


def test_no_verify_skips_the_goal_checks_but_not_the_gate(ws: Path) -> None:
    (ws / "test_x.py").write_text("def test_x():\n    assert False\n")
    scenario = {
        "rules": [plan_rule(("Notes", ["Write notes.txt"]))],
        "replies": [done("written"), call("write_file", path="notes.txt", content="n\n")],
        "default": done("written"),
    }
    with FakeServer(scenario) as server:
        env = cli_env(server.url)
        args = ("start", "Notes", "-w", str(ws), "--foreground", "--no-verify")
        result = run_cli(env, *args)
        asked = verify_requests(server)
    assert result.returncode == 0, result.stderr
    recs = records(ws)
    assert [r for r in of_type(recs, "feedback") if r.get("refused")]  # the gate still works
    assert "verify_started" not in record_types(ws) and not asked
    assert recs[0]["settings"]["verify"] is False
    assert recs[-1]["verification"] == "unverified"


def test_a_goal_the_loop_guard_ends_is_never_completed(ws: Path) -> None:
    scenario = {
        "rules": [plan_rule(("Look", ["Inspect the folder"]))],
        "default": call("list_dir", path="."),
    }
    with FakeServer(scenario) as server:
        env = cli_env(server.url, LOCALAGENT_MAX_REPLANS="0")
        result = run_cli(env, "start", "Look around", "-w", str(ws), "--foreground")
    assert result.returncode == 1
    recs = records(ws)
    assert "action_blocked" in record_types(ws) and "goal_completed" not in record_types(ws)
    assert recs[-1]["type"] == "goal_failed" and recs[-1]["verification"] == "unverified"
    assert status_json(env, ws)["status"] == "failed"


def test_a_goal_check_cut_off_by_a_kill_runs_again_on_resume(ws: Path) -> None:
    (ws / "slow_check.py").write_text(
        "import time\n"
        "with open('runs.txt', 'a') as fh:\n"
        "    fh.write('run\\n')\n"
        "time.sleep(1.5)\n"
        "print('1 passed')\n"
    )
    scenario = {
        **notes_scenario("written"),
    }
    with FakeServer(scenario) as server:
        env = cli_env(server.url)
        args = ("start", "Notes", "-w", str(ws), "--foreground", "--check", "python slow_check.py")
        proc = start_cli(env, *args)
        try:
            wait_for(lambda: (ws / "runs.txt").exists())
        finally:
            proc.kill()
            proc.wait(10)
        assert "check_finished" not in record_types(ws)
        result = run_cli(env, "resume", "-w", str(ws), "--foreground")
    assert result.returncode == 0, result.stderr
    recs = records(ws)
    started = of_type(recs, "check_started")
    assert [s["rerun"] for s in started] == [False, True]
    (finished,) = of_type(recs, "check_finished")
    assert finished["status"] == "passed"
    assert (ws / "runs.txt").read_text().count("run") == 2
    # Nothing of the model's was run again: one write, one read.
    assert [r["tool"] for r in of_type(recs, "action_started")] == ["write_file", "read_file"]
    assert recs[-1]["verification"] == "verified"


def test_doctor_lists_the_checks_a_workspace_would_run(ws: Path) -> None:
    (ws / "test_game.py").write_text("def test_game():\n    pass\n")
    (ws / "main.py").write_text("print('hi')\n")
    (ws / "expected.txt").write_text("hi\n")
    with FakeServer({}) as server:
        env = cli_env(server.url)
        result = run_cli(env, "doctor", "-w", str(ws))
    line = next(x for x in result.stdout.splitlines() if "goal checks" in x)
    assert "python -m pytest -q (tests)" in line and "python main.py (expected)" in line


def test_the_verdict_request_names_the_goal_once(ws: Path) -> None:
    """The 1.5B's mathx plans name their tasks with the goal's own 250 characters, twice
    after a replan: the verdict request showed them under the goal, each read anew by the
    engine (505 tokens read for that request, bench_cache on the CPU). It goes on from the
    rounds now, whose plan names such a task "The goal above.", and gives the plan's marks
    as the rounds' facts do."""
    goal = (
        "Write notes.txt with three lines of notes about the project, one per line, "
        "and nothing else in the workspace"
    )
    scenario = {
        "rules": [plan_rule((goal + ".", ["Write notes.txt"]))],
        "replies": [call("write_file", path="notes.txt", content="a\nb\nc\n")],
        "default": done("notes.txt is written"),
    }
    with FakeServer(scenario) as server:
        env = cli_env(server.url, LOCALAGENT_MAX_ROUNDS="3")
        ran = run_cli(env, "start", goal, "-w", str(ws), "--foreground")
        (request,) = verify_requests(server)
    assert ran.returncode == 0, ran.stderr
    text = messages_text(request)
    assert text.count("three lines of notes") == 1, text
    assert "1. The goal above.\n    1.1. Write notes.txt" in text
    assert "\nPlan progress: completed 1.1\nEVIDENCE:\n" in request["messages"][-1]["content"]


def test_the_verdict_leaves_out_checks_a_later_goal_check_of_their_kind_ran_again(
    ws: Path,
) -> None:
    """The 1.5B's mathx verdict listed its own `python -m pytest`, `python -m pytest
    tests/test_mathx.py`, `ruff check --fix mathx` and `ruff check mathx` under the goal
    checks `python -m pytest -q` and `ruff check .` that ran after them: 85 tokens the
    engine read for that request alone (bench_cache on the CPU). A goal check of the same
    program run later over the whole workspace is the evidence; a run of another program
    or another ruff command stays."""
    goal = "Write calc.py with add(a, b) and tests in test_calc.py; ruff check must be clean"
    tests = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    scenario = {
        "rules": [plan_rule(("Calc", ["Write calc.py and test_calc.py and check them"]))],
        "replies": [
            call("write_file", path="calc.py", content="def add(a, b):\n    return a + b\n"),
            call("write_file", path="test_calc.py", content=tests),
            call("run_cmd", cmd="python -m pytest test_calc.py"),
            call("run_cmd", cmd="ruff check calc.py"),
            call("run_cmd", cmd="ruff format --check calc.py test_calc.py"),
            call("run_cmd", cmd="python calc.py"),
        ],
        "default": done("calc.py and its tests are written and pass"),
    }
    with FakeServer(scenario) as server:
        env = cli_env(server.url, LOCALAGENT_MAX_ROUNDS="10")
        ran = run_cli(env, "start", goal, "-w", str(ws), "--foreground")
        requests = verify_requests(server)
    assert ran.returncode == 0, ran.stderr
    turn = requests[0]["messages"][-1]["content"]
    assert "goal check `python -m pytest -q` passed" in turn, turn
    assert "goal check `ruff check .` passed" in turn, turn
    assert "ran `python -m pytest test_calc.py`" not in turn, turn
    assert "ran `ruff check calc.py`" not in turn, turn
    assert "ran `ruff format --check calc.py test_calc.py`" in turn, turn
    assert "ran `python calc.py`" in turn, turn
