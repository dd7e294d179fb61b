"""Real-model benchmark: does localagent get real work done with a small local model?

Starts llama.cpp's llama-server with Qwen2.5-Coder (0.5B or 1.5B, from
../shared/realmodel/setup.sh), optionally behind the Ollama shim, and runs each goal
several times through the real command line (`localagent start GOAL -w DIR --foreground`),
each in its own workspace, as many at once as the server has slots, each under a time
limit. Optionally each run is SIGKILLed at random moments and resumed, and commands that
ran twice are counted from its journal. Every artefact is then judged by the benchmark's
own check (realgoals.py), never by localagent's verdict.

    python scripts/bench_real.py [--model 0.5b|1.5b] [--api openai|ollama] [--parallel N]
        [--runs N] [--goals hello,rps,...] [--kills K] [--time-limit S] [--out FILE] [--quick]
    python scripts/bench_real.py --base-url http://127.0.0.1:18080/v1 ...   # a running server

Exit codes: 0 the runs ran (the table is the result; there is no target), 2 bad usage or
no engine installed, 3 the engine did not start or does not answer, 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from realengine import Engine, EngineError, engine
from realgoals import GOALS
from realrun import Plan, agent_env, execute, stop_all
from realstats import Run, by_goal, cache_from_metrics, cache_from_shim, cache_line, metric
from realstats import render as render_table

PROCESSED = "llamacpp:prompt_tokens_total"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add = parser.add_argument
    add("--model", choices=("0.5b", "1.5b"), default="1.5b", help="Qwen2.5-Coder size")
    add("--api", choices=("openai", "ollama"), default="openai", help="the backend used")
    add("--parallel", type=int, default=1, help="server slots, and runs at once (1)")
    add("--port", type=int, default=18080, help="llama-server's port (18080)")
    add("--ctx", type=int, default=8192, help="context tokens per slot (8192)")
    add("--base-url", default="", help="use this running OpenAI-compatible server (…/v1)")
    add("--goals", default=",".join(GOALS), help=f"comma list of: {', '.join(GOALS)}")
    add("--runs", type=int, default=3, help="runs of each goal (3)")
    add("--time-limit", type=float, default=900.0, help="seconds per run (900)")
    add("--budget", type=float, default=None, help="seconds for all runs; later ones skipped")
    add("--max-rounds", type=int, default=None, help="localagent's --max-rounds")
    add("--kills", type=int, default=0, help="SIGKILL each run this often, then resume")
    add("--kill-window", default="3:40", help="a kill lands A..B s after a (re)start")
    add("--seed", type=int, default=0, help="seed of the kill moments")
    add("--out", type=Path, default=None, help="write every figure here as JSON")
    add("--dir", type=Path, default=None, help="parent folder of the workspaces")
    add("--keep", action="store_true", help="keep the workspaces (their path is printed)")
    add("--quick", action="store_true", help="one goal (hello), once")
    args = parser.parse_args(argv)
    goals = [g.strip() for g in args.goals.split(",") if g.strip()]
    unknown = [g for g in goals if g not in GOALS]
    if unknown or not goals:
        parser.error(f"unknown goal(s) {', '.join(unknown)}; known: {', '.join(GOALS)}")
    if twice := sorted({g for g in goals if goals.count(g) > 1}):
        parser.error(f"goal(s) named twice: {', '.join(twice)} (--runs gives more runs)")
    args.goals = ["hello"] if args.quick else goals
    args.runs = 1 if args.quick else args.runs
    low, _, high = args.kill_window.partition(":")
    try:
        args.kill_window = (float(low), float(high or low))
    except ValueError:
        parser.error("--kill-window takes A:B in seconds, e.g. 3:40")
    if min(args.parallel, args.runs, args.ctx, args.time_limit) <= 0 or args.kills < 0:
        parser.error("--parallel, --runs, --ctx and --time-limit must be positive")
    return args


def run_all(args: argparse.Namespace, plan: Plan) -> list[Run]:
    """Every run, as many at once as there are slots; goals interleaved, so a benchmark
    cut short still has runs of each."""
    order = [(GOALS[key], i) for i in range(1, args.runs + 1) for key in args.goals]
    runs: list[Run] = []
    with ThreadPoolExecutor(max_workers=args.parallel) as pool:
        futures = [pool.submit(execute, plan, goal, i) for goal, i in order]
        try:
            for future in as_completed(futures):
                if (run := future.result()) is not None:
                    runs.append(run)
                    print(progress(run, len(runs), len(order)), flush=True)
        except KeyboardInterrupt:
            for future in futures:
                future.cancel()
            stop_all(plan)
            raise
    key = {(g.key, i): n for n, (g, i) in enumerate(order)}
    return sorted(runs, key=lambda r: key[(r.goal, r.index)])


def progress(run: Run, done: int, total: int) -> str:
    said = run.outcome + (f" ({run.verification})" if run.verification else "")
    said += f", exit {run.exit_code}" + (", over time" if run.timed_out else "")
    said += "".join(f": {note}" for note in run.notes[:1])
    kills = ""
    if run.kills:
        kills = f", {run.kills} kills, {run.repeated_commands} commands twice"
        kills += f", {run.asked_again} interrupted and sent again" if run.asked_again else ""
    judged = "works" if run.works else "broken"
    return (
        f"[{done}/{total}] {run.goal} #{run.index}: localagent {said}; artefact {judged} "
        f"({run.judged}); {run.rounds} rounds, {run.seconds:.0f} s{kills}"
    )


def report(args: argparse.Namespace, found: Engine, runs: list[Run], cache: dict[str, Any]) -> str:
    groups = by_goal(runs)
    lines = [
        f"Real-model benchmark: Qwen2.5-Coder-{args.model.upper()} on {found.describe()}, "
        f"{args.parallel} slot(s), api {args.api}",
        "command: " + shlex.join(["python", *sys.argv]),
        "",
        render_table(groups, args.kills > 0),
        "",
        "rounds, tokens and seconds are medians per run; s/round is each run's wall time "
        "over its rounds; a run over its time limit was stopped with SIGTERM.",
        cache_line(cache),
    ]
    skipped = len(args.goals) * args.runs - len(runs)
    if skipped:
        lines.append(f"{skipped} run(s) not started: the --budget was spent")
    errors = [r for r in runs if r.judged.startswith("JUDGE ERROR")]
    lines += [f"{r.goal} #{r.index}: {r.judged}" for r in errors]
    return "\n".join(lines)


def measure(args: argparse.Namespace, found: Engine, plan: Plan) -> tuple[list[Run], dict]:
    before = metric(found.metrics() or "", PROCESSED)
    runs = run_all(args, plan)
    after = metric(found.metrics() or "", PROCESSED)
    if found.shim_log is not None:
        return runs, cache_from_shim(found.shim_log)
    if before is None or after is None:
        return runs, {}
    return runs, cache_from_metrics(after - before, sum(r.prompt_tokens for r in runs))


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with ExitStack() as stack:
        root = folder(args, stack)
        try:
            found = stack.enter_context(
                engine(
                    args.api, args.model, args.base_url, args.port, args.parallel, args.ctx, root
                )
            )
        except EngineError as exc:
            print(f"bench_real: {exc}", file=sys.stderr)
            return exc.code
        plan = Plan(
            root,
            f"qwen2.5-coder:{args.model}",
            agent_env(root / "home", found.agent_env()),
            args.time_limit,
            args.kills,
            args.kill_window,
            args.max_rounds,
            args.seed,
        )
        started = time.monotonic()
        if args.budget:
            plan.end = started + args.budget
        try:
            runs, cache = measure(args, found, plan)
        except KeyboardInterrupt:
            print("bench_real: interrupted", file=sys.stderr)
            return 130
        text = report(args, found, runs, cache)
        print()
        print(text)
        if args.keep:
            print(f"workspaces kept in {root}")
        if args.out is not None:
            write_json(args, runs, cache, time.monotonic() - started)
    return 0


def folder(args: argparse.Namespace, stack: ExitStack) -> Path:
    """Where the runs' workspaces go: removed at the end unless --keep; `--dir` is made
    when it is not there (it was a traceback)."""
    if args.dir is not None:
        try:
            Path(args.dir).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SystemExit(f"bench_real: --dir {args.dir}: {exc.strerror or exc}") from None
    if args.keep:
        return Path(tempfile.mkdtemp(prefix="localagent-real-", dir=args.dir))
    made = tempfile.TemporaryDirectory(prefix="localagent-real-", dir=args.dir)
    return Path(stack.enter_context(made))


def write_json(args: argparse.Namespace, runs: list[Run], cache: dict, seconds: float) -> None:
    figures = {
        "command": ["python", *sys.argv],
        "model": f"Qwen2.5-Coder-{args.model.upper()}",
        "api": args.api,
        "parallel": args.parallel,
        "time_limit": args.time_limit,
        "kills_per_run": args.kills,
        "seconds": round(seconds, 1),
        "goals": {key: GOALS[key].text for key in args.goals},
        "figures": by_goal(runs),
        "cache": cache,
        "runs": [r.as_json() for r in runs],
    }
    args.out.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(f"figures written to {args.out}")


if __name__ == "__main__":
    raise SystemExit(main())
