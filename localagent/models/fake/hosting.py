"""What the request handlers see of the fake server: the HTTP server they run in, and
the `Recorder` behind it (the scenario, every request received, the connections held).
`FakeServer` is a Recorder that starts and stops the HTTP server in a thread."""

from __future__ import annotations

import json
import socket
import socketserver
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TextIO

from localagent.models.fake.cache import PromptCache
from localagent.models.fake.ollama import now
from localagent.models.fake.scenario import CHAT_PATHS, full_name, load_scenario, validate_scenario
from localagent.models.fake.script import Script


class Recorder:
    """The scenario a fake server answers from, and what it received."""

    def __init__(self, scenario: dict[str, Any] | Path | str) -> None:
        if isinstance(scenario, dict):
            self.scenario = validate_scenario(scenario)
        else:
            self.scenario = load_scenario(Path(scenario))
        self._script = Script(self.scenario)
        self._models = {m["name"]: m for m in self.scenario["models"]}
        self._received: list[tuple[str, dict[str, Any]]] = []
        self._chats = 0
        self.prompt_cache = PromptCache()
        self._lock = threading.Lock()
        self._connections: set[socket.socket] = set()
        self._stopping = threading.Event()
        self._log: TextIO | None = None

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every chat and /api/show body received, in order."""
        with self._lock:
            return [body for _, body in self._received]

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        with self._lock:
            return [body for path, body in self._received if path in CHAT_PATHS]

    def _model(self, name: str) -> dict[str, Any] | None:
        return self._models.get(full_name(name)) if name else None

    def _track(self, connection: socket.socket, open_: bool) -> None:
        with self._lock:
            if open_:
                self._connections.add(connection)
            else:
                self._connections.discard(connection)

    def _note(
        self, path: str, body: dict[str, Any], answered_by: str | None = None, status: int = 200
    ) -> int:
        """Keep a request; returns the number of chat requests so far."""
        with self._lock:
            self._received.append((path, body))
            if path not in CHAT_PATHS:
                return self._chats
            self._chats += 1
            if self._log is None:
                return self._chats
            entry = {
                "seq": self._chats,
                "ts": now(),
                "path": path,
                "status": status,
                "answered_by": answered_by,
                "request": body,
            }
            self._log.write(json.dumps(entry) + "\n")
            self._log.flush()
            return self._chats

    def _close_log(self) -> None:
        with self._lock:
            log, self._log = self._log, None
        if log is not None:
            log.close()


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64
    # Quick restarts on the same port need SO_REUSEADDR on POSIX; on Windows
    # it would let the fake bind a port a real Ollama already holds.
    allow_reuse_address = sys.platform != "win32"

    def __init__(
        self, address: tuple[str, int], fake: Recorder, handler: type[BaseHTTPRequestHandler]
    ) -> None:
        self.fake = fake
        super().__init__(address, handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind resolves the host's FQDN, which can stall for
        # seconds on machines with slow DNS; the name is never used here.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]
