"""The workspace lock and pid file: who may be signalled, whether an agent runs."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import orjson
import psutil
import pytest
from support import cli_env, closed_port, run_cli

from localagent.system import fsretry
from localagent.system.lock import LOCK_NAME, PID_NAME, WorkspaceLock, held, identity, owner

SLEEP = "import time; time.sleep(60)"


def _sleeper(*argv: str, ready: Callable[[], bool] = lambda: True) -> Iterator[psutil.Process]:
    proc = subprocess.Popen([sys.executable, *argv])
    try:
        child = psutil.Process(proc.pid)
        end = time.monotonic() + 10
        while child.cmdline()[:1] != [sys.executable] and time.monotonic() < end:
            time.sleep(0.01)  # until exec has given the child its own command line
        while not ready() and time.monotonic() < end:
            time.sleep(0.01)
        yield child
    finally:
        proc.kill()
        proc.wait()


# Holds the workspace's lock as an agent does, for as long as the test needs.
HOLD_LOCK = (
    "import sys, time; from filelock import FileLock; lock = FileLock(sys.argv[2]); "
    "lock.acquire(); time.sleep(60)"
)


@pytest.fixture
def agent_like(tmp_path: Path) -> Iterator[psutil.Process]:
    """A live process whose command line is a `localagent` script (as a venv runs it),
    holding the workspace's lock."""
    script = tmp_path / "bin" / "localagent"
    script.parent.mkdir()
    script.write_text(HOLD_LOCK)
    context = tmp_path / ".agent_context"
    context.mkdir()
    lock = str(context / LOCK_NAME)
    yield from _sleeper(str(script), "run-agent", lock, ready=lambda: held(context))


@pytest.fixture
def stranger() -> Iterator[psutil.Process]:
    yield from _sleeper("-c", SLEEP)


def plant(context: Path, info: object) -> None:
    context.mkdir(exist_ok=True)
    (context / PID_NAME).write_bytes(orjson.dumps(info))


def test_owner_trusts_only_a_live_localagent_process_with_its_start(
    tmp_path: Path, agent_like: psutil.Process
) -> None:
    context = tmp_path / ".agent_context"
    plant(context, identity(agent_like))
    assert owner(context) is not None and owner(context)["pid"] == agent_like.pid
    plant(context, {"pid": agent_like.pid, "create_time": agent_like.create_time()})
    assert owner(context) is not None  # a pid file without the Linux fields still works
    plant(context, {"pid": agent_like.pid, "create_time": agent_like.create_time() - 500})
    assert owner(context) is None
    if sys.platform.startswith("linux"):
        info = identity(agent_like)
        plant(context, {**info, "start_ticks": info["start_ticks"] + 1})
        assert owner(context) is None
        plant(context, {**info, "boot_id": "another boot"})
        assert owner(context) is None
    plant(context, identity(agent_like))
    elsewhere = tmp_path / "copy" / ".agent_context"  # its pid file copied along
    elsewhere.mkdir(parents=True)
    (elsewhere / LOCK_NAME).write_bytes((context / LOCK_NAME).read_bytes())
    plant(elsewhere, identity(agent_like))
    assert owner(context) is not None and owner(elsewhere) is None


def test_owner_refuses_a_process_that_is_not_localagent(
    tmp_path: Path, stranger: psutil.Process
) -> None:
    context = tmp_path / ".agent_context"
    plant(context, identity(stranger))
    assert owner(context) is None


@pytest.mark.parametrize(
    "content",
    [
        {"pid": "PID", "create_time": "nan"},
        {"pid": 1, "create_time": "nan"},
        {"pid": 1, "create_time": 0.0},
        {"pid": 0, "create_time": 1.0},
        {"pid": -5, "create_time": 1.0},
        {"pid": True, "create_time": 1.0},
        {"pid": 1.5, "create_time": 1.0},
        {"pid": "OWN", "create_time": "inf"},
        {"pid": "OWN", "create_time": True},
        {"pid": "OWN", "create_time": "CREATED"},
        {"pid": "OWN"},
        ["OWN"],
        "garbage",
    ],
)
def test_owner_validates_the_pid_file_strictly(tmp_path: Path, content: object) -> None:
    me = psutil.Process()
    raw = orjson.dumps(content).replace(b'"OWN"', str(me.pid).encode())
    raw = raw.replace(b'"PID"', str(me.ppid()).encode())
    raw = raw.replace(b'"CREATED"', repr(me.create_time()).encode())
    context = tmp_path / ".agent_context"
    context.mkdir()
    (context / PID_NAME).write_bytes(raw.replace(b'"nan"', b"NaN").replace(b'"inf"', b"1e999"))
    assert owner(context) is None


def test_our_own_pid_is_never_an_owner(tmp_path: Path) -> None:
    context = tmp_path / ".agent_context"
    plant(context, identity(psutil.Process()))
    assert owner(context) is None


def test_stop_never_signals_a_process_a_planted_pid_file_names(
    tmp_path: Path, stranger: psutil.Process
) -> None:
    env = cli_env(f"http://127.0.0.1:{closed_port()}")
    context = tmp_path / ".agent_context"
    for info in (
        {"pid": stranger.pid, "create_time": "nan"},
        identity(stranger),
        # Windows has no pid 1 (under Wine neither): then only its well-formed record.
        {"pid": 1, "create_time": psutil.Process(1).create_time() if psutil.pid_exists(1) else 1.0},
    ):
        plant(context, info)
        done = run_cli(env, "stop", "-w", str(tmp_path))
        assert "no agent is running" in done.stdout + done.stderr, done.stderr
        assert stranger.is_running() and stranger.status() != psutil.STATUS_ZOMBIE


def test_held_tells_whether_the_lock_is_taken(tmp_path: Path) -> None:
    context = tmp_path / ".agent_context"
    assert not held(context)
    assert not (context / LOCK_NAME).exists()  # probing creates nothing
    lock = WorkspaceLock(context)
    lock.acquire()
    try:
        assert held(context)
        assert owner(context) is None  # our own process: never an owner to signal
        assert orjson.loads((context / PID_NAME).read_bytes())["pid"] == os.getpid()
    finally:
        lock.release()
    assert not held(context) and not (context / PID_NAME).exists()


# A child that opens a file as ordinary programs do (on Windows: without sharing delete,
# so the file can be neither replaced nor deleted) and closes it after a moment.
HOLD_OPEN = (
    "import sys, time; fh = open(sys.argv[1], 'rb'); print('open', flush=True); "
    "time.sleep(float(sys.argv[2])); fh.close()"
)


def test_replacing_and_deleting_wait_out_a_file_another_process_holds_open(
    tmp_path: Path,
) -> None:
    target, new = tmp_path / "agent.pid", tmp_path / "agent.pid.tmp"
    target.write_bytes(b"old")
    new.write_bytes(b"new")
    for act in (lambda: fsretry.replace(new, target), lambda: fsretry.unlink(target)):
        holder = subprocess.Popen(
            [sys.executable, "-c", HOLD_OPEN, str(target), "0.5"],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert holder.stdout is not None and holder.stdout.readline() == "open\n"
            act()  # on Windows this waits until the holder closes the file
        finally:
            holder.kill()
            holder.wait(10)
    assert not target.exists() and not new.exists()


def test_retry_gives_up_on_what_is_not_transient_and_after_its_time() -> None:
    calls: list[float] = []

    def refused() -> None:
        calls.append(time.monotonic())
        raise PermissionError(13, "Permission denied")

    with pytest.raises(PermissionError):
        fsretry.retry(refused, seconds=5, transient=lambda exc: False)
    assert len(calls) == 1  # a real refusal is raised at once
    calls.clear()
    with pytest.raises(PermissionError):
        fsretry.retry(refused, seconds=0.3, transient=lambda exc: True)
    assert len(calls) > 2 and 0.25 < calls[-1] - calls[0] < 2
    assert fsretry.is_transient(PermissionError(13, "denied")) == (sys.platform == "win32")
