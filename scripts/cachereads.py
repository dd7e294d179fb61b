"""Where the tokens an engine read went, by part of the prompt (bench_cache.py --by-part).

A recording proxy sits between the agents and llama-server and keeps every chat request
with the engine's `timings` (`cache_n` served from the cache, `prompt_n` read anew).
Afterwards each request is rendered and tokenized by the engine itself (`/apply-template`,
`/tokenize` with pieces), and every token past `cache_n` is put down to the message it
belongs to: the system prompts, the goal and plan, the rounds' facts, the tool results,
the replies (the template's framing around them, when the reply itself is cached), and
the requests of plan, replan and verdict calls. Apart from the parts, the tokens read
again: those an earlier request had sent at the same place (the same tokens before them),
which a cache that had kept every earlier prompt would have served. What is not read
again is news: text no earlier prompt held there, which any engine must read once.
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

PARTS = ("system prompts", "goal and plan", "round facts", "tool results", "replies")
PARTS += ("plan, replan and verdict requests", "notes")
AGAIN = "read again"  # not a part: the read tokens an earlier request had sent there


def _handler(upstream: str, log: Path, lock: threading.Lock) -> type[BaseHTTPRequestHandler]:
    class Recording(BaseHTTPRequestHandler):
        def _forward(self, body: bytes | None) -> bytes:
            headers = {"Content-Type": self.headers.get("Content-Type", "application/json")}
            request = urllib.request.Request(
                upstream + self.path, data=body, method=self.command, headers=headers
            )
            try:
                with urllib.request.urlopen(request, timeout=3600) as response:
                    data, status = response.read(), response.status
                    kind = response.headers.get("Content-Type", "")
            except urllib.error.HTTPError as exc:
                data, status, kind = exc.read(), exc.code, exc.headers.get("Content-Type", "")
            except (urllib.error.URLError, OSError):
                data, status, kind = b"", 502, "text/plain"
            try:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                return b""  # the agent was killed mid-call: its call is in no journal either
            return data

        def do_GET(self) -> None:
            self._forward(None)

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            data = self._forward(body)
            if not self.path.endswith("/chat/completions"):
                return
            found = timings(data.decode("utf-8", "replace"))
            if found is None:
                return  # the call a kill cut short, or an error: nothing was read
            with lock, log.open("a", encoding="utf-8") as out:
                out.write(json.dumps({"request": json.loads(body), "timings": found}) + "\n")

        def log_message(self, *_: Any) -> None:
            pass

    return Recording


def timings(body: str) -> dict[str, Any] | None:
    """The engine's timings from a reply, streamed (the chunk that has them) or whole."""
    for line in reversed(body.splitlines()):
        text = line.removeprefix("data: ").strip()
        if text.startswith("{") and '"timings"' in text:
            try:
                found = json.loads(text).get("timings")
            except ValueError:
                continue
            return found if isinstance(found, dict) else None
    return None


@contextmanager
def recording(upstream: str, log: Path) -> Iterator[str]:
    """A recording proxy in front of `upstream` (llama-server's root URL); yields its URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(upstream, log, threading.Lock()))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _post(url: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=600) as response:
        return json.loads(response.read())


def part(messages: list[dict[str, Any]], index: int, rounds: bool, asks: bool = False) -> str:
    """Which part of the prompt message `index` is; `rounds`: a prompt that opens as the
    rounds' do; `asks`: one that ends with a request of its own (a verdict goes on from the
    rounds' messages: its last message is its request)."""
    message = messages[index]
    role, content = message.get("role"), str(message.get("content") or "")
    if role == "system":
        return "system prompts"
    if not rounds or (asks and index == len(messages) - 1):
        return "plan, replan and verdict requests"
    if role == "assistant":
        return "replies"
    if role == "tool" or content.startswith("[result of "):
        return "tool results"
    if index == 1:
        return "goal and plan"
    return "round facts" if content.startswith("[status]") else "notes"


def read_by_part(
    root_url: str, request: dict[str, Any], cached: int, system: str
) -> tuple[Counter[str], list[str]]:
    """The tokens of one request past the `cached` ones, by part, and the request's
    tokens as text; `system`: the rounds' system prompt (a request that opens with
    another is a plan, replan or verdict)."""
    body = {k: v for k, v in request.items() if k not in ("stream", "stream_options")}
    prompt = _post(root_url + "/apply-template", body)["prompt"]
    pieces = _post(root_url + "/tokenize", {"content": prompt, "with_pieces": True})["tokens"]
    messages = request.get("messages") or []
    rounds = bool(messages) and messages[0].get("content") == system
    asks = bool(request.get("response_format") or request.get("format"))
    starts, at = [], 0
    for index, message in enumerate(messages):  # where each message's text is in the prompt
        text = str(message.get("content") or "")
        found = _find(prompt, text, at)
        starts.append((found if found >= 0 else at, part(messages, index, rounds, asks)))
        at = (found if found >= 0 else at) + len(text)
    counts: Counter[str] = Counter()
    offset = 0
    texts = []
    for number, token in enumerate(pieces):
        piece = token.get("piece")
        if number >= cached:
            owner = [name for start, name in starts if start <= offset]
            counts[owner[-1] if owner else "system prompts"] += 1
        text = piece if isinstance(piece, str) else bytes(piece).decode("utf-8", "replace")
        texts.append(text)
        offset += len(text)
    return counts, texts


def read_again(tokens: list[str], cached: int, earlier: list[list[str]]) -> int:
    """How many of the tokens past `cached` an earlier request had sent at the same place:
    those before the longest run of tokens it shares, from the start, with one of them."""
    shared = max((_common(tokens, before) for before in earlier), default=0)
    return max(0, shared - cached)


def _common(a: list[str], b: list[str]) -> int:
    n = min(len(a), len(b))
    return next((i for i in range(n) if a[i] != b[i]), n)


def _find(prompt: str, text: str, at: int) -> int:
    """Where a message's text starts in the prompt after `at`: as written, or escaped as
    JSON where the template writes it so; -1 when it is not found."""
    if not text:
        return -1
    found = prompt.find(text[:80], at)
    return found if found >= 0 else prompt.find(json.dumps(text)[1:81], at)


def breakdown(root_url: str, log: Path, reads: Path | None = None) -> Counter[str]:
    """All the recorded requests' read tokens, by part of the prompt, and how many of
    them were read again (`AGAIN`); with `reads`, each call's read text written there
    (what to shorten is found by reading it)."""
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line]
    firsts = Counter(str((r["request"].get("messages") or [{}])[0].get("content")) for r in records)
    system = firsts.most_common(1)[0][0] if firsts else ""
    total: Counter[str] = Counter()
    earlier: list[list[str]] = []
    shown = []
    for number, rec in enumerate(records, 1):
        cached = int(rec["timings"].get("cache_n") or 0)
        counts, tokens = read_by_part(root_url, rec["request"], cached, system)
        total += counts
        total[AGAIN] += read_again(tokens, cached, earlier)
        earlier.append(tokens)
        parts = ", ".join(f"{name} {n:,}" for name, n in counts.most_common())
        head = f"=== call {number}: {len(tokens):,} tokens, {cached:,} from the cache"
        shown.append(f"{head}, {max(0, len(tokens) - cached):,} read ({parts or 'none'})")
        shown.append("".join(tokens[cached:]))
    if reads is not None:
        reads.write_text("\n".join(shown) + "\n", encoding="utf-8")
    return total


def report(counts: Counter[str]) -> str:
    whole = sum(counts[n] for n in PARTS)
    shown = [f"{n} {counts[n]:,} ({counts[n] / whole:.0%})" for n in PARTS if counts[n]]
    again = f"; of them read again (an earlier prompt sent them there): {counts[AGAIN]:,}"
    return f"tokens read, by part of the prompt ({whole:,}): " + ", ".join(shown) + again
