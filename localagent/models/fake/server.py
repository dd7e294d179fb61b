"""`FakeServer`: the server in a thread, started and stopped by tests, with every request
it received and the connections it holds."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from pathlib import Path
from typing import Any, TextIO

from localagent.models.fake.cache import PromptCache
from localagent.models.fake.handler import Server
from localagent.models.fake.ollama import now
from localagent.models.fake.scenario import CHAT_PATHS, full_name, load_scenario, validate_scenario
from localagent.models.fake.script import Script


class FakeServer:
    """A scripted model server (Ollama and OpenAI-compatible) on a background thread;
    restartable on the same port."""

    def __init__(
        self,
        scenario: dict[str, Any] | Path | str,
        host: str = "127.0.0.1",
        port: int = 0,
        log_path: Path | None = None,
    ) -> None:
        if isinstance(scenario, dict):
            self.scenario = validate_scenario(scenario)
        else:
            self.scenario = load_scenario(Path(scenario))
        self.host = host
        self.port = port
        self.log_path = log_path
        self._script = Script(self.scenario)
        self._models = {m["name"]: m for m in self.scenario["models"]}
        self._received: list[tuple[str, dict[str, Any]]] = []
        self._chats = 0
        self.prompt_cache = PromptCache()
        self._lock = threading.Lock()
        self._connections: set[socket.socket] = set()
        self._stopping = threading.Event()
        self._server: Server | None = None
        self._thread: threading.Thread | None = None
        self._log: TextIO | None = None

    @property
    def url(self) -> str:
        if not self.port:
            raise RuntimeError("the fake Ollama server has not been started")
        return f"http://{self.host}:{self.port}"

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every chat and /api/show body received, in order."""
        with self._lock:
            return [body for _, body in self._received]

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        with self._lock:
            return [body for path, body in self._received if path in CHAT_PATHS]

    def start(self) -> FakeServer:
        if self._server is not None:
            return self
        self._stopping.clear()
        if self.log_path is not None:
            # Held open until stop() so each request costs one write and flush.
            self._log = Path(self.log_path).open("a", encoding="utf-8")  # noqa: SIM115
        try:
            server = Server((self.host, self.port), self)
        except OSError:
            self._close_log()
            raise
        self.port = server.server_address[1]
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"fake-ollama-{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        self._stopping.set()
        server.shutdown()
        server.server_close()
        # Keep-alive connections would otherwise go on being served after a
        # stop, hiding a "server went away" from the client.
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        if self._thread is not None:
            self._thread.join()
        self._close_log()

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

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
