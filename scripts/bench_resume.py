"""`status`, time to resume and memory against the length of the history (SPEC §10).

For workspaces holding a goal in progress with 100, 10,000 and 100,000 history records:

- `localagent status` as a user runs it (a new process, wall time) and
  `report.status_info` in this process;
- time to the first model call on resume: from starting the background agent
  (`python -m localagent run-agent -w WS`, what `resume` and `resume --all` start)
  until the fake Ollama server receives its first chat request (the agent is then
  killed and its journal put back); and the same through the CLI in the foreground
  (`resume --foreground`), which loads the CLI's libraries too;
- the peak resident memory of that resumed agent.

Each measurement alternates between the sizes, and the workspaces are put back to
their original journal after every resume. Files are warm in the page cache. The
round limit is raised (`LOCALAGENT_MAX_ROUNDS`): the synthetic histories already
count up to 33,000 rounds.

    python scripts/bench_resume.py [--quick] [--dir FOLDER]
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil
from benchlib import (
    FLAT_RATIO,
    Restorer,
    agent_env,
    build_history,
    header,
    median,
    parse_args,
    scratch,
    table,
    timed,
    verdict,
)

from localagent.models.fake import FakeServer
from localagent.observe.report import status_info

SIZES = (100, 10_000, 100_000)
STATUS_TARGET_MS = 300
FIRST_CALL_TARGET_MS = 300
AGENT = ("run-agent",)
FOREGROUND = ("resume", "--foreground")
RSS_TARGET_MB = 120
SCENARIO: dict[str, Any] = {
    "default": {
        # The delay keeps the resumed agent alive a moment after its first call, so its
        # memory is sampled at the point the whole state is loaded.
        "delay": 1.0,
        "tool_calls": [
            {
                "name": "mark_subtask_complete",
                "arguments": {"success": True, "reason": "the tests pass"},
            }
        ],
    }
}


def status_cli(workspace: Path, env: dict[str, str]) -> float:
    cmd = [sys.executable, "-m", "localagent", "status", "-w", str(workspace)]
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"status failed ({done.returncode}): {done.stderr.strip()}")
    return elapsed


def _peak_rss(proc: psutil.Process, sampled: int) -> int:
    """The larger of the sampled RSS and, on Linux, the kernel's high-water mark."""
    try:
        for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return max(sampled, int(line.split()[1]) * 1024)
    except OSError:
        pass
    return sampled


def resume(workspace: Path, env: dict[str, str], fake: FakeServer, *how: str) -> tuple[float, int]:
    """Seconds from process start to the first chat request, and peak RSS in bytes.

    The agent is killed once the fake server has its request (the scenario holds the
    reply back a moment, so the memory is sampled with the whole state loaded): what
    the run does after that is not measured, and the journal is put back anyway.
    """
    before = len(fake.chat_requests)
    cmd = [sys.executable, "-m", "localagent", *how, "-w", str(workspace)]
    start = time.perf_counter()
    popen = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc = psutil.Process(popen.pid)
    first: float | None = None
    peak = 0
    try:
        while popen.poll() is None and first is None:
            if len(fake.chat_requests) > before:
                first = time.perf_counter() - start
            try:
                peak = max(peak, proc.memory_info().rss)
            except psutil.Error:
                break
            if time.perf_counter() - start > 120:
                raise RuntimeError("the resumed agent made no model call within 120 s")
            time.sleep(0.002)
        peak = _peak_rss(proc, peak)
    finally:
        if popen.poll() is None:
            popen.kill()
        _, err = popen.communicate()
    if first is None:
        raise RuntimeError(f"resume failed ({popen.returncode}): {err.decode().strip()}")
    return first, peak


def main() -> int:
    args = parse_args(__doc__.splitlines()[0])
    reps, inproc_reps = (2, 5) if args.quick else (7, 30)
    cli: dict[int, list[float]] = {s: [] for s in SIZES}
    inproc: dict[int, list[float]] = {s: [] for s in SIZES}
    first_call: dict[int, list[float]] = {s: [] for s in SIZES}
    foreground: list[float] = []
    rss: dict[int, list[int]] = {s: [] for s in SIZES}
    with scratch(args.dir) as root, FakeServer(SCENARIO) as fake:
        header("Resume: status, time to first model call and memory vs history length", root)
        env = agent_env(root / "home", OLLAMA_HOST=fake.url, LOCALAGENT_MAX_ROUNDS="1000000000")
        workspaces = {size: root / f"ws{size}" for size in SIZES}
        for size, ws in workspaces.items():
            build_history(ws, size)
        restorers = {size: Restorer(ws) for size, ws in workspaces.items()}
        for _ in range(reps):
            for size, ws in workspaces.items():
                cli[size].append(status_cli(ws, env))
                for _ in range(inproc_reps // reps):
                    inproc[size].append(timed(lambda ws=ws: status_info(ws)))
                seconds, peak = resume(ws, env, fake, *AGENT)
                restorers[size].restore()
                first_call[size].append(seconds)
                rss[size].append(peak)
            foreground.append(resume(workspaces[SIZES[0]], env, fake, *FOREGROUND)[0])
            restorers[SIZES[0]].restore()
        bare = [sys.executable, "-c", "pass"]
        python_start = median([timed(lambda: subprocess.run(bare, check=True)) for _ in range(5)])
    report(cli, inproc, first_call, rss, reps, python_start)
    print(
        f"through the CLI (`resume --foreground`, 100 records) the first model call comes "
        f"after {median(foreground) * 1000:.0f} ms."
    )
    first_ms = median(first_call[SIZES[0]]) * 1000
    big, mid, small = SIZES[-1], SIZES[1], SIZES[0]
    cli_ratio, call_ratio = (median(m[big]) / median(m[small]) for m in (cli, first_call))
    # At 100 records the snapshot and the bounded state are still nearly empty, so the
    # in-process load is judged where the state has reached its bound.
    inproc_ratio = median(inproc[big]) / median(inproc[mid])
    status_ms = median(cli[big]) * 1000
    peak_mb = max(rss[big]) / 2**20
    flat = f"(target flat, <= {FLAT_RATIO}x)"
    ok = verdict(
        [
            (
                status_ms <= STATUS_TARGET_MS,
                f"status at 100,000 records {status_ms:.0f} ms (target <= {STATUS_TARGET_MS})",
            ),
            (cli_ratio <= FLAT_RATIO, f"status vs 100 records {cli_ratio:.2f}x {flat}"),
            (
                inproc_ratio <= FLAT_RATIO,
                f"status_info vs 10,000 records {inproc_ratio:.2f}x {flat}",
            ),
            (
                first_ms <= FIRST_CALL_TARGET_MS,
                f"first model call of a resumed run {first_ms:.0f} ms "
                f"(target <= {FIRST_CALL_TARGET_MS})",
            ),
            (call_ratio <= FLAT_RATIO, f"first model call vs 100 records {call_ratio:.2f}x {flat}"),
            (
                peak_mb < RSS_TARGET_MB,
                f"peak RSS at 100,000 records {peak_mb:.0f} MB (target < {RSS_TARGET_MB})",
            ),
        ]
    )
    return 0 if ok else 1


def report(
    cli: dict[int, list[float]],
    inproc: dict[int, list[float]],
    first_call: dict[int, list[float]],
    rss: dict[int, list[int]],
    reps: int,
    python_start: float,
) -> None:
    base = SIZES[0]
    rows = []
    for size in SIZES:
        row = [f"{size:,}"]
        for samples in (cli, inproc, first_call):
            med = median(samples[size])
            row.append(f"{med * 1000:.1f} ({med / median(samples[base]):.2f}x)")
        row.append(f"{max(rss[size]) / 2**20:.0f}")
        rows.append(row)
    print(
        table(
            [
                "history records",
                "status CLI ms",
                "status_info ms",
                "resume to 1st model call ms",
                "resumed agent peak RSS MB",
            ],
            rows,
        )
    )
    print()
    print(
        f"medians of {reps} runs (in-process: {len(inproc[base])}); (x) is the ratio to "
        f"100 records; a bare `python -c pass` starts in {python_start * 1000:.0f} ms."
    )
    print(
        "status_info at 100 records loads a snapshot covering almost nothing; the state "
        "reaches its bounded size (recent actions and exchanges) within ~1,000 records."
    )


if __name__ == "__main__":
    raise SystemExit(main())
