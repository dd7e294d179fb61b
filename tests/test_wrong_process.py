"""A pid file is trusted only when its process holds this workspace's lock.

A workspace copied while its agent runs carries the agent's `agent.pid` along; so can a
planted file. Neither may make `stop`, `status` or a background `start` take another
workspace's agent for this one's.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import psutil
import pytest

from localagent.journal import CONTEXT_DIR
from localagent.models.fake import FakeServer
from localagent.system.lock import PID_NAME, WorkspaceLock, owner

PLAN = '{"tasks": [{"description": "T", "subtasks": ["first step", "second step"]}]}'
# Every model call after the plan takes a minute: the agent stays busy for the test.
BUSY = {"rules": [{"kind": "plan", "reply": {"content": PLAN}}], "default": {"delay": 60}}


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "localagent", *args],
        env=env,
        text=True,
        capture_output=True,
        timeout=60,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done


def status(ws: Path, env: dict[str, str]) -> dict:
    done = cli("status", "-w", str(ws), "--json", env=env)
    assert done.returncode == 0, done.stderr
    return orjson.loads(done.stdout)


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer(BUSY) as fake:
        yield fake


@pytest.fixture
def env(server: FakeServer) -> dict[str, str]:
    return {**os.environ, "OLLAMA_HOST": server.url, "LOCALAGENT_RETRY_DEADLINE": "5"}


def test_stop_in_a_copied_workspace_leaves_the_original_agent_alone(
    tmp_path: Path, env: dict[str, str]
) -> None:
    original, copy = tmp_path / "original", tmp_path / "copy"
    original.mkdir()
    assert cli("start", "keep busy", "-w", str(original), env=env).returncode == 0
    pid = status(original, env)["pid"]
    assert pid is not None and alive(pid)
    try:
        shutil.copytree(original, copy)
        assert (copy / CONTEXT_DIR / PID_NAME).exists()

        seen = status(copy, env)
        assert not seen["alive"] and seen["pid"] is None

        done = cli("stop", "-w", str(copy), "--grace", "1", env=env)
        assert done.returncode == 0, done.stderr
        assert "no agent is running" in done.stdout
        time.sleep(0.5)  # a wrongly forced agent would be gone by now
        assert alive(pid)
        seen = status(original, env)
        assert seen["alive"] and seen["pid"] == pid

        # The copy is a workspace of its own: a background start there is not refused as busy
        # (its unfinished goal, copied with it, is put away with --new).
        done = cli("start", "another goal", "-w", str(copy), "--new", env=env)
        assert done.returncode == 0, done.stderr
        other = status(copy, env)["pid"]
        assert other is not None and other != pid
        assert cli("stop", "-w", str(copy), env=env).returncode == 0
        assert alive(pid) and not alive(other)
    finally:
        assert cli("stop", "-w", str(original), env=env).returncode == 0
    assert not alive(pid)


def test_a_pid_file_naming_a_process_that_holds_another_lock_is_not_trusted(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """A pid file planted in a workspace whose lock no one holds names a real, running
    localagent agent: it is not trusted, though every other check passes."""
    busy, planted = tmp_path / "busy", tmp_path / "planted"
    busy.mkdir()
    assert cli("start", "keep busy", "-w", str(busy), env=env).returncode == 0
    try:
        pid = status(busy, env)["pid"]
        real = (busy / CONTEXT_DIR / PID_NAME).read_bytes()
        assert owner(busy / CONTEXT_DIR) is not None  # the real one is trusted
        (planted / CONTEXT_DIR).mkdir(parents=True)
        (planted / CONTEXT_DIR / PID_NAME).write_bytes(real)
        assert owner(planted / CONTEXT_DIR) is None
        # Locked by this test process: the lock is held, but not by the pid file's process.
        with WorkspaceLock(planted / CONTEXT_DIR):
            (planted / CONTEXT_DIR / PID_NAME).write_bytes(real)
            assert owner(planted / CONTEXT_DIR) is None
        assert alive(pid)
    finally:
        assert cli("stop", "-w", str(busy), env=env).returncode == 0
