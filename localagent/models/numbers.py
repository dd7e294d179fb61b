"""The numbers a model server reports, read here and nowhere else.

A server says how many tokens a call took, how long the model's context is and how big
the model is. Whatever it sends is only a claim: a number no model can mean (negative, a
bool, 10**30, a page of digits, NaN) counts as not said, so it never reaches the run's
token totals, the context budget, the tool set chosen by size, or the journal.
"""

from __future__ import annotations

import math
import re
from typing import Any

MAX_TOKENS = 10**8  # in one call: far past any model's context, far below what breaks a sum
MAX_CONTEXT = 10**8  # tokens of context
MAX_BILLIONS = 1e5  # parameters, in billions
MAX_DIGITS = 12  # a number sent as text
MAX_NAMES = 32  # capabilities listed by a server
MAX_NAME = 64  # characters of one


def _whole(value: Any) -> int | None:
    """An integer a server sent as a number or as decimal text; None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if math.isfinite(value) and value.is_integer() else None
    if isinstance(value, str) and re.fullmatch(rf"\s*\d{{1,{MAX_DIGITS}}}\s*", value):
        return int(value)
    return None


def tokens(value: Any) -> int:
    """A token count of one call; 0 when the server did not say or said nonsense."""
    found = _whole(value) if isinstance(value, int) else None
    return found if found is not None and 0 < found <= MAX_TOKENS else 0


def cached(timings: Any, details: Any = None, prompt: int = 0) -> tuple[int, int] | None:
    """The prompt's tokens served from the server's cache and its whole size: llama.cpp's
    `timings` (`cache_n` read from the cache, `prompt_n` read anew) or else OpenAI's
    `usage.prompt_tokens_details.cached_tokens` against the prompt's size. None when the
    server did not say, or said what no prompt can be (more cached than the prompt)."""
    if isinstance(timings, dict):
        hit, read = _count(timings.get("cache_n")), _count(timings.get("prompt_n"))
        if hit is not None and read is not None and 0 < hit + read <= MAX_TOKENS:
            return hit, hit + read
    said = _count(details.get("cached_tokens")) if isinstance(details, dict) else None
    if said is not None and 0 < prompt <= MAX_TOKENS and said <= prompt:
        return said, prompt
    return None


def _count(value: Any) -> int | None:
    """A count that may be 0 (a prompt nothing of which was cached)."""
    found = _whole(value) if isinstance(value, int) else None
    return found if found is not None and 0 <= found <= MAX_TOKENS else None


def context(value: Any) -> int | None:
    """A context length in tokens; None when the server did not say or said nonsense."""
    found = _whole(value)
    return found if found is not None and 0 < found <= MAX_CONTEXT else None


def billions(count: Any = None, size: Any = None) -> float | None:
    """A model's size in billions of parameters, from Ollama's `parameter_size` ("7.6B",
    "494.03M") or else an exact parameter count; None when neither is believable."""
    found = re.fullmatch(r"\s*(\d{1,9}(?:\.\d{1,9})?)\s*([KMBT])\s*", str(size or ""), re.I)
    scale = {"K": 1e-6, "M": 1e-3, "B": 1.0, "T": 1e3}
    whole = _whole(count) if isinstance(count, int) else None
    claims = [
        float(found[1]) * scale[found[2].upper()] if found else None,
        whole / 1e9 if whole is not None else None,
    ]
    return next(
        (value for value in claims if value is not None and 0 < value <= MAX_BILLIONS), None
    )


def vector(values: Any) -> list[float]:
    """An embedding: finite numbers only; anything else is a garbled answer (ValueError)."""
    if not isinstance(values, list):
        raise ValueError("an embedding that is not a list")
    found = []
    for value in values:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError("an embedding with a value that is not a number")
        try:
            number = float(value)
        except OverflowError:
            number = math.inf
        if not math.isfinite(number):
            raise ValueError("an embedding with a value past any float")
        found.append(number)
    return found


def names(listed: Any) -> list[str]:
    """A server's list of short names (capabilities), as many and as long as any can be."""
    if not isinstance(listed, list):
        return []
    return [str(item)[:MAX_NAME] for item in listed[:MAX_NAMES] if isinstance(item, str)]
