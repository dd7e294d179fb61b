"""Running one program without a shell, with a timeout and bounded output.

The output of a program the model started can be anything: gigabytes, binary,
or never ending because a grandchild keeps the pipe open. None of that may
exhaust memory, crash decoding or hang the agent.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import psutil

from localagent.system.proctree import KILL_WAIT, MARKER_VARIABLE, Tree
from localagent.system.winjob import CREATE_SUSPENDED, KillOnCloseJob

CHUNK_SIZE = 64 * 1024
# After the program ends, whatever is still in the pipe is drained within this
# time; a descendant that keeps the pipe open must not keep us waiting longer.
READER_GRACE = 2.0


class LaunchError(Exception):
    """The program could not be started at all (missing, not executable, bad folder)."""


CANCEL_POLL = 0.2  # seconds between checks for a stop request while a program runs
FIRST_POLL = 0.01


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


def _pump(
    stream: IO[bytes], capture: _BoundedCapture, spill: Callable[[bytes], None] | None
) -> None:
    with contextlib.suppress(OSError, ValueError):
        while chunk := stream.read(CHUNK_SIZE):
            capture.feed(chunk)
            if spill is not None:
                spill(chunk)


def _child_env(extra: Mapping[str, str | None]) -> dict[str, str]:
    env = dict(os.environ)
    # Windows consoles are not UTF-8 by default, and output flushed only at
    # exit would be lost when a timeout kills the program.
    env.update(PYTHONUTF8="1", PYTHONIOENCODING="utf-8", PYTHONUNBUFFERED="1")
    for name, value in extra.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def _platform_options(suspended: bool) -> dict[str, object]:
    if sys.platform == "win32":
        flags = getattr(subprocess, "CREATE_NO_WINDOW", 0) | getattr(
            subprocess, "CREATE_NEW_PROCESS_GROUP", 0
        )
        # Suspended until it is in its job, so nothing it starts escapes the job.
        return {"creationflags": flags | (CREATE_SUSPENDED if suspended else 0)}
    # A session of its own makes the program's whole group killable at once,
    # including descendants that were re-parented after their parent died.
    return {"start_new_session": True}


def _launch(
    argv: list[str],
    cwd: Path,
    env: Mapping[str, str | None],
    suspended: bool = False,
    stdin: IO[bytes] | None = None,
) -> subprocess.Popen[bytes]:
    if not argv:
        raise LaunchError("empty command")
    if not cwd.is_dir():
        raise LaunchError(f"working folder {cwd} does not exist")
    try:
        return subprocess.Popen(
            argv,
            cwd=cwd,
            stdin=subprocess.DEVNULL if stdin is None else stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            bufsize=0,
            env=_child_env(env),
            **_platform_options(suspended),  # type: ignore[arg-type]
        )
    except FileNotFoundError as exc:
        raise LaunchError(f"program {argv[0]!r} was not found") from exc
    except PermissionError as exc:
        raise LaunchError(f"program {argv[0]!r} is not executable (permission denied)") from exc
    except OSError as exc:
        raise LaunchError(f"cannot start {argv[0]!r}: {exc.strerror or exc}") from exc
    except ValueError as exc:  # a NUL character in an argument or the environment
        raise LaunchError(f"cannot start {argv[0]!r}: {exc}") from exc


def _launch_watched(
    argv: list[str],
    cwd: Path,
    env: Mapping[str, str | None] | None,
    marker: str | None = None,
    stdin: bytes | None = None,
) -> tuple[subprocess.Popen[bytes], Tree | None]:
    marker = marker or secrets.token_hex(8)
    job = KillOnCloseJob() if sys.platform == "win32" else None
    env = {**(env or {}), MARKER_VARIABLE: marker}
    try:
        with _input(stdin) as source:  # the child holds its own handle once it runs
            proc = _launch(argv, cwd, env, job is not None, source)
    except BaseException:
        if job is not None:
            job.close()
        raise
    if job is not None and not job.adopt(proc.pid):
        job = None  # job objects refused here: the watched tree is killed as before
    try:
        return proc, Tree(psutil.Process(proc.pid), marker, job)
    except psutil.Error:  # it already ended and was reaped
        if job is not None:
            job.close()
        return proc, None


@contextlib.contextmanager
def _input(data: bytes | None) -> Iterator[IO[bytes] | None]:
    """A file holding what the program reads as its input (None: it reads nothing). A file,
    not a pipe: a program that never reads it cannot block the writer."""
    if data is None:
        yield None
        return
    with tempfile.TemporaryFile() as source:
        source.write(data)
        source.seek(0)
        yield source


def run_process(
    argv: list[str],
    cwd: Path,
    timeout: float,
    output_limit: int,
    cancelled: Callable[[], bool] = _never,
    on_start: Callable[[int, float], None] | None = None,
    env: Mapping[str, str | None] | None = None,
    spill: Callable[[bytes], None] | None = None,
    marker: str | None = None,
    stdin: bytes | None = None,
) -> ProcessResult:
    """Runs argv in cwd without a shell, keeping at most about output_limit bytes of output
    (`spill`, if given, gets every chunk as it arrives, on the reader thread).

    `marker` is the value of MARKER_VARIABLE the program and its descendants carry (a
    fresh one when None): a caller that journals it before the call can find and kill
    them after a crash, whenever the crash came. `stdin` is the program's input (None:
    none, it reads end of file).

    `on_start(pid, create_time)` is called as soon as the program runs, so the caller can
    record it; if it raises, the program is killed and the error propagates. `env` adds
    to or overrides the inherited environment (None removes a variable). On timeout, or
    when `cancelled()` turns true (the agent is asked to stop), the whole process tree is
    killed and the output so far is kept. Descendants are tracked while the program runs
    and killed when it ends, even those that left its session, so nothing started here
    outlives the call.
    """
    proc, tree = _launch_watched(argv, cwd, env, marker, stdin)
    capture = _BoundedCapture(output_limit)
    reader = threading.Thread(target=_pump, args=(proc.stdout, capture, spill), daemon=True)
    returncode: int | None = None
    stopped = False
    try:
        if on_start is not None:
            on_start(proc.pid, tree.root.create_time() if tree else time.time())
        reader.start()
        returncode, stopped = _wait(proc, tree, timeout, cancelled)
    finally:
        # The command ran in a session of its own, so its pid is its process group.
        if tree is not None:
            tree.kill(group=True)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(KILL_WAIT)
        if reader.ident is None and proc.stdout is not None:
            proc.stdout.close()  # on_start failed before the reader started
    reader.join(READER_GRACE)
    if not reader.is_alive() and proc.stdout is not None:
        proc.stdout.close()
    output, cut = capture.render()
    return ProcessResult(returncode, output, returncode is None and not stopped, cut, stopped)


def _wait(
    proc: subprocess.Popen[bytes],
    tree: Tree | None,
    timeout: float,
    cancelled: Callable[[], bool],
) -> tuple[int | None, bool]:
    """The exit code (None if it had to be stopped) and whether a stop request ended it."""
    deadline = time.monotonic() + timeout
    poll = FIRST_POLL
    while time.monotonic() < deadline:
        if cancelled():
            return None, True
        if tree is not None:
            tree.watch()
        with contextlib.suppress(subprocess.TimeoutExpired):
            return proc.wait(min(poll, max(0.0, deadline - time.monotonic()))), False
        # Often at first, when programs start their helpers, then every CANCEL_POLL.
        poll = min(poll * 2, CANCEL_POLL)
    return None, False
