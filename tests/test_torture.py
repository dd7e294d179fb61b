"""Kill torture at CI size: the real command line SIGKILLed 10 times, resumed each
time, against the fake Ollama server (`scripts/torture_kill.py` is the full run).

The checks themselves are tried on damaged copies of a real history, so a check that
could never fail would show up here.
"""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson
import pytest

from localagent.models.fake import FakeServer

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"


@pytest.fixture
def torture(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(SCRIPTS))
    return importlib.import_module("torture_kill")


def test_six_kills_lose_nothing_and_the_goal_completes(tmp_path: Path, torture: ModuleType) -> None:
    # Two kills wait for a running command, so a slow or fast machine still kills one
    # inside an action; the other four land where the random moments put them
    # (`scripts/torture_kill.py` runs hundreds).
    summary = torture.torture(kills=6, root=tmp_path, seed=20240611, in_action=2)

    assert summary.kills >= 6
    assert summary.goals >= 1
    # The kills landed inside actions, so redo and interruption were exercised.
    assert summary.killed_with_open_action >= 1, summary.lines()
    assert summary.redone + summary.interrupted >= 1, summary.lines()


@pytest.fixture
def finished(tmp_path: Path, torture: ModuleType) -> Path:
    """A workspace whose short goal ran to completion with no kill."""
    summary = torture.torture(
        kills=0, root=tmp_path, seed=1, batches=1, per_batch=2, check_delay=0.0
    )
    return Path(summary.workspaces[0])


def _records(ws: Path, torture: ModuleType) -> list[dict[str, Any]]:
    return torture.strict_records(torture.history_bytes(ws))


def test_a_changed_or_lost_record_is_caught(finished: Path, torture: ModuleType) -> None:
    data = torture.history_bytes(finished)
    torture.check_prefix_kept(data, data)
    changed = data[:100] + bytes([data[100] ^ 1]) + data[101:]
    with pytest.raises(torture.Violation, match="changed below byte"):
        torture.check_prefix_kept(data, changed)
    whole_without_newline = data[:-1]
    with pytest.raises(torture.Violation, match="was lost"):
        torture.check_prefix_kept(whole_without_newline, data[: data.rfind(b"\n", 0, -1) + 1])
    with pytest.raises(torture.Violation, match="damaged"):
        torture.strict_records(changed)


def test_an_action_settled_twice_or_redone_blindly_is_caught(
    finished: Path, torture: ModuleType
) -> None:
    records = _records(finished, torture)
    counts = torture.check_actions(records, complete=True)
    assert counts.started == counts.finished > 0
    i = next(i for i, r in enumerate(records) if r["type"] == "action_finished")

    twice = [*records[: i + 1], {**records[i], "seq": -1}, *records[i + 1 :]]
    with pytest.raises(torture.Violation, match="settles no action_started"):
        torture.check_actions(twice, complete=True)

    redone_blindly = [*records[:i], {**records[i], "redone": True}, *records[i + 1 :]]
    with pytest.raises(torture.Violation, match="redone"):
        torture.check_actions(redone_blindly, complete=True)

    with pytest.raises(torture.Violation, match="never settled"):
        torture.check_actions(records[:i], complete=True)


def test_a_command_rerun_without_asking_the_model_is_caught(torture: ModuleType) -> None:
    cmd = {"cmd": "python check.py 1 --round 3", "timeout_sec": 60}
    started = {"type": "action_started", "tool": "run_cmd", "args": cmd}
    records = [
        {"seq": 1, **started},
        {"seq": 2, "type": "resumed"},
        {"seq": 3, "type": "action_interrupted", "tool": "run_cmd", "args": cmd},
        {"seq": 4, **started},
    ]
    with pytest.raises(torture.Violation, match="no model call between"):
        torture.check_commands(records)
    asked = {"seq": 4, "type": "llm_call", "purpose": "round"}
    torture.check_commands([*records[:3], asked, {**records[3], "seq": 5}])


def test_a_command_run_before_its_record_or_twice_is_caught(
    finished: Path, torture: ModuleType, tmp_path: Path
) -> None:
    records = _records(finished, torture)
    torture.check_runs(finished, records)
    runs = (finished / "runs.log").read_text(encoding="utf-8")
    batch, marker = runs.split()
    assert marker in {r.get("marker") for r in records}
    copy = tmp_path / "copy"
    shutil.copytree(finished, copy)
    (copy / "runs.log").write_text(runs * 2, encoding="utf-8")
    with pytest.raises(torture.Violation, match="ran 2 times for 1 action_started"):
        torture.check_runs(copy, records)
    (copy / "runs.log").write_text(f"{batch} 0123456789abcdef\n", encoding="utf-8")
    with pytest.raises(torture.Violation, match="has no action_started of its own"):
        torture.check_runs(copy, records)


def test_a_snapshot_that_disagrees_with_the_history_is_caught(
    finished: Path, torture: ModuleType, tmp_path: Path
) -> None:
    records = _records(finished, torture)
    torture.check_state(finished, records, tmp_path)
    state_path = finished / ".agent_context" / "state.json"
    state = orjson.loads(state_path.read_bytes())
    state["rounds"] += 1
    state_path.write_bytes(orjson.dumps(state))
    with pytest.raises(torture.Violation, match="rounds"):
        torture.check_state(finished, records, tmp_path)


def test_a_goal_that_did_not_finish_cleanly_is_caught(
    finished: Path, torture: ModuleType, tmp_path: Path
) -> None:
    records = _records(finished, torture)
    torture.check_finished(finished, records, 1, 2)
    with pytest.raises(torture.Violation, match="not goal_completed"):
        torture.check_finished(finished, records[:-1], 1, 2)
    copy = tmp_path / "copy"
    shutil.copytree(finished, copy)
    (copy / "f02.txt").write_text("20\n", encoding="utf-8")
    with pytest.raises(torture.Violation, match=r"f02\.txt has the wrong content"):
        torture.check_finished(copy, records, 1, 2)


def test_a_command_that_kills_interrupted_twice_can_still_be_run(
    tmp_path: Path, torture: ModuleType
) -> None:
    """Interrupted attempts gave no result, so running the command again is not a loop."""
    plan = {"tasks": [{"description": "Check", "subtasks": ["Run python check.py and see it"]}]}
    mark = {"name": "mark_subtask_complete", "arguments": {"success": True, "reason": "ok"}}
    run = {"name": "run_cmd", "arguments": {"cmd": "python check.py", "timeout_sec": 60}}
    scenario = {
        "rules": [
            {"kind": "plan", "reply": {"content": orjson.dumps(plan).decode()}},
            {"match": r"Recent commands: [^\n]*check\.py -> 0", "reply": {"tool_calls": [mark]}},
        ],
        "default": {"tool_calls": [run]},
    }
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "check.py").write_text("import time\ntime.sleep(1.5)\nprint('ok')\n")
    with FakeServer(scenario) as server:
        env = torture.agent_env(server.url, tmp_path / "home")
        for args in (["start", "Check the workspace"], ["resume"]):
            agent = subprocess.Popen(
                [sys.executable, "-m", "localagent", *args, "-w", str(ws), "--foreground"],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            _wait_for_new_start(ws, torture, agent)
            time.sleep(0.3)  # inside the 1.5 s the command runs
            agent.kill()
            agent.wait()
        done = subprocess.run(
            [sys.executable, "-m", "localagent", "resume", "-w", str(ws), "--foreground"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    records = _records(ws, torture)
    kinds = [r["type"] for r in records]
    assert kinds.count("action_interrupted") == 2
    assert "action_blocked" not in kinds, [r.get("reason") for r in records if "reason" in r]
    assert done.returncode == 0, done.stderr[-800:]


def _wait_for_new_start(ws: Path, torture: ModuleType, agent: subprocess.Popen[bytes]) -> None:
    def starts() -> int:
        records = torture.intact_records(torture.history_bytes(ws))
        return sum(r["type"] == "action_started" for r in records)

    before = starts()
    deadline = time.monotonic() + 30
    while starts() == before:
        assert agent.poll() is None and time.monotonic() < deadline, "the command never started"
        time.sleep(0.01)
