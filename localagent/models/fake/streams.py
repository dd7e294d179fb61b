"""Streamed answers of the fake server: Ollama's NDJSON and OpenAI's server-sent events,
whole, broken (dropped, an error line, endless), or hostile (keep-alives forever, a
byte at a time, one line that never ends)."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any

from localagent.models.fake import openai as fake_openai
from localagent.models.fake.ollama import final_fields, now, stream_messages

if TYPE_CHECKING:
    from localagent.models.fake.hosting import Server


class Streams(BaseHTTPRequestHandler):
    """The stream writers of the request handler."""

    server: Server
    _drip = 0.0  # seconds between the bytes of a dripped stream

    def _events(self, body: dict[str, Any], reply: dict[str, Any], seq: int) -> None:
        """An OpenAI-style stream of server-sent events."""
        parts = fake_openai.events(body, reply, seq)
        broken = reply.get("drop") or "error_line" in reply
        sent = parts[: max(1, len(parts) // 2)] if broken else parts
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        if self._hostile(reply, openai=True):
            return
        pause = reply.get("chunk_delay", 0.05 if reply.get("endless") else 0)
        for event in sent:
            self._event(event)
            if pause and self.server.fake._stopping.wait(pause):
                return
        while reply.get("endless") and not self.server.fake._stopping.wait(pause):
            self._event(fake_openai.endless(body, seq))
        if reply.get("drop"):
            self.close_connection = True
            return
        if "error_line" in reply:
            self._event(fake_openai.error(500, reply["error_line"]))
        else:
            for event in fake_openai.ending(body, reply, seq):
                self._event(event)
            self._write_chunk(b"data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")

    def _event(self, payload: dict[str, Any]) -> None:
        self._write_chunk(b"data: " + json.dumps(payload).encode() + b"\n\n")

    def _write_chunk(self, data: bytes) -> None:
        if not self._drip:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            return
        for byte in data:
            self.wfile.write(b"1\r\n%c\r\n" % byte)
            if self.server.fake._stopping.wait(self._drip):
                raise ConnectionAbortedError("the server is stopping")

    def _hostile(self, reply: dict[str, Any], openai: bool) -> bool:
        """What a hostile server streams: keep-alives before the reply, bytes one at a
        time, one line that never ends instead of the reply (True: nothing else is sent)."""
        fake = self.server.fake
        self._drip = reply.get("chunk_delay", 0.05) if reply.get("drip") else 0.0
        keepalive = b": keep-alive\n\n" if openai else b"\n"
        for _ in range(reply.get("keepalive", 0)):
            self._write_chunk(keepalive)
            if fake._stopping.wait(reply.get("chunk_delay", 0.05)):
                return True
        if not reply.get("endless_line"):
            return False
        self._write_chunk(
            b'data: {"choices": [{"delta": {"content": "'
            if openai
            else b'{"message": {"content": "'
        )
        piece = b"and then " * 7000
        while not fake._stopping.wait(reply.get("chunk_delay", 0)):
            self._write_chunk(piece)
        return True

    def _stream(self, body: dict[str, Any], reply: dict[str, Any], started: int) -> None:
        parts = stream_messages(reply)
        broken = reply.get("drop") or "error_line" in reply
        sent = parts[: max(1, len(parts) // 2)] if broken else parts
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        if self._hostile(reply, openai=False):
            return
        pause = reply.get("chunk_delay", 0.05 if reply.get("endless") else 0)
        for message in sent:
            self._chunk({"model": body["model"], "created_at": now(), "message": message})
            if pause and self.server.fake._stopping.wait(pause):
                return
        while reply.get("endless") and not self.server.fake._stopping.wait(pause):
            thinking = {"role": "assistant", "content": "", "thinking": "and then "}
            self._chunk({"model": body["model"], "created_at": now(), "message": thinking})
        if reply.get("drop"):
            # No terminating chunk: the client sees the body end mid-stream.
            self.close_connection = True
            return
        if "error_line" in reply:
            self._chunk({"error": reply["error_line"]})
        else:
            last = {"role": "assistant", "content": ""}
            head = {"model": body["model"], "created_at": now(), "message": last}
            self._chunk(head | final_fields(body, reply, started))
        self.wfile.write(b"0\r\n\r\n")

    def _chunk(self, payload: dict[str, Any]) -> None:
        self._write_chunk(json.dumps(payload).encode() + b"\n")
