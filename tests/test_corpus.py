"""The bad-input corpus: malformed model replies and hostile tool calls, kept as data.

Every file in `tests/corpus/` is one JSON object,

    {"about": "...", "native_tools": true, "cases": [CASE, ...]}

where `native_tools: false` serves a model without the `tools` capability, so the
agent drives it through the text tool protocol. A CASE is

    {"name": "unique-name",
     "about": "why it matters",
     "setup": {"files": {"rel/path": "text"}, "symlinks": {"rel/link": "target"}},
     "replies": [REPLY, ...],
     "expect": {...}}

`replies` are fake-scenario REPLY objects (see `localagent.models.fake`), served in
order while the case is active. `expect` holds:

    observation_contains  words (case-insensitive) the model must get back; required
    actions_ok            how many of the case's tool actions succeeded
    blocked               how many of its actions the loop guard blocked
    subtask               "completed" (the default) or "failed"
    workspace_files       {"rel/path": "exact text"} that must exist afterwards
    workspace_absent      ["rel/path", ...] that must not exist afterwards

In any string, `@OUTSIDE@` is the absolute path of a sentinel folder next to the
workspace, `@WS@` the workspace itself, and `@x<N>:<text>@` stands for text repeated
N times.

The cases of a file go through the real loop together, in one foreground run of the
CLI against a scripted fake server: the plan gives every case its own subtask
(`case-007`), one rule per reply serves the case's replies while its subtask is active,
and the default reply marks the subtask complete. Should a run crash, the case it was
on is charged with the crash and the cases after it run again in a fresh workspace.
Every run must end normally, keep its journal consistent and leave everything outside
the workspace exactly as it was.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from localagent.config.userconfig import ENV_NAMES
from localagent.journal import decode
from localagent.loop.actions import ARGS_KEPT
from localagent.models.fake import FakeServer
from localagent.system.textcap import clip

CRASH_MARK = "Traceback (most recent call last)"
CORPUS = Path(__file__).parent / "corpus"
GOAL = "Survive the bad-input corpus"
SUBTASKS_PER_TASK = 8
CASES_PER_RUN = 48  # the planner accepts at most 6 tasks of 8 subtasks
RUN_TIMEOUT = 120.0
COMPLETE = {
    "tool_calls": [
        {"name": "mark_subtask_complete", "arguments": {"success": True, "reason": "case over"}}
    ]
}
CASE_KEYS = {"name", "about", "setup", "replies", "expect"}
EXPECT_KEYS = {
    "observation_contains",
    "actions_ok",
    "blocked",
    "subtask",
    "workspace_files",
    "workspace_absent",
}
SETTINGS_ENV = tuple(ENV_NAMES.values())
OUTSIDE_FILES = {
    "secret.txt": "sentinel: nothing may change this file\n",
    "evil.py": "open(__file__ + '.ran', 'w').write('ran')\n",
    "keep/nested.txt": "sentinel in a sub-folder\n",
}
OBSERVATION_TYPES = {"action_finished": "result", "action_blocked": "reason", "feedback": "text"}
_REPEAT = re.compile(r"@x(\d+):([^@]*)@")


# ---- the corpus ------------------------------------------------------------------


def _check_case(case: Any, where: str) -> None:
    assert isinstance(case, dict), f"{where}: a case is an object"
    assert set(case) <= CASE_KEYS, f"{where}: unknown keys {set(case) - CASE_KEYS}"
    assert isinstance(case.get("name"), str) and case["name"], f"{where}: a case needs a name"
    assert case.get("replies") and isinstance(case["replies"], list), f"{where}: no replies"
    expect = case.get("expect")
    assert isinstance(expect, dict), f"{where}: a case needs expect"
    assert set(expect) <= EXPECT_KEYS, f"{where}: unknown expect keys {set(expect) - EXPECT_KEYS}"
    assert isinstance(expect.get("observation_contains"), list), f"{where}: observation_contains"
    assert expect.get("subtask", "completed") in ("completed", "failed"), f"{where}: subtask"


def load_corpus() -> dict[str, dict[str, Any]]:
    """Every corpus file by stem, checked; case names are unique across the corpus."""
    files: dict[str, dict[str, Any]] = {}
    names: set[str] = set()
    for path in sorted(CORPUS.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        assert isinstance(data.get("cases"), list), f"{path.name}: needs a list of cases"
        for index, case in enumerate(data["cases"]):
            _check_case(case, f"{path.name} case {index}")
            assert case["name"] not in names, f"{path.name}: duplicate case {case['name']}"
            names.add(case["name"])
        files[path.stem] = data
    return files


FILES = load_corpus()
CASES = [(stem, case) for stem, data in FILES.items() for case in data["cases"]]


def test_the_corpus_is_large_enough() -> None:
    assert len(CASES) >= 50
    assert sum(not data.get("native_tools", True) for data in FILES.values()) >= 1


# ---- one run of the CLI over a batch of cases ------------------------------------


@dataclass
class CaseResult:
    name: str
    records: list[dict[str, Any]] = field(default_factory=list)
    ended: str | None = None  # subtask_completed / subtask_failed
    crash: str | None = None


@dataclass
class Run:
    workspace: Path
    cases: list[dict[str, Any]]
    exit_code: int | None = None
    stderr: str = ""
    crash: str | None = None
    records: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    outside_before: dict[str, Any] = field(default_factory=dict)
    outside_after: dict[str, Any] = field(default_factory=dict)
    delivered: str = ""  # every tool and user message the model received, joined
    status: dict[str, Any] | None = None
    results: dict[str, CaseResult] = field(default_factory=dict)

    @property
    def expected_exit(self) -> int:
        failing = any(c["expect"].get("subtask") == "failed" for c in self.cases)
        return 1 if failing else 0


def fill(value: Any, places: dict[str, str]) -> Any:
    if isinstance(value, str):
        value = _REPEAT.sub(lambda m: m[2] * int(m[1]), value)
        for key, text in places.items():
            value = value.replace(key, text)
        return value
    if isinstance(value, dict):
        return {key: fill(item, places) for key, item in value.items()}
    if isinstance(value, list):
        return [fill(item, places) for item in value]
    return value


def snapshot(base: Path, skip: Path) -> dict[str, Any]:
    """Every entry under base but skip, with what it holds; links are not followed."""
    found: dict[str, Any] = {}
    for folder, dirs, files in os.walk(base):
        here = Path(folder)
        dirs[:] = [d for d in dirs if here / d != skip]
        for name in dirs + files:
            path = here / name
            key = path.relative_to(base).as_posix()
            if path.is_symlink():
                found[key] = ("link", os.readlink(path))
            elif path.is_dir():
                found[key] = ("dir",)
            else:
                data = path.read_bytes()
                found[key] = ("file", len(data), hashlib.sha256(data).hexdigest())
    return found


def journal_problems(workspace: Path) -> list[str]:
    """What is wrong with the journal: damaged lines, seq gaps, broken action pairs."""
    history = workspace / ".agent_context" / "history.jsonl"
    if not history.exists():
        return ["history.jsonl is missing"]
    problems = []
    records = []
    for number, line in enumerate(history.read_bytes().splitlines(keepends=True), 1):
        record = decode(line)
        if record is None or not line.endswith(b"\n"):
            problems.append(f"line {number} is damaged")
            continue
        records.append(record)
    seqs = [r["seq"] for r in records]
    if seqs != list(range(1, len(seqs) + 1)):
        problems.append(f"seq is not 1..n: {seqs[:5]}...{seqs[-5:]}")
    # A step's `changes` records (what it changed, for `rewind`) come before its finish.
    steps = [r for r in records if r["type"] != "changes"]
    for here, after in zip(steps, [*steps[1:], None], strict=True):
        if here["type"] != "action_started":
            continue
        if after is None:
            continue  # interrupted: resume settles it
        kept = clip(here["args"], ARGS_KEPT)  # the finish keeps long arguments shortened
        same = (after.get("tool"), after.get("args")) == (here["tool"], kept)
        if after["type"] != "action_finished" or not same:
            problems.append(f"action_started {here['seq']} is not followed by its finish")
    state = workspace / ".agent_context" / "state.json"
    if state.exists() and json.loads(state.read_text(encoding="utf-8"))["seq"] > len(records):
        problems.append("state.json covers more records than history.jsonl holds")
    return problems


def read_records(workspace: Path) -> list[dict[str, Any]]:
    history = workspace / ".agent_context" / "history.jsonl"
    if not history.exists():
        return []
    lines = history.read_bytes().splitlines(keepends=True)
    return [r for r in map(decode, lines) if r is not None]


def scenario(cases: list[dict[str, Any]], native: bool) -> dict[str, Any]:
    labels = [f"case-{i:03d}" for i in range(len(cases))]
    tasks = [
        {"description": f"cases from {i}", "subtasks": labels[i : i + SUBTASKS_PER_TASK]}
        for i in range(0, len(labels), SUBTASKS_PER_TASK)
    ]
    plan = json.dumps({"tasks": tasks})
    rules: list[dict[str, Any]] = [{"kind": "plan", "reply": {"content": plan}}]
    for label, case in zip(labels, cases, strict=True):
        match = f"ACTIVE SUBTASK: {re.escape(label)}$"
        rules += [
            {"kind": "chat", "match": match, "in": "last", "times": 1, "reply": reply}
            for reply in case["replies"]
        ]
    caps = ["completion", "tools"] if native else ["completion"]
    return {
        "models": [{"name": "gpt-oss:20b", "capabilities": caps, "context_length": 131072}],
        "rules": rules,
        "default": COMPLETE,
    }


def cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "localagent", *args],
        env=env,
        text=True,
        encoding="utf-8",
        errors="replace",
        capture_output=True,
        timeout=RUN_TIMEOUT,
    )


def prepare(base: Path, cases: list[dict[str, Any]]) -> tuple[Path, list[dict[str, Any]]]:
    """A workspace and a sentinel folder next to it; the cases with placeholders filled."""
    workspace, outside = base / "ws", base / "outside"
    workspace.mkdir(parents=True)
    for name, text in OUTSIDE_FILES.items():
        (outside / name).parent.mkdir(parents=True, exist_ok=True)
        (outside / name).write_text(text, encoding="utf-8")
    places = {"@OUTSIDE@": outside.as_posix(), "@WS@": workspace.as_posix()}
    filled = [fill(case, places) for case in cases]
    for case in filled:
        setup = case.get("setup", {})
        for name, text in setup.get("files", {}).items():
            (workspace / name).parent.mkdir(parents=True, exist_ok=True)
            (workspace / name).write_text(text, encoding="utf-8")
        for name, target in setup.get("symlinks", {}).items():
            link = workspace / name
            if not (link.is_symlink() and os.readlink(link) == target):  # cases may share one
                os.symlink(target, link)
    return workspace, filled


def run_batch(base: Path, env: dict[str, str], cases: list[dict[str, Any]], native: bool) -> Run:
    workspace, filled = prepare(base, cases)
    run = Run(workspace, cases)
    run.outside_before = snapshot(base, workspace)
    with FakeServer(scenario(filled, native)) as fake:
        args = ["start", GOAL, "-w", str(workspace), "--foreground", "--max-rounds", "2000"]
        try:
            done = cli(args, {**env, "OLLAMA_HOST": fake.url})
            run.exit_code, run.stderr = done.returncode, done.stderr
        except subprocess.TimeoutExpired as exc:
            run.crash = f"the run did not end within {RUN_TIMEOUT:.0f} s"
            run.stderr = str(exc.stderr or "")
        requests = fake.chat_requests
    if run.crash is None and (
        run.exit_code not in (0, 1) or "internal error" in run.stderr or CRASH_MARK in run.stderr
    ):
        said = [line for line in run.stderr.splitlines() if not line.startswith("round ")]
        run.crash = f"exit {run.exit_code}: " + "\n".join(said)[-1500:]
    run.delivered = "\n".join(
        str(m.get("content", ""))
        for body in requests
        for m in body.get("messages", [])
        if m.get("role") in ("tool", "user")
    )
    run.outside_after = snapshot(base, workspace)
    run.records = read_records(workspace)
    run.problems = journal_problems(workspace)
    status = cli(["status", "-w", str(workspace), "--json"], env)
    run.status = json.loads(status.stdout) if status.returncode == 0 else None
    split_by_case(run)
    return run


def split_by_case(run: Run) -> None:
    """Give each case the records written while its subtask was active."""
    results = [CaseResult(case["name"]) for case in run.cases]
    index = None
    for record in run.records:
        if record["type"] == "plan":
            index = 0
            continue
        if index is None or index >= len(results):
            continue
        if record["type"] in ("subtask_completed", "subtask_failed"):
            results[index].ended = record["type"]
            index += 1
        else:
            results[index].records.append(record)
    if run.crash is not None:
        stuck = index or 0
        if stuck < len(results):
            results[stuck].crash = run.crash
        del results[stuck + 1 :]
    run.results = {result.name: result for result in results}


class Corpus:
    """Runs each corpus file once, on first use, and keeps what happened."""

    def __init__(self, base: Path, env: dict[str, str]) -> None:
        self.base = base
        self.env = env
        self.symlinks = can_symlink(base)
        self._runs: dict[str, list[Run]] = {}

    def runs(self, stem: str) -> list[Run]:
        if stem not in self._runs:
            self._runs[stem] = list(self._run_file(stem))
        return self._runs[stem]

    def case(self, stem: str, name: str) -> tuple[CaseResult, Run]:
        for run in self.runs(stem):
            if name in run.results:
                return run.results[name], run
        raise AssertionError(f"case {name} never ran")

    def _run_file(self, stem: str) -> Iterator[Run]:
        native = FILES[stem].get("native_tools", True)
        remaining = [c for c in FILES[stem]["cases"] if self.symlinks or not needs_symlinks(c)]
        number = 0
        while remaining:
            batch = remaining[:CASES_PER_RUN]
            run = run_batch(self.base / f"{stem}-{number}", self.env, batch, native)
            yield run
            remaining = remaining[max(1, len(run.results)) :]
            number += 1


def needs_symlinks(case: dict[str, Any]) -> bool:
    return bool(case.get("setup", {}).get("symlinks"))


def can_symlink(folder: Path) -> bool:
    """Windows allows symbolic links only to administrators or in developer mode."""
    link = folder / "probe-link"
    try:
        os.symlink(folder, link)
    except OSError:
        return False
    link.unlink()
    return True


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    # Module scope runs before the per-test home of conftest, so set one up here.
    home = tmp_path_factory.mktemp("corpus-home")
    (home / "config").mkdir()
    # No replanning: a failed case must not rewrite the plan that maps subtasks to cases.
    (home / "config" / "config.toml").write_text("max_replans = 0\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in SETTINGS_ENV}
    env |= {"LOCALAGENT_HOME": str(home), "LOCALAGENT_RETRY_DEADLINE": "2"}
    return Corpus(tmp_path_factory.mktemp("corpus"), env)


# ---- the tests -------------------------------------------------------------------


def observations(records: list[dict[str, Any]]) -> list[str]:
    return [r[OBSERVATION_TYPES[r["type"]]] for r in records if r["type"] in OBSERVATION_TYPES]


@pytest.mark.parametrize("stem", sorted(FILES))
def test_corpus_runs_end_normally(stem: str, corpus: Corpus) -> None:
    for run in corpus.runs(stem):
        where = f"{stem} run in {run.workspace}"
        assert CRASH_MARK not in run.stderr, f"{where}:\n{run.stderr}"
        assert run.crash is None, f"{where} crashed: {run.crash}"
        assert run.exit_code == run.expected_exit, f"{where}:\n{run.stderr[-1500:]}"
        assert run.problems == [], f"{where}: journal problems {run.problems}"
        assert run.outside_after == run.outside_before, f"{where}: something outside changed"
        assert run.status is not None, f"{where}: status failed"
        assert run.status["records"] == run.records[-1]["seq"]
        assert run.status["status"] == ("completed" if run.expected_exit == 0 else "failed")
        ended = [r.ended for r in run.results.values()]
        assert None not in ended, f"{where}: cases left unfinished: {ended}"


@pytest.mark.parametrize(("stem", "case"), CASES, ids=[case["name"] for _, case in CASES])
def test_case_gets_a_clear_observation(stem: str, case: dict[str, Any], corpus: Corpus) -> None:
    if needs_symlinks(case) and not corpus.symlinks:
        pytest.skip("this system does not let the test create symbolic links")
    result, run = corpus.case(stem, case["name"])
    assert result.crash is None, f"the run crashed on this case: {result.crash}"
    expect = case["expect"]
    seen = observations(result.records)
    text = "\n".join(seen).casefold()
    for word in expect["observation_contains"]:
        assert word.casefold() in text, f"{word!r} is not in what the model got back: {seen}"
    if "actions_ok" in expect:
        finished = [r for r in result.records if r["type"] == "action_finished"]
        shown = [(r["tool"], r["ok"], r["result"][:200]) for r in finished]
        assert sum(r["ok"] for r in finished) == expect["actions_ok"], shown
    if "blocked" in expect:
        blocked = [r for r in result.records if r["type"] == "action_blocked"]
        assert len(blocked) == expect["blocked"], seen
    assert result.ended == "subtask_" + expect.get("subtask", "completed"), seen
    last_call = max((r["seq"] for r in run.records if r["type"] == "llm_call"), default=0)
    for record in result.records:
        if record["type"] in OBSERVATION_TYPES and record["seq"] < last_call:
            said = record[OBSERVATION_TYPES[record["type"]]]
            # A context that must shrink keeps at least the head of each observation.
            assert said[:90] in run.delivered, f"the model never received: {said[:200]!r}"
    for name, wanted in expect.get("workspace_files", {}).items():
        path = run.workspace / name
        assert path.is_file(), f"{name} was not written"
        written = path.read_text(encoding="utf-8", errors="replace")
        assert written == fill(wanted, {}), f"{name} holds {written[:200]!r}"
    for name in expect.get("workspace_absent", []):
        path = run.workspace / name
        assert not os.path.lexists(path), f"{name} exists but must not"
