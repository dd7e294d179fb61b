"""Crash at every file operation of the journal, then resume and check the recovery.

Every write, fsync, truncate, replace and folder fsync of the journal goes through its
`Disk`. A child process runs `localagent.loop.runner.run` on a short scripted goal (2
batches of 2 file writes, each batch followed by `python check.py BATCH`) against the
fake Ollama server, with a `Disk` that counts operations and, at operation N:

- `before`: dies (`os._exit(137)`) instead of performing it;
- `after`: performs it, pushes a write through to the OS, then dies;
- `torn` (writes only): writes the first half of the bytes, then dies;
- `unterminated` (history writes only): writes all but the final newline, then dies;
- `ENOSPC`, `EIO`: raises that OSError instead of performing it;
- `torn+ENOSPC`, `unterminated+EIO` (history writes only): leaves that tail, then the
  next run, which must repair it on load, gets the OSError at its operation 1, 2, ...
  (each operation of the repair and the first append after it), before a normal resume.

A clean run counts the operations first; then every N in 1..total is tried in each
mode. After a crash, the real command line (`resume --foreground`, or `start` when no
goal was journaled yet) must complete the goal, and:

- every record present at the crash is still there byte for byte (a torn tail may be
  cut, and is kept in `history.jsonl.broken`);
- `seq` runs 1..N, every line intact; `state.json` equals a replay of the history;
- every action is settled once (finished, redone once after a restart if idempotent,
  or reported interrupted if a command), each write started once, each subtask
  completed once, nothing blocked or failed, and each run of `check.py` was journaled
  before it started and ran once (a crash between a command's start and its durable
  `action_started` would run it again);
- after an OSError: the child exits 1 with a one-line message naming the file and how
  to resume (no traceback), performs no disk operation after the failure, and
  `history.jsonl` does not grow after it.

    python scripts/crash_every_op.py [--modes before,after,torn,...] [--every K]
                                     [--jobs J] [--dir FOLDER]

Exit code 0 when every check held; 1 otherwise, listing each failing N and mode.
"""

from __future__ import annotations

import argparse
import errno
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson
from torture_kill import (
    Violation,
    agent_env,
    check_actions,
    check_broken_keeps,
    check_commands,
    check_finished,
    check_prefix_kept,
    check_state,
    goal_text,
    history_bytes,
    intact_records,
    prepare_workspace,
    scenario,
    split_tail,
    strict_records,
)

from localagent.journal import CONTEXT_DIR, Disk, decode
from localagent.models.fake import FakeServer

BATCHES, PER_BATCH = 2, 2
CRASH_CODE = 137
TORN = ("torn", "unterminated")
CRASHES = ("before", "after", *TORN)
ERRNOS = {"ENOSPC": errno.ENOSPC, "EIO": errno.EIO}
# A torn tail, then the disk fails at each operation of the repair on the next load
# (cut: write .broken, fsync it, truncate, fsync; terminate: truncate, write, fsync)
# and at the first append after it.
REPAIR_OPS = {"torn+ENOSPC": 5, "unterminated+EIO": 4}
MODES = (*CRASHES, *ERRNOS, *REPAIR_OPS)
HERE = Path(__file__).resolve()
Ran = subprocess.CompletedProcess[str]


# ---- the child: one run with a Disk that crashes or fails at operation N --------------


class CrashingDisk(Disk):
    def __init__(self, at: int, mode: str, history: Path) -> None:
        self.at = at
        self.mode = mode
        self.history = history
        self.ops: list[str] = []
        self.failed_at: int | None = None
        self.size_at_failure: int | None = None
        self.after_failure: list[str] = []

    def write(self, fh: IO[bytes], data: bytes) -> None:
        self._op("write", fh.name, lambda: Disk.write(self, fh, data), fh, data)

    def fsync(self, fh: IO[bytes]) -> None:
        self._op("fsync", fh.name, lambda: Disk.fsync(self, fh), fh)

    def truncate(self, fh: IO[bytes], size: int) -> None:
        self._op("truncate", fh.name, lambda: Disk.truncate(self, fh, size), fh)

    def replace(self, src: Path, dst: Path) -> None:
        self._op("replace", dst, lambda: Disk.replace(self, src, dst))

    def fsync_dir(self, path: Path) -> None:
        self._op("fsync_dir", path, lambda: Disk.fsync_dir(self, path))

    def _op(
        self,
        name: str,
        target: Any,
        perform: Callable[[], None],
        fh: IO[bytes] | None = None,
        data: bytes = b"",
    ) -> None:
        label = f"{name} {Path(str(target)).name}"
        self.ops.append(label)
        if self.failed_at is not None:
            self.after_failure.append(label)
        if len(self.ops) != self.at:
            perform()
            return
        if self.mode == "before":
            os._exit(CRASH_CODE)
        if self.mode == "after":
            perform()
            if fh is not None:
                fh.flush()
            os._exit(CRASH_CODE)
        if self.mode in TORN:
            assert fh is not None and name == "write", f"{self.mode} needs a write, not {label}"
            fh.write(data[: len(data) // 2] if self.mode == "torn" else data.rstrip(b"\n"))
            fh.flush()
            os._exit(CRASH_CODE)
        code = ERRNOS[self.mode]
        self.failed_at = len(self.ops)
        self.size_at_failure = self._size()
        raise OSError(code, os.strerror(code))

    def _size(self) -> int:
        return self.history.stat().st_size if self.history.exists() else 0

    def report(self) -> dict[str, Any]:
        return {
            "ops": self.ops,
            "failed_at": self.failed_at,
            "size_at_failure": self.size_at_failure,
            "size_at_exit": self._size(),
            "after_failure": self.after_failure,
        }


def child(workspace: Path, at: int, mode: str, report: Path, resume: bool = False) -> int:
    """Start (or resume) the goal in this process; errors end as the command line ends them."""
    from localagent.config.userconfig import load_settings
    from localagent.loop.runner import run
    from localagent.system.errors import AgentError

    disk = CrashingDisk(at, mode, workspace / CONTEXT_DIR / "history.jsonl")
    goal = None if resume else goal_text(BATCHES, PER_BATCH)
    code = 0
    try:
        run(workspace, goal, load_settings(), disk=disk)
    except AgentError as exc:
        print(f"localagent: {exc.message}", file=sys.stderr)
        code = exc.exit_code
    finally:
        report.write_bytes(orjson.dumps(disk.report()))
    return code


# ---- the harness ---------------------------------------------------------------------


@dataclass(frozen=True)
class Trial:
    mode: str
    at: int  # the operation N of the first run that crashes or fails
    op: str
    repair_op: int = 0  # repair modes: the operation of the resume that then fails

    @property
    def name(self) -> str:
        return f"{self.mode}-{self.at:04d}" + (f"-{self.repair_op}" if self.repair_op else "")


@dataclass
class Outcome:
    trial: Trial
    problem: str = ""
    seconds: float = 0.0


class Harness:
    def __init__(self, root: Path, env: dict[str, str]) -> None:
        self.root = root
        self.env = env

    def spawn_child(
        self, ws: Path, at: int, mode: str, resume: bool = False
    ) -> tuple[Ran, dict[str, Any]]:
        report = ws.parent / (ws.name + ".report.json")
        report.unlink(missing_ok=True)
        argv = [sys.executable, str(HERE), "child", str(ws), str(at), mode, str(report)]
        argv += ["resume"] if resume else []
        done = subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=300)
        data = orjson.loads(report.read_bytes()) if report.exists() else {}
        return done, data

    def count(self) -> list[str]:
        """The operations of a clean run, which must itself pass every check."""
        ws = self.root / "clean"
        prepare_workspace(ws, PER_BATCH, 0.0)
        done, report = self.spawn_child(ws, 0, "before")
        if done.returncode != 0:
            raise Violation(f"the clean run exited {done.returncode}: {done.stderr[-2000:]}")
        self.check_complete(ws, b"", [])
        return report["ops"]

    def command_ops(self, ops: list[str]) -> list[int]:
        """The operation that writes each command's `action_started` in the clean run (the
        next one syncs it): a crash before it is durable must leave the command unrun."""
        records = strict_records(history_bytes(self.root / "clean"))
        writes = [n for n, op in enumerate(ops, 1) if op == "write history.jsonl"]
        commands = [r for r in records if r["type"] == "action_started" and r["tool"] == "run_cmd"]
        return [writes[r["seq"] - 1] for r in commands]

    def resume(self, ws: Path) -> None:
        """The real command line, as a user would run it after the crash."""
        base = [sys.executable, "-m", "localagent"]
        if has_goal(ws):
            argv = [*base, "resume", "-w", str(ws), "--foreground"]
        else:
            argv = [*base, "start", goal_text(BATCHES, PER_BATCH), "-w", str(ws), "--foreground"]
        done = subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=300)
        if done.returncode != 0 or "Traceback" in done.stderr:
            tail = done.stderr.strip()[-1500:]
            raise Violation(f"{argv[3]} after the crash exited {done.returncode}: {tail!r}")

    def check_complete(self, ws: Path, at_crash: bytes, torn: list[bytes]) -> None:
        after = history_bytes(ws)
        check_prefix_kept(at_crash, after)
        records = strict_records(after)
        check_state(ws, records, ws.parent / (ws.name + ".check"))
        check_actions(records, complete=True)
        check_commands(records)
        check_finished(ws, records, BATCHES, PER_BATCH)
        check_broken_keeps(ws, torn)

    def check_crashed(self, ws: Path, before: bytes = b"") -> bytes:
        at_crash = history_bytes(ws)
        check_prefix_kept(before, at_crash)
        if at_crash:
            records = intact_records(at_crash)
            check_state(ws, records, ws.parent / (ws.name + ".check"))
            check_actions(records, complete=False)
            check_commands(records)
        return at_crash

    def check_crash(self, done: Ran) -> None:
        if done.returncode != CRASH_CODE:
            tail = done.stderr.strip()[-1500:]
            raise Violation(f"the child exited {done.returncode}, not by the crash: {tail!r}")

    def check_failure(self, done: Ran, report: dict[str, Any]) -> None:
        """Exit 1, a message that names the file and the way out, and nothing after it."""
        where = f"exit {done.returncode}, stderr: {done.stderr.strip()[-1500:]!r}"
        if done.returncode != 1:
            raise Violation(f"after the disk failed the run should exit 1; {where}")
        if "Traceback" in done.stderr or "internal error" in done.stderr:
            raise Violation(f"the disk failure was not turned into a message; {where}")
        lines = done.stderr.strip().splitlines()
        said = lines[-1] if lines else ""
        # The way on: resume, or when nothing of the goal was journaled yet, start again.
        way_on = "resume" in said or "start again" in said
        if not said.startswith("localagent: ") or CONTEXT_DIR not in said or not way_on:
            raise Violation(f"the message does not name the file and how to resume; {where}")
        if report.get("failed_at") is None:
            raise Violation(f"the failing operation was never reached; {where}")
        if report["after_failure"]:
            raise Violation(f"disk operations after the failure: {report['after_failure']}")
        if report["size_at_exit"] != report["size_at_failure"]:
            raise Violation(
                f"history.jsonl grew after the failure, from {report['size_at_failure']} "
                f"to {report['size_at_exit']} bytes"
            )

    def trial(self, trial: Trial) -> Outcome:
        started = time.perf_counter()
        outcome = Outcome(trial)
        ws = self.root / trial.name
        prepare_workspace(ws, PER_BATCH, 0.0)
        try:
            self.crash_and_recover(ws, trial)
        except Violation as exc:
            outcome.problem = str(exc)
        else:
            for path in ws.parent.glob(ws.name + "*"):
                shutil.rmtree(path) if path.is_dir() else path.unlink()
        outcome.seconds = time.perf_counter() - started
        return outcome

    def crash_and_recover(self, ws: Path, trial: Trial) -> None:
        first, _, failing = trial.mode.partition("+")
        done, report = self.spawn_child(ws, trial.at, first)
        if first in CRASHES:
            self.check_crash(done)
        else:
            self.check_failure(done, report)
        at_crash = self.check_crashed(ws)
        _, tail = split_tail(at_crash)
        torn = [tail] if tail and decode(tail) is None else []
        if failing:
            # The disk fails again while the next run repairs the tail the crash left.
            done, report = self.spawn_child(ws, trial.repair_op, failing, has_goal(ws))
            if done.returncode != 0 or report.get("failed_at") is not None:
                self.check_failure(done, report)
            # else: the run ended (the goal was already complete) before that operation
            self.check_crashed(ws, at_crash)
        self.resume(ws)
        self.check_complete(ws, at_crash, torn)


def has_goal(ws: Path) -> bool:
    return any(r["type"] == "goal_started" for r in intact_records(history_bytes(ws)))


def choose(
    ops: list[str], mode: str, every: int, offset: int = 0, also: Iterable[int] = ()
) -> list[int]:
    """The N to try in a mode: every `every`-th fitting operation (from `offset`), the
    first of each kind of operation, the last, and those of `also` that fit."""
    fits = [n for n, op in enumerate(ops, 1) if _fits(mode, op)]
    chosen = set(fits[offset % every :: every]) | set(fits).intersection(also)
    first: dict[str, int] = {}
    for n in fits:
        first.setdefault(ops[n - 1], n)
    return sorted(chosen | set(first.values()) | {fits[-1]})


def _fits(mode: str, op: str) -> bool:
    if mode == "torn":
        return op.startswith("write ")
    if mode in REPAIR_OPS or mode == "unterminated":
        return op == "write history.jsonl"  # only a history tail needs a repair
    return True


def trials(ops: list[str], modes: Iterable[str], every: int) -> list[Trial]:
    found = []
    for i, mode in enumerate(modes):
        for n in choose(ops, mode, every, offset=i):
            if "+" in mode:
                found += [Trial(mode, n, ops[n - 1], k) for k in range(1, REPAIR_OPS[mode] + 1)]
            else:
                found.append(Trial(mode, n, ops[n - 1]))
    return found


@dataclass
class Report:
    total_ops: int
    kinds: Counter[str]
    outcomes: list[Outcome]
    seconds: float

    @property
    def failures(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.problem]

    def lines(self) -> list[str]:
        lines = [f"operations in a clean run  {self.total_ops}"]
        lines += [f"  {count:4d}  {kind}" for kind, count in sorted(self.kinds.items())]
        for mode in MODES:
            mine = [o for o in self.outcomes if o.trial.mode == mode]
            if mine:
                bad = sum(bool(o.problem) for o in mine)
                ns = sorted({o.trial.at for o in mine})
                lines.append(
                    f"{mode:18s} {len(mine):4d} trials, {len(ns):3d} N in {ns[0]}..{ns[-1]}: "
                    f"{bad} failed"
                )
        lines.append(f"trials                     {len(self.outcomes)}")
        lines.append(f"time                       {self.seconds:.1f} s")
        return lines


def crash_every_op(
    root: Path, modes: Iterable[str] = MODES, every: int = 1, jobs: int | None = None
) -> Report:
    started = time.perf_counter()
    with FakeServer(scenario(BATCHES, PER_BATCH)) as server:
        harness = Harness(root, agent_env(server.url, root / "home"))
        ops = harness.count()
        todo = trials(ops, modes, every)
        with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 2) as pool:
            outcomes = list(pool.map(harness.trial, todo))
    return Report(len(ops), Counter(ops), outcomes, time.perf_counter() - started)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["child"]:
        workspace, at, mode, report, *resume = argv[1:]
        return child(Path(workspace), int(at), mode, Path(report), resume == ["resume"])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modes", default=",".join(MODES), help="comma list of modes")
    parser.add_argument("--every", type=int, default=1, help="try every K-th operation (1)")
    parser.add_argument("--jobs", type=int, default=None, help="trials at once (CPU count)")
    parser.add_argument("--dir", type=Path, default=None, help="work here and keep it")
    args = parser.parse_args(argv)
    modes = [m for m in args.modes.split(",") if m]
    unknown = sorted(set(modes) - set(MODES))
    if unknown:
        parser.error(f"unknown mode {unknown[0]!r}; modes: {', '.join(MODES)}")
    root = args.dir or Path(tempfile.mkdtemp(prefix="crash-ops-"))
    root.mkdir(parents=True, exist_ok=True)
    report = crash_every_op(root, modes, args.every, args.jobs)
    print("\n".join(report.lines()))
    for outcome in report.failures:
        t = outcome.trial
        print(f"FAILED {t.name} ({t.op}): {outcome.problem}")
    if report.failures:
        print(f"files kept in {root}")
        return 1
    if args.dir is None:
        shutil.rmtree(root, ignore_errors=True)
    print("every check held")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
