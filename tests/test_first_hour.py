"""What a new user meets in the first hour, through the real CLI and the fake server:
checks that can never run are refused before the goal starts, the interpreter a
workspace's commands use does not depend on where localagent was started, quoted
operators are plain characters, a missing folder is said to be missing, and counts
agree with their nouns."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from research_support import make_package
from support import (
    CLI_TIMEOUT,
    call,
    cli_args,
    cli_env,
    done,
    plan_rule,
    read_history,
    records,
    run_cli,
    wait_for,
)

from localagent.models.fake import FakeServer

SHOW_ARGS = "import sys\nprint(sys.argv[1:])\n"


def finished(ws: Path) -> list[dict[str, Any]]:
    return [r for r in records(ws) if r["type"] == "action_finished"]


def one_command(cmd: str) -> dict[str, Any]:
    """A model that runs `cmd` once, then says its subtask is done."""
    return {
        "rules": [plan_rule(("Run", ["Run the command"]))],
        "replies": [call("run_cmd", cmd=cmd)],
        "default": done("ran it"),
    }


def cli_in(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """The real CLI started from `cwd`, as a user's shell would."""
    result = subprocess.run(
        cli_args(*args),
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=CLI_TIMEOUT,
    )
    assert "Traceback" not in result.stderr, result.stderr
    return result


# ---- checks that can never run (item 2) ---------------------------------------------


@pytest.mark.parametrize(
    ("check", "why", "foreground"),
    [
        ("npm test", "program 'npm' is not allowed", True),
        ("npm test", "program 'npm' is not allowed", False),
        ("python hello.py | grep Hello", "shell syntax '|'", True),
        ("python hello.py | grep Hello", "shell syntax '|'", False),
        ("python -c print(1)", "python -c is not allowed", True),
        ("python ../outside.py", "outside the workspace", False),
    ],
)
def test_a_check_that_can_never_run_is_refused_before_the_goal(
    tmp_path: Path, check: str, why: str, foreground: bool
) -> None:
    ws = tmp_path / "ws"
    with FakeServer(one_command("python hello.py")) as server:
        args = ["start", "Write hello.py", "-w", str(ws), "--check", check]
        result = run_cli(cli_env(server.url), *args, *(["--foreground"] if foreground else []))
        asked = server.chat_requests
    assert result.returncode == 2, result.stderr
    assert f"--check {check!r} can never run" in result.stderr and why in result.stderr
    assert not asked and not ws.exists()  # nothing started, not even the folder


def test_a_config_check_that_can_never_run_is_refused(tmp_path: Path, isolated_home: Path) -> None:
    (isolated_home / "config").mkdir()
    (isolated_home / "config" / "config.toml").write_text('checks = ["npm test"]\n')
    ws = tmp_path / "ws"
    ws.mkdir()
    with FakeServer(one_command("python hello.py")) as server:
        env = cli_env(server.url)
        result = run_cli(env, "start", "Write hello.py", "-w", str(ws), "--foreground")
        doctor = run_cli(env, "doctor", "-w", str(ws))
        asked = server.chat_requests
    assert result.returncode == 2, result.stderr
    assert "the config file's check 'npm test' can never run" in result.stderr
    assert "program 'npm' is not allowed" in result.stderr
    assert not asked and not (ws / ".agent_context").exists()
    line = next(x for x in doctor.stdout.splitlines() if "goal checks" in x)
    assert line.startswith("[fail]") and "'npm test' can never run" in line


def test_a_check_naming_a_script_the_goal_writes_is_accepted(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    scenario = {
        "rules": [plan_rule(("Hello", ["Write hello.py"]))],
        "replies": [
            call("write_file", path="hello.py", content="print('Hello')\n"),
            call("run_cmd", cmd="python hello.py"),
            done("hello.py prints Hello"),
        ],
        "default": done("hello.py prints Hello"),
    }
    with FakeServer(scenario) as server:
        args = ("start", "Write hello.py", "-w", str(ws), "--foreground")
        result = run_cli(cli_env(server.url), *args, "--check", "python hello.py")
    assert result.returncode == 0, result.stderr
    (check,) = [r for r in records(ws) if r["type"] == "check_finished"]
    assert check["status"] == "passed", check


# ---- which Python runs (item 6) -----------------------------------------------------


@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX shell script stands in for python")
def test_the_interpreter_does_not_depend_on_where_localagent_started(tmp_path: Path) -> None:
    # The user's shell is in `cwd`, with a python of theirs on PATH below it (an
    # activated venv, ~/.pyenv/shims from $HOME): foreground, background and doctor
    # must all use that one, whatever folder each process runs in.
    cwd, ws = tmp_path / "cwd", tmp_path / "ws"
    tools = cwd / "tools" / "bin"
    tools.mkdir(parents=True)
    ws.mkdir()
    stand_in = tools / "python3"
    stand_in.write_text(f'#!/bin/sh\necho "stand-in python"\nexec "{sys.executable}" "$@"\n')
    stand_in.chmod(0o755)
    (ws / "where.py").write_text("print('where.py ran')\n")
    ran = []
    for foreground in (True, False):
        with FakeServer(one_command("python where.py")) as server:
            env = cli_env(server.url)
            env["PATH"] = os.pathsep.join([str(tools), env["PATH"]])
            goal = ("start", f"Run where.py ({foreground=})", "-w", str(ws))
            started = cli_in(cwd, env, *goal, *(["--foreground"] if foreground else []))
            assert started.returncode == 0, started.stderr
            wait_for(lambda: records(ws)[-1]["type"] in ("goal_completed", "goal_failed"))
            ran.append(finished(ws)[-1]["result"])
    in_front, in_back = ran
    doctor = cli_in(cwd, env, "doctor", "-w", str(ws))
    assert "where.py ran" in in_front and "where.py ran" in in_back
    assert "stand-in python" in in_front and "stand-in python" in in_back
    line = next(x for x in doctor.stdout.splitlines() if "] interpreter " in x)
    assert str(stand_in) in line, doctor.stdout


# ---- smaller items (11) -------------------------------------------------------------


def test_operators_inside_quotes_are_plain_characters(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "show.py").write_text(SHOW_ARGS)
    scenario = {
        "rules": [plan_rule(("Run", ["Run the commands"]))],
        "replies": [
            call("run_cmd", cmd='python show.py "a; b" \'x | y\' "&& >"'),
            call("run_cmd", cmd='python -c "import sys; print(1)"'),
            call("run_cmd", cmd="python show.py a; python show.py b"),
            call("run_cmd", cmd="python show.py 'a'>out.txt"),
        ],
        "default": done("ran them"),
    }
    with FakeServer(scenario) as server:
        result = run_cli(cli_env(server.url), "start", "Run", "-w", str(ws), "--foreground")
    assert result.returncode == 0, result.stderr
    quoted, inline, chained, redirected = (r["result"] for r in finished(ws))
    assert "exit code 0" in quoted and "['a; b', 'x | y', '&& >']" in quoted
    # There is no shell, so the ';' was never the problem: python -c is refused as such.
    assert "python -c is not allowed" in inline and "shell syntax" not in inline
    assert "shell syntax ';'" in chained
    assert "shell syntax '>'" in redirected and not (ws / "out.txt").exists()


def test_a_missing_workspace_is_said_to_be_missing(tmp_path: Path) -> None:
    missing, a_file = tmp_path / "nowhere", tmp_path / "file.txt"
    a_file.write_text("not a folder\n")
    env = cli_env("127.0.0.1:9")
    for args in (("resume",), ("ask", "why?", "--foreground")):
        gone = run_cli(env, *args, "-w", str(missing))
        assert gone.returncode == 2, gone.stderr
        assert f"the workspace {missing} does not exist" in gone.stderr
        assert "not a folder" not in gone.stderr
        wrong = run_cli(env, *args, "-w", str(a_file))
        assert wrong.returncode == 2 and "does not exist" not in wrong.stderr
    assert not missing.exists()


def test_one_citation_is_one_citation(tmp_path: Path) -> None:
    root = make_package(tmp_path / "ws")

    def structured(match: str, content: dict[str, Any]) -> dict[str, Any]:
        return {
            "kind": "plan",
            "in": "system",
            "match": match,
            "reply": {"content": json.dumps(content)},
        }

    scenario = {
        "rules": [
            structured("You plan research", {"sub_questions": ["Where is the header built?"]}),
            structured("You decide whether", {"decision": "FINISH"}),
            {
                "kind": "chat",
                "in": "system",
                "match": "You answer a question",
                "reply": {"content": "basic_auth_header builds it (shop/auth.py:6-9)."},
            },
        ],
        "replies": [
            call("read_file", path="shop/auth.py", start_line=6, end_line=9),
            call("finish_step", findings="built at shop/auth.py:6-9"),
        ],
    }
    with FakeServer(scenario) as server:
        env = cli_env(server.url)
        result = run_cli(env, "ask", "Where is the header built?", "-w", str(root), "--foreground")
        status = run_cli(env, "status", "-w", str(root))
    assert result.returncode == 0, result.stderr
    # A question keeps its own journal beside the goal's.
    asked = read_history(root / ".agent_context" / "ask" / "history.jsonl") or records(root)
    (answer,) = [r for r in asked if r["type"] == "answer"]
    assert answer["citations"] == 1
    assert "answered with 1 citation (0 unverified)" in asked[-1]["reason"]
    assert "1 citations" not in result.stderr + status.stdout
