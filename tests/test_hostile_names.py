"""Names that are not UTF-8: a goal typed in another encoding (argv bytes reach Python as
surrogate escapes on POSIX) and a workspace folder named in one.

The goal's undecodable bytes become U+FFFD once, at the start, so the journal, the
registry and the model see valid text, the same on every run. A folder keeps its exact
name for every file operation; it is shown (and keyed in the registry) as `\\xNN` text,
and the registry keeps its bytes so `resume --all` finds the very folder.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import CLI_TIMEOUT, cli_args, cli_env, done, plan_rule, records

from localagent.journal import Journal
from localagent.journal.registry import remember, workspaces
from localagent.models.fake import FakeServer

pytestmark = pytest.mark.skipif(
    sys.platform == "win32", reason="Windows names are UTF-16: argv and paths are always text"
)
QUICK = {"rules": [plan_rule(("T", ["one step"]))], "default": done()}
GOAL = b"write caf\xe9.txt"  # Latin-1, not UTF-8
FOLDER = b"ws-\xff\xfe"


def run_bytes(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI with arguments passed as the bytes they stand for, on a terminal that is
    strictly UTF-8 (as a UTF-8 locale makes stdout)."""
    done_ = subprocess.run(
        [os.fsencode(a) for a in cli_args(*args)],
        env={**env, "PYTHONIOENCODING": "utf-8:strict"},
        capture_output=True,
        timeout=CLI_TIMEOUT,
    )
    out = subprocess.CompletedProcess(
        done_.args,
        done_.returncode,
        done_.stdout.decode("utf-8"),  # strictly: what we print is UTF-8
        done_.stderr.decode("utf-8", "backslashreplace"),
    )
    assert "Traceback" not in out.stderr and "internal error" not in out.stderr, out.stderr
    return out


def test_a_goal_that_is_not_utf8_runs_with_replacement_characters(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    with FakeServer(QUICK) as fake:
        env = cli_env(fake.url)
        ran = run_bytes(env, "start", os.fsdecode(GOAL), "-w", str(ws), "--foreground")
        status = run_bytes(env, "status", "-w", str(ws))
    assert ran.returncode == 0, ran.stderr
    assert "the goal is not valid UTF-8 text" in ran.stderr
    assert records(ws)[0]["goal"] == "write caf\ufffd.txt"
    assert status.returncode == 0 and "write caf\ufffd.txt" in status.stdout
    assert "write caf\ufffd.txt" in fake.chat_requests[0]["messages"][-1]["content"]


def test_a_workspace_folder_that_is_not_utf8_works(tmp_path: Path) -> None:
    ws = tmp_path / os.fsdecode(FOLDER)
    shown = str(tmp_path) + "/ws-\\xff\\xfe"
    with FakeServer(QUICK) as fake:
        env = cli_env(fake.url)
        ran = run_bytes(env, "start", "a goal", "-w", str(ws), "--foreground")
        stop = run_bytes(env, "stop", "-w", str(ws))
        history = run_bytes(env, "history", "-w", str(ws))
    assert ran.returncode == 0, ran.stderr
    assert os.path.isdir(os.path.join(os.fsencode(tmp_path), FOLDER, b".agent_context"))
    assert records(ws)[-1]["type"] == "goal_completed"
    assert stop.returncode == 0 and stop.stdout.startswith(f"no agent is running in {shown};")
    assert history.returncode == 0 and "goal_completed" in history.stdout
    assert workspaces()[str(ws)]["goal"] == "a goal"


def test_the_registry_keeps_a_name_that_is_not_utf8_exactly(tmp_path: Path) -> None:
    one, two = tmp_path / os.fsdecode(b"a-\xff"), tmp_path / os.fsdecode(b"a-\xfe")
    for ws in (one, two):
        remember(ws, os.fsdecode(GOAL))
    found = workspaces()
    assert set(found) == {str(one), str(two)}  # exact names, never merged
    assert found[str(one)]["goal"] == "write caf\ufffd.txt"


def test_status_and_list_show_a_folder_that_is_not_utf8(tmp_path: Path) -> None:
    ws = tmp_path / os.fsdecode(FOLDER)
    journal = Journal(ws)
    journal.append("goal_started", goal="a goal")
    journal.append("goal_completed", reason="done")
    journal.finish()
    remember(ws, "a goal")
    env = cli_env("http://127.0.0.1:9")
    for args in (["status", "-w", str(ws)], ["status", "-w", str(ws), "--json"], ["list"]):
        shown = run_bytes(env, *args)
        text = shown.stdout.replace("\\\\", "\\")  # JSON escapes the backslash
        assert shown.returncode == 0 and "ws-\\xff\\xfe" in text, (args, shown.stderr)
    assert "ws-\\\\xff\\\\xfe" in run_bytes(env, "list", "--json").stdout
