"""One benchmark run: a goal in its own workspace through the real command line, under a
time limit, optionally SIGKILLed at random moments and resumed; then judged."""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from realgoals import Goal
from realstats import Run, read_history, summarize

from localagent.config.userconfig import ENV_ALIASES, ENV_NAMES
from localagent.journal import CONTEXT_DIR

STOP_GRACE = 20.0  # seconds a run past its limit gets to journal its stop


@dataclass
class Plan:
    """How every run is made: the same for all runs of one benchmark."""

    root: Path
    model: str
    env: dict[str, str]
    time_limit: float
    kills: int = 0
    kill_window: tuple[float, float] = (3.0, 40.0)
    max_rounds: int | None = None
    seed: int = 0
    end: float = float("inf")  # time.monotonic() by which every run must be over (--budget)
    live: set[int] = field(default_factory=set)  # process groups of runs in progress
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)


def agent_env(home: Path, engine_env: dict[str, str]) -> dict[str, str]:
    """The CLI's environment: no settings of the caller's, its own per-user home, the
    engine's address, and this interpreter's folder first on PATH (its python has pytest
    and ruff, which the goals' commands use)."""
    names = {*ENV_NAMES.values(), *ENV_ALIASES}
    env = {k: v for k, v in os.environ.items() if k not in names}
    env.pop("PYTHONWARNINGS", None)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["LOCALAGENT_HOME"] = str(home)
    env.update(engine_env)
    return env


def command(plan: Plan, goal: Goal, workspace: Path, resume: bool) -> list[str]:
    cli = [sys.executable, "-m", "localagent"]
    if resume:
        return [*cli, "resume", "-w", str(workspace), "--foreground"]
    args = [*cli, "start", goal.text, "-w", str(workspace), "--foreground", "--model", plan.model]
    return args + (["--max-rounds", str(plan.max_rounds)] if plan.max_rounds else [])


def execute(plan: Plan, goal: Goal, index: int) -> Run | None:
    """Run goal once (with its kills and resumes) and judge what it left; None when the
    benchmark's budget is spent before the run could start."""
    if time.monotonic() >= plan.end - 1:
        return None
    run = Run(goal.key, index)
    folder = plan.root / f"{goal.key}-{index}"
    workspace = folder / "ws"
    workspace.mkdir(parents=True)
    goal.plant(workspace)
    run.workspace = str(workspace)
    started = time.monotonic()
    groups: list[int] = []
    with (folder / "agent.log").open("ab") as log:
        try:
            _drive(plan, goal, run, workspace, log, groups)
        finally:
            _clean_up(plan, groups)
    run.seconds = round(time.monotonic() - started, 1)
    summarize(run, read_history(workspace / CONTEXT_DIR / "history.jsonl"))
    if run.outcome == "unfinished" and not run.timed_out:
        run.notes.append(_last_line(folder / "agent.log"))
    if not plan.stopping.is_set():
        judge(goal, run, workspace)
    return run


def _last_line(path: Path) -> str:
    """The CLI's last words (a run that ended without journaling an ending says why)."""
    lines = path.read_text("utf-8", "replace").strip().splitlines() if path.is_file() else []
    return lines[-1][:300] if lines else "no output"


def _drive(
    plan: Plan,
    goal: Goal,
    run: Run,
    workspace: Path,
    log: BinaryIO,
    groups: list[int],
) -> None:
    """Start, kill at random moments and resume, until the run ends or its time is up."""
    rng = random.Random(f"{plan.seed}:{goal.key}:{run.index}")
    deadline = min(time.monotonic() + plan.time_limit, plan.end)
    resume = False
    while proc := _launch(plan, command(plan, goal, workspace, resume), log):
        groups.append(proc.pid)
        left = deadline - time.monotonic()
        kill_at = rng.uniform(*plan.kill_window) if run.kills < plan.kills else None
        try:
            run.exit_code = proc.wait(min(left, kill_at) if kill_at else left)
            return
        except subprocess.TimeoutExpired:
            pass
        if kill_at is not None and kill_at < left:
            proc.kill()  # SIGKILL: a crash, no handler runs; its commands live on
            proc.wait()
            run.kills += 1
            resume = _has_goal(workspace)  # killed before its goal was journaled: start again
            continue
        run.timed_out = True
        run.exit_code = _stop(proc)
        return


def _launch(plan: Plan, args: list[str], log: BinaryIO) -> subprocess.Popen[bytes] | None:
    """Start the CLI in its own process group, unless the benchmark is stopping (checked
    under the lock stop_all takes, so no run starts after it looked)."""
    with plan.lock:
        if plan.stopping.is_set():
            return None
        proc = subprocess.Popen(
            args,
            env=plan.env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        plan.live.add(proc.pid)
        return proc


def _has_goal(workspace: Path) -> bool:
    history = read_history(workspace / CONTEXT_DIR / "history.jsonl")
    return any(record["type"] == "goal_started" for record in history)


def _stop(proc: subprocess.Popen[bytes]) -> int:
    """Stop a run past its time limit as a user would (SIGTERM), then for good."""
    proc.terminate()
    try:
        return proc.wait(STOP_GRACE)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait()


def _clean_up(plan: Plan, groups: list[int]) -> None:
    """Kill what a run's processes left behind (a killed agent's commands, in its group)."""
    for group in groups:
        _kill_group(group)
        with plan.lock:
            plan.live.discard(group)


def judge(goal: Goal, run: Run, workspace: Path) -> None:
    try:
        found = goal.judge(workspace)
    except Exception as exc:  # a judge's own bug must not cost the other runs' figures
        run.judged = f"JUDGE ERROR {type(exc).__name__}: {exc}"
        run.notes.append("the judge failed: fix it in scripts/realgoals.py or realjudges.py")
        return
    run.works, run.judged = found.works, found.reason


def stop_all(plan: Plan) -> None:
    """Interrupted: end every run still in progress."""
    with plan.lock:
        plan.stopping.set()
        groups = list(plan.live)
    for group in groups:
        _kill_group(group)


def _kill_group(group: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signal.SIGKILL)
