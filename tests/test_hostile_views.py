"""Viewers over planted journals (issue "Trust boundaries", items 12 and 13): records with
a good checksum and the wrong shape never crash a view, `history` shows what is intact
around damage and exits 2, and no escape sequence from outside reaches the terminal."""

from __future__ import annotations

import contextlib
import io
import json
import re
import sys
import zlib
from pathlib import Path
from typing import Any

import orjson
import pytest
from support import call, cli_env, closed_port, done, plan_rule, run_cli

from localagent.cli import main
from localagent.journal import encode
from localagent.models.fake import FakeServer

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="file names with controls")

# What a terminal acts on: ESC (every escape sequence), the one-character CSI and OSC,
# BEL (ends an OSC), and a bidi override.
DRIVES_A_TERMINAL = re.compile("[\x1b\x9b\x9d\x07\u202e]")
ESC = "\x1b]0;owned\x07\x1b[2J\x9b31m\u202e"
DEEP: Any = "bottom"
for _ in range(150):
    DEEP = [DEEP]
BAD = [ESC, ["a", 1], {"d": {"e": 1}}, 1e30, -1, None, True, DEEP, "<missing>"]
ODD_SETTINGS = {
    name: value
    for name, value in zip(
        ["tools", "max_rounds", "backend", "model", "checks", "sandbox", "network", "prompts"],
        [[1, {"a": ESC}], ESC, ["l"], {"d": ESC}, 5, [1], {"x": 1}, ESC],
        strict=True,
    )
}
VIEWS = [
    ["status"],
    ["status", "--json"],
    ["status", "--watch"],
    ["history"],
    ["history", "-n", "0", "--json"],
    ["trace"],
    ["trace", "--json"],
    ["trace", "--full"],
    ["graph"],
    ["graph", "--flow"],
    ["logs", "--events"],
    ["logs"],
]


def base() -> list[dict[str, Any]]:
    """A whole run, one record of each kind a view reads."""
    settings = {"max_rounds": 5, "checks": ["true"], "tools": ["read_file"]}
    read = {"call": "1.1", "tool": "read_file", "args": {"path": "a"}, "signature": "s"}
    reply = {"id": "1.1", "name": "read_file", "arguments": {"path": "a"}}
    return [
        {"type": "goal_started", "goal": "G", "model": "m", "settings": settings},
        {"type": "preflight", "backend": "ollama", "num_ctx": 8192, "native_tools": True},
        {"type": "plan", "tasks": [{"description": "T", "subtasks": ["s1", "s2", "s3"]}]},
        {"type": "llm_call", "purpose": "round", "prompt_tokens": 10, "completion_tokens": 5}
        | {"duration_ms": 100, "content": "hi", "tool_calls": [reply]},
        {"type": "action_started", **read},
        {"type": "action_finished", **read, "ok": True, "result": "text"},
        {"type": "action_blocked", **read, "call": "1.2", "pattern": "p", "reason": "r"},
        {"type": "loop_detected", "tool": "read_file", "count": 3, "pattern": "p"},
        {"type": "action_interrupted", "call": "1.3", "tool": "run_cmd", "text": "t"},
        {"type": "feedback", "call": "1.4", "tool": "x", "text": "t"},
        {"type": "subtask_completed", "reason": "ok"},
        {"type": "subtask_failed", "reason": "no", "replan": True},
        {"type": "plan", "replace_from": 1, "tasks": [{"description": "U", "subtasks": ["u"]}]},
        {"type": "waiting", "reason": "down"},
        {"type": "suspended", "reason": "down"},
        {"type": "resumed", "model": "m", "settings": {"model": "m"}},
        {"type": "verify_started", "checks": [{"cmd": "true"}]},
        {"type": "check_started", "id": "c1", "cmd": "true"},
        {"type": "check_finished", "id": "c1", "cmd": "true", "status": "passed", "summary": "s"},
        {
            "type": "verdict",
            "verdict": "VERIFIED",
            "source": "checks",
            "unmet": [],
            "then": "complete",
        },
        {"type": "goal_completed", "reason": "done", "verification": "verified"},
    ]


def mutations(record: dict[str, Any]) -> list[dict[str, Any]]:
    """`record` with each of its fields (and its type) wrong in every way, one at a time."""
    found = []
    for key in [k for k in record if k != "type"] + ["type", "unknown"]:
        for bad in BAD if key != "type" else BAD[:-1]:  # a line with no type is no record
            changed = {k: v for k, v in record.items() if k != key}
            if bad != "<missing>":
                changed[key] = bad
            found.append(changed)
    return found


def raw_line(record: dict[str, Any]) -> bytes:
    """A line with a good checksum, written as any program could (10**30 stays a literal)."""
    body = json.dumps(record, separators=(",", ":")).encode()
    return body[:-1] + b',"crc":"%08x"}\n' % zlib.crc32(body)


def plant(workspace: Path, records: list[dict[str, Any]]) -> None:
    context = workspace / ".agent_context"
    context.mkdir(parents=True)
    (context / "agent.log").write_text(f"model said {ESC}\n", encoding="utf-8")
    with (context / "history.jsonl").open("wb") as fh:
        for seq, record in enumerate(records, 1):
            line = {"seq": seq, "ts": f"2026-01-01T00:00:{seq % 60:02d}.000Z", **record}
            fh.write(raw_line(line) if record.get("huge") else encode(line))


def histories() -> dict[str, list[dict[str, Any]]]:
    """Every wrong shape before the record it spoils, with and without a goal begun."""
    run = base()
    spoiled = [run[0]]
    for record in run[1:]:
        spoiled += [*mutations(record), record]
    huge = {"type": "llm_call", "purpose": "round", "huge": 1, "prompt_tokens": 10**30}
    return {
        "no goal yet": [*mutations(run[0]), *run],
        "every record spoiled": [*spoiled[:4], huge, *spoiled[4:]],
        "no goal at all": run[1:],
        "a line that is no record": [*run[:5], {"tool": "read_file"}, *run[5:]],
        "odd settings": [run[0] | {"settings": ODD_SETTINGS, "model": [ESC]}, *run[1:]],
    }


def cli(*argv: str) -> tuple[int, str, str]:
    """The real CLI, in this process (hundreds of runs stay fast)."""
    out, err = io.StringIO(), io.StringIO()
    code: Any = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(argv))
        except SystemExit as exc:
            code = exc.code
    return code or 0, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("name", list(histories()))
def test_wrong_shaped_records_never_crash_a_view(
    tmp_path: Path, isolated_home: Path, name: str
) -> None:
    ws = tmp_path / "ws"
    plant(ws, histories()[name])
    registry = isolated_home / "data" / "workspaces.json"
    registry.parent.mkdir(parents=True, exist_ok=True)
    registry.write_bytes(orjson.dumps({"workspaces": {str(ws): {"goal": ESC}}}))
    for view in [*VIEWS, ["list"], ["list", "--json"]]:
        argv = view if view[0] == "list" else [*view, "-w", str(ws)]
        code, out, err = cli(*argv)
        shown = f"{argv}: exit {code}\n{err}"
        assert code in (0, 2), shown
        assert "internal error" not in err and "Traceback" not in err, shown
        assert not DRIVES_A_TERMINAL.search(out + err), shown
        if code == 2 and "--json" in view:  # the error is JSON too, the last line out
            assert orjson.loads(out.splitlines()[-1])["exit"] == 2 and not err, shown
        elif code == 2:
            assert err.startswith("localagent: ") and err.count("\n") == 1, shown
        if view[0] in ("trace", "graph", "logs", "list") and name != "a line that is no record":
            assert code == 0 and out, shown  # skipped records are said, the others shown


def test_the_trace_and_the_graph_say_which_records_were_skipped(tmp_path: Path) -> None:
    run = base()
    plan = {"type": "plan", "tasks": "many"}
    plant(tmp_path, [*run[:2], plan, *run[2:]])
    _, traced, _ = cli("trace", "-w", str(tmp_path))
    assert "record 3 (plan) is malformed; skipped" in traced
    _, drawn, _ = cli("graph", "-w", str(tmp_path))
    assert "%% record 3 (plan) is malformed; skipped" in drawn


def test_history_shows_what_is_intact_around_damage_and_exits_2(tmp_path: Path) -> None:
    run = base()
    plant(tmp_path, run)
    history = tmp_path / ".agent_context" / "history.jsonl"
    original = history.read_bytes().splitlines(keepends=True)
    lines = list(original)
    lines[3] = lines[3].replace(b"round", b"rounD")  # record 4 fails its checksum
    del lines[9]  # record 10 is gone
    history.write_bytes(b"".join(lines))
    env = cli_env(f"http://127.0.0.1:{closed_port()}")
    shown = run_cli(env, "history", "-w", str(tmp_path), "-n", "0")  # one real process
    assert shown.returncode == 2, shown.stderr
    seqs = [line.split()[0] for line in shown.stdout.splitlines()]
    intact = [str(n) for n in range(1, len(run) + 1) if n not in (4, 10)]
    assert seqs == [*intact[:3], "!", *intact[3:8], "!", *intact[8:]]
    assert "1 line at byte" in shown.stdout and "(after record 3, before record 5)" in shown.stdout
    assert "record 10 is missing (record 11 follows record 9)" in shown.stdout
    assert shown.stderr.count("\n") == 1 and "is damaged: 1 line at byte" in shown.stderr
    assert "(and 1 more damaged place)" in shown.stderr and "resume --repair" in shown.stderr
    code, out, _ = cli("history", "-w", str(tmp_path), "-n", "3")
    assert code == 0 and len(out.splitlines()) == 3  # no damage among the last three
    code, out, _ = cli("history", "-w", str(tmp_path), "-n", "12")
    assert code == 2 and "record 10 is missing" in out
    code, out, err = cli("history", "-w", str(tmp_path), "-n", "0", "--json")
    *lines, error = out.splitlines()  # under --json the error is the last JSON line
    assert code == 2 and "is damaged" in json.loads(error)["error"] and not err
    assert [json.loads(line)["seq"] for line in lines][:4] == [1, 2, 3, 5]
    # What a crash in the middle of an append leaves is not damage.
    history.write_bytes(b"".join(original[:9]) + original[9][:20])
    code, out, err = cli("history", "-w", str(tmp_path), "-n", "0")
    assert code == 0 and out.splitlines()[-1].split()[0] == "9", err


def scenario() -> dict[str, Any]:
    name = f"evil{ESC}.txt"
    plan = plan_rule((f"Write {ESC}", [f"Write the file {ESC}"]))
    shout = f"import sys; sys.stdout.write({ESC!r})"
    return {
        "rules": [plan],
        "replies": [
            {"content": f"I say {ESC}", **call("write_file", path=name, content=ESC)},
            call("run_cmd", cmd=f"python -c {json.dumps(shout)}", timeout_sec=30),
            call("read_file", path=name),
            done(f"wrote it {ESC}"),
        ],
    }


def test_no_escape_sequence_from_outside_reaches_the_terminal(tmp_path: Path) -> None:
    """Goal text, a model's reply and plan, a tool's output, a file's name and content,
    and a server's error message, each holding escape sequences, through every view."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "scenario.json").write_text(json.dumps(scenario()))
    with FakeServer(tmp_path / "scenario.json") as server:
        ran = run_cli(cli_env(server.url), "start", f"goal {ESC}", "-w", str(ws), "--foreground")
        assert ran.returncode in (0, 1), ran.stderr
    outputs = [(["start"], ran.returncode, ran.stdout, ran.stderr)]
    for argv in [*([*view, "-w", str(ws)] for view in VIEWS), ["list"], ["search", "evil"]]:
        outputs.append((argv, *cli(*argv, *(["-w", str(ws)] if argv[0] == "search" else []))))
    broken = {"rules": [{"kind": "plan", "reply": {"status": 500, "error": f"boom {ESC}"}}]}
    (tmp_path / "broken.json").write_text(json.dumps(broken))
    with FakeServer(tmp_path / "broken.json") as server:
        env = cli_env(server.url, LOCALAGENT_RETRY_DEADLINE="0")
        failed = run_cli(env, "start", "another goal", "-w", str(tmp_path / "ws2"), "--foreground")
        assert failed.returncode == 3 and "boom" in failed.stderr, failed.stderr
    outputs.append((["start"], failed.returncode, failed.stdout, failed.stderr))
    for argv, code, out, err in outputs:
        assert code in (0, 1, 3) and not DRIVES_A_TERMINAL.search(out + err), (argv, out, err)
    assert sum("\\x1b]0;owned\\x07" in out for _, _, out, _ in outputs) > len(VIEWS) // 2
