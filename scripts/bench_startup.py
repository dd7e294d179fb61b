"""What one CLI process costs: the start-up of the commands a user runs most.

Times, as a user runs them (a new process, wall time, the median of N runs):

- `localagent --version`;
- `localagent status` in an empty folder (no goal there: exit 2);
- `localagent status` in a finished goal's workspace;
- `localagent start GOAL --foreground` to the goal's end against the scripted fake
  Ollama server (the hello scenario: plan, three tool calls, verdict).

The fake server runs in this process; the settings come from a fresh temporary home.
There is no target: the figures are for comparing two versions on the same machine
(`PYTHONPATH=TREE` picks the tree; the commands run from a temporary folder).

    python scripts/bench_startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import localagent
from localagent.config.userconfig import ENV_ALIASES, ENV_NAMES
from localagent.models.fake import FakeServer

GOAL = "Write hello.py that prints Hello, world!"


def _env(home: Path, url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {*ENV_NAMES.values(), *ENV_ALIASES}}
    path = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return {**env, "LOCALAGENT_HOME": str(home), "OLLAMA_HOST": url, "PATH": path}


def _timed(args: list[str], env: dict[str, str], expect: int, cwd: Path) -> float:
    # `-m` puts the current folder first on sys.path: run from one without a localagent
    # package, so that PYTHONPATH (or the installed package) decides which one is timed.
    began = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "localagent", *args],
        env=env,
        capture_output=True,
        timeout=120,
        cwd=cwd,
    )
    took = time.perf_counter() - began
    if done.returncode != expect:
        raise SystemExit(f"{args}: exit {done.returncode}\n{done.stderr.decode()}")
    return took


def _median(runs: int, once: Callable[[], float]) -> float:
    once()  # warm the page cache and the bytecode
    return statistics.median(once() for _ in range(runs))


def _rows(root: Path, runs: int) -> list[tuple[str, float]]:
    scenario = Path(localagent.__file__).parent / "scenarios" / "hello.json"
    env = _env(root / "home", "http://127.0.0.1:9")  # only `start` reaches a server
    empty, done = root / "empty", root / "done"
    empty.mkdir()

    def start() -> float:  # a fresh server each time: a scenario is played once
        shutil.rmtree(done, ignore_errors=True)
        done.mkdir()
        with FakeServer(scenario) as server:
            args = ["start", GOAL, "-w", str(done), "--foreground"]
            return _timed(args, {**env, "OLLAMA_HOST": server.url}, 0, root)

    version = _median(runs, lambda: _timed(["--version"], env, 0, root))
    bare = _median(runs, lambda: _timed(["status", "-w", str(empty)], env, 2, root))
    started = _median(runs, start)
    finished = _median(runs, lambda: _timed(["status", "-w", str(done)], env, 0, root))
    return [
        ("--version", version),
        ("status, empty folder", bare),
        ("start --foreground (hello)", started),
        ("status, finished goal", finished),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    root = Path(tempfile.mkdtemp(prefix="bench-startup-"))
    try:
        rows = _rows(root, runs)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"| command | median of {runs} (s) |\n|---|---|")
    for name, seconds in rows:
        print(f"| {name} | {seconds:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
