"""What a new user meets in the first hour, part two, through the real CLI and the fake
server: an unfinished goal is never put away without a word (and `ask` runs beside it),
hints work where they are printed, the agent does not settle in the home folder and keeps
its journal out of git, `--json` is one contract, `resume --all` says what it resumes and
fails when a goal cannot start, and `list` shows the latest activity first."""

from __future__ import annotations

import json
import os
import re
import shutil
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
    closed_port,
    done,
    plan_rule,
    read_history,
    records,
    run_cli,
)

from localagent.loop.placement import too_wide
from localagent.models.fake import FakeServer

WRITE_B = {
    "rules": [plan_rule(("Write", ["Write b.txt"]))],
    "replies": [call("write_file", path="b.txt", content="b\n"), done("b.txt written")],
    "default": done("b.txt written"),
}


def down() -> dict[str, str]:
    """The CLI's environment with no model server: a goal is journaled, then suspended."""
    return cli_env(f"http://127.0.0.1:{closed_port()}", LOCALAGENT_RETRY_DEADLINE="0")


def suspended_goal(ws: Path, goal: str) -> None:
    ws.mkdir(parents=True, exist_ok=True)
    result = run_cli(down(), "start", goal, "-w", str(ws), "--foreground")
    assert result.returncode == 3, result.stderr


def journal_bytes(ws: Path) -> dict[str, bytes]:
    folder = ws / ".agent_context"
    return {name: (folder / name).read_bytes() for name in ("history.jsonl", "state.json")}


def as_json(result: subprocess.CompletedProcess[str]) -> Any:
    return json.loads(result.stdout)


# ---- an unfinished goal is never put away without a word (item 3) ----------------------


def test_a_new_goal_never_puts_an_unfinished_one_away_silently(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    suspended_goal(ws, "Goal A")
    before = journal_bytes(ws)
    refused = [
        run_cli(down(), "start", "Goal B", "-w", str(ws), *extra)
        for extra in (["--foreground"], [])
    ]
    for result in refused:
        assert result.returncode == 2, result.stderr
        assert "unfinished goal" in result.stderr and "'Goal A'" in result.stderr
        assert f"localagent resume -w {ws}" in result.stderr and "--new" in result.stderr
    assert journal_bytes(ws) == before
    assert not (ws / ".agent_context" / "archive").exists()
    with FakeServer(WRITE_B) as server:
        env = cli_env(server.url)
        args = ("start", "Goal B", "-w", str(ws), "--foreground", "--no-verify", "--new")
        started = run_cli(env, *args)
        assert started.returncode == 0, started.stderr
        assert "the unfinished goal 'Goal A' was put away" in started.stderr
        shown = run_cli(env, "history", "-w", str(ws), "--archive", "1")
        beyond = run_cli(env, "history", "-w", str(ws), "--archive", "2")
        status = run_cli(env, "status", "-w", str(ws))
        listed = as_json(run_cli(env, "list", "--json"))
    assert records(ws)[0]["goal"] == "Goal B"
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("archived goal 1 of 1") and "goal_started      Goal A" in (
        shown.stdout
    )
    assert beyond.returncode == 2 and "has 1 archived goal: 1 (" in beyond.stderr
    assert "archived   1 earlier goal" in status.stdout
    assert [row["archived"] for row in listed["workspaces"]] == [1]


ASK = "Where is the basic auth header built?"
ASK_SCENARIO = {
    "rules": [
        {
            "kind": "plan",
            "in": "system",
            "match": "You plan research",
            "reply": {"content": json.dumps({"sub_questions": [ASK]})},
        },
        {
            "kind": "plan",
            "in": "system",
            "match": "You decide whether",
            "reply": {"content": json.dumps({"decision": "FINISH"})},
        },
        {
            "kind": "chat",
            "in": "system",
            "match": "You answer a question",
            "reply": {"content": "`basic_auth_header` builds it (shop/auth.py:6-9)."},
        },
    ],
    "replies": [
        call("read_file", path="shop/auth.py", start_line=6, end_line=9),
        call("finish_step", findings="basic_auth_header builds it at shop/auth.py:6-9"),
    ],
}


def test_ask_runs_beside_an_unfinished_goal_without_touching_it(tmp_path: Path) -> None:
    root = make_package(tmp_path / "ws")
    suspended_goal(root, "Goal A")
    before = journal_bytes(root)
    with FakeServer(ASK_SCENARIO) as server:
        env = cli_env(server.url)
        asked = run_cli(env, "ask", ASK, "-w", str(root), "--foreground")
        status = as_json(run_cli(env, "status", "-w", str(root), "--json"))
    assert asked.returncode == 0, asked.stderr
    assert "shop/auth.py:6-9" in asked.stdout
    assert journal_bytes(root) == before, "the question touched the goal's journal"
    assert not (root / ".agent_context" / "archive").exists()
    assert (status["goal"], status["status"]) == ("Goal A", "suspended")
    question = read_history(root / ".agent_context" / "ask" / "history.jsonl")
    assert question[0]["goal"] == ASK and question[-1]["type"] == "goal_completed"


# ---- hints that work where they are printed (item 4) ------------------------------------


def cli_in(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
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


def test_a_suspended_goal_says_how_to_resume_it_from_anywhere(tmp_path: Path) -> None:
    elsewhere, ws, background = tmp_path / "elsewhere", tmp_path / "ws", tmp_path / "bg"
    for folder in (elsewhere, ws, background):
        folder.mkdir()
    env = down()
    foreground = cli_in(elsewhere, env, "start", "Goal A", "-w", str(ws), "--foreground")
    started = cli_in(elsewhere, env, "start", "Goal A", "-w", str(background))
    status = cli_in(elsewhere, env, "status", "-w", str(ws))
    assert foreground.returncode == 3 and started.returncode == 3, started.stderr
    assert foreground.stderr.count("localagent resume") == 1, foreground.stderr
    assert f"resume with: localagent resume -w {ws}" in foreground.stderr
    assert f"localagent resume -w {background}" in started.stderr
    assert status.stdout.count("localagent resume") == 1, status.stdout
    assert f"localagent resume -w {ws}" in status.stdout


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="systemd and cron are Linux's")
def test_autostart_where_nothing_can_run_it_is_said_not_advised(tmp_path: Path) -> None:
    empty = tmp_path / "no-programs"  # neither systemctl nor crontab can be found
    empty.mkdir()
    env = dict(down(), PATH=str(empty))
    install = run_cli(env, "autostart", "install")
    doctor = run_cli(env, "doctor", "-w", str(tmp_path))
    assert install.returncode == 2, install.stderr  # not 1, the code of a failed goal
    assert "neither a systemd user session nor crontab" in install.stderr
    line = next(x for x in doctor.stdout.splitlines() if "] autostart " in x)
    assert line.startswith("[warn]") and "not available" in line, doctor.stdout
    assert "localagent autostart install" not in doctor.stdout


# ---- where the agent may work (item 5) --------------------------------------------------


def test_the_home_folder_needs_allow_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = dict(down(), HOME=str(home), USERPROFILE=str(home))
    for args in (
        ["start", "Goal A", "--foreground"],
        ["start", "Goal A"],
        ["ask", "Why?", "--foreground"],
        ["ask", "Why?"],
    ):
        refused = run_cli(env, *args, "-w", str(home))
        assert refused.returncode == 2, (args, refused.stderr)
        assert "is your home folder" in refused.stderr and "--allow-home" in refused.stderr
        assert not (home / ".agent_context").exists(), args
    allowed = run_cli(env, "start", "Goal A", "-w", str(home), "--foreground", "--allow-home")
    assert allowed.returncode == 3, allowed.stderr  # it ran: the server is down
    assert records(home)[0]["goal"] == "Goal A"
    assert too_wide(Path(Path.cwd().anchor)) == "the root of a drive"


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_the_journal_stays_out_of_git_and_doctor_says_when_there_is_none(tmp_path: Path) -> None:
    repo, plain = tmp_path / "repo", tmp_path / "plain"
    plain.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=CLI_TIMEOUT)
    inside = repo / "sub"
    suspended_goal(inside, "Goal A")
    again = run_cli(down(), "resume", "-w", str(inside), "--foreground")
    assert again.returncode == 3, again.stderr
    seen = subprocess.run(
        ["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=all"],
        capture_output=True,
        text=True,
        check=True,
        timeout=CLI_TIMEOUT,
    )
    assert ".agent_context" not in seen.stdout, seen.stdout
    exclude = (repo / ".git" / "info" / "exclude").read_text().splitlines()
    assert exclude.count(".agent_context/") == 1, exclude
    in_git = run_cli(down(), "doctor", "-w", str(inside)).stdout
    outside = run_cli(down(), "doctor", "-w", str(plain)).stdout
    assert re.search(r"^\[ ok \] git .*under version control", in_git, re.M), in_git
    assert re.search(r"^\[warn\] git .*not under version control", outside, re.M), outside


# ---- one JSON contract (item 9) ---------------------------------------------------------


def test_status_and_list_speak_one_json_vocabulary(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    suspended_goal(ws, "Goal A")
    env = down()
    status = as_json(run_cli(env, "status", "-w", str(ws), "--json"))
    listed = as_json(run_cli(env, "list", "--json"))
    (row,) = listed["workspaces"]
    assert status["schema"] == listed["schema"] == 1
    assert status["status"] == row["status"] == "suspended"
    assert status["reason"] is None and status["verification"] is None
    assert row["verification"] is None and row["error"] is None and row["waiting"] is None
    assert row["last_activity"] == status["last_activity"] == records(ws)[-1]["ts"]


def test_errors_under_json_are_json_on_stdout(tmp_path: Path) -> None:
    env = down()
    for args in (
        ["status", "--json", "-w", str(tmp_path)],
        ["history", "--json", "-w", str(tmp_path)],
        ["history", "--json", "--archive", "1", "-w", str(tmp_path)],
        ["trace", "--json", "-w", str(tmp_path)],
        ["search", " ", "--json", "-w", str(tmp_path)],
    ):
        result = run_cli(env, *args)
        assert result.returncode == 2, (args, result.stderr)
        error = as_json(result)
        assert set(error) == {"error", "exit"} and error["exit"] == 2, error
        assert error["error"] and result.stderr == "", (args, result.stderr)


# ---- resume --all and list (item 11) ----------------------------------------------------


def test_resume_all_says_what_it_resumes_and_fails_when_a_goal_cannot(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    suspended_goal(first, "Goal A")
    suspended_goal(second, "Goal B")
    with FakeServer({"models": [{"name": "other:1b"}]}) as server:  # the goals' model is gone
        result = run_cli(cli_env(server.url), "resume", "--all")
    assert result.returncode == 3, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "resuming 2 goals:", result.stdout
    assert {lines[1].strip(), lines[2].strip()} == {f"{first}: Goal A", f"{second}: Goal B"}
    assert sum("could not start" in line for line in lines[3:]) == 2, result.stdout


def test_list_shows_the_latest_activity_first_and_prunes_vanished_folders(
    tmp_path: Path,
) -> None:
    older, newer = tmp_path / "a-older", tmp_path / "z-newer"
    suspended_goal(older, "Goal A")
    suspended_goal(newer, "Goal Z")
    env = down()
    shown = run_cli(env, "list").stdout.splitlines()
    assert shown[0].startswith("LAST ACTIVE"), shown
    assert [str(newer) in shown[1], str(older) in shown[2]] == [True, True], shown
    assert all(re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d  ", line) for line in shown[1:]), shown
    shutil.rmtree(older)
    pruned = run_cli(env, "list", "--prune")
    assert pruned.returncode == 0, pruned.stderr
    assert f"forgot {older}" in pruned.stderr
    listed = as_json(run_cli(env, "list", "--json"))
    assert [row["workspace"] for row in listed["workspaces"]] == [str(newer)]
    assert os.path.isdir(newer)
