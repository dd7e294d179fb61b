"""Seeing what the agent did: the trace, the Mermaid graphs, the live view and the event
stream, all read from the journal of one scripted run (shared by the module).

The run: the model server is down at first (the goal is suspended), then the goal is
resumed; the plan has two tasks; a long output goes to the output store; a repeated read
is blocked; a subtask fails and the rest of the plan is replanned; the goal check runs
and the verdict is VERIFIED. The goal text is hostile to Mermaid and to terminals.
"""

from __future__ import annotations

import io
import json
import os
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from support import (
    call,
    cli_env,
    closed_port,
    done,
    plan_rule,
    records,
    run_cli,
    start_cli,
)

from localagent.journal import Journal, encode
from localagent.models.fake import FakeServer
from localagent.observe import events, flow, graph, trace, watch
from localagent.observe.pace import seconds
from localagent.state import State, apply
from localagent.system.errors import JournalCorrupt, UsageError
from localagent.system.safefs import UnsafeFile

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="uses POSIX signals")

GOLDEN = Path(__file__).parent / "golden"
GOAL = 'Build calc.py: print "sum" of [1, 2] `fast` <b>now</b>\nthen check it; end %% x --> y'
CALC = "print(sum([1, 2]))\n"
LONG = "for i in range(3000):\n    print('line', i)\n"


def scenario() -> dict[str, Any]:
    replan = {
        "tasks": [{"description": "Check the sum instead", "subtasks": ["Run calc.py again"]}]
    }
    plan = plan_rule(
        ("Write the program", ["Write calc.py", "Print a long listing"]),
        ("Check it", ["Compare with a listing"]),
    )
    replies = [
        {"content": "I will write calc.py.", **call("write_file", path="calc.py", content=CALC)},
        call("run_cmd", cmd="python calc.py", timeout_sec=30),
        done("calc.py prints 3"),
        call("write_file", path="long.py", content=LONG),
        call("run_cmd", cmd="python long.py", timeout_sec=30),
        call("read_file", path="calc.py"),
        call("read_file", path="calc.py"),
        call("read_file", path="calc.py"),
        done("the listing is too long to check", success=False),
        call("run_cmd", cmd="python calc.py", timeout_sec=30),
        done("calc.py printed 3 again"),
    ]
    return {
        "rules": [
            {"kind": "plan", "match": "failed:", "reply": {"content": json.dumps(replan)}},
            plan,
        ],
        "replies": replies,
    }


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The workspace of the scripted run, ended."""
    base = tmp_path_factory.mktemp("observe")
    ws = base / "ws"
    ws.mkdir()
    home = str(base / "home")
    down = cli_env(f"http://127.0.0.1:{closed_port()}", LOCALAGENT_HOME=home)
    down["LOCALAGENT_RETRY_DEADLINE"] = "0"
    args = ("-w", str(ws), "--foreground")
    first = run_cli(down, "start", GOAL, "--check", "python calc.py", *args)
    assert first.returncode == 3, first.stderr
    path = base / "scenario.json"
    path.write_text(json.dumps(scenario()))
    with FakeServer(path) as server:
        second = run_cli(cli_env(server.url, LOCALAGENT_HOME=home), "resume", *args)
    assert second.returncode == 0, second.stderr
    return ws


def golden(name: str, text: str) -> None:
    """Compare with tests/golden/NAME; a missing golden file is written (and fails)."""
    path = GOLDEN / name
    if not path.exists():
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
        pytest.fail(f"wrote the new golden file {path}; check it and run again")
    assert text == path.read_text(encoding="utf-8")


def normalised(text: str) -> str:
    """Timings, token counts and the port of the server that was down, made constant."""
    text = re.sub(r"^ *\d+\.\ds", "   T", text, flags=re.MULTILINE)
    text = re.sub(r"\d+\.\ds\b", "T", text)
    text = re.sub(r"[\d,]+\+[\d,]+ tokens", "P+C tokens", text)
    text = re.sub(r"[\d,]+ tokens\b", "N tokens", text)
    return re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", text)


# ---- the trace ---------------------------------------------------------------------------


def test_the_trace_of_the_run_matches_the_golden_transcript(run: Path) -> None:
    shown = run_cli(cli_env("http://127.0.0.1:1"), "trace", "-w", str(run))
    assert shown.returncode == 0, shown.stderr
    golden("trace.txt", normalised(shown.stdout))


def test_the_trace_shows_one_round_cut_or_whole(run: Path) -> None:
    cut = list(trace.show(run, 5, full=False, as_json=False))
    assert cut[0].split()[1:3] == ["round", "5"]
    assert "whole output: read_output(id=26), .agent_context/outputs/26.txt" in "\n".join(cut)
    assert not any("line 2999" in line for line in cut)
    assert any("more lines (--full shows them)" in line for line in cut)
    whole = list(trace.show(run, 5, full=True, as_json=False))
    assert any(line.strip() == "line 2999" for line in whole)
    assert len(whole) > 500
    with pytest.raises(UsageError, match="there is no round 12: the run has 11 rounds"):
        list(trace.show(run, 12, full=False, as_json=False))


def test_the_trace_as_json_names_every_step(run: Path) -> None:
    entries = [json.loads(line) for line in trace.show(run, None, False, True)]
    kinds = [e["kind"] for e in entries]
    for kind in ("goal", "suspended", "resumed", "plan", "round", "result", "blocked"):
        assert kind in kinds
    for kind in ("subtask", "verify", "check", "verdict", "goal_completed"):
        assert kind in kinds
    rounds = [e for e in entries if e["kind"] == "round"]
    assert [e["round"] for e in rounds] == list(range(1, 12))
    assert rounds[0]["subtask"] == "1.1" and rounds[0]["reply"] == "I will write calc.py."
    assert rounds[9]["subtask"] == "2.1" and rounds[9]["subtask_text"] == "Run calc.py again"
    plans = [e for e in entries if e["kind"] == "plan"]
    assert [p["first"] for p in plans] == [1, 2]
    failed = next(e for e in entries if e["kind"] == "subtask" and e["status"] == "failed")
    assert failed["subtask"] == "1.2" and failed["replan"] is True
    long = next(e for e in entries if e["kind"] == "result" and e.get("output"))
    assert long["call"] == "5.1" and long["output"] == 26 and long["ms"] >= 0
    assert all(e["t"] >= 0 for e in entries)


# ---- Mermaid -----------------------------------------------------------------------------

NODE = re.compile(r'^    ([a-z]\d+)(\["|\(\["|\{\{")([^"]*)("\]|"\]\)|"\}\})$')
EDGE = re.compile(r"^    ([a-z]\d+) (-->|==>|-\.->)(?:\|([^|\"]*)\|)? ([a-z]\d+)$")
CLASSDEF = re.compile(r"^    classDef ([a-z_]+) [a-z-]+:[#\w ]+(,[a-z-]+:[#\w ]+)*$")
CLASS = re.compile(r"^    class ([a-z]\d+(?:,[a-z]\d+)*) ([a-z_]+)$")
NUMBER = re.compile(r"\d[\d,.]*")
SHAPES = {'["': '"]', '(["': '"])', '{{"': '"}}'}


def parse_mermaid(text: str) -> dict[str, Any]:
    """Every line of a flowchart as we write it, checked: nodes, edges, classes."""
    lines = text.splitlines()
    assert lines[0] == "flowchart TD"
    nodes: dict[str, str] = {}
    edges: list[tuple[str, str, str, str]] = []
    classes: dict[str, str] = {}
    defined: set[str] = set()
    for line in lines[1:]:
        if m := NODE.match(line):
            assert SHAPES[m[2]] == m[4], line
            assert m[1] not in nodes, f"node {m[1]} defined twice"
            nodes[m[1]] = m[3]
        elif m := EDGE.match(line):
            edges.append((m[1], m[2], m[3] or "", m[4]))
        elif m := CLASSDEF.match(line):
            defined.add(m[1])
        elif m := CLASS.match(line):
            for node in m[1].split(","):
                assert node not in classes, f"{node} has two classes"
                classes[node] = m[2]
        else:
            raise AssertionError(f"not a line of our Mermaid: {line!r}")
    for source, _, _, target in edges:
        assert source in nodes and target in nodes, (source, target)
    assert set(classes) == set(nodes) and set(classes.values()) <= defined
    for text_ in [*nodes.values(), *(e[2] for e in edges)]:
        assert not re.search(r'["\[\]{}<>`|;#%&\n]', re.sub(r"#\d+;", "", text_)), text_
    return {"nodes": nodes, "edges": edges, "classes": classes}


def test_the_plan_graph_shows_statuses_and_the_path_taken(run: Path) -> None:
    shown = run_cli(cli_env("http://127.0.0.1:1"), "graph", "-w", str(run))
    assert shown.returncode == 0, shown.stderr
    golden("graph.mmd", shown.stdout)
    found = parse_mermaid(shown.stdout)
    nodes, classes = found["nodes"], found["classes"]
    by_text = {text.split(" ", 1)[1] if text[0].isdigit() else text: n for n, text in nodes.items()}
    assert classes[by_text["Print a long listing"]] == "failed"
    assert classes[by_text["Check it"]] == "replaced"
    assert classes[by_text["Compare with a listing"]] == "replaced"
    assert classes[by_text["Run calc.py again"]] == "completed"
    path = [e for e in found["edges"] if e[1] == "==>"]
    assert [e[2] for e in path] == [str(i) for i in range(1, len(path) + 1)]
    walked = [nodes[path[0][0]]] + [nodes[e[3]] for e in path]
    assert walked == [
        "1.1 Write calc.py",
        "1.2 Print a long listing",
        "2.1 Run calc.py again",
        "verdict VERIFIED",
        "goal completed · verified",
    ]
    replan = [e for e in found["edges"] if e[1] == "-.->"]
    assert [(nodes[a], why, nodes[b]) for a, _, why, b in replan] == [
        ("1.2 Print a long listing", "replan", "2 Check the sum instead")
    ]
    goal = nodes["g0"]
    assert goal.startswith("Goal: Build calc.py: print #34;sum#34; of #91;1, 2#93; #96;fast#96;")


HOSTILE = [
    'a "quoted" [bracketed] {braced} (round) <b>bold</b> `code` | pipe; semi # hash',
    "two\nlines\r\nand\ttab",
    '"]) --> x["evil"] %%{init: {"theme": "dark"}}%%',
    "end",
    "click g0 call alert()",
    "\u202eright-to-left\x1b[31m red \x9b1m",
    "&amp; #quot; #91;",
]


def test_mermaid_labels_carry_no_syntax_from_user_text(tmp_path: Path) -> None:
    for text in HOSTILE:
        made = re.sub(r"#\d+;", "", graph.label(text, 200))
        assert re.fullmatch(r"[\w .,:/?!'*@()=+\-…]*", made), made
    journal = Journal(tmp_path)
    journal.load()
    journal.append("goal_started", goal="\n".join(HOSTILE))
    subtasks = HOSTILE[1:]
    journal.append("plan", tasks=[{"description": HOSTILE[0], "subtasks": subtasks}])
    journal.finish()
    found = parse_mermaid(flow.show(tmp_path, False))
    assert set(found["nodes"]) == {"g0", "t1", *(f"s{i}" for i in range(2, 2 + len(subtasks)))}


def test_the_flow_graph_is_the_state_machine_with_counts(run: Path, tmp_path: Path) -> None:
    bare = parse_mermaid(flow.show(tmp_path, True))
    assert set(bare["classes"].values()) == {"pending"}
    counted = parse_mermaid(flow.show(run, True))
    assert counted["nodes"]["f3"] == "round: ask the model ×11"
    assert counted["nodes"]["f7"] == "replan the rest ×1"
    assert counted["nodes"]["f10"] == "goal failed" and counted["classes"]["f10"] == "pending"
    assert {e[0] for e in counted["edges"]} | {e[3] for e in counted["edges"]} == set(
        counted["nodes"]
    )


# ---- the live view -----------------------------------------------------------------------


def folded(ws: Path, upto: int) -> tuple[State, list[dict[str, Any]]]:
    """The state a live agent had after record `upto`, and the records so far."""
    state = State()
    kept = [r for r in records(ws) if r["seq"] <= upto]
    for record in kept:
        apply(state, record)
    return state, kept


def capture(shown: watch.View) -> str:
    console = Console(record=True, width=80, file=io.StringIO())
    console.print(watch.renderable(shown))
    return console.export_text()


def test_the_live_view_renders_to_a_fixed_width(run: Path) -> None:
    recs = records(run)
    state, _ = folded(run, len(recs))
    now = seconds(recs[-1]["ts"]) + 5
    screen = capture(watch.view(state, recs[-80:], False, None, now))
    assert all(len(line) == 80 for line in screen.splitlines())
    steady = [  # token counts and speeds vary from run to run: digits become N
        "│" + NUMBER.sub("N", line[1:-1]).ljust(78) + "│"
        if line.startswith(("│ tokens", "│ speed"))
        else line
        for line in screen.splitlines(keepends=False)
    ]
    screen = "\n".join(steady) + "\n"
    golden("watch.txt", re.sub(r" *\d+s ago", lambda m: "Ns ago".rjust(len(m[0])), screen))


def test_the_live_view_says_what_the_agent_waits_for(run: Path) -> None:
    recs = records(run)
    wrote = next(r for r in recs if r["type"] == "action_finished" and r["call"] == "4.1")
    state, kept = folded(run, wrote["seq"])
    shown = watch.view(state, kept, True, 4242, seconds(wrote["ts"]) + 3.04)
    assert shown.doing == "waiting for the model (round 5) for 3.0s"
    assert shown.process == "running (pid 4242)"
    assert shown.subtask == "2/2 Print a long listing" and shown.rounds == "4/24"
    assert "tokens/s last call" in shown.speed
    started = next(r for r in recs if r["type"] == "action_started" and r["call"] == "5.1")
    state, kept = folded(run, started["seq"])
    shown = watch.view(state, kept, True, None, seconds(started["ts"]) + 2)
    assert shown.doing == "running run_cmd(cmd='python long.py', timeout_sec=30) for 2.0s"
    blocked = next(r for r in recs if r["type"] == "loop_detected")
    state, kept = folded(run, blocked["seq"])
    shown = watch.view(state, kept, False, None, seconds(blocked["ts"]))
    assert shown.blocked == "1, last: read_file(path='calc.py')"
    assert shown.doing == "no agent is running" and shown.ended
    assert "BLOCKED read_file(path='calc.py') (repeat)" in capture(shown)


def test_the_live_view_shows_model_text_as_text(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    journal.load()
    journal.append("goal_started", goal="[bold red]not markup[/] \x1b[2J")
    journal.finish()
    screen = capture(watch.snapshot(Journal(tmp_path)))
    assert "[bold red]not markup[/] \\x1b[2J" in screen


def test_watch_prints_lines_when_piped_and_ends_with_the_goal(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    scenario = {
        "rules": [plan_rule(("Write", ["Write a.txt"]))],
        "replies": [
            {**call("write_file", path="a.txt", content="a\n"), "delay": 0.2},
            {**done("a.txt written"), "delay": 0.2},
        ],
    }
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(scenario))
    with FakeServer(path) as server:
        env = cli_env(server.url)
        started = run_cli(env, "start", "Write a.txt", "-w", str(ws), "--no-verify")
        assert started.returncode == 0, started.stderr
        began = time.monotonic()
        watching = run_cli(env, "status", "--watch", "-w", str(ws))
    assert watching.returncode == 0, watching.stderr
    assert time.monotonic() - began < 10
    lines = watching.stdout.splitlines()
    assert any("round 2 · subtask 1.1 Write a.txt" in line for line in lines)
    assert "goal completed" in lines[-2], lines
    assert "\x1b" not in watching.stdout


# ---- records as JSON lines ---------------------------------------------------------------


def test_history_as_json_lines_is_the_journal(run: Path) -> None:
    out: list[str] = []
    events.show(run, 0, False, out.append)
    assert [json.loads(line) for line in out] == records(run)
    out.clear()
    events.show(run, 3, False, out.append)
    assert [json.loads(line)["seq"] for line in out] == [r["seq"] for r in records(run)[-3:]]


def test_json_lines_escape_what_could_drive_a_terminal(tmp_path: Path) -> None:
    goal = "a\x9b31m b\u202ec\u2028d\x1b[2J \ud800 done"
    journal = Journal(tmp_path)
    journal.load()
    journal.append("goal_started", goal=goal)
    journal.finish()
    out: list[str] = []
    events.show(tmp_path, 0, False, out.append)
    assert len(out) == 1
    assert not re.search("[\x00-\x1f\x7f-\x9f\u2028\u202e]", out[0])
    assert json.loads(out[0])["goal"] == records(tmp_path)[0]["goal"]


def next_line(proc: subprocess.Popen[str], timeout: float = 15.0) -> dict[str, Any]:
    """The next JSON line of a follower, or a failure (never a hang) when none comes."""
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, "no record came"
    return dict(json.loads(proc.stdout.readline()))


def test_logs_events_follows_new_records_and_a_new_goal(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    journal.load()
    journal.append("goal_started", goal="first")
    following = start_cli(
        cli_env("http://127.0.0.1:1"), "logs", "--events", "-f", "-w", str(tmp_path)
    )
    try:
        assert next_line(following)["goal"] == "first"
        journal.append("plan", tasks=[{"description": "T", "subtasks": ["s"]}])
        assert next_line(following)["type"] == "plan"
        journal.archive()
        journal.append("goal_started", goal="second")
        again = next_line(following)
        assert (again["seq"], again["goal"]) == (1, "second")
        following.send_signal(signal.SIGINT)
        assert following.wait(timeout=10) == 0
        assert "Traceback" not in (following.stderr.read() if following.stderr else "")
    finally:
        if following.poll() is None:
            following.kill()
        journal.finish()


def test_a_reader_goes_on_past_a_record_whose_newline_came_later(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    journal.load()
    journal.append("goal_started", goal="G")
    journal.finish()
    history = tmp_path / ".agent_context" / "history.jsonl"
    second = encode({"seq": 2, "ts": "2026-01-01T00:00:00.000Z", "type": "resumed"})
    third = encode({"seq": 3, "ts": "2026-01-01T00:00:01.000Z", "type": "stopped"})
    with history.open("ab") as fh:
        fh.write(second[:-1])
    follower = events.Follower(Journal(tmp_path))
    assert [r["seq"] for r in follower.poll()] == [1, 2]
    with history.open("ab") as fh:
        fh.write(b"\n" + third)
    assert [r["seq"] for r in follower.poll()] == [3]
    assert follower.poll() == []


# ---- planted and damaged journals --------------------------------------------------------


@pytest.mark.parametrize("planted", ["fifo", "symlink"])
def test_planted_histories_are_refused_by_every_view(tmp_path: Path, planted: str) -> None:
    context = tmp_path / "ws" / ".agent_context"
    context.mkdir(parents=True)
    history = context / "history.jsonl"
    outside = tmp_path / "outside.jsonl"
    outside.write_bytes(b"secret\n")
    if planted == "fifo":
        os.mkfifo(history)
    else:
        history.symlink_to(outside)
    ws = tmp_path / "ws"
    views = [
        lambda: list(trace.show(ws, None, False, False)),
        lambda: flow.show(ws, False),
        lambda: flow.show(ws, True),
        lambda: events.show(ws, 0, False, print),
        lambda: watch.lines(ws, print),
        lambda: watch.snapshot(Journal(ws)),
    ]
    for shown in views:
        with pytest.raises(UnsafeFile):
            shown()
    assert outside.read_bytes() == b"secret\n"


def test_a_damaged_history_is_named_not_shown(run: Path, tmp_path: Path) -> None:
    lines = (run / ".agent_context" / "history.jsonl").read_bytes().splitlines(keepends=True)
    context = tmp_path / ".agent_context"
    context.mkdir()
    torn = b"".join(lines[:10]) + lines[10][:25]
    (context / "history.jsonl").write_bytes(torn)
    assert list(trace.show(tmp_path, None, False, False))  # a torn tail is what a crash leaves
    at = next(i for i, line in enumerate(lines) if i >= 10 and b"round" in line)
    broken = lines[at].replace(b"round", b"rounD")
    damaged = b"".join(lines[:at]) + broken + b"".join(lines[at + 1 :])
    (context / "history.jsonl").write_bytes(damaged)
    for shown in (
        lambda: list(trace.show(tmp_path, None, False, False)),
        lambda: flow.show(tmp_path, False),
    ):
        with pytest.raises(JournalCorrupt, match="damaged at byte"):
            shown()
