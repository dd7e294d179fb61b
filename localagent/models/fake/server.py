"""`FakeServer`: the server in a thread, started and stopped by tests, with every request
it received and the connections it holds."""

from __future__ import annotations

import contextlib
import socket
import threading
from pathlib import Path
from typing import Any

from localagent.models.fake.handler import Handler
from localagent.models.fake.hosting import Recorder, Server


class FakeServer(Recorder):
    """A scripted model server (Ollama and OpenAI-compatible) on a background thread;
    restartable on the same port."""

    def __init__(
        self,
        scenario: dict[str, Any] | Path | str,
        host: str = "127.0.0.1",
        port: int = 0,
        log_path: Path | None = None,
    ) -> None:
        super().__init__(scenario)
        self.host = host
        self.port = port
        self.log_path = log_path
        self._server: Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        if not self.port:
            raise RuntimeError("the fake Ollama server has not been started")
        return f"http://{self.host}:{self.port}"

    def start(self) -> FakeServer:
        if self._server is not None:
            return self
        self._stopping.clear()
        if self.log_path is not None:
            # Held open until stop() so each request costs one write and flush.
            self._log = Path(self.log_path).open("a", encoding="utf-8")  # noqa: SIM115
        try:
            server = Server((self.host, self.port), self, Handler)
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
