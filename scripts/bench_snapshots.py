"""What the snapshots for `rewind` cost per action, on a workspace of 10,000 files.

The same actions run through the real action path (journal, tools, fingerprint) twice in
one run, in two copies of the workspace: with snapshots (the default store) and without
(`snapshot_store_mb = 0`). Printed per kind of action: the median time with and without,
their ratio, and the bytes each action adds to `.agent_context/` (snapshot store and
history); and the one-time cost of the first snapshot, which copies the workspace.

    python scripts/bench_snapshots.py [--files 10000] [--actions 20] [--size 2048] [--dir D]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from localagent.journal import Journal  # noqa: E402
from localagent.loop.actions import Actions  # noqa: E402
from localagent.prompts.promptset import PromptSet  # noqa: E402
from localagent.tools import ToolContext  # noqa: E402
from localagent.tools.catalog import catalog  # noqa: E402

TOUCH = (
    "import sys\nfrom pathlib import Path\n"
    "for i in range(10):\n"
    "    p = Path(f'd{i:03}/f{int(sys.argv[1]) % 100:03}.txt')\n"
    "    p.write_text(p.read_text() + sys.argv[1])\n"
)


def make_workspace(root: Path, files: int, size: int) -> None:
    root.mkdir(parents=True)
    for i in range(files):
        folder = root / f"d{i // 100:03}"
        folder.mkdir(exist_ok=True)
        (folder / f"f{i % 100:03}.txt").write_text((f"line {i}\n" * (size // 8 + 1))[:size])
    (root / "touch.py").write_text(TOUCH)


def context_bytes(root: Path) -> int:
    total = 0
    for folder, _, names in os.walk(root / ".agent_context"):
        for name in names:
            total += os.lstat(os.path.join(folder, name)).st_size
    return total


def actions_for(n: int) -> list[tuple[str, str, dict[str, Any]]]:
    out = []
    for i in range(n):
        out.append(("edit", "write_file", {"path": f"d001/f{i % 100:03}.txt", "content": f"{i}\n"}))
        out.append(("append", "append_file", {"path": "notes.txt", "content": f"note {i}\n"}))
        out.append(("command", "run_cmd", {"cmd": f"python touch.py {i}"}))
    return out


class Side:
    """One copy of the workspace and the action path over it."""

    def __init__(self, root: Path, snapshot_mb: int) -> None:
        self.root = root
        self.journal = Journal(root)
        self.journal.load()
        self.journal.append("goal_started", goal="bench", settings={})
        ctx = ToolContext(root=root, outputs=None)
        self.actions = Actions(self.journal, catalog(), ctx, PromptSet({}), 3, snapshot_mb << 20)
        self.times: dict[str, list[float]] = {}
        self.sizes: dict[str, list[int]] = {}
        self.first = (0.0, 0)

    def act(self, number: int, kind: str, name: str, args: dict[str, Any]) -> None:
        before = context_bytes(self.root)
        began = time.perf_counter()
        self.actions.execute(name, args, f"c{number}", f"sig{number}")
        took = time.perf_counter() - began
        result = self.journal.state.recent_actions[-1]
        assert result.ok, result.result
        grew = context_bytes(self.root) - before
        if number == 0:
            self.first = (took, grew)
            return
        self.times.setdefault(kind, []).append(took)
        self.sizes.setdefault(kind, []).append(grew)


def measure(tmp: Path, files: int, size: int, plan: list[tuple[str, str, dict[str, Any]]]):
    """Both copies, the same actions interleaved (one in each, in turn)."""
    make_workspace(tmp / "with", files, size)
    make_workspace(tmp / "without", files, size)
    with_, without = Side(tmp / "with", 500), Side(tmp / "without", 0)
    for number, (kind, name, args) in enumerate(plan):
        for side in (without, with_) if number % 2 else (with_, without):
            side.act(number, kind, name, args)
    for side in (with_, without):
        side.journal.finish()
    return with_, without


def report(args: argparse.Namespace, where: str, with_: Side, without: Side) -> bool:
    print(
        f"workspace: {args.files:,} files of {args.size:,} bytes in {where}; "
        f"{args.actions} actions of each kind, interleaved\n"
    )
    took, added = with_.first
    print(
        f"first snapshot (copies the workspace): {took * 1000:,.0f} ms, {added / 1e6:.1f} MB "
        f"(the same first action without snapshots: {without.first[0] * 1000:,.0f} ms)\n"
    )
    print("| action | with snapshots ms | without ms | ratio | bytes added per action |")
    print("|---|---:|---:|---:|---:|")
    ratios = {}
    for kind in with_.times:
        a = statistics.median(with_.times[kind]) * 1000
        b = statistics.median(without.times[kind]) * 1000
        grew = statistics.median(with_.sizes[kind]) - statistics.median(without.sizes[kind])
        ratios[kind] = a / b
        print(f"| {kind} | {a:,.1f} | {b:,.1f} | {a / b:.2f}x | {grew:,.0f} |")
    store = context_bytes(with_.root) - context_bytes(without.root)
    print(f"\nsnapshot store at the end: {store / 1e6:.1f} MB")
    edits = max(ratios["edit"], ratios["append"])
    verdict = "PASS" if edits <= 1.5 else "FAIL"
    print(
        f"{verdict}: an edit costs {edits:.2f}x with snapshots (target: flat, at most 1.5x); "
        f"a command {ratios['command']:.2f}x (two stat walks of the whole workspace)"
    )
    return verdict == "PASS"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--actions", type=int, default=20, help="of each kind")
    parser.add_argument("--size", type=int, default=2048, help="bytes of each file")
    parser.add_argument("--dir", default=None, help="where the workspaces are made")
    parser.add_argument("--quick", action="store_true", help="1,000 files, 5 actions each")
    args = parser.parse_args()
    if args.quick:
        args.files, args.actions = 1000, 5
    plan = actions_for(args.actions)
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        os.environ["LOCALAGENT_HOME"] = str(Path(tmp) / "home")
        with_, without = measure(Path(tmp), args.files, args.size, plan)
        where = f"{args.dir or tempfile.gettempdir()}"
        return 0 if report(args, where, with_, without) else 1


if __name__ == "__main__":
    sys.exit(main())
