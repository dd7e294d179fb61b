"""Damaged journals through the CLI: `status` and `resume --foreground` (SPEC §4, §5).

The journal comes from a real run killed with SIGKILL while a model call was in
flight: `history.jsonl` holds 11 records and `state.json` a snapshot of the first 8,
so the last three are replayed on load, as after a real crash. Each test damages it
one way. The outcome is either a recovery (a torn tail moved to
`history.jsonl.broken`, the run carries on and completes, every intact record kept)
or a clear error (exit 2, the message names the file, nothing touched). Never a
traceback, never silent loss.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from localagent.config.userconfig import ENV_NAMES
from localagent.journal import decode, encode
from localagent.models.fake import FakeServer
from localagent.state import SCHEMA_VERSION

PLAN = json.dumps(
    {"tasks": [{"description": "Write two files", "subtasks": ["write a.txt", "write b.txt"]}]}
)
COMPLETE = {
    "tool_calls": [
        {"name": "mark_subtask_complete", "arguments": {"success": True, "reason": "written"}}
    ]
}
CRASH_MARK = "Traceback (most recent call last)"
RECORDS = 16  # in the template's history.jsonl (with the snapshots of two writes)
SNAPSHOT_SEQ = 11  # covered by the template's state.json
SETTINGS_ENV = tuple(ENV_NAMES.values())


def write(path: str, **extra: Any) -> dict[str, Any]:
    call = {"name": "write_file", "arguments": {"path": path, "content": path.upper()}}
    return {"tool_calls": [call], **extra}


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "localagent", *args],
        env=env,
        text=True,
        capture_output=True,
        timeout=60,
    )
    assert CRASH_MARK not in done.stderr, done.stderr
    return done


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace whose run was killed mid-call: 16 records, a snapshot of 11."""
    workspace = tmp_path_factory.mktemp("template")
    env = {k: v for k, v in os.environ.items() if k not in SETTINGS_ENV}
    env["LOCALAGENT_HOME"] = str(workspace.with_name(workspace.name + "-home"))
    replies = [write("a.txt"), COMPLETE, write("b.txt"), {**COMPLETE, "delay": 30}]
    scenario = {"rules": [{"kind": "plan", "reply": {"content": PLAN}}], "replies": replies}
    with FakeServer(scenario) as fake:
        args = ["start", "Write a.txt and b.txt", "-w", str(workspace), "--foreground"]
        with subprocess.Popen(
            [sys.executable, "-m", "localagent", *args],
            env={**env, "OLLAMA_HOST": fake.url},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        ) as agent:
            try:
                end = time.monotonic() + 30
                while len(fake.chat_requests) < 5:  # the plan, three replies, one in flight
                    assert time.monotonic() < end and agent.poll() is None, "the run stalled"
                    time.sleep(0.02)
            finally:
                agent.kill()
    context = workspace / ".agent_context"
    assert len(lines(context / "history.jsonl")) == RECORDS
    assert json.loads((context / "state.json").read_text())["seq"] == SNAPSHOT_SEQ
    return workspace


@pytest.fixture
def workspace(template: Path, tmp_path: Path, isolated_home: Path) -> Path:
    """A copy of the template, resumed by the user whose agent wrote it (the same key)."""
    copy = tmp_path / "ws"
    shutil.copytree(template, copy)
    shutil.copytree(
        template.with_name(template.name + "-home") / "data",
        isolated_home / "data",
        dirs_exist_ok=True,
    )
    return copy


def lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def intact(path: Path) -> list[dict[str, Any]]:
    """The records before the first damaged line."""
    found = []
    for line in lines(path):
        record = decode(line)
        if record is None or not line.endswith(b"\n"):
            break
        found.append(record)
    return found


# ---- damage ----------------------------------------------------------------------
# Each takes the .agent_context folder and returns the bytes a recovery must keep in
# history.jsonl.broken (None when nothing is to be cut).


def _rewrite(context: Path, change: Callable[[list[bytes]], list[bytes]]) -> None:
    history = context / "history.jsonl"
    history.write_bytes(b"".join(change(lines(history))))


def _append(context: Path, data: bytes) -> bytes:
    with (context / "history.jsonl").open("ab") as fh:
        fh.write(data)
    return data


def torn_tail(context: Path) -> bytes:
    record = {"seq": RECORDS + 1, "ts": "2026-01-01T00:00:00.000Z", "type": "llm_call"}
    return _append(context, encode(record)[:40])


def truncated_mid_record(context: Path) -> bytes:
    last = lines(context / "history.jsonl")[-1]
    _rewrite(context, lambda ls: [*ls[:-1], last[: len(last) // 2]])
    return last[: len(last) // 2]


def nul_tail(context: Path) -> bytes:
    return _append(context, b"\x00" * 4096)


def nul_over_last_record(context: Path) -> bytes:
    last = lines(context / "history.jsonl")[-1]
    _rewrite(context, lambda ls: [*ls[:-1], b"\x00" * len(last)])
    return b"\x00" * len(last)


def foreign_line_at_the_end(context: Path) -> bytes:
    return _append(context, b'{"type": "action_finished", "ok": true}\n')


def state_missing(context: Path) -> None:
    (context / "state.json").unlink()


def state_a_list(context: Path) -> None:
    (context / "state.json").write_text("[1, 2, 3]")


def state_null(context: Path) -> None:
    (context / "state.json").write_text("null")


def state_schema_version_null(context: Path) -> None:
    _edit_state(context, schema_version=None)


def state_half_written(context: Path) -> None:
    path = context / "state.json"
    path.write_bytes(path.read_bytes()[:100])


def state_nul_bytes(context: Path) -> None:
    path = context / "state.json"
    path.write_bytes(b"\x00" * len(path.read_bytes()))


def _edit_state(context: Path, **fields: Any) -> None:
    path = context / "state.json"
    data = json.loads(path.read_text())
    for key, value in fields.items():
        if value is ...:
            data.pop(key, None)
        else:
            data[key] = value
    path.write_text(json.dumps(data))


def state_older_schema(context: Path) -> None:
    _edit_state(context, schema_version=0)


def state_without_schema_version(context: Path) -> None:
    _edit_state(context, schema_version=...)


def state_offset_mid_line(context: Path) -> None:
    offset = json.loads((context / "state.json").read_text())["history_offset"]
    _edit_state(context, history_offset=offset - 7)


def state_seq_mismatch(context: Path) -> None:
    _edit_state(context, seq=3)


def history_cut_before_the_snapshot(context: Path) -> None:
    _rewrite(context, lambda ls: ls[:6])


def history_emptied(context: Path) -> None:
    (context / "history.jsonl").write_bytes(b"")


def bad_checksums_at_the_end(context: Path) -> None:
    def flip(line: bytes) -> bytes:
        return line.replace(b'"ts":"2', b'"ts":"3')

    _rewrite(context, lambda ls: [*ls[:-2], flip(ls[-2]), flip(ls[-1])])


def state_newer_schema(context: Path) -> None:
    _edit_state(context, schema_version=99)


def history_missing(context: Path) -> None:
    (context / "history.jsonl").unlink()


def _replace_line(context: Path, index: int, new: bytes) -> None:
    _rewrite(context, lambda ls: [*ls[:index], new, *ls[index + 1 :]])


def nul_in_the_middle(context: Path) -> None:
    old = lines(context / "history.jsonl")[13]
    _replace_line(context, 13, b"\x00" * (len(old) - 1) + b"\n")


def bad_checksum_in_the_middle(context: Path) -> None:
    old = lines(context / "history.jsonl")[11]
    assert b'"purpose":"round"' in old
    _replace_line(context, 11, old.replace(b'"purpose":"round"', b'"purpose":"ROUND"'))


def record_without_seq_in_the_middle(context: Path) -> None:
    record = decode(lines(context / "history.jsonl")[13])
    assert record is not None
    del record["seq"]
    _replace_line(context, 13, encode(record))


def record_without_type_in_the_middle(context: Path) -> None:
    record = decode(lines(context / "history.jsonl")[13])
    assert record is not None
    del record["type"]
    _replace_line(context, 13, encode(record))


def plain_json_in_the_middle(context: Path) -> None:
    record = decode(lines(context / "history.jsonl")[13])
    assert record is not None  # decoded without its checksum field
    _replace_line(context, 13, json.dumps(record).encode() + b"\n")


def seq_out_of_order(context: Path) -> None:
    _rewrite(context, lambda ls: [*ls[:10], ls[11], ls[10], *ls[12:]])


def last_record_repeated(context: Path) -> None:
    _append(context, lines(context / "history.jsonl")[-1])


def seq_jumps_at_the_end(context: Path) -> None:
    record = {"seq": RECORDS + 5, "ts": "2026-01-01T00:00:00.000Z", "type": "feedback"}
    _append(context, encode({**record, "text": "out of place", "tool": "format"}))


RECOVERIES: dict[str, tuple[Callable[[Path], bytes | None], bool]] = {
    # name: (damage, whether status must carry a note that the snapshot was rebuilt)
    "torn-tail": (torn_tail, False),
    "truncated-mid-record": (truncated_mid_record, False),
    "nul-filled-tail": (nul_tail, False),
    "nul-over-the-last-record": (nul_over_last_record, False),
    "state-missing": (state_missing, True),
    "state-a-list": (state_a_list, True),
    "state-null": (state_null, True),
    "state-schema-version-null": (state_schema_version_null, True),
    "state-half-written": (state_half_written, True),
    "state-nul-bytes": (state_nul_bytes, True),
    "state-offset-mid-line": (state_offset_mid_line, True),
    "state-seq-mismatch": (state_seq_mismatch, True),
    "state-older-schema": (state_older_schema, False),
    "state-without-schema-version": (state_without_schema_version, False),
}

ERRORS: dict[str, tuple[Callable[[Path], None], str, str]] = {
    # name: (damage, the file the message names, words it holds)
    "state-newer-schema": (state_newer_schema, "state.json", "newer"),
    "history-missing": (history_missing, "history.jsonl", "missing"),
    "history-cut-before-the-snapshot": (history_cut_before_the_snapshot, "state.json", "--repair"),
    "history-emptied": (history_emptied, "state.json", "--repair"),
    "foreign-json-line-at-the-end": (foreign_line_at_the_end, "history.jsonl", "checksum"),
    "bad-checksums-at-the-end": (bad_checksums_at_the_end, "history.jsonl", "checksum"),
    "nul-in-the-middle": (nul_in_the_middle, "history.jsonl", "damaged"),
    "bad-checksum-in-the-middle": (bad_checksum_in_the_middle, "history.jsonl", "damaged"),
    "record-without-seq": (record_without_seq_in_the_middle, "history.jsonl", "damaged"),
    "record-without-type": (record_without_type_in_the_middle, "history.jsonl", "damaged"),
    "plain-json-in-the-middle": (plain_json_in_the_middle, "history.jsonl", "damaged"),
    "seq-out-of-order": (seq_out_of_order, "history.jsonl", "record"),
    "last-record-repeated": (last_record_repeated, "history.jsonl", "record"),
    "seq-jumps-at-the-end": (seq_jumps_at_the_end, "history.jsonl", "record"),
}


# ---- the tests -------------------------------------------------------------------


def resume(workspace: Path) -> subprocess.CompletedProcess[str]:
    scenario = {"rules": [{"kind": "plan", "reply": {"content": PLAN}}], "default": COMPLETE}
    with FakeServer(scenario) as fake:
        env = dict(os.environ, OLLAMA_HOST=fake.url, LOCALAGENT_RETRY_DEADLINE="2")
        return cli("resume", "-w", str(workspace), "--foreground", env=env)


@pytest.mark.parametrize("name", sorted(RECOVERIES))
def test_recoverable_damage_is_repaired_and_the_run_completes(name: str, workspace: Path) -> None:
    damage, rebuilt = RECOVERIES[name]
    context = workspace / ".agent_context"
    torn = damage(context)
    history = context / "history.jsonl"
    before = intact(history)
    assert before, "the damage left nothing to keep"

    shown = cli("status", "-w", str(workspace), "--json", env=dict(os.environ))
    assert shown.returncode == 0, shown.stderr
    info = json.loads(shown.stdout)
    assert info["status"] == "in_progress"
    assert info["records"] == before[-1]["seq"]
    if rebuilt:
        assert any("rebuilt" in note for note in info["notes"]), info["notes"]

    done = resume(workspace)
    assert done.returncode == 0, done.stderr
    after = intact(history)
    assert len(after) == len(lines(history)), "history.jsonl is still damaged"
    assert after[: len(before)] == before, "intact records were lost or changed"
    assert [r["seq"] for r in after] == list(range(1, len(after) + 1))
    assert [r["type"] for r in after[len(before) : len(before) + 2]] == ["preflight", "resumed"]
    assert after[-1]["type"] == "goal_completed"
    for index, record in enumerate(after):
        if record["type"] == "action_started":
            finish = next(r for r in after[index + 1 :] if r["type"].startswith("action_"))
            assert finish["type"] == "action_finished", f"action {record['seq']} never finished"
            assert (finish["tool"], finish["args"]) == (record["tool"], record["args"])
    broken = context / "history.jsonl.broken"
    if torn is None:
        assert not broken.exists()
    else:
        assert broken.read_bytes() == torn
    state = json.loads((context / "state.json").read_text())
    assert state["schema_version"] == SCHEMA_VERSION and state["seq"] == after[-1]["seq"]
    assert (workspace / "b.txt").read_text() == "B.TXT"


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_unrepairable_damage_is_a_clear_error_that_touches_nothing(
    name: str, workspace: Path
) -> None:
    damage, filename, words = ERRORS[name]
    context = workspace / ".agent_context"
    damage(context)
    journal = [context / n for n in ("history.jsonl", "state.json", "loops.json")]
    kept = {path: path.read_bytes() for path in journal if path.exists()}

    outcomes = {
        "status": cli("status", "-w", str(workspace), env=dict(os.environ)),
        "resume": resume(workspace),
    }
    for command, done in outcomes.items():
        assert done.returncode == 2, f"{command}: {done.returncode} {done.stderr}"
        message = done.stderr.strip()
        assert message.startswith("localagent: "), message
        assert filename in message and words in message, message
        assert "internal error" not in message
    assert [path for path in journal if path.exists()] == list(kept), "a file was made"
    for path, data in kept.items():
        assert path.read_bytes() == data, f"{path.name} was changed"
    assert not (context / "history.jsonl.broken").exists()


def test_damage_the_snapshot_already_covers_loses_nothing(workspace: Path) -> None:
    """A line zeroed before the snapshot's seq is not replayed; the run may go on (or
    stop with a clear error), but no intact record may vanish from the history or from
    what `history` shows."""
    context = workspace / ".agent_context"
    history = context / "history.jsonl"
    old = lines(history)[4]
    _replace_line(context, 4, b"\x00" * (len(old) - 1) + b"\n")
    kept = [r for r in map(decode, lines(history)) if r is not None]
    assert len(kept) == RECORDS - 1

    done = resume(workspace)
    if done.returncode == 2:
        assert "history.jsonl" in done.stderr
        return
    assert done.returncode == 0, done.stderr
    now = [r for r in map(decode, lines(history)) if r is not None]
    assert now[: len(kept)] == kept, "intact records were lost"
    assert now[-1]["type"] == "goal_completed"

    listed = cli("history", "-w", str(workspace), "-n", "0", env=dict(os.environ))
    if listed.returncode == 2:
        assert "history.jsonl" in listed.stderr, listed.stderr
        return
    assert listed.returncode == 0, listed.stderr
    words = [line.split() for line in listed.stdout.splitlines()]
    shown = [w[0] for w in words if w and w[0].isdigit()]
    assert shown == [str(r["seq"]) for r in now], "history silently hides records"
