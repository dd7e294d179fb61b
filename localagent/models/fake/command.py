"""`python -m localagent.models.fake SCENARIO.json`: the server as a program."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

from localagent.models.fake.server import FakeServer


def _write_atomically(path: Path, text: str) -> None:
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def _on_signals(handler: Callable[[int, FrameType | None], None]) -> dict[int, Any]:
    """Route every stop signal to handler; returns the handlers it replaced."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    names = ("SIGINT", "SIGTERM", "SIGBREAK")
    numbers = [getattr(signal, name) for name in names if hasattr(signal, name)]
    return {number: signal.signal(number, handler) for number in numbers}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m localagent.models.fake",
        description="Serve a scripted fake of the Ollama API from a scenario file.",
    )
    parser.add_argument("scenario", type=Path, help="scenario JSON file")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=11434, help="0 picks a free port")
    parser.add_argument("--log", type=Path, help="append each chat request here as JSON")
    parser.add_argument("--port-file", type=Path, help="write the bound port here")
    args = parser.parse_args(argv)
    try:
        fake = FakeServer(args.scenario, args.host, args.port, args.log).start()
    except ValueError as exc:
        print(f"fake ollama: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"fake ollama: cannot start on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    stopping = threading.Event()
    replaced = _on_signals(lambda number, frame: stopping.set())
    try:
        if args.port_file is not None:
            _write_atomically(args.port_file, f"{fake.port}\n")
        print(f"fake ollama listening on {fake.url}", flush=True)
        while not stopping.wait(0.2):
            pass
    finally:
        fake.stop()
        for number, previous in replaced.items():
            signal.signal(number, previous)
    return 0
