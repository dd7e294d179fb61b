"""What the snapshots for `rewind` cost per action, on a workspace of 10,000 files.

The same actions run through the real action path (journal, tools, fingerprint) twice in
one run, in two copies of the workspace: with snapshots (the default store) and without
(`snapshot_store_mb = 0`). Printed per kind of action: the median time with and without,
their ratio, and the bytes each action adds to `.agent_context/` (snapshot store and
history); and the one-time cost of the first snapshot, which copies the workspace.

    python scripts/bench_snapshots.py [--files 10000] [--actions 30] [--size 2048]
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

from localagent.actions import Actions  # noqa: E402
from localagent.journal import Journal  # noqa: E402
from localagent.promptset import PromptSet  # noqa: E402
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
        out.append(("replace", "append_file", {"path": "notes.txt", "content": f"note {i}\n"}))
        out.append(("command", "run_cmd", {"cmd": f"python touch.py {i}"}))
    return out


def run(root: Path, snapshot_mb: int, plan: list[tuple[str, str, dict[str, Any]]]) -> dict:
    journal = Journal(root)
    journal.load()
    journal.append("goal_started", goal="bench", settings={})
    ctx = ToolContext(root=root, outputs=None)
    tools = catalog()
    actions = Actions(journal, tools, ctx, PromptSet({}), 3, snapshot_mb << 20)
    times: dict[str, list[float]] = {}
    sizes: dict[str, list[int]] = {}
    first = None
    for number, (kind, name, args) in enumerate(plan):
        before = context_bytes(root)
        began = time.perf_counter()
        actions.execute(name, args, f"c{number}", f"sig{number}")
        took = time.perf_counter() - began
        result = journal.state.recent_actions[-1]
        assert result.ok, result.result
        if number == 0:
            first = (took, context_bytes(root) - before)
            continue
        times.setdefault(kind, []).append(took)
        sizes.setdefault(kind, []).append(context_bytes(root) - before)
    journal.finish()
    return {"times": times, "sizes": sizes, "first": first, "total": context_bytes(root)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--actions", type=int, default=30, help="of each kind")
    parser.add_argument("--size", type=int, default=2048, help="bytes of each file")
    parser.add_argument("--dir", default=None, help="where the workspaces are made")
    args = parser.parse_args()
    plan = actions_for(args.actions)
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        with_root, without_root = Path(tmp) / "with", Path(tmp) / "without"
        make_workspace(with_root, args.files, args.size)
        make_workspace(without_root, args.files, args.size)
        os.environ["LOCALAGENT_HOME"] = str(Path(tmp) / "home")
        without = run(without_root, 0, plan)
        with_ = run(with_root, 500, plan)
    print(f"in {args.dir or tempfile.gettempdir()}")
    print(f"workspace: {args.files:,} files of {args.size:,} bytes; {len(plan)} actions each way")
    took, added = with_["first"]
    base_took, _ = without["first"]
    print(
        f"first action (copies the workspace into the store): {took * 1000:.0f} ms "
        f"(without snapshots {base_took * 1000:.0f} ms), {added / 1e6:.1f} MB"
    )
    print(f"{'action':<10}{'with ms':>10}{'without ms':>12}{'ratio':>8}{'bytes/action':>14}")
    for kind in with_["times"]:
        a = statistics.median(with_["times"][kind]) * 1000
        b = statistics.median(without["times"][kind]) * 1000
        grow = statistics.median(with_["sizes"].get(kind, [0]))
        base = statistics.median(without["sizes"].get(kind, [0]))
        print(f"{kind:<10}{a:>10.1f}{b:>12.1f}{a / b:>8.2f}{grow - base:>14,.0f}")
    extra = with_["total"] - without["total"]
    print(
        f".agent_context/ at the end: {with_['total'] / 1e6:.1f} MB with, "
        f"{without['total'] / 1e6:.1f} MB without ({extra / 1e6:.1f} MB for snapshots)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
