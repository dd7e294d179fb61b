"""A stand-in for a server's prompt cache: one slot that keeps the latest prompt and the
reply generated after it, as llama-server with one slot does, so tests see what the
prompt layout costs.

A prompt is the request's tools and messages as JSON text, the tools first (a chat
template puts them in the system prompt); the tokens it shares from the start with the
previous prompt followed by its reply's text as an assistant message (characters / 4)
were served from the cache. The figures are llama.cpp's
`timings`: `cache_n` from the cache, `prompt_n` read anew.
"""

from __future__ import annotations

import json
import threading
from typing import Any

CHARS_PER_TOKEN = 4
PATHS = ("/apply-template", "/tokenize")  # llama-server's, answered with the cache's counting


def prompt_text(body: dict[str, Any]) -> str:
    return json.dumps([body.get("tools") or [], body.get("messages") or []], sort_keys=True)


class PromptCache:
    def __init__(self) -> None:
        self.last = ""
        self.lock = threading.Lock()

    def timings(self, body: dict[str, Any], reply: str = "") -> dict[str, int]:
        """The figures for `body`, whose reply's text is `reply`."""
        text = prompt_text(body)
        generated = [*(body.get("messages") or []), {"role": "assistant", "content": reply}]
        with self.lock:
            shared = _shared(self.last, text)
            self.last = prompt_text({**body, "messages": generated})
        total = max(1, len(text) // CHARS_PER_TOKEN)
        cached = min(shared // CHARS_PER_TOKEN, total - 1)  # the last token is always read
        return {"cache_n": cached, "prompt_n": total - cached}


def rendered(path: str, body: dict[str, Any]) -> dict[str, Any]:
    """llama-server's `/apply-template` (the prompt as the cache counts it) and
    `/tokenize` with pieces (a token per CHARS_PER_TOKEN characters)."""
    if path == "/apply-template":
        return {"prompt": prompt_text(body)}
    text = str(body.get("content", ""))
    starts = range(0, len(text), CHARS_PER_TOKEN)
    pieces = [text[at : at + CHARS_PER_TOKEN] for at in starts]
    return {"tokens": [{"id": n, "piece": piece} for n, piece in enumerate(pieces)]}


def _shared(a: str, b: str) -> int:
    """The length of the longest common prefix of a and b."""
    n = min(len(a), len(b))
    i = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), n)
    return i
