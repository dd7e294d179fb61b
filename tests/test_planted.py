"""Files planted in `.agent_context/` (a cloned repository can ship anything): symlinks
are never followed, FIFOs and devices never opened, and every command says what is
wrong instead of writing outside the workspace or hanging (issue 9 items 5 and 6)."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest
from support import call, cli_args, cli_env, closed_port, done, plan_rule, run_cli

from localagent.journal import JOURNAL_FILES, TEMP_FILES, Journal
from localagent.models.fake import FakeServer
from localagent.system.safefs import UnsafeFile

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="symlinks and FIFOs: POSIX")
OUTSIDE = b"precious data outside the workspace\n"
PROMPT = 20  # seconds: far longer than any command needs, far shorter than a hang


def env_for(home: Path, host: str = "") -> dict[str, str]:
    return cli_env(host or f"http://127.0.0.1:{closed_port()}", LOCALAGENT_HOME=str(home))


def prompt_cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    began = time.monotonic()
    done = subprocess.run(cli_args(*args), env=env, capture_output=True, text=True, timeout=PROMPT)
    assert "Traceback" not in done.stderr, done.stderr
    assert time.monotonic() - began < PROMPT
    return done


def with_goal(workspace: Path) -> Journal:
    journal = Journal(workspace)
    journal.load()
    journal.append("goal_started", goal="G")
    journal.append("plan", tasks=[{"description": "T", "subtasks": ["s"]}])
    journal.finish()
    return journal


def outside_file(tmp_path: Path) -> Path:
    target = tmp_path / "outside" / "victim.txt"
    target.parent.mkdir(exist_ok=True)
    target.write_bytes(OUTSIDE)
    return target


def test_a_symlinked_history_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    context = workspace / ".agent_context"
    context.mkdir(parents=True)
    target = outside_file(tmp_path)
    (context / "history.jsonl").symlink_to(target)
    env = env_for(tmp_path / "home")
    for args in (["start", "a goal", "--foreground"], ["status"], ["history"], ["resume"]):
        done = prompt_cli(env, *args, "-w", str(workspace))
        assert done.returncode == 2, (args, done.returncode, done.stderr)
        assert "history.jsonl" in done.stderr and "symbolic link" in done.stderr, done.stderr
    assert target.read_bytes() == OUTSIDE


def test_a_symlinked_context_folder_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    with_goal(elsewhere)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / ".agent_context").symlink_to(elsewhere / ".agent_context")
    before = sorted(p.name for p in (elsewhere / ".agent_context").iterdir())
    env = env_for(tmp_path / "home")
    for args in (["start", "G", "--foreground"], ["status"], ["history"], ["resume"]):
        done = prompt_cli(env, *args, "-w", str(workspace))
        assert done.returncode == 2, (args, done.returncode, done.stderr)
        assert ".agent_context" in done.stderr and "symbolic link" in done.stderr
    assert sorted(p.name for p in (elsewhere / ".agent_context").iterdir()) == before


def test_planted_temp_and_flag_links_are_replaced_never_written_through(
    tmp_path: Path,
) -> None:
    """state.json.tmp, loops.json.tmp, agent.pid.tmp and stop.request pointing outside:
    a whole run and a `stop` leave their targets as they were."""
    workspace = tmp_path / "ws"
    context = workspace / ".agent_context"
    context.mkdir(parents=True)
    targets = {}
    for name in ("state.json.tmp", "loops.json.tmp", "agent.pid.tmp", "stop.request"):
        targets[name] = tmp_path / "outside" / name
        targets[name].parent.mkdir(exist_ok=True)
        targets[name].write_bytes(OUTSIDE)
        (context / name).symlink_to(targets[name])
    scenario = {
        "rules": [plan_rule(("T", ["write a.txt"]))],
        "replies": [call("write_file", path="a.txt", content="A")],
        "default": done("written"),
    }
    with FakeServer(scenario) as fake:
        env = env_for(tmp_path / "home", fake.url)
        ran = run_cli(env, "start", "write a.txt", "-w", str(workspace), "--foreground")
        assert ran.returncode == 0, ran.stderr
    assert (workspace / "a.txt").read_text() == "A"
    for name, target in targets.items():
        assert target.read_bytes() == OUTSIDE, name
        assert not (context / name).is_symlink(), name
    (context / "stop.request").unlink(missing_ok=True)
    (context / "stop.request").symlink_to(targets["stop.request"])
    Journal(workspace).request_stop()
    assert targets["stop.request"].read_bytes() == OUTSIDE
    assert not (context / "stop.request").is_symlink()


def test_a_planted_lock_file_link_is_refused(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    journal = with_goal(workspace)
    target = outside_file(tmp_path)
    (journal.dir / "agent.lock").symlink_to(target)
    done = prompt_cli(env_for(tmp_path / "home"), "resume", "--foreground", "-w", str(workspace))
    assert done.returncode == 2 and "agent.lock" in done.stderr, done.stderr
    assert target.read_bytes() == OUTSIDE


FIFO_NAMES = sorted(JOURNAL_FILES | {*TEMP_FILES, "stop.request", "agent.log.1"})


def test_fifos_under_journal_names_never_hang_a_command(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = env_for(home)
    registry = {}
    for i, name in enumerate(FIFO_NAMES):
        workspace = tmp_path / name
        journal = with_goal(workspace)
        path = journal.dir / name
        path.unlink(missing_ok=True)
        os.mkfifo(path)
        registry[str(workspace)] = {"goal": "G"}
        refused = name in JOURNAL_FILES or name == "agent.log.1"
        # Both read every journal file the same way: the journal's own files get both,
        # the others one each, in turn.
        both = name in ("history.jsonl", "state.json")
        for command in ("status", "history") if both else (("status", "history")[i % 2],):
            done = prompt_cli(env, command, "-w", str(workspace))
            if refused:
                assert done.returncode == 2, (name, command, done.stdout, done.stderr)
                assert name in done.stderr and "FIFO" in done.stderr, done.stderr
            else:
                assert done.returncode == 0, (name, command, done.stderr)
        if name in ("agent.pid", "stop.request"):  # the files `stop` reads and writes
            stop = prompt_cli(env, "stop", "-w", str(workspace))
            assert stop.returncode in (0, 2), (name, stop.stderr)
    (home / "data").mkdir(parents=True, exist_ok=True)
    (home / "data" / "workspaces.json").write_bytes(orjson.dumps({"workspaces": registry}))
    listed = prompt_cli(env, "list", "--json")
    assert listed.returncode == 0, listed.stderr
    rows = {Path(row["workspace"]).name: row for row in json.loads(listed.stdout)["workspaces"]}
    for name in FIFO_NAMES:
        if name in JOURNAL_FILES or name == "agent.log.1":
            assert rows[name]["status"] == "damaged" and "FIFO" in rows[name]["error"], name
        else:
            assert rows[name]["status"] == "in_progress", name


def test_log_and_output_files_are_opened_only_as_regular_files(tmp_path: Path) -> None:
    """The helpers the runner and the daemon open agent.log and agent.out with."""
    journal = with_goal(tmp_path / "ws")
    target = outside_file(tmp_path)
    for path in (journal.log_path, journal.out_path):
        path.symlink_to(target)
        with pytest.raises(UnsafeFile, match="symbolic link"):
            if path == journal.log_path:
                journal.log_handler()
            else:
                journal.open_out()
        with pytest.raises(UnsafeFile):
            journal.read_text(path)
        path.unlink()
        os.mkfifo(path)
        with pytest.raises(UnsafeFile, match="FIFO"):
            journal.read_text(path)
        path.unlink()
    assert target.read_bytes() == OUTSIDE
    handler = journal.log_handler(max_bytes=200, backups=2)
    try:
        for i in range(20):
            handler.emit(logging.makeLogRecord({"msg": f"line {i} " + "x" * 40}))
    finally:
        handler.close()
    assert (journal.dir / "agent.log.1").exists() and "line 19" in journal.read_text(
        journal.log_path
    )
    with journal.open_out() as out:
        out.write(b"the reason\n")
    assert journal.read_text(journal.out_path, limit=4) == "son\n"


@pytest.mark.parametrize(
    "planted",
    [
        {"goal_started": {"tools": ["rm_rf"]}},
        {"goal_started": {"max_rounds": -3}},
        {"goal_started": {"model": ""}, "preflight": {}},
        {"goal_started": {}, "preflight": {"tools": ["format_disk"]}},
    ],
)
def test_planted_run_settings_are_a_clear_error(
    tmp_path: Path, planted: dict[str, dict[str, object]]
) -> None:
    """A cloned workspace can ship a journal whose run settings no command line could give:
    resume says which one and how to replace it, and a flag given to resume wins."""
    journal = Journal(tmp_path)
    journal.append("goal_started", goal="g", model="m", settings=planted["goal_started"])
    if "preflight" in planted:
        journal.append("preflight", backend="ollama", **planted["preflight"])
    del journal
    env = cli_env(f"http://127.0.0.1:{closed_port()}", LOCALAGENT_RETRY_DEADLINE="1")
    refused = run_cli(env, "resume", "-w", str(tmp_path), "--foreground")
    assert refused.returncode == 2, refused.stderr
    assert "internal error" not in refused.stderr and "Traceback" not in refused.stderr
    setting = next(iter({**planted.get("preflight", {}), **planted["goal_started"]}))
    assert f"the run setting {setting} journaled in" in refused.stderr, refused.stderr
    assert "history.jsonl" in refused.stderr
    if setting in ("tools", "max_rounds"):
        flag = {"tools": ["--tools", "read_file"], "max_rounds": ["--max-rounds", "5"]}[setting]
        given = run_cli(env, "resume", "-w", str(tmp_path), "--foreground", *flag)
        assert given.returncode == 3, given.stderr  # the settings pass; the server is down
