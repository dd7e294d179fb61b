"""Reading an OpenAI-compatible server's answer into a `Reply`: server-sent events as they
stream, or one whole body from a server that does not stream.

Tool calls arrive in pieces by index, arguments in fragments; usage comes last, when asked
for. Past the exchange's deadline or byte bound, what came is the reply, cut off; when
nothing came (only keep-alive comments, or part of one event) the server failed.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from typing import Any

from localagent.models import numbers
from localagent.models.base import Retry
from localagent.models.calls import read_call
from localagent.models.loops import LoopCut
from localagent.models.protocol import Reply
from localagent.models.wire import Overflow, Overtime
from localagent.textcalls import ToolCall, valid_unicode

MAX_CALL_ID = 256  # characters of a server's id for a tool call


class Calls:
    """Tool calls as a stream sends them: pieces by index, arguments in fragments."""

    def __init__(self) -> None:
        self.parts: dict[int, dict[str, Any]] = {}

    def add(self, deltas: list[Any]) -> None:
        for position, delta in enumerate(deltas):
            if not isinstance(delta, dict):
                continue
            index = delta.get("index", position)
            part = self.parts.setdefault(index, {"id": "", "name": "", "arguments": ""})
            function = delta.get("function") or {}
            part["id"] = part["id"] or str(delta.get("id") or "")[:MAX_CALL_ID]
            part["name"] += str(function.get("name") or "")
            args = function.get("arguments")
            if isinstance(args, str) and isinstance(part["arguments"], str):
                part["arguments"] += args
            elif args is not None:  # an object, as some servers send
                part["arguments"] = args

    def read(self, known: set[str]) -> list[ToolCall]:
        calls = []
        for part in (self.parts[i] for i in sorted(self.parts)):
            call = read_call(part["name"], part["arguments"] or "{}", known)
            calls.append(dataclasses.replace(call, server_id=valid_unicode(part["id"])))
        return calls


def events(lines: Iterator[str], known: set[str]) -> Reply:
    """A reply streamed as server-sent events; one whose text loops is read no further."""
    reply, calls, content = Reply(), Calls(), LoopCut()
    finish, answered = None, False
    try:
        for line in lines:
            if not line.startswith("data:"):
                continue  # blank lines, comments, event names
            data = line[len("data:") :].strip()
            if data == "[DONE]":
                break
            part = json.loads(data)
            if not isinstance(part, dict):
                raise ValueError("an event that is not an object")
            if part.get("error"):
                raise Retry(f"server error mid-stream: {str(part['error'])[:200]}")
            answered = True
            usage(reply, part.get("usage"), part.get("timings"))
            for choice in (part.get("choices") or [])[:1]:
                delta = choice.get("delta") or {}
                calls.add(delta.get("tool_calls") or [])
                finish = choice.get("finish_reason") or finish
                if content.add(str(delta.get("content") or "")):
                    reply.cut_off = "loop"
            if reply.cut_off:
                break
        else:
            if finish is None:
                raise Retry("the stream ended before the reply was done")
    except (Overflow, Overtime) as exc:
        if not answered:
            raise
        reply.cut_off = "deadline" if isinstance(exc, Overtime) else "length"
    reply.cut_off = reply.cut_off or ("length" if finish == "length" else "")
    if reply.cut_off:
        reply.estimate(content.chunks)
    reply.content = valid_unicode(content.text())
    reply.tool_calls = calls.read(known)
    return reply


def whole(body: Any, known: set[str]) -> Reply:
    """A reply sent as one JSON body."""
    choice = body["choices"][0]
    message = choice.get("message") or {}
    calls = Calls()
    calls.add(message.get("tool_calls") or [])
    reply = Reply(content=valid_unicode(str(message.get("content") or "")))
    reply.tool_calls = calls.read(known)
    reply.cut_off = "length" if choice.get("finish_reason") == "length" else ""
    usage(reply, body.get("usage"), body.get("timings"))
    return reply


def usage(reply: Reply, given: Any, timings: Any = None) -> None:
    """Tokens as the server counts them, and how many of the prompt's came from its cache
    (llama-server's `timings`, sent with the usage; OpenAI's `prompt_tokens_details`)."""
    if isinstance(given, dict):
        reply.prompt_tokens = numbers.tokens(given.get("prompt_tokens"))
        reply.completion_tokens = numbers.tokens(given.get("completion_tokens"))
    details = given.get("prompt_tokens_details") if isinstance(given, dict) else None
    found = numbers.cached(timings, details, reply.prompt_tokens)
    if found is not None:  # the whole prompt as the cache figures count it
        reply.cached_tokens, reply.prompt_tokens = found
