"""How much of each prompt the real engine serves from its KV cache, over real runs.

    python scripts/bench_cache.py --model 0.5b --goals hello --max-rounds 6 --kill-after 2

Starts llama-server (one slot, as a workstation runs it; see realengine.py) or uses
`--base-url`, and for each goal (realgoals.py) runs localagent through its command line:
killed with SIGKILL once `--kill-after` rounds are journaled and the next model call is
under way, then resumed. The figures are the engine's own: every reply's `timings`
(`cache_n` from the cache, `prompt_n` read anew), journaled by localagent as each
`llm_call`'s `cached_tokens` and `prompt_tokens` (with `--api ollama`, through the Ollama
shim, from the shim's log), checked against `/metrics` (`llamacpp:prompt_tokens_total`).

Printed: whole-run reuse (1 - tokens read / prompt tokens sent, over all the goals' runs;
without the engine's first two calls, the plan and the round a freshly started engine reads
whole; and each run's own), tokens read per call
p50/p90 (each run's first call excluded), the reuse of the first call after the kill and
resume, the first round's prompt tokens, and the median seconds per round; with `--by-part`
(OpenAI API), where the read tokens went, by part of the prompt, and how many of them an
earlier prompt had sent at the same place (read again: what a better layout or a bigger
cache could still save; the rest is news) (cachereads.py). Exit 0 when the
runs ran, 2 bad usage or no engine installed, 3 the engine does not start, 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

from cachereads import breakdown, recording
from cachereads import report as parts_report
from realengine import Engine, EngineError, engine
from realgoals import GOALS
from realrun import Plan, agent_env, command
from realstats import metric, read_history, read_lines

from localagent.journal import CONTEXT_DIR

MODELS = {"0.5b": "qwen2.5-coder:0.5b", "1.5b": "qwen2.5-coder:1.5b"}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=sorted(MODELS), default="0.5b")
    parser.add_argument("--api", choices=("openai", "ollama"), default="openai")
    parser.add_argument("--goals", default="hello", help="comma-separated keys of realgoals")
    parser.add_argument("--max-rounds", type=int, default=6)
    parser.add_argument("--kill-after", type=int, default=2, help="rounds; 0: no kill")
    parser.add_argument("--time-limit", type=float, default=900.0, help="seconds per goal")
    parser.add_argument("--port", type=int, default=18090)
    parser.add_argument("--ctx", type=int, default=8192)
    parser.add_argument("--base-url", default="", help="a llama-server that already runs")
    parser.add_argument("--dir", default="", help="where the workspaces go (kept)")
    parser.add_argument("--out", default="", help="every call's figures as JSON")
    parser.add_argument(
        "--by-part", action="store_true", help="where the read tokens went (OpenAI API only)"
    )
    args = parser.parse_args(argv)
    if args.by_part and args.api != "openai":
        parser.error("--by-part records the OpenAI API's requests: use it with --api openai")
    unknown = [key for key in args.goals.split(",") if key not in GOALS]
    if unknown:
        parser.error(f"unknown goals: {', '.join(unknown)} (known: {', '.join(GOALS)})")
    goals = args.goals.split(",")
    if twice := sorted({key for key in goals if goals.count(key) > 1}):
        parser.error(f"goal(s) named twice: {', '.join(twice)}")
    return args


def history(workspace: Path) -> list[dict[str, Any]]:
    return read_history(workspace / CONTEXT_DIR / "history.jsonl")


def _rounds(records: list[dict[str, Any]]) -> int:
    return sum(1 for r in records if r.get("type") == "llm_call" and r.get("purpose") == "round")


def _calling(records: list[dict[str, Any]], after: int) -> bool:
    """`after` rounds are journaled and the next model call is under way (the round's
    tools ran: the last record is no model call)."""
    return _rounds(records) >= after and records[-1].get("type") != "llm_call"


def run_goal(plan: Plan, key: str, kill_after: int, log: Path) -> dict[str, Any]:
    """One goal: started, killed once mid-call when asked, resumed; its wall times."""
    workspace = plan.root / key / "ws"
    workspace.mkdir(parents=True)
    GOALS[key].plant(workspace)
    deadline = time.monotonic() + plan.time_limit
    times: dict[str, Any] = {"workspace": str(workspace), "killed": None}
    with log.open("ab") as out:
        proc = subprocess.Popen(
            command(plan, GOALS[key], workspace, False), env=plan.env, stdout=out, stderr=out
        )
        while kill_after and proc.poll() is None and time.monotonic() < deadline:
            if _calling(history(workspace), kill_after):
                time.sleep(0.5)  # the engine is reading the next prompt
                proc.kill()
                times["killed"] = time.time()
                break
            time.sleep(0.2)
        times["timed_out"] = _ended(proc, deadline)
        if times["killed"] is not None and not times["timed_out"]:
            again = command(plan, GOALS[key], workspace, True)
            resumed = subprocess.Popen(again, env=plan.env, stdout=out, stderr=out)
            times["timed_out"] = _ended(resumed, deadline)
    return times


def _ended(proc: subprocess.Popen[bytes], deadline: float) -> bool:
    """Wait for the run to end by the deadline; past it, stop it as a user would (SIGTERM,
    it journals the stop) and say so."""
    try:
        proc.wait(max(0.1, deadline - time.monotonic()))
        return False
    except subprocess.TimeoutExpired:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        return True


def calls_from_journal(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every model call as the engine counted it (llm_call records), marked after a resume."""
    found, resumed = [], False
    for rec in records:
        resumed = resumed or rec.get("type") == "resumed"
        if rec.get("type") == "llm_call" and rec.get("cached_tokens") is not None:
            prompt, cached = rec.get("prompt_tokens", 0), rec["cached_tokens"]
            found.append({"prompt": prompt, "cached": cached, "purpose": rec.get("purpose"),
                          "resumed": resumed})  # fmt: skip
    return found


def calls_from_shim(log: Path, killed: float | None) -> list[dict[str, Any]]:
    """Every call as the Ollama shim logged llama-server's figures."""
    found = []
    for rec in read_lines(log):
        if rec.get("error") or not isinstance(rec.get("ts"), int | float):
            continue  # the call the kill cut short, or no call
        at = float(rec["ts"])  # seconds since the epoch
        cached, read = int(rec.get("cache_n") or 0), int(rec.get("prompt_n") or 0)
        after = killed is not None and at > killed
        found.append({"prompt": cached + read, "cached": cached, "resumed": after})
    return found


def round_seconds(records: list[dict[str, Any]]) -> list[float]:
    """Seconds between consecutive rounds' model calls in one process (a kill splits)."""
    gaps, last = [], None
    for rec in records:
        if rec.get("type") in ("resumed", "goal_started"):
            last = None
        if rec.get("type") == "llm_call" and rec.get("purpose") == "round":
            at = datetime.fromisoformat(rec["ts"]).timestamp()
            if last is not None:
                gaps.append(at - last)
            last = at
    return gaps


def _pct(values: list[int], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return float(ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))])


def figures(runs: list[dict[str, Any]], processed: float | None) -> dict[str, Any]:
    calls = [c for run in runs for c in run["calls"]]
    sent = sum(c["prompt"] for c in calls)
    read = [c["prompt"] - c["cached"] for run in runs for c in run["calls"][1:]]
    after = [next((c for c in run["calls"] if c["resumed"]), None) for run in runs]
    first_rounds = [run["first_round"] for run in runs if run["first_round"]]
    gaps = [g for run in runs for g in run["seconds"]]
    return {
        "calls": len(calls),
        "prompt_tokens_sent": sent,
        "reuse": _reuse(calls),
        # A freshly started engine reads its first plan and round whole: once per engine.
        "reuse_warm": _reuse(calls[2:]),
        "reuse_by_run": {run["goal"]: _reuse(run["calls"]) for run in runs},
        "reuse_metrics": 1 - processed / sent if sent and processed is not None else None,
        "read_p50": _pct(read, 0.5),
        "read_p90": _pct(read, 0.9),
        "after_resume": [c["cached"] / c["prompt"] for c in after if c and c["prompt"]],
        "first_round_prompt": first_rounds,
        "seconds_per_round": statistics.median(gaps) if gaps else None,
    }


def _reuse(calls: list[dict[str, Any]]) -> float | None:
    sent = sum(c["prompt"] for c in calls)
    return 1 - sum(c["prompt"] - c["cached"] for c in calls) / sent if sent else None


def _show(value: Any, form: str = "{:,.0f}") -> str:
    return "-" if value is None else form.format(value)


def report(found: dict[str, Any]) -> str:
    after = ", ".join(f"{share:.2f}" for share in found["after_resume"]) or "-"
    by_run = found.get("reuse_by_run") or {}
    return "\n".join(
        [
            f"model calls: {found['calls']}, prompt tokens sent: {found['prompt_tokens_sent']:,}",
            f"whole-run reuse (engine timings): {_show(found['reuse'], '{:.3f}')}"
            f" (/metrics: {_show(found['reuse_metrics'], '{:.3f}')});"
            f" without the engine's first two calls: {_show(found.get('reuse_warm'), '{:.3f}')}",
            "each run's reuse: "
            + ", ".join(f"{goal} {_show(share, '{:.3f}')}" for goal, share in by_run.items()),
            f"tokens read per call, first call excluded: p50 {_show(found['read_p50'])}, "
            f"p90 {_show(found['read_p90'])}",
            f"first call after kill -9 and resume, share from the cache: {after}",
            f"first round's prompt tokens: {found['first_round_prompt'] or '-'}",
            f"seconds per round, median: {_show(found['seconds_per_round'], '{:.1f}')}",
        ]
    )


def measure(args: argparse.Namespace, found: Engine, root: Path) -> dict[str, Any]:
    if not args.by_part:
        return _measure(args, found, root, found.agent_env())
    log = root / "requests.jsonl"
    with recording(found.root_url, log) as url:
        env = {"LOCALAGENT_BACKEND": "openai", "LOCALAGENT_BASE_URL": url + "/v1"}
        result = _measure(args, found, root, env)
    if log.is_file():
        reads = root / "reads.txt"
        result["figures"]["read_by_part"] = dict(breakdown(found.root_url, log, reads))
        result["reads"] = str(reads)
    return result


def _measure(
    args: argparse.Namespace, found: Engine, root: Path, engine_env: dict[str, str]
) -> dict[str, Any]:
    plan = Plan(root, MODELS[args.model], {}, args.time_limit, max_rounds=args.max_rounds)
    plan.env = agent_env(root / "home", engine_env)
    before = metric(found.metrics() or "", "llamacpp:prompt_tokens_total")
    runs = []
    for key in args.goals.split(","):
        times = run_goal(plan, key, args.kill_after, root / f"{key}.log")
        records = history(Path(times["workspace"]))
        if found.shim_log is not None:
            calls = calls_from_shim(found.shim_log, times["killed"])
            found.shim_log.rename(root / f"{key}.shim.jsonl")
        else:
            calls = calls_from_journal(records)
        rounds = [r for r in records if r.get("purpose") == "round"]
        first = rounds[0].get("prompt_tokens") if rounds else None
        runs.append({"goal": key, "calls": calls, "first_round": first,
                     "seconds": round_seconds(records), **times})  # fmt: skip
    after = metric(found.metrics() or "", "llamacpp:prompt_tokens_total")
    processed = after - before if after is not None and before is not None else None
    return {"figures": figures(runs, processed), "runs": runs}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    root = Path(args.dir or tempfile.mkdtemp(prefix="bench-cache-"))
    if used := [key for key in args.goals.split(",") if (root / key / "ws").exists()]:
        print(f"bench_cache: {root} holds runs of {', '.join(used)} already: give an empty --dir",
              file=sys.stderr)  # fmt: skip
        return 2
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(f"bench_cache: --dir {root}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    try:
        with engine(args.api, args.model, args.base_url, args.port, 1, args.ctx, root) as found:
            print(f"{found.describe()}, {args.model}, {args.api} API; runs in {root}", flush=True)
            result = measure(args, found, root)
    except EngineError as exc:
        print(f"bench_cache: {exc}", file=sys.stderr)
        return exc.code
    except KeyboardInterrupt:
        return 130
    print(report(result["figures"]))
    if "read_by_part" in result["figures"]:
        print(parts_report(Counter(result["figures"]["read_by_part"])))
        print(f"what each call read: {result['reads']}")
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
