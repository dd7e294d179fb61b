"""Rewind torture: SIGKILL `localagent rewind` at random moments while it puts files back,
run it again, and check that it always ends at its target.

A goal on the fake model server runs a command that rewrites FILES files and creates as
many; then, cycle after cycle, the workspace is rewound to before that command and
forward again (to before the rewind), each rewind killed at a random moment after its
plan is journaled (or before, at random), then finished by the same command run again.
After each kill every file must hold its old or its new content whole, never a mix; after
each finish the workspace must equal its target byte for byte, with no temp file left.

    python scripts/torture_rewind.py [--cycles 50] [--files 300] [--seed 1]

tests/test_rewind.py runs a short sample of it.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
GOAL = "Rewrite the data files"
TOUCH = (
    "import sys\nfrom pathlib import Path\n"
    "n = int(sys.argv[1])\n"
    "Path('new').mkdir(exist_ok=True)\n"
    "for i in range(n):\n"
    "    Path(f'data/f{i:04}.txt').write_text(f'rewritten {i}\\n' * 40)\n"
    "    Path(f'new/g{i:04}.txt').write_text(f'created {i}\\n' * 40)\n"
)


def env_for(url: str, home: Path) -> dict[str, str]:
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    env = dict(os.environ, OLLAMA_HOST=url, PATH=path, LOCALAGENT_HOME=str(home))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env.pop("PYTHONWARNINGS", None)
    return env


def scenario(files: int) -> dict[str, Any]:
    plan = {"tasks": [{"description": "Data", "subtasks": [GOAL]}]}
    import json

    def call(name: str, **args: Any) -> dict[str, Any]:
        return {"tool_calls": [{"name": name, "arguments": args}]}

    done = call("mark_subtask_complete", success=True, reason="rewritten")
    return {
        "rules": [{"kind": "plan", "reply": {"content": json.dumps(plan)}}],
        "replies": [call("run_cmd", cmd=f"python touch.py {files}"), done],
        "default": done,
    }


def prepare(ws: Path, files: int) -> None:
    (ws / "data").mkdir(parents=True)
    (ws / "touch.py").write_text(TOUCH)
    for i in range(files):
        (ws / f"data/f{i:04}.txt").write_text(f"original {i}\n" * 40)


def snapshot_of(ws: Path) -> dict[str, bytes]:
    found = {}
    for path in ws.rglob("*"):
        rel = path.relative_to(ws).as_posix()
        if not rel.startswith(".agent_context") and path.is_file():
            found[rel] = path.read_bytes()
    return found


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "localagent", *args],
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
    )


def killed_rewind(ws: Path, env: dict[str, str], to: str, rng: random.Random) -> None:
    """Start `rewind --to TO` and SIGKILL it: mostly while it puts files back (once its
    plan is journaled), sometimes before."""
    history = ws / ".agent_context" / "history.jsonl"
    planned = history.read_bytes().count(b'"rewinding"')
    proc = subprocess.Popen(
        [sys.executable, "-m", "localagent", "rewind", "-w", str(ws), "--to", to],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    if rng.random() < 0.8:
        end = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < end:
            if history.read_bytes().count(b'"rewinding"') > planned:
                break
            time.sleep(0.002)
        time.sleep(rng.uniform(0, 0.08))
    else:
        time.sleep(rng.uniform(0, 1.5))
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait()


def check_whole(state: dict[str, bytes], old: dict[str, bytes], new: dict[str, bytes]) -> None:
    for name in set(old) | set(new):
        if state.get(name) not in (old.get(name), new.get(name)):
            raise AssertionError(f"{name} is neither its old nor its new content")
    extra = set(state) - set(old) - set(new)
    if any(not name.endswith(".tmp") for name in extra):
        raise AssertionError(f"files from nowhere: {sorted(extra)[:5]}")


def cycle(ws: Path, env: dict[str, str], rng: random.Random, states: dict[str, Any]) -> int:
    """Back to before the command, then forward to after it, each killed and finished;
    how many of the kills landed while files were being put back."""
    back = f"s{last_seq(ws) + 1}"  # forward: to just before the rewinds back
    landed = 0
    for to, start, target in (("1", "after", "before"), (back, "before", "after")):
        landed += killed_and_finished(ws, env, to, rng, states[start], states[target])
    return landed


def killed_and_finished(
    ws: Path,
    env: dict[str, str],
    to: str,
    rng: random.Random,
    old: dict[str, bytes],
    new: dict[str, bytes],
) -> int:
    """One rewind killed, then run again to its end; 1 if the kill cut it short."""
    killed_rewind(ws, env, to, rng)
    check_whole(snapshot_of(ws), old, new)
    history = (ws / ".agent_context" / "history.jsonl").read_bytes()
    cut = history.count(b'"rewinding"') > history.count(b'"rewound"')
    for _ in range(2):  # the first finishes a cut-short rewind; then it is done
        result = cli(env, "rewind", "-w", str(ws), "--to", to)
        if "finished" not in result.stdout:
            break
    if snapshot_of(ws) != new:
        raise AssertionError(f"not at the target after a rewind: {result.stderr}")
    return int(cut)


def last_seq(ws: Path) -> int:
    import json

    lines = (ws / ".agent_context" / "history.jsonl").read_bytes().splitlines()
    return int(json.loads(lines[-1])["seq"])


def setup(root: Path, files: int, url: str) -> tuple[Path, dict[str, str], dict[str, Any]]:
    ws = root / "ws"
    prepare(ws, files)
    env = env_for(url, root / "home")
    before = snapshot_of(ws)
    result = cli(env, "start", GOAL, "-w", str(ws), "--foreground", "--no-verify")
    if result.returncode not in (0, 1):
        raise AssertionError(result.stderr)
    return ws, env, {"before": before, "after": snapshot_of(ws)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cycles", type=int, default=50)
    parser.add_argument("--files", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from localagent.models.fake import FakeServer

    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp, FakeServer(scenario(args.files)) as server:
        ws, env, states = setup(Path(tmp), args.files, server.url)
        began = time.monotonic()
        landed = 0
        for number in range(1, args.cycles + 1):
            landed += cycle(ws, env, rng, states)
            print(f"cycle {number}: killed twice, finished, at the target both ways", flush=True)
        took = time.monotonic() - began
        print(
            f"{args.cycles} cycles in {took:.0f} s: {2 * args.cycles} rewinds killed ({landed} "
            "while putting files back), every one ended at its target"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
