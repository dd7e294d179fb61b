"""Benchmark: a command printing ~50 MB, run by run_cmd with the output store (the whole
output spilled to `.agent_context/outputs/`, up to 20 MB) and without it (head and tail
only, as before the store). Each run is a fresh process, so its peak memory is its own;
the two kinds alternate. The printer writes 64 KB blocks as fast as a pipe takes them: the
worst case for the store's relative cost, which is writing and fsyncing the 20 MB it keeps.

Target: the store adds at most 0.25 s to the command and at most 25 MB to peak memory.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PRINTER = """\
import sys
line = b"x" * 99 + b"\\n"
block = line * 655
out = sys.stdout.buffer
for _ in range($blocks):
    out.write(block)
"""
MB = 1 << 20
TARGET_EXTRA_SECONDS = 0.25
TARGET_EXTRA_MB = 25


def peak_mb() -> float:
    if sys.platform == "win32":
        import psutil

        return psutil.Process().memory_info().peak_wset / MB
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KB on Linux


def worker(kind: str, folder: Path, megabytes: int) -> None:
    from localagent.journal import Journal
    from localagent.tools import ToolContext, execute

    (folder / "printer.py").write_text(PRINTER.replace("$blocks", str(megabytes * MB // 65500)))
    journal = Journal(folder)
    journal.ensure_dir()
    store = journal.output_store(50 * MB) if kind == "store" else None
    ctx = ToolContext(folder, outputs=store, output_id=1)
    began = time.perf_counter()
    result = execute(ctx, "run_cmd", {"cmd": "python printer.py", "timeout_sec": 120})
    seconds = time.perf_counter() - began
    assert result.ok, result.text
    stored = result.output.size if result.output else 0
    print(json.dumps({"seconds": seconds, "peak_mb": peak_mb(), "stored": stored}))


def run_one(kind: str, base: Path, megabytes: int) -> dict[str, float]:
    folder = Path(tempfile.mkdtemp(dir=base))
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    argv = [sys.executable, __file__, "--worker", kind, str(folder), str(megabytes)]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, check=True)
    return json.loads(done.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="3 runs of each instead of 7")
    parser.add_argument("--dir", type=Path, default=None, help="where the workspaces go")
    parser.add_argument("--mb", type=int, default=50, help="megabytes the command prints")
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker[0], Path(args.worker[1]), int(args.worker[2]))
        return 0
    runs = 3 if args.quick else 7
    found: dict[str, list[dict[str, float]]] = {"plain": [], "store": []}
    with tempfile.TemporaryDirectory(dir=args.dir) as base:
        for _ in range(runs):
            for kind in found:
                found[kind].append(run_one(kind, Path(base), args.mb))
    print(f"A command printing {args.mb} MB, {runs} runs of each (medians)\n")
    print("| run_cmd | time (s) | peak memory (MB) | stored (MB) |")
    print("|---|---|---|---|")
    med = {}
    for kind, results in found.items():
        med[kind] = {k: statistics.median(r[k] for r in results) for k in results[0]}
        m = med[kind]
        print(f"| {kind} | {m['seconds']:.3f} | {m['peak_mb']:.1f} | {m['stored'] / MB:.1f} |")
    slower = med["store"]["seconds"] - med["plain"]["seconds"]
    ratio = med["store"]["seconds"] / med["plain"]["seconds"]
    extra = med["store"]["peak_mb"] - med["plain"]["peak_mb"]
    ok = slower <= TARGET_EXTRA_SECONDS and extra <= TARGET_EXTRA_MB
    print(
        f"\n{'PASS' if ok else 'FAIL'}: the store adds {slower:+.3f} s ({ratio:.2f}x) and "
        f"{extra:+.1f} MB peak memory"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
