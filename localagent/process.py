"""Running one program without a shell, with a timeout and bounded output.

The output of a program the model started can be anything: gigabytes, binary,
or never ending because a grandchild keeps the pipe open. None of that may
exhaust memory, crash decoding or hang the agent.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import psutil

CHUNK_SIZE = 64 * 1024
# After the program ends, whatever is still in the pipe is drained within this
# time; a descendant that keeps the pipe open must not keep us waiting longer.
READER_GRACE = 2.0
KILL_WAIT = 3.0


class LaunchError(Exception):
    """The program could not be started at all (missing, not executable, bad folder)."""


CANCEL_POLL = 0.2  # seconds between checks for a stop request while a program runs


@dataclass(frozen=True)
class ProcessResult:
    returncode: int | None
    output: str
    timed_out: bool
    truncated_bytes: int
    cancelled: bool = False


def _never() -> bool:
    return False


class _BoundedCapture:
    """Keeps the first and the last bytes of a stream and counts what falls between."""

    def __init__(self, limit: int) -> None:
        self._head_limit = max(limit, 0) // 2
        self._tail_limit = max(limit, 0) - self._head_limit
        self._head = bytearray()
        self._tail = bytearray()
        self._cut = 0
        self._lock = threading.Lock()

    def feed(self, chunk: bytes) -> None:
        with self._lock:
            room = self._head_limit - len(self._head)
            if room > 0:
                self._head += chunk[:room]
                chunk = chunk[room:]
            self._tail += chunk
            overflow = len(self._tail) - self._tail_limit
            if overflow > 0:
                del self._tail[:overflow]
                self._cut += overflow

    def render(self) -> tuple[str, int]:
        with self._lock:
            head, tail, cut = bytes(self._head), bytes(self._tail), self._cut
        if cut:
            text = f"{_decode(head)}\n[... {cut} bytes cut ...]\n{_decode(tail)}"
        else:
            text = _decode(head + tail)
        return text, cut


def _decode(data: bytes) -> str:
    # NUL bytes are legal in JSON but break many prompt and terminal paths.
    text = data.decode("utf-8", errors="replace").replace("\x00", "\ufffd")
    return text.replace("\r\n", "\n")


def _pump(stream: IO[bytes], capture: _BoundedCapture) -> None:
    with contextlib.suppress(OSError, ValueError):
        while chunk := stream.read(CHUNK_SIZE):
            capture.feed(chunk)


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    # Windows consoles are not UTF-8 by default, and output flushed only at
    # exit would be lost when a timeout kills the program.
    env.update(PYTHONUTF8="1", PYTHONIOENCODING="utf-8", PYTHONUNBUFFERED="1")
    return env


def _platform_options() -> dict[str, object]:
    if sys.platform == "win32":
        flags = getattr(subprocess, "CREATE_NO_WINDOW", 0) | getattr(
            subprocess, "CREATE_NEW_PROCESS_GROUP", 0
        )
        return {"creationflags": flags}
    # A session of its own makes the program's whole group killable at once,
    # including descendants that were re-parented after their parent died.
    return {"start_new_session": True}


def _launch(argv: list[str], cwd: Path) -> subprocess.Popen[bytes]:
    if not argv:
        raise LaunchError("empty command")
    if not cwd.is_dir():
        raise LaunchError(f"working folder {cwd} does not exist")
    try:
        return subprocess.Popen(
            argv,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            bufsize=0,
            env=_child_env(),
            **_platform_options(),  # type: ignore[arg-type]
        )
    except FileNotFoundError as exc:
        raise LaunchError(f"program {argv[0]!r} was not found") from exc
    except PermissionError as exc:
        raise LaunchError(f"program {argv[0]!r} is not executable (permission denied)") from exc
    except OSError as exc:
        raise LaunchError(f"cannot start {argv[0]!r}: {exc.strerror or exc}") from exc


def _kill_group(pgid: int) -> None:
    killpg = getattr(os, "killpg", None)
    if killpg is not None:
        with contextlib.suppress(OSError):
            killpg(pgid, getattr(signal, "SIGKILL", signal.SIGTERM))


def _is_gone(proc: psutil.Process) -> bool:
    # A killed orphan stays a zombie until init reaps it; it runs nothing.
    try:
        return proc.status() == psutil.STATUS_ZOMBIE
    except psutil.Error:
        return True


def _kill_tree(proc: subprocess.Popen[bytes]) -> None:
    """Kills the program and every descendant, waiting until none runs."""
    try:
        descendants = psutil.Process(proc.pid).children(recursive=True)
    except psutil.Error:
        descendants = []
    _kill_group(proc.pid)
    with contextlib.suppress(OSError):
        proc.kill()
    for child in descendants:
        with contextlib.suppress(psutil.Error):
            child.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(KILL_WAIT)
    deadline = time.monotonic() + KILL_WAIT
    while not all(_is_gone(child) for child in descendants) and time.monotonic() < deadline:
        time.sleep(0.02)


def run_process(
    argv: list[str],
    cwd: Path,
    timeout: float,
    output_limit: int,
    cancelled: Callable[[], bool] = _never,
) -> ProcessResult:
    """Runs argv in cwd without a shell, keeping at most about output_limit bytes of output.

    On timeout, or when `cancelled()` turns true (the agent is asked to stop), the whole
    process tree is killed and the output so far is kept. On POSIX, descendants left
    behind by a program that exited are killed too, so nothing started here outlives
    the call.
    """
    proc = _launch(argv, cwd)
    capture = _BoundedCapture(output_limit)
    reader = threading.Thread(target=_pump, args=(proc.stdout, capture), daemon=True)
    reader.start()
    returncode: int | None = None
    deadline = time.monotonic() + timeout
    stopped = False
    try:
        while returncode is None and time.monotonic() < deadline:
            if cancelled():
                stopped = True
                break
            with contextlib.suppress(subprocess.TimeoutExpired):
                returncode = proc.wait(min(CANCEL_POLL, max(0.0, deadline - time.monotonic())))
    finally:
        if returncode is None:
            _kill_tree(proc)
        else:
            _kill_group(proc.pid)
    reader.join(READER_GRACE)
    if not reader.is_alive() and proc.stdout is not None:
        proc.stdout.close()
    output, cut = capture.render()
    return ProcessResult(returncode, output, returncode is None and not stopped, cut, stopped)
