"""The HTTP side: one handler for both APIs, refusals, garbled and dropped streams."""

from __future__ import annotations

import contextlib
import json
import time
from typing import Any

from localagent.models.fake import cache
from localagent.models.fake import openai as fake_openai
from localagent.models.fake.hosting import Server
from localagent.models.fake.ollama import (
    chat_refusal,
    final_fields,
    now,
    show,
    tags,
    toy_embedding,
    wire_message,
)
from localagent.models.fake.scenario import EMBED_PATHS
from localagent.models.fake.streams import Streams


class Handler(Streams):
    # HTTP/1.1 so streams use chunked encoding: a dropped stream then reads
    # as truncated to the client instead of as a clean end of body.
    protocol_version = "HTTP/1.1"
    server_version = "fake-ollama"
    # Streamed chunks are small writes; with Nagle on, each waits for a delayed ACK (~40 ms).
    disable_nagle_algorithm = True
    timeout = 60
    server: Server

    def setup(self) -> None:
        super().setup()
        self.server.fake._track(self.connection, open_=True)

    def finish(self) -> None:
        self.server.fake._track(self.connection, open_=False)
        with contextlib.suppress(OSError):
            super().finish()

    def handle(self) -> None:
        # A client that hangs up mid-answer is routine here (drops, timeouts).
        with contextlib.suppress(ConnectionError, TimeoutError):
            super().handle()

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_HEAD(self) -> None:
        if self.path == "/":
            self._send(200, b"", "text/plain; charset=utf-8", length=len(b"Ollama is running"))
        else:
            self._send(404, b"", "text/plain; charset=utf-8")

    def do_GET(self) -> None:
        fake = self.server.fake
        key = fake.scenario["api_key"]
        if (
            self.path.startswith("/v1/")
            and key
            and self.headers.get("Authorization") != f"Bearer {key}"
        ):
            self._send_error(401, "Incorrect API key provided", openai=True)
        elif self.path == "/":
            self._send(200, b"Ollama is running", "text/plain; charset=utf-8")
        elif self.path == "/api/version":
            self._send_json(200, {"version": fake.scenario["version"]})
        elif self.path == "/api/tags":
            self._send_json(200, tags(fake.scenario["models"]))
        elif self.path == "/api/ps":
            self._send_json(200, {"models": []})
        elif self.path == "/v1/models":
            self._send_json(200, fake_openai.models(fake.scenario))
        elif self.path == "/props" and fake.scenario["llama_cpp"]:
            self._send_json(200, fake_openai.props(fake.scenario))
        elif self.path == "/api/v1/models" and fake.scenario["lm_studio"]:
            self._send_json(200, fake_openai.lm_studio_models(fake.scenario))
        elif self.path.startswith("/api/v0/models/") and fake.scenario["lm_studio"]:
            shown = fake_openai.lm_studio_model(fake.scenario, self.path)
            self._send_json(*((200, shown) if shown else (404, {"error": "model not found"})))
        else:
            self._send(404, b"404 page not found", "text/plain; charset=utf-8")

    def do_POST(self) -> None:
        body = self._read_json()
        if body is None:
            return
        if self.path == "/api/show":
            self._answer_show(body)
        elif self.path == "/api/chat":
            self._answer_chat(body, time.perf_counter_ns())
        elif self.path == "/v1/chat/completions":
            self._answer_chat(body, time.perf_counter_ns(), openai=True)
        elif self.path in EMBED_PATHS:
            self._answer_embed(body, openai=self.path.startswith("/v1/"))
        elif self.path in cache.PATHS and self.server.fake.scenario["prompt_cache"]:
            self._send_json(200, cache.rendered(self.path, body))
        else:
            self._send(404, b"404 page not found", "text/plain; charset=utf-8")

    def _read_json(self) -> dict[str, Any] | None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw) if raw else None
        except ValueError as exc:
            self._send_json(400, {"error": f"invalid JSON: {exc}"})
            return None
        if not isinstance(body, dict):
            self._send_json(400, {"error": "missing request body"})
            return None
        return body

    def _answer_show(self, body: dict[str, Any]) -> None:
        fake = self.server.fake
        fake._note("/api/show", body)
        name = body.get("model") or body.get("name") or ""
        model = fake._model(name)
        if model is None:
            self._send_json(404, {"error": f"model '{name}' not found"})
        else:
            self._send_json(200, show(model))

    def _answer_embed(self, body: dict[str, Any], openai: bool) -> None:
        fake = self.server.fake
        fake._note(self.path, body)
        if fake._stopping.wait(fake.scenario["embed_delay"]):
            self.close_connection = True
            return
        name, texts = body.get("model") or "", body.get("input")
        texts = [texts] if isinstance(texts, str) else texts
        if fake._model(name) is None:
            self._send_error(404, f"model '{name}' not found", openai)
        elif not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            self._send_error(400, "input must be a string or a list of strings", openai)
        elif fake.scenario["embed_body"] is not None:
            self._send(200, fake.scenario["embed_body"].encode(), "application/json")
        elif openai:
            data = [
                {"object": "embedding", "index": i, "embedding": toy_embedding(t)}
                for i, t in enumerate(texts)
            ]
            self._send_json(200, {"object": "list", "model": name, "data": data})
        else:
            vectors = [toy_embedding(t) for t in texts]
            self._send_json(200, {"model": name, "embeddings": vectors})

    def _answer_chat(self, body: dict[str, Any], started: int, openai: bool = False) -> None:
        fake = self.server.fake
        path = self.path
        model = fake._model(body.get("model") or "")
        if openai:
            auth = self.headers.get("Authorization", "")
            refusal = fake_openai.refusal(body, model, fake.scenario, auth)
        else:
            refusal = chat_refusal(body, model)
        if refusal is not None:
            fake._note(path, body, status=refusal[0])
            self._send_error(refusal[0], refusal[1], openai)
            return
        answered_by, reply = fake._script.choose(body)
        if reply is None:
            fake._note(path, body, answered_by, 500)
            self._send_error(500, "scenario exhausted", openai)
            return
        seq = fake._note(path, body, answered_by, reply.get("status", 200))
        if fake.scenario["prompt_cache"] and "timings" not in reply:
            content = reply.get("content")
            timings = fake.prompt_cache.timings(body, content if isinstance(content, str) else "")
            whole = timings["cache_n"] + timings["prompt_n"]
            reply = {"prompt_eval_count": whole, **reply, "timings": timings}
        if fake._stopping.wait(reply.get("delay", 0)):
            self.close_connection = True
        elif "body" in reply:
            content_type = reply.get("content_type", "text/html; charset=utf-8")
            self._send(reply.get("body_status", 200), reply["body"].encode(), content_type)
        elif "status" in reply:
            self._send_error(reply["status"], reply["error"], openai)
        elif body.get("stream", not openai) and openai and not reply.get("whole"):
            self._events(body, reply, seq)
        elif body.get("stream", True) and not openai and not reply.get("whole"):
            self._stream(body, reply, started)
        elif reply.get("drop"):
            self.close_connection = True
        elif "error_line" in reply:
            self._send_error(500, reply["error_line"], openai)
        elif openai:
            self._send_json(200, fake_openai.completion(body, reply, seq))
        else:
            message = {"model": body["model"], "created_at": now(), "message": wire_message(reply)}
            self._send_json(200, message | final_fields(body, reply, started))

    def _send_error(self, status: int, error: str, openai: bool) -> None:
        self._send_json(status, fake_openai.error(status, error) if openai else {"error": error})

    def _send_json(self, status: int, payload: dict[str, Any]) -> None:
        self._send(status, json.dumps(payload).encode(), "application/json; charset=utf-8")

    def _send(self, status: int, data: bytes, content_type: str, length: int | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data) if length is None else length))
        self.end_headers()
        self.wfile.write(data)
