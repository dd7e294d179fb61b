"""How fast a run goes, as the views show it: seconds per round and the share of the
prompt the model server served from its cache (only where the server said)."""

from __future__ import annotations

import itertools
import statistics
from datetime import datetime
from typing import Any

from localagent.state.model import Tokens


def seconds(ts: Any) -> float | None:
    """A record's `ts` as seconds since the epoch (None when it is not a timestamp)."""
    if not isinstance(ts, str):
        return None
    try:
        return datetime.fromisoformat(ts).timestamp()
    except ValueError:
        return None


def is_round(rec: dict[str, Any]) -> bool:
    return rec.get("type") == "llm_call" and rec.get("purpose") == "round"


def round_gaps(records: list[dict[str, Any]]) -> list[float]:
    """Seconds between one round's model call and the next's (its tools run between)."""
    times = [seconds(r.get("ts")) for r in records if is_round(r)]
    found = [t for t in times if t is not None]
    return [b - a for a, b in itertools.pairwise(found) if b >= a]


def per_round(gaps: list[float]) -> str:
    """The median seconds per round, or "" before two rounds."""
    return f"{statistics.median(gaps):,.1f} s/round" if gaps else ""


def share(cached: int, prompt: int) -> float | None:
    return cached / prompt if prompt > 0 and 0 <= cached <= prompt else None


def call_share(rec: dict[str, Any]) -> float | None:
    """The share of one call's prompt served from the cache, when the server said."""
    cached, prompt = rec.get("cached_tokens"), rec.get("prompt_tokens")
    if not isinstance(cached, int) or not isinstance(prompt, int):
        return None
    if isinstance(cached, bool) or isinstance(prompt, bool):
        return None
    return share(cached, prompt)


def run_share(tokens: Tokens) -> float | None:
    return share(tokens.cached, tokens.measured)


RECENT_ROUNDS = 20  # rounds whose median is "seconds per round"
RECORDS_READ = 600  # from the end of the history: enough for the recent rounds


def figures(tokens: Tokens, records: list[dict[str, Any]]) -> dict[str, Any]:
    """`status --json`'s pace: the median seconds of the recent rounds, and the share of
    the prompt the server served from its cache for the last call that said and for the
    whole run (each null until known)."""
    gaps = round_gaps(records)[-RECENT_ROUNDS:]
    said = [part for part in map(call_share, records) if part is not None]
    whole = run_share(tokens)
    return {
        "seconds_per_round": round(statistics.median(gaps), 1) if gaps else None,
        "rounds_timed": len(gaps),
        "cache_share_last_call": round(said[-1], 3) if said else None,
        "cache_share_run": None if whole is None else round(whole, 3),
    }


def cached_text(part: float | None) -> str:
    return "" if part is None else f"{part:.0%} of the prompt from the server's cache"
