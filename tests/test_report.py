"""What `history` and `list` show: total formatting, escaped control characters, one
damaged workspace or registry entry never hiding the others (issue 9 items 4, 16, 23)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pytest
from support import cli_env, closed_port, run_cli

from localagent.journal import Journal, encode
from localagent.observe.report import format_record


def env(home: Path) -> dict[str, str]:
    return cli_env(f"http://127.0.0.1:{closed_port()}", LOCALAGENT_HOME=str(home))


def goal(workspace: Path, text: str, records: int = 0, finish: bool = True) -> Journal:
    journal = Journal(workspace)
    journal.load()
    journal.append("goal_started", goal=text)
    journal.append("plan", tasks=[{"description": "T", "subtasks": ["s"]}])
    for i in range(records):
        journal.append("feedback", text=f"note {i} " + "x" * 200)
    if finish:
        journal.append("goal_completed", reason="done")
    journal.finish()
    return journal


def register(home: Path, entries: dict[str, Any]) -> None:
    path = home / "data" / "workspaces.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(orjson.dumps({"workspaces": entries}))


@pytest.mark.parametrize(
    "record",
    [
        {"seq": 3, "type": "action_finished"},
        {"seq": 3, "type": "action_finished", "tool": 7, "args": [1], "ok": "yes", "result": {}},
        {"seq": 3, "type": "action_blocked", "args": None},
        {"seq": 3, "type": "plan", "tasks": "many"},
        {"seq": 3, "type": "plan", "tasks": [7, {"subtasks": 3}, {"subtasks": ["a"]}]},
        {"seq": 3, "type": "llm_call", "prompt_tokens": "x", "duration_ms": None},
        {"seq": 3, "type": 5, "ts": 12},
        {"seq": 3, "type": "goal_started", "goal": {"nested": [1, 2]}},
    ],
)
def test_format_record_is_total(record: dict[str, Any]) -> None:
    line = format_record(record)
    assert line.split()[0] == "3"


def test_history_survives_a_malformed_body_with_a_good_checksum(tmp_path: Path) -> None:
    journal = goal(tmp_path / "ws", "G")
    with journal.history_path.open("ab") as fh:
        fh.write(encode({"seq": 4, "ts": "2026-01-01T00:00:00.000Z", "type": "action_finished"}))
    done = run_cli(env(tmp_path / "home"), "history", "-w", str(tmp_path / "ws"), "-n", "0")
    assert done.returncode == 2, done.stderr  # damage, as `status` and `resume` say too
    assert done.stdout.splitlines()[-1].split()[:3] == ["4", "00:00:00", "action_finished"]
    assert "record 4 is malformed (tool: Field required)" in done.stdout
    assert "is damaged: record 4 is malformed" in done.stderr


def test_history_escapes_terminal_control_characters(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    journal = Journal(workspace)
    journal.load()
    journal.append("goal_started", goal="G\x1b[2J\x1b]0;owned\x07")
    journal.append("feedback", text="look \x1b[31mred\x9b1m and \u202eevil")
    journal.close()
    done = run_cli(env(tmp_path / "home"), "history", "-w", str(workspace))
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout and "\u202e" not in done.stdout
    assert "\\x1b[2J" in done.stdout and "\\x9b" in done.stdout and "\\u202e" in done.stdout
    shown = run_cli(env(tmp_path / "home"), "status", "-w", str(workspace))
    assert "\x1b" not in shown.stdout and "\\x1b" in shown.stdout


def test_list_goes_on_past_damaged_entries_and_workspaces(tmp_path: Path) -> None:
    home = tmp_path / "home"
    good = tmp_path / "good"
    goal(good, "the good one")
    planted = tmp_path / "planted"
    planted.mkdir()
    (planted / ".agent_context").symlink_to(good / ".agent_context")
    unreadable = tmp_path / "unreadable"
    goal(unreadable, "unreadable")
    (unreadable / ".agent_context" / "state.json").write_bytes(b'{"schema_version": 99}')
    register(
        home,
        {
            str(good): {"goal": "the good one"},
            str(planted): {"goal": "planted"},
            str(unreadable): {"goal": "unreadable"},
            "relative/path": {"goal": "x"},
            str(tmp_path / "not-a-dict"): 7,
            str(tmp_path / "goal-not-text"): {"goal": 5},
            "/nul\u0000byte": {"goal": "x"},
        },
    )
    done = run_cli(env(home), "list", "--json")
    assert done.returncode == 0, done.stderr
    rows = {row["workspace"]: row for row in orjson.loads(done.stdout)["workspaces"]}
    assert rows[str(good)]["status"] == "completed"
    assert rows[str(planted)]["status"] == "damaged"
    assert "symbolic link" in rows[str(planted)]["error"]
    assert rows[str(unreadable)]["status"] == "damaged"
    assert rows[str(tmp_path / "goal-not-text")]["status"] == "missing"
    assert "relative/path" not in rows and str(tmp_path / "not-a-dict") not in rows
    text = run_cli(env(home), "list")
    assert text.returncode == 0, text.stderr
    assert text.stderr.count("damaged registry entry") == 3, text.stderr


def test_list_aligns_its_columns(tmp_path: Path) -> None:
    home = tmp_path / "home"
    short, long = tmp_path / "a", tmp_path / "a-much-longer-workspace-name"
    goal(short, "first goal")
    goal(long, "second goal", finish=False)
    register(home, {str(short): {"goal": ""}, str(long): {"goal": ""}})
    done = run_cli(env(home), "list")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["LAST", "ACTIVE", "STATUS", "PROCESS", "WORKSPACE", "GOAL"]
    # The most recently active first: the second goal's line, then the first's.
    starts = {
        line.index(word) for line, word in zip(lines, ["GOAL", "second", "first"], strict=True)
    }
    assert len(starts) == 1, done.stdout


def test_list_reads_only_the_end_of_a_journal(tmp_path: Path) -> None:
    """A journal whose old part is unreadable (the snapshot covers it) is listed from
    its snapshot and its last records, so a long history costs `list` nothing."""
    home = tmp_path / "home"
    workspace = tmp_path / "ws"
    journal = goal(workspace, "long goal", records=600)
    lines = journal.history_path.read_bytes().splitlines(keepends=True)
    lines[5] = b"\x00" * (len(lines[5]) - 1) + b"\n"
    journal.history_path.write_bytes(b"".join(lines))
    os.remove(journal.state_path)  # nothing covers the damage: a full read would hit it
    register(home, {str(workspace): {"goal": "long goal"}})
    done = run_cli(env(home), "list", "--json")
    assert done.returncode == 0, done.stderr
    (row,) = orjson.loads(done.stdout)["workspaces"]
    assert row["status"] == "completed" and row["goal"] == "long goal"


def test_status_names_the_model_and_its_backend(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    journal = Journal(ws)
    journal.load()
    settings = {"backend": "openai", "model": "qwen2.5-coder:7b"}
    journal.append("goal_started", goal="G", model="qwen2.5-coder:7b", settings=settings)
    journal.finish()
    shown = run_cli(env(tmp_path / "home"), "status", "-w", str(ws))
    assert "model      qwen2.5-coder:7b (openai backend)" in shown.stdout, shown.stdout
    info = orjson.loads(run_cli(env(tmp_path / "home"), "status", "-w", str(ws), "--json").stdout)
    assert (info["backend"], info["model"]) == ("openai", "qwen2.5-coder:7b")
    older = tmp_path / "older"  # a goal journaled before there were backends
    goal(older, "H")
    info = orjson.loads(
        run_cli(env(tmp_path / "home"), "status", "-w", str(older), "--json").stdout
    )
    assert info["backend"] == "ollama"
