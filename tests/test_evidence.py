"""Evidence that means something (issue 25, items 3-6): failure claims need an attempt,
no-op work is not progress, a program is checked only by running it, a small verifier
cannot make a goal "verified" on its word, named files are found where they are, and a
failed command is not rerun in a replanned subtask while nothing changed. Each test
drives the real CLI against the fake model server with the replies real models gave."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support import call, cli_env, done, messages_text, plan_rule, records, run_cli

from localagent.models.fake import FakeServer

# The verbatim failure claim a 1.5B model repeated for 13 subtasks (issue 25, item 3).
PARROTED = "unknown tool 'create_dir'; available tools: ..."
SMALL_MODEL = "qwen2.5-coder:1.5b"
# The game of issue 25, item 5: functions defined, never called.
UNCALLED_GAME = (
    "import random\n\n\n"
    "def get_computer_choice():\n"
    "    return random.choice(['rock', 'paper', 'scissors'])\n\n\n"
    "def determine_winner(user, computer):\n"
    "    if user == computer:\n"
    "        return 'tie'\n"
    "    return 'user' if (user, computer) in WINS else 'computer'\n\n\n"
    "WINS = {('rock', 'scissors'), ('paper', 'rock'), ('scissors', 'paper')}\n"
)
INTERACTIVE_GAME = (
    UNCALLED_GAME
    + "\n\nchoice = input('rock, paper or scissors? ').strip()\n"
    + "computer = get_computer_choice()\n"
    + "winner = determine_winner(choice, computer)\n"
    + "print(f'you: {choice}, computer: {computer}, winner: {winner}')\n"
)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


def of_type(recs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [r for r in recs if r["type"] == kind]


def rounds(server: FakeServer) -> list[dict[str, Any]]:
    return [r for r in server.chat_requests if not r.get("format") and not r.get("response_format")]


def claims(recs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        c
        for r in of_type(recs, "llm_call")
        for c in r.get("tool_calls", [])
        if c["name"] == "mark_subtask_complete"
    ]


def start(ws: Path, server: FakeServer, goal: str, *extra: str, **env: str) -> Any:
    return run_cli(cli_env(server.url, **env), "start", goal, "-w", str(ws), "--foreground", *extra)


def small(scenario: dict[str, Any]) -> dict[str, Any]:
    return {**scenario, "models": [{"name": SMALL_MODEL}]}


# ---- failure claims need evidence (item 3) -----------------------------------------------


def test_a_parroted_failure_claim_stops_the_goal_early(ws: Path) -> None:
    subtasks = [
        "Create a directory named 'mathx'",
        "Write mathx/__init__.py",
        "Write mathx/ops.py with add and sub",
        "Write tests/test_ops.py",
    ]
    scenario = {
        "rules": [plan_rule(("Package", subtasks))],
        "replies": [call("create_dir", path="mathx")],
        "default": done(PARROTED, success=False),
    }
    with FakeServer(scenario) as server:
        result = start(ws, server, "Create the mathx package with tests")
        sent = rounds(server)
    assert result.returncode == 1
    recs = records(ws)
    # The first claim follows a real attempt; the next ones repeat it with nothing tried.
    assert len(of_type(recs, "subtask_failed")) <= 2
    assert len(claims(recs)) <= 4, [c["arguments"]["reason"] for c in claims(recs)]
    refused = [r for r in of_type(recs, "feedback") if r.get("refused")]
    assert refused and "nothing was tried in this subtask" in refused[0]["text"]
    assert "write_file" in refused[0]["text"]  # what to try instead
    loops = [r for r in of_type(recs, "loop_detected") if r["tool"] == "mark_subtask_complete"]
    assert loops, "the identical claims never reached the loop guard"
    assert recs[-1]["type"] == "goal_failed" and "same failure" in recs[-1]["reason"]
    assert "nothing was tried in this subtask" in messages_text(sent[-1])


def test_a_failure_claim_with_nothing_tried_is_refused_until_the_model_tries(ws: Path) -> None:
    scenario = {
        "rules": [plan_rule(("Hello", ["Open a text editor or an IDE.", "Write hello.py"]))],
        "replies": [
            done("I cannot open a text editor", success=False),
            call("write_file", path="hello.py", content="print('Hello, world!')\n"),
            call("run_cmd", cmd="python hello.py"),
            done("hello.py prints Hello, world!"),
        ],
        "default": done("hello.py prints Hello, world!"),
    }
    with FakeServer(scenario) as server:
        result = start(ws, server, "Write a hello world script")
    assert result.returncode == 0, result.stderr
    recs = records(ws)
    refused = [r for r in of_type(recs, "feedback") if r.get("refused")]
    assert len(refused) == 1 and "nothing was tried" in refused[0]["text"]
    assert "subtask_failed" not in [r["type"] for r in recs]


def test_after_a_replan_the_old_error_is_not_the_latest_news(ws: Path) -> None:
    scenario = {
        "rules": [
            plan_rule(("Notes", ["Write notes.txt"]), match="failed:"),
            plan_rule(("Notes", ["Create a directory named 'notes'"])),
        ],
        "replies": [
            call("create_dir", path="notes"),
            done(PARROTED, success=False),
            call("write_file", path="notes.txt", content="n\n"),
            done("notes.txt is written"),
        ],
    }
    with FakeServer(scenario) as server:
        result = start(ws, server, "Write notes")
        sent = rounds(server)
    assert result.returncode == 0, result.stderr
    after = sent[2]["messages"][-1]["content"]  # the facts of the first round of the new plan
    assert "ACTIVE SUBTASK: Write notes.txt" in after
    # no error line at all (none is left), or one without the old error
    assert "create_dir" not in after.split("Last errors:", 1)[-1].split("ACTIVE TASK")[0]
    assert "plan was revised" in after


# ---- no-op progress and reading are not checks (item 4) -------------------------------


def test_an_unchanged_rewrite_is_neither_progress_nor_verification(ws: Path) -> None:
    game = "def show(result):\n    print(result)\n\n\nshow('tie')\n"
    subtasks = ["Write game.py with the game logic", "Write a function to display the result"]
    scenario = {
        "rules": [plan_rule(("Game", subtasks))],
        "replies": [
            call("write_file", path="game.py", content=game),
            call("run_cmd", cmd="python game.py"),
            done("game.py runs"),
            call("write_file", path="game.py", content=game),
            done("Write a function to display the result"),
        ],
        "default": done("Write a function to display the result"),
    }
    with FakeServer(scenario) as server:
        result = start(ws, server, "Create a rock-paper-scissors game")
    assert result.returncode == 0, result.stderr
    recs = records(ws)
    noop = [r for r in of_type(recs, "action_finished") if "already has" in r["result"]]
    assert len(noop) == 1 and noop[0]["changed"] is False
    completed = of_type(recs, "subtask_completed")
    assert [c["verified"] for c in completed] == [True, False]
    assert "nothing was changed or run in this subtask" in completed[1]["unverified"][0]


def test_reading_a_program_is_not_checking_it(ws: Path) -> None:
    scenario = {
        "rules": [plan_rule(("Game", ["Write game.py"]))],
        "replies": [
            call("write_file", path="game.py", content="print('rock')\n"),
            call("read_file", path="game.py", start_line=1, end_line=1),
            done("game.py is written and checked"),
        ],
        "default": done("game.py is written and checked"),
    }
    with FakeServer(scenario) as server:
        result = start(ws, server, "Write game.py")
    assert result.returncode == 0, result.stderr
    recs = records(ws)
    nudge = [r for r in of_type(recs, "feedback") if r.get("nudged")]
    assert len(nudge) == 1 and "game.py was only read" in nudge[0]["text"]
    assert of_type(recs, "subtask_completed")[0]["verified"] is False


# ---- a program is checked by running it (items 4, 5) ----------------------------------


def test_an_interactive_program_is_checked_by_running_it_with_input(ws: Path) -> None:
    scenario = {
        "rules": [plan_rule(("Game", ["Write rps.py, a rock-paper-scissors game"]))],
        "replies": [
            call("write_file", path="rps.py", content=INTERACTIVE_GAME),
            call("run_cmd", cmd="python rps.py"),
            done("rps.py works"),
            call("run_cmd", cmd="python rps.py", stdin="rock\n"),
            done("rps.py plays a round"),
        ],
    }
    with FakeServer(scenario) as server:
        result = start(ws, server, "Create a rock-paper-scissors game")
    assert result.returncode == 0, result.stderr
    recs = records(ws)
    runs = [r for r in of_type(recs, "action_finished") if r["tool"] == "run_cmd"]
    assert "EOFError" in runs[0]["result"]
    # the call to copy runs this program, with the first choice its prompt offers
    assert runs[0]["result"].endswith(
        'Run it again with its input in stdin, e.g. send: {"name": "run_cmd", "arguments": '
        '{"cmd": "python rps.py", "stdin": "rock\\n"}}'
    )
    assert "you: rock" in runs[1]["result"]
    nudge = [r for r in of_type(recs, "feedback") if r.get("nudged")]
    assert len(nudge) == 1 and "waited for input" in nudge[0]["text"]
    assert of_type(recs, "subtask_completed")[0]["verified"] is True
    assert recs[-1]["verification"] == "verified"


@pytest.mark.parametrize("model", ["gpt-oss:20b", SMALL_MODEL])
def test_a_program_that_never_calls_its_functions_is_not_verified(ws: Path, model: str) -> None:
    scenario = {
        "models": [{"name": model}],
        "rules": [plan_rule(("Game", ["Write rock-paper-scissors.py"]))],
        "replies": [
            call("write_file", path="rock-paper-scissors.py", content=UNCALLED_GAME),
            call("run_cmd", cmd="python rock-paper-scissors.py"),
            done("The game is implemented"),
        ],
        "default": done("The game is implemented"),
    }
    with FakeServer(scenario) as server:
        result = start(ws, server, "Create a rock-paper-scissors game", LOCALAGENT_MODEL=model)
    assert result.returncode == 0, result.stderr
    recs = records(ws)
    run = next(r for r in of_type(recs, "action_finished") if r["tool"] == "run_cmd")
    assert run["result"].startswith("exit code 0\n(no output)")
    nudge = [r for r in of_type(recs, "feedback") if r.get("nudged")]
    assert nudge and "printed nothing" in nudge[0]["text"]
    assert recs[-1]["type"] == "goal_completed" and recs[-1]["verification"] == "unverified"
    assert "goal completed (unverified)" in result.stderr
    assert "NOT VERIFIED" in result.stderr


def test_a_small_verifier_cannot_verify_a_goal_on_its_word(ws: Path) -> None:
    scenario = small(
        {
            "rules": [plan_rule(("Notes", ["Write notes.md"]))],
            "replies": [call("write_file", path="notes.md", content="# Notes\n"), done("written")],
        }
    )
    with FakeServer(scenario) as server:
        result = start(ws, server, "Write notes.md with a title", LOCALAGENT_MODEL=SMALL_MODEL)
    assert result.returncode == 0, result.stderr
    recs = records(ws)
    verdict = of_type(recs, "verdict")[-1]
    assert verdict["verdict"] == "VERIFIED" and verdict["verification"] == "unverified"
    assert "small" in verdict["note"]
    assert recs[-1]["verification"] == "unverified" and "NOT VERIFIED" in recs[-1]["reason"]
    assert "NOT VERIFIED" in result.stderr and "small" in result.stderr


def test_a_small_verifier_with_a_program_that_prints_is_verified(ws: Path) -> None:
    scenario = small(
        {
            "rules": [plan_rule(("Hello", ["Write hello.py that prints Hello, world!"]))],
            "replies": [
                call("write_file", path="hello.py", content="print('Hello, world!')\n"),
                call("run_cmd", cmd="python hello.py"),
                done("hello.py printed Hello, world!"),
            ],
        }
    )
    with FakeServer(scenario) as server:
        result = start(ws, server, "Write a hello world script", LOCALAGENT_MODEL=SMALL_MODEL)
    assert result.returncode == 0, result.stderr
    assert records(ws)[-1]["verification"] == "verified"


# ---- achieved work is not failed (item 6) -------------------------------------------------


def test_a_named_file_is_found_where_it_is_in_the_workspace(ws: Path) -> None:
    (ws / "pkg").mkdir()
    (ws / "pkg" / "__init__.py").write_text("")
    (ws / "pkg" / "utils.py").write_text("def double(x):\n    return 2 * x\n")
    test = "from pkg.utils import double\n\n\ndef test_double():\n    assert double(2) == 4\n"
    scenario = {
        "rules": [plan_rule(("Utils", ["Add a test for double() in utils.py"]))],
        "replies": [
            call("write_file", path="test_utils.py", content=test),
            call("run_cmd", cmd="python -m pytest -q"),
            done("utils.py has a passing test"),
        ],
    }
    with FakeServer(scenario) as server:
        result = start(ws, server, "Test the double() function of utils.py")
        sent = rounds(server)
    assert result.returncode == 0, result.stderr
    recs = records(ws)
    assert not [r for r in of_type(recs, "feedback") if r.get("refused")]
    assert recs[-1]["verification"] == "verified"
    facts = sent[0]["messages"][-1]["content"]
    assert "Files mentioned but missing" not in facts  # nothing is: no line says so
    assert "Files that exist: pkg/utils.py (for utils.py)" in facts


def test_a_script_whose_non_zero_exit_is_the_goal_can_achieve_it(ws: Path) -> None:
    cli = (
        "import sys\n\n"
        "if len(sys.argv) < 2:\n"
        "    print('usage: greet.py NAME')\n"
        "    sys.exit(2)\n"
        "print(f'Hello, {sys.argv[1]}!')\n"
    )
    goal = "Write greet.py that exits with status 2 when run without arguments"
    scenario = {
        "rules": [plan_rule(("Greet", [goal]))],
        "replies": [
            call("write_file", path="greet.py", content=cli),
            call("run_cmd", cmd="python greet.py"),
            done("python greet.py exits with status 2 and prints its usage"),
        ],
    }
    with FakeServer(scenario) as server:
        result = start(ws, server, goal)
    assert result.returncode == 0, result.stderr
    recs = records(ws)
    assert not [r for r in of_type(recs, "feedback") if r.get("refused") or r.get("nudged")]
    assert of_type(recs, "subtask_completed")[0]["verified"] is True
    assert recs[-1]["type"] == "goal_completed" and recs[-1]["verification"] == "verified"


def test_a_user_check_still_fails_on_a_non_zero_exit(ws: Path) -> None:
    (ws / "check.py").write_text("print('greet.py is missing')\nraise SystemExit(1)\n")
    scenario = {
        "rules": [plan_rule(("Notes", ["Write notes.txt"]))],
        "replies": [call("write_file", path="notes.txt", content="n\n"), done("written")],
        "default": done("written"),
    }
    with FakeServer(scenario) as server:
        result = start(
            ws, server, "Notes", "--check", "python check.py", LOCALAGENT_MAX_REPLANS="0"
        )
    assert result.returncode == 1
    (check,) = of_type(records(ws), "check_finished")
    assert check["status"] == "failed"


def test_a_failed_command_is_not_rerun_by_a_replanned_subtask_while_nothing_changed(
    ws: Path,
) -> None:
    (ws / "test_x.py").write_text("def test_x():\n    assert 1 == 2\n")
    scenario = {
        "rules": [plan_rule(("Tests", ["Run the tests"]))],
        "default": call("run_cmd", cmd="python -m pytest -q"),
    }
    with FakeServer(scenario) as server:
        result = start(ws, server, "Make the tests pass")
    assert result.returncode == 1
    recs = records(ws)
    assert len(of_type(recs, "plan")) == 3  # two replans, each with the same subtask text
    runs = [r for r in of_type(recs, "action_finished") if r["tool"] == "run_cmd"]
    assert len(runs) == 2, "the replanned subtasks ran the same failing command again"


def test_a_failure_claim_that_only_repeats_the_nudge_completes_the_write_unverified(
    ws: Path,
) -> None:
    """The 1.5B's hello (bench_cache, kill after round 2): told that hello_world.py was
    written but never run or read, it answered with success=false and that very reason.
    The write was done: the subtask is completed, unverified, and no replan is asked for
    (the goal's own check runs the program)."""
    written = "The file 'hello_world.py' was successfully written."
    echoed = (
        "The file 'hello_world.py' was written but never run or read. "
        "Please run or read it to check it."
    )
    scenario = {
        "rules": [
            plan_rule(
                (
                    "Write a hello world script",
                    [
                        "write_file hello_world.py with the "
                        "following content: print('Hello, World!')"
                    ],
                )
            )
        ],
        "replies": [
            call("write_file", path="hello_world.py", content="print('Hello, World!')"),
            done(written),
            done(echoed, success=False),
        ],
        "default": done(written),
    }
    with FakeServer(small(scenario)) as server:
        result = start(ws, server, "Write a hello world script", LOCALAGENT_MODEL=SMALL_MODEL)
        plans = [r for r in server.chat_requests if "Plan work" in messages_text(r)]
    assert result.returncode == 0, result.stderr
    recs = records(ws)
    assert not of_type(recs, "subtask_failed")
    assert len(plans) == 1  # the first plan only: no replan
    completed = of_type(recs, "subtask_completed")
    assert [c["verified"] for c in completed] == [False]
    assert "never run or read" in completed[0]["unverified"][0]
    assert recs[-1]["type"] == "goal_completed"


def test_a_step_to_write_a_file_again_is_not_done_by_a_run_of_it(ws: Path) -> None:
    """The 1.5B's wordcount (the CPU): handed back "write_file wordcount.py again, changed
    so that it counts the words right ...", it ran `python wordcount.py --lines
    sample.txt` twice and called the step done; the claim was accepted with nothing
    written, and the next run failed on the same count."""
    (ws / "hi.py").write_text("print('ho')\n")
    step = "write_file hi.py again, changed so that it prints hi"
    scenario = {
        "rules": [plan_rule(("Fix hi.py", [step]))],
        "replies": [
            call("run_cmd", cmd="python hi.py"),
            done("The hi.py script was run successfully."),
            call("write_file", path="hi.py", content="print('hi')\n"),
            call("run_cmd", cmd="python hi.py"),
            done("hi.py prints hi"),
        ],
        "default": done("hi.py prints hi"),
    }
    with FakeServer(scenario) as server:
        result = start(ws, server, "Fix hi.py so that it prints hi")
    assert result.returncode == 0, result.stderr
    recs = records(ws)
    refused = [r for r in of_type(recs, "feedback") if r.get("refused")]
    assert refused and "hi.py is not written in this subtask" in refused[0]["text"]
    (completed,) = of_type(recs, "subtask_completed")
    assert completed["seq"] > refused[0]["seq"]
    assert (ws / "hi.py").read_text() == "print('hi')\n"
