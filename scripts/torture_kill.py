"""Kill torture: SIGKILL the real agent at random moments until its goal is done.

A scripted goal of 25 file writes and 5 checking commands (5 batches of 5 writes, each
followed by `python check.py BATCH`) runs as the real command line,
`python -m localagent start GOAL -w WS --foreground` and then `resume --foreground`,
against the fake Ollama server. Each run is killed with SIGKILL either after a random
delay (which lands anywhere: start-up, loading, a model call, a tool, an fsync) or once
it has appended a random number of new history records, then resumed, killed again,
and so on. The fake model answers from the prompt alone (the active subtask and
whether the probe lists its file as written or existing), so it gives the right next step
whatever a kill interrupted.

After every kill:

- every history record present before the kill is byte-for-byte unchanged; only a
  torn last line may be cut (and it is kept in `history.jsonl.broken`);
- the journal loads, and snapshot + replay equals a replay from scratch;
- the action records pair up (see `check_actions`).

At the end of each goal: the goal is completed, every file has its content, `seq` runs
1..N with every line intact, each write was started once, each subtask completed
once, nothing was blocked or failed, no interrupted command was run again before the
model was asked, every run of a command was journaled (durably) before it started and
ran once (`check_runs`), and `state.json` equals a replay of `history.jsonl`.

    python scripts/torture_kill.py [--kills 200] [--seed S] [--dir FOLDER] [--keep]

Short lives: `--lives 0.05:0.8 --seconds 45 --writes 42` kills every run after a random
life in that range (seconds), for at most `--seconds`, and says how many of the goal's
writes were done by then: a run that needs longer than its life to reach its model never
makes progress. Then one unharmed run finishes the goal and every check above is made.

When one goal completes before the kill budget is spent, the next goal starts in a new
workspace. Exit code 0 when every check held; 1 with the first violation otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localagent.journal import CONTEXT_DIR, Journal, decode
from localagent.models.fake import FakeServer
from localagent.state import State, apply
from localagent.system.errors import AgentError
from localagent.system.proctree import MARKER_VARIABLE
from localagent.tools import catalog

# Each run first notes its batch and its environment marker in runs.log (see check_runs).
CHECK_SCRIPT = """\
import os
import sys
import time
from pathlib import Path

batch, per = int(sys.argv[1]), {per}
with open("runs.log", "a", encoding="utf-8") as log:
    log.write(f"{{batch}} {{os.environ.get('{marker}', '-')}}\\n")
time.sleep({delay})
bad = []
for n in range((batch - 1) * per + 1, batch * per + 1):
    path = Path(f"f{{n:02d}}.txt")
    if not path.is_file() or path.read_text() != f"{{n:02d}}\\n":
        bad.append(path.name)
print(f"batch {{batch}}: " + ("missing or wrong: " + ", ".join(bad) if bad else "ok"))
sys.exit(1 if bad else 0)
"""


# ---- the scripted goal ---------------------------------------------------------------


def goal_text(batches: int, per_batch: int) -> str:
    return f"Write {batches * per_batch} numbered text files in {batches} batches, checking each"


def plan(batches: int, per_batch: int) -> list[dict[str, Any]]:
    tasks = []
    for batch in range(1, batches + 1):
        first = (batch - 1) * per_batch + 1
        subtasks = [
            f"Write file f{n:02d}.txt with the text {n:02d}"
            for n in range(first, first + per_batch)
        ]
        subtasks.append(f"Run python check.py {batch} and see it pass")
        tasks.append({"description": f"Batch {batch}", "subtasks": subtasks})
    return tasks


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def scenario(batches: int, per_batch: int) -> dict[str, Any]:
    """Rules keyed on the prompt only, so every answer is right after any kill: a file
    is written while the probe does not list it as written or existing, a batch is checked until
    the probe lists `python check.py BATCH -> 0` among the recent commands. The probe's
    facts come before its last line, the active subtask."""
    active = r"ACTIVE SUBTASK: "
    return {
        "rules": [
            {"kind": "plan", "reply": {"content": json.dumps({"tasks": plan(batches, per_batch)})}},
            {
                "kind": "chat",
                "in": "last",
                "match": r"Files (?:written|that exist): [^\n]*\b(f\d+\.txt)\b.*"
                + active
                + r"Write file \1 ",
                "reply": _call("mark_subtask_complete", success=True, reason="$1 exists"),
            },
            {
                "kind": "chat",
                "in": "last",
                "match": active + r"Write file (f\d+\.txt) with the text (\d+)$",
                "reply": _call("write_file", path="$1", content="$2\n", create_dirs=False),
            },
            {
                "kind": "chat",
                "in": "last",
                "match": r"Recent commands: [^\n]*python check\.py (\d+) -> 0.*"
                + active
                + r"Run python check\.py \1 ",
                "reply": _call("mark_subtask_complete", success=True, reason="batch $1 passed"),
            },
            {
                "kind": "chat",
                "in": "last",
                "match": active + r"Run python check\.py (\d+) ",
                "reply": _call("run_cmd", cmd="python check.py $1", timeout_sec=60),
            },
        ],
        "default": _call(
            "mark_subtask_complete", success=False, reason="no scripted step fits this prompt"
        ),
    }


def prepare_workspace(ws: Path, per_batch: int, check_delay: float) -> None:
    ws.mkdir(parents=True, exist_ok=True)
    script = CHECK_SCRIPT.format(per=per_batch, delay=check_delay, marker=MARKER_VARIABLE)
    (ws / "check.py").write_text(script, encoding="utf-8")


def agent_env(server_url: str, home: Path) -> dict[str, str]:
    # An installed package has its bytecode compiled, so the runs do not compile from source.
    inherited = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {
        **inherited,
        "OLLAMA_HOST": server_url,
        "LOCALAGENT_HOME": str(home),
        "LOCALAGENT_MAX_ROUNDS": "100000",
        "LOCALAGENT_RETRY_DEADLINE": "20",
        "PYTHONUNBUFFERED": "1",
    }


# ---- evidence: what must hold of a journal -------------------------------------------


class Violation(AssertionError):
    """A durability or recovery invariant does not hold."""


def history_bytes(ws: Path) -> bytes:
    path = ws / CONTEXT_DIR / "history.jsonl"
    return path.read_bytes() if path.exists() else b""


def split_tail(data: bytes) -> tuple[bytes, bytes]:
    """The newline-terminated lines, and what follows the last newline (maybe b"")."""
    cut = data.rfind(b"\n") + 1
    return data[:cut], data[cut:]


def check_prefix_kept(before: bytes, after: bytes) -> None:
    """Every complete line of `before` is still the start of `after`, byte for byte.

    A whole record that lost only its newline must survive (the load that repairs it
    adds the newline); a torn tail may be cut.
    """
    lines, tail = split_tail(before)
    if not after.startswith(lines):
        pairs = enumerate(zip(lines, after, strict=False))
        at = next((i for i, (a, b) in pairs if a != b), min(len(lines), len(after)))
        raise Violation(
            f"history.jsonl changed below byte {len(lines)}: first difference at byte {at} "
            f"(had {len(lines)} bytes of complete lines, now {len(after)} bytes)"
        )
    if tail and decode(tail) is not None and not after[len(lines) :].startswith(tail):
        raise Violation(f"a whole last record without its newline was lost: {tail[:80]!r}")


def strict_records(data: bytes) -> list[dict[str, Any]]:
    """Every record of a history that must be wholly intact, with `seq` running 1..N."""
    if data and not data.endswith(b"\n"):
        raise Violation(f"history.jsonl ends without a newline: {data[-80:]!r}")
    records = []
    for number, line in enumerate(data.splitlines(keepends=True), 1):
        record = decode(line)
        if record is None:
            raise Violation(f"history.jsonl line {number} is damaged: {line[:120]!r}")
        if record["seq"] != number:
            raise Violation(f"history.jsonl line {number} has seq {record['seq']}")
        records.append(record)
    return records


def intact_records(data: bytes) -> list[dict[str, Any]]:
    """The records before a possibly torn tail (as after a kill), seq checked."""
    lines, tail = split_tail(data)
    records = strict_records(lines)
    last = decode(tail) if tail else None
    if last is not None:
        if last["seq"] != len(records) + 1:
            raise Violation(f"the unterminated last record has seq {last['seq']}")
        records.append(last)
    return records


def _dump(state: State) -> dict[str, Any]:
    return state.model_dump(mode="json", exclude={"history_offset"})


def _first_difference(a: Any, b: Any, where: str = "state") -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                return _first_difference(a.get(key), b.get(key), f"{where}.{key}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return _first_difference(x, y, f"{where}[{i}]")
    return f"{where}: {str(a)[:200]} != {str(b)[:200]}"


def check_state(ws: Path, records: list[dict[str, Any]], scratch: Path) -> State:
    """The journal loads; snapshot + replay equals a replay from scratch; the snapshot
    itself equals a replay of the records it says it covers, at the byte offset it says."""
    context = ws / CONTEXT_DIR
    copy = scratch / "replay"
    shutil.rmtree(copy, ignore_errors=True)
    (copy / CONTEXT_DIR).mkdir(parents=True)
    if (context / "history.jsonl").exists():
        shutil.copyfile(context / "history.jsonl", copy / CONTEXT_DIR / "history.jsonl")
    try:
        loaded = Journal(ws).load(repair=False)
        replayed = Journal(copy).load(repair=False)
    except AgentError as exc:
        raise Violation(f"the journal does not load: {exc.message}") from None
    if _dump(loaded) != _dump(replayed):
        raise Violation(
            "snapshot + replay differs from a replay of history.jsonl from scratch: "
            + _first_difference(_dump(loaded), _dump(replayed))
        )
    if (context / "state.json").exists():
        check_snapshot(context, records)
    return loaded


def check_snapshot(context: Path, records: list[dict[str, Any]]) -> None:
    try:
        snapshot = State.model_validate_json((context / "state.json").read_bytes())
    except ValueError as exc:
        raise Violation(f"state.json is not a whole snapshot: {exc}") from None
    if snapshot.seq > len(records):
        raise Violation(f"state.json covers seq {snapshot.seq}; the history ends at {len(records)}")
    folded = State()
    for record in records[: snapshot.seq]:
        apply(folded, record)
    if _dump(folded) != _dump(snapshot):
        raise Violation(
            f"state.json (seq {snapshot.seq}) differs from a replay of records 1..{snapshot.seq}: "
            + _first_difference(_dump(snapshot), _dump(folded))
        )
    data = (context / "history.jsonl").read_bytes()
    offset = sum(len(line) for line in data.splitlines(keepends=True)[: snapshot.seq])
    if snapshot.history_offset != offset:
        raise Violation(
            f"state.json says seq {snapshot.seq} ends at byte {snapshot.history_offset}; "
            f"it ends at byte {offset}"
        )


@dataclass
class ActionCounts:
    started: int = 0
    finished: int = 0
    redone: int = 0
    interrupted: int = 0
    open_at_end: int = 0


def check_actions(records: list[dict[str, Any]], complete: bool) -> ActionCounts:
    """Each `action_started` is settled by the first record after it that is not
    `resumed`, and nothing else settles an action:

    - `action_finished` with the same tool and args, marked `redone` exactly when a
      `resumed` came between (a restart redid it), and only idempotent tools are redone;
    - `action_interrupted` with the same tool and args, only after a `resumed`, and
      only for tools that are not idempotent (`run_cmd` is never re-run blindly);
    - nothing, only at the end of the history (the run was killed there).

    So no action finishes twice and no finish lacks its start. With `complete`, no
    action may be left open.
    """
    counts = ActionCounts()
    settled: set[int] = set()
    for i, record in enumerate(records):
        if record["type"] != "action_started":
            continue
        counts.started += 1
        j = i + 1
        # A step's `changes` (what it did to the files, for rewind) come just before its end.
        between = ("resumed", "preflight", "suspended", "changes")
        while j < len(records) and records[j]["type"] in between:
            j += 1
        where = f"action_started seq {record['seq']} ({record['tool']})"
        if j == len(records):
            if complete:
                raise Violation(f"{where} is never settled")
            counts.open_at_end += 1
            continue
        settle = records[j]
        restarted = any(r["type"] == "resumed" for r in records[i + 1 : j])
        if settle["type"] not in ("action_finished", "action_interrupted"):
            raise Violation(f"{where} is followed by {settle['type']} seq {settle['seq']}")
        if (settle["tool"], settle["args"]) != (record["tool"], record["args"]):
            raise Violation(f"{where} is settled by seq {settle['seq']} of another action")
        tool = catalog().get(record["tool"])
        idempotent = tool is not None and tool.policy.resume == "redo"
        if settle["type"] == "action_interrupted":
            if not restarted or idempotent:
                raise Violation(f"{where} is interrupted at seq {settle['seq']} wrongly")
            counts.interrupted += 1
        else:
            if bool(settle.get("redone")) != restarted or (restarted and not idempotent):
                raise Violation(f"{where}: redone={settle.get('redone')} at seq {settle['seq']}")
            counts.finished += 1
            counts.redone += restarted
        settled.add(settle["seq"])
    for record in records:
        kind = record["type"]
        if kind in ("action_finished", "action_interrupted") and record["seq"] not in settled:
            raise Violation(f"{kind} seq {record['seq']} settles no action_started")
    return counts


def check_commands(records: list[dict[str, Any]]) -> None:
    """After an interrupted command, nothing is started again before a new model call."""
    waiting: dict[str, int] | None = None
    for record in records:
        kind = record["type"]
        if kind == "action_interrupted":
            waiting = {"seq": record["seq"]}
        elif kind == "llm_call" and record.get("purpose") == "round":
            waiting = None
        elif kind == "action_started" and waiting is not None:
            raise Violation(
                f"action_started seq {record['seq']} ({record['args']}) follows the "
                f"interruption at seq {waiting['seq']} with no model call between"
            )


def check_runs(ws: Path, records: list[dict[str, Any]]) -> None:
    """Every run of check.py was journaled before it started, and ran once: its marker
    (the environment marker of the command's processes) is named by the durable
    `action_started` of a `python check.py BATCH` of its batch, and by no other run. A
    command started before its record would run again on resume, under a new record."""
    path = ws / "runs.log"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    runs = [line.split() for line in text.splitlines()]
    started = [
        (r.get("marker"), r["args"]["cmd"].split()[-1]) for r in records if _started(r, "run_cmd")
    ]
    for batch in sorted({batch for batch, _ in runs}):
        ran, journaled = sum(b == batch for b, _ in runs), sum(b == batch for _, b in started)
        if ran > journaled:
            raise Violation(
                f"`python check.py {batch}` ran {ran} times for {journaled} action_started "
                "record(s): a command started before its record was durable"
            )
    starts = dict(started)
    seen: set[str] = set()
    for batch, marker in runs:
        if starts.get(marker) != batch or marker in seen:
            raise Violation(
                f"the run of `python check.py {batch}` marked {marker} has no action_started "
                "of its own (it started before its record was durable, or ran twice)"
            )
        seen.add(marker)


def check_finished(ws: Path, records: list[dict[str, Any]], batches: int, per_batch: int) -> None:
    """The end state of a completed goal of the scripted plan."""
    kinds = Counter(r["type"] for r in records)
    if records[-1]["type"] != "goal_completed":
        raise Violation(f"the history ends with {records[-1]['type']}, not goal_completed")
    total = batches * (per_batch + 1)
    if kinds["subtask_completed"] != total:
        raise Violation(f"{kinds['subtask_completed']} subtask_completed records, not {total}")
    for kind in ("subtask_failed", "action_blocked", "loop_detected", "goal_failed"):
        if kinds[kind]:
            raise Violation(f"{kinds[kind]} {kind} record(s) in a run that should have none")
    if kinds["goal_started"] != 1 or kinds["plan"] != 1:
        raise Violation(f"{kinds['goal_started']} goal_started and {kinds['plan']} plan records")
    writes = Counter(r["args"]["path"] for r in records if _started(r, "write_file"))
    expected = {f"f{n:02d}.txt" for n in range(1, batches * per_batch + 1)}
    if set(writes) != expected or max(writes.values()) != 1:
        twice = sorted(p for p, c in writes.items() if c > 1)
        raise Violation(f"write_file starts: missing {sorted(expected - set(writes))}, {twice}")
    for name in sorted(expected):
        if (ws / name).read_text(encoding="utf-8") != name[1:3] + "\n":
            raise Violation(f"{name} has the wrong content")
    for record in records:
        if _finished(record, "run_cmd") and record["returncode"] != 0:
            raise Violation(f"command at seq {record['seq']} failed: {record['result']}")
    check_runs(ws, records)


def _started(record: dict[str, Any], tool: str) -> bool:
    return record["type"] == "action_started" and record["tool"] == tool


def _finished(record: dict[str, Any], tool: str) -> bool:
    return record["type"] == "action_finished" and record["tool"] == tool


def check_broken_keeps(ws: Path, torn: list[bytes]) -> None:
    """Every torn tail that a load cut off is kept in history.jsonl.broken (or in an
    archived copy of it, when the torn record was the only one and `start` began anew)."""
    context = ws / CONTEXT_DIR
    paths = [context / "history.jsonl.broken", *context.glob("archive/*/history.jsonl.broken")]
    kept = b"".join(path.read_bytes() for path in paths if path.exists())
    for tail in torn:
        if tail not in kept:
            raise Violation(f"a cut torn tail is not in history.jsonl.broken: {tail[:80]!r}")


# ---- the torture ---------------------------------------------------------------------


@dataclass
class Summary:
    kills: int = 0
    resumes: int = 0
    starts: int = 0
    goals: int = 0
    records: int = 0
    torn_tails: int = 0
    redone: int = 0
    interrupted: int = 0
    killed_with_open_action: int = 0
    seconds: float = 0.0
    writes: tuple[int, int, float] | None = None  # short lives: done, of, within seconds
    workspaces: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        return [
            f"kills                      {self.kills}",
            f"runs resumed / started     {self.resumes} / {self.starts}",
            f"goals completed            {self.goals}",
            f"history records checked    {self.records}",
            f"kills with an open action  {self.killed_with_open_action}",
            f"actions redone             {self.redone}",
            f"commands interrupted       {self.interrupted}",
            f"torn tails cut             {self.torn_tails}",
            f"time                       {self.seconds:.1f} s",
        ] + (
            [
                f"writes done in short lives {self.writes[0]} of {self.writes[1]} in "
                f"{self.writes[2]:.0f} s"
            ]
            if self.writes
            else []
        )


class Torture:
    """One workspace, killed and resumed until its goal completes."""

    def __init__(
        self,
        ws: Path,
        env: dict[str, str],
        rng: random.Random,
        batches: int,
        per_batch: int,
        in_action: int = 0,
        lives: tuple[float, float] | None = None,
    ) -> None:
        self.ws = ws
        self.lives = lives
        self.in_action = in_action  # the first kills of all wait for an open action
        self.env = env
        self.rng = rng
        self.batches = batches
        self.per_batch = per_batch
        self.scratch = ws.parent / (ws.name + ".check")
        self.scratch.mkdir(exist_ok=True)
        self.out = ws.parent / (ws.name + ".out")
        self.torn: list[bytes] = []

    def command(self, summary: Summary) -> list[str]:
        base = [sys.executable, "-m", "localagent"]
        records = self.records_now()
        started = any(r["type"] == "goal_started" for r in records)
        # `start` with the same goal resumes an unfinished goal too (SPEC §2), so use
        # both; once the goal is over `start` would begin anew, so only `resume`.
        if started and (self.rng.random() < 0.8 or self.over(records)):
            summary.resumes += 1
            return [*base, "resume", "-w", str(self.ws), "--foreground"]
        summary.resumes += started
        summary.starts += not started
        goal = goal_text(self.batches, self.per_batch)
        return [*base, "start", goal, "-w", str(self.ws), "--foreground"]

    @staticmethod
    def over(records: list[dict[str, Any]]) -> bool:
        return bool(records) and records[-1]["type"] in ("goal_completed", "goal_failed")

    def records_now(self) -> list[dict[str, Any]]:
        return intact_records(history_bytes(self.ws))

    def spawn(self, summary: Summary) -> subprocess.Popen[bytes]:
        with self.out.open("ab") as out:
            out.write(f"\n---- run {summary.kills + 1}\n".encode())
            return subprocess.Popen(
                self.command(summary), env=self.env, stdout=out, stderr=subprocess.STDOUT
            )

    def kill_once(self, summary: Summary) -> bool:
        """Run until a random moment and SIGKILL it; True when the goal is over."""
        before = history_bytes(self.ws)
        proc = self.spawn(summary)
        if self.lives is not None:
            moment = self._after_delay(proc, self.rng.uniform(*self.lives))
        elif summary.kills < self.in_action:
            moment = self._during_action(proc)
        elif self.rng.random() < 0.4:
            moment = self._after_delay(proc, self.rng.uniform(0.0, 1.2))
        else:
            moment = self._after_records(proc, before, self.rng.randint(1, 12))
        killed = moment and proc.poll() is None
        if killed:
            proc.kill()  # SIGKILL (TerminateProcess on Windows): no handler, no cleanup
        code = proc.wait()
        if not killed and code != 0:
            raise Violation(f"the agent exited {code} on its own; see {self.out}")
        summary.kills += killed
        self.check_after(before, summary, complete=False)
        # A kill can land after goal_completed was journaled, before the process ended.
        return not killed or self.over(self.records_now())

    def _after_delay(self, proc: subprocess.Popen[bytes], seconds: float) -> bool:
        try:
            proc.wait(seconds)
        except subprocess.TimeoutExpired:
            return True
        return False

    def _during_action(self, proc: subprocess.Popen[bytes]) -> bool:
        """Wait until the history ends with a command's `action_started`: the kill then
        lands while the command runs, whatever the machine's speed."""
        path = self.ws / CONTEXT_DIR / "history.jsonl"
        while proc.poll() is None:
            lines = path.read_bytes().splitlines() if path.exists() else []
            if lines and b'"action_started"' in lines[-1] and b'"run_cmd"' in lines[-1]:
                time.sleep(0.05)
                return True
            time.sleep(0.002)
        return False

    def _after_records(self, proc: subprocess.Popen[bytes], before: bytes, n: int) -> bool:
        target = before.count(b"\n") + n
        path = self.ws / CONTEXT_DIR / "history.jsonl"
        while proc.poll() is None:
            if path.exists() and path.read_bytes().count(b"\n") >= target:
                # A little more, so the kill lands inside the next step, not between.
                time.sleep(self.rng.choice((0.0, 0.0005, 0.002, 0.01)))
                return True
            time.sleep(0.001)
        return False

    def check_after(self, before: bytes, summary: Summary, complete: bool) -> None:
        after = history_bytes(self.ws)
        check_prefix_kept(before, after)
        lines, old_tail = split_tail(before)
        if old_tail and decode(old_tail) is None and not after[len(lines) :].startswith(old_tail):
            # The run cut this torn tail off on load (unless a kill struck before that).
            self.torn.append(old_tail)
            summary.torn_tails += 1
        if not after:
            return
        records = strict_records(after) if complete else intact_records(after)
        check_state(self.ws, records, self.scratch)
        counts = check_actions(records, complete)
        check_commands(records)
        summary.killed_with_open_action += counts.open_at_end
        if complete:
            check_finished(self.ws, records, self.batches, self.per_batch)
            check_broken_keeps(self.ws, self.torn)
            summary.records += len(records)
            summary.redone += counts.redone
            summary.interrupted += counts.interrupted
            summary.goals += 1

    def run(self, summary: Summary, kill_budget: int, seconds: float = float("inf")) -> None:
        """Kill until the goal is over or a budget (kills, seconds) is spent, then run it
        once more unharmed: it completes the goal, or says it is complete and appends
        nothing."""
        started = time.perf_counter()
        while summary.kills < kill_budget and not self.kill_once(summary):
            if time.perf_counter() - started > seconds:
                break
        if self.lives is not None:
            done = sum(
                1
                for r in self.records_now()
                if r["type"] == "action_finished" and r.get("tool") == "write_file"
            )
            spent = time.perf_counter() - started
            summary.writes = (done, self.batches * self.per_batch, spent)
        before = history_bytes(self.ws)
        proc = self.spawn(summary)
        code = proc.wait(timeout=600)
        if code != 0:
            raise Violation(f"the final run exited {code}; see {self.out}")
        self.check_after(before, summary, complete=True)
        if self.over(intact_records(before)):
            grown = len(self.records_now()) - len(intact_records(before))
            if grown:
                raise Violation(f"resuming a completed goal appended {grown} record(s)")


def torture(
    kills: int,
    root: Path,
    seed: int,
    batches: int = 5,
    per_batch: int = 5,
    check_delay: float = 0.3,
    in_action: int = 0,
    lives: tuple[float, float] | None = None,
    seconds: float = float("inf"),
) -> Summary:
    """Kill agents at least `kills` times in all, each goal resumed until it completes;
    the first `in_action` kills wait for a command to be running."""
    rng = random.Random(seed)
    summary = Summary()
    started = time.perf_counter()
    home = root / "home"
    with FakeServer(scenario(batches, per_batch)) as server:
        env = agent_env(server.url, home)
        while summary.kills < kills or summary.goals == 0:
            ws = root / f"ws{summary.goals + 1:03d}"
            prepare_workspace(ws, per_batch, check_delay)
            summary.workspaces.append(str(ws))
            torture_ = Torture(ws, env, rng, batches, per_batch, in_action, lives)
            torture_.run(summary, kills, seconds)
            if lives is not None:
                break
    summary.seconds = time.perf_counter() - started
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=200, help="SIGKILLs in all (200)")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: time)")
    parser.add_argument("--dir", type=Path, default=None, help="work here and keep it")
    parser.add_argument("--keep", action="store_true", help="keep the temp folder")
    parser.add_argument("--lives", default=None, help="kill every run after LOW:HIGH s")
    parser.add_argument("--seconds", type=float, default=45.0, help="with --lives (45)")
    parser.add_argument("--writes", type=int, default=42, help="with --lives: at most 42")
    parser.add_argument(
        "--check-delay", type=float, default=0.3, help="seconds each check command takes (0.3)"
    )
    args = parser.parse_args(argv)
    lives = tuple(float(x) for x in args.lives.split(":")) if args.lives else None
    seed = args.seed if args.seed is not None else int(time.time())
    what = f"short lives of {args.lives} s" if lives else f"{args.kills} kills"
    print(f"kill torture: {what}, seed {seed}", flush=True)
    root = args.dir or Path(tempfile.mkdtemp(prefix="torture-"))
    root.mkdir(parents=True, exist_ok=True)
    try:
        if lives is not None:
            # A plan holds at most 6 tasks of 8 subtasks: 6 batches of up to 7 writes.
            per_batch = min(7, max(1, args.writes // 6))
            summary = torture(
                10**6, root, seed, 6, per_batch, args.check_delay, lives=lives, seconds=args.seconds
            )
        else:
            summary = torture(args.kills, root, seed, check_delay=args.check_delay)
    except Violation as exc:
        print(f"VIOLATION: {exc}\n(seed {seed}, files kept in {root})", file=sys.stderr)
        return 1
    if args.dir is None and not args.keep:
        shutil.rmtree(root, ignore_errors=True)
    print("\n".join(summary.lines()))
    print("every check held")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
