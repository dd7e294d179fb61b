"""Round overhead per model backend, and the prompt prefix each sends (issue 13).

The real agent loop runs in this process against the fake server with no reply delay,
once through the Ollama adapter (`/api/chat`, NDJSON stream) and once through the
OpenAI-compatible adapter (`/v1/chat/completions`, server-sent events), on the same
scenario as bench_rounds.py. Per backend: the agent's own work per round (round wall
time minus the model call), the model call itself (HTTP to the in-process fake plus
the adapter's encoding and stream reading), and the prompt's stability: in how many
rounds the previous request's messages, serialized as sent, are a byte-identical
prefix of the next request's (what llama.cpp's `cache_prompt` and Ollama's KV cache
reuse), the rest being the rounds where the window of exchanges drops back.

    python scripts/bench_backends.py [--quick] [--dir FOLDER] [--rounds N]
"""

from __future__ import annotations

import argparse
import json
from itertools import pairwise
from typing import Any

from bench_rounds import prefix_shares, run_once
from benchlib import header, median, parse_args, scratch, table, verdict

BACKENDS = ("ollama", "openai")
OVERHEAD_TARGET_MS = 25
PREFIX_TARGET = 0.70
WHOLE_TARGET = 0.75  # the window drops back every history_keep (5) rounds: at most 80%


def wire(message: dict[str, Any]) -> bytes:
    return json.dumps(message, ensure_ascii=False).encode()


def whole_prefix_rounds(requests: list[dict[str, Any]]) -> list[bool]:
    """Per round from the second: whether its request starts with every message of the
    previous request, byte for byte as serialized."""
    kept = []
    for before, now in pairwise(requests):
        old = b"".join(map(wire, before["messages"]))
        kept.append(b"".join(map(wire, now["messages"])).startswith(old))
    return kept


def main() -> int:
    def extra(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--rounds", type=int, default=100, help="rounds per run (>= 60)")

    args = parse_args(__doc__.splitlines()[0], extra)
    rounds = max(args.rounds, 60)
    reps = 1 if args.quick else 3
    rows, checks, overheads = [], [], {}
    pattern: dict[str, list[bool]] = {}
    with scratch(args.dir) as root:
        header("Backends: round overhead and prompt prefix, instant model", root)
        for backend in BACKENDS:
            agent_ms: list[float] = []
            call_ms: list[float] = []
            kept: list[bool] = []
            shares: list[float] = []
            for rep in range(reps):
                walls, calls, requests = run_once(root / f"{backend}{rep}", rounds, backend)
                models = [c["duration_ms"] / 1000 for c in calls]
                agent_ms += [(w - m) * 1000 for w, m in zip(walls, models, strict=True)]
                call_ms += [m * 1000 for m in models]
                kept += whole_prefix_rounds(requests)
                shares += [s[0] for s in prefix_shares(requests)]
            overheads[backend], pattern[backend] = median(agent_ms), kept
            share = sum(shares) / len(shares)
            rows.append(
                [
                    backend,
                    f"{median(agent_ms):.2f}",
                    f"{median(call_ms):.2f}",
                    f"{sum(kept)}/{len(kept)}",
                    f"{share:.1%}",
                ]
            )
            checks += [
                (
                    median(agent_ms) < OVERHEAD_TARGET_MS,
                    f"{backend}: overhead median {median(agent_ms):.2f} ms "
                    f"(target < {OVERHEAD_TARGET_MS} ms)",
                ),
                (
                    share >= PREFIX_TARGET,
                    f"{backend}: unchanged prefix {share:.1%} of messages "
                    f"(target >= {PREFIX_TARGET:.0%})",
                ),
                (
                    sum(kept) >= WHOLE_TARGET * len(kept),
                    f"{backend}: the whole previous request is a byte-identical prefix in "
                    f"{sum(kept)} of {len(kept)} rounds (target >= {WHOLE_TARGET:.0%}; the "
                    "others drop old exchanges)",
                ),
            ]
    checks.append(
        (
            pattern["openai"] == pattern["ollama"],
            "openai keeps the whole previous prompt in exactly the rounds ollama does",
        )
    )
    print(
        table(
            [
                "backend",
                "agent ms/round (median)",
                "model call ms (median)",
                "rounds with the whole previous prompt as prefix",
                "unchanged prefix (msgs, mean)",
            ],
            rows,
        )
    )
    print()
    ratio = overheads["openai"] / overheads["ollama"]
    print(
        f"{reps} run(s) of {rounds} rounds per backend; the model call is the HTTP round trip "
        f"to the in-process fake with the adapter's encoding and stream reading. Agent "
        f"overhead openai / ollama: {ratio:.2f}x."
    )
    print()
    return 0 if verdict(checks) else 1


if __name__ == "__main__":
    raise SystemExit(main())
