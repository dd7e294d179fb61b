"""Per-action journal cost against the length of the history (SPEC §5, §10).

One action is what the agent journals around a tool call: `action_started` then
`action_finished`, each one fsynced `Journal.append`. It is timed on journals that
already hold 100, 10,000 and 100,000 records; the cost must not grow with them. The
sizes are measured in interleaved batches (so machine noise hits all of them alike),
and each batch starts from the same journal: the appended records are cut off again.

    python scripts/bench_journal.py [--quick] [--dir FOLDER]
"""

from __future__ import annotations

import time
from pathlib import Path

from benchlib import (
    FLAT_RATIO,
    Restorer,
    append_action,
    build_history,
    header,
    median,
    parse_args,
    scratch,
    table,
    timed,
    verdict,
)

from localagent.journal import Journal

SIZES = (100, 10_000, 100_000)


def batch(workspace: Path, restorer: Restorer, actions: int) -> tuple[list[float], float, int]:
    """Seconds per action for `actions` actions, then of one snapshot and its size in bytes."""
    restorer.restore()
    journal = Journal(workspace)
    journal.load()
    try:
        per_action = []
        for _ in range(actions):
            start = time.perf_counter()
            append_action(journal)
            per_action.append(time.perf_counter() - start)
        snap = timed(journal.snapshot)
        return per_action, snap, journal.state_path.stat().st_size
    finally:
        journal.close()


def main() -> int:
    args = parse_args(__doc__.splitlines()[0])
    reps, actions = (3, 60) if args.quick else (15, 200)
    with scratch(args.dir) as root:
        header("Journal: cost of one action (action_started + action_finished, fsynced)", root)
        workspaces = {}
        for size in SIZES:
            workspaces[size] = root / f"ws{size}"
            build_history(workspaces[size], size)
        restorers = {size: Restorer(ws) for size, ws in workspaces.items()}
        samples: dict[int, list[float]] = {size: [] for size in SIZES}
        snapshots: dict[int, list[float]] = {size: [] for size in SIZES}
        state_sizes: dict[int, int] = {}
        for _ in range(reps):
            for size in SIZES:
                per_action, snap, state_sizes[size] = batch(
                    workspaces[size], restorers[size], actions
                )
                samples[size] += per_action
                snapshots[size].append(snap)
    base = median(samples[SIZES[0]])
    rows = []
    for size in SIZES:
        med = median(samples[size])
        mean = sum(samples[size]) / len(samples[size])
        rows.append(
            [
                f"{size:,}",
                f"{med * 1000:.3f}",
                f"{mean * 1000:.3f}",
                f"{med / base:.2f}x",
                f"{median(snapshots[size]) * 1000:.2f}",
                f"{state_sizes[size]:,}",
            ]
        )
    print(
        table(
            [
                "history records",
                "ms/action (median)",
                "ms/action (mean)",
                "vs 100",
                "snapshot ms",
                "state.json bytes",
            ],
            rows,
        )
    )
    print()
    print(
        f"{reps} batches x {actions} actions per size; the mean includes the snapshot "
        f"rewritten every 200 records."
    )
    action_ratio = median(samples[SIZES[-1]]) / base
    snap_ratio = median(snapshots[SIZES[-1]]) / median(snapshots[SIZES[0]])
    ok = verdict(
        [
            (
                action_ratio <= FLAT_RATIO,
                f"per-action cost at 100,000 records {action_ratio:.2f}x that at 100 "
                f"(target flat, <= {FLAT_RATIO}x)",
            ),
            (
                snap_ratio <= FLAT_RATIO,
                f"snapshot {snap_ratio:.2f}x (target flat, <= {FLAT_RATIO}x)",
            ),
        ]
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
