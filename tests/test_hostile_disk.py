"""A disk that refuses writes: the log, the journal at start, a read-only workspace, a
registry lock held elsewhere. Each ends with a one-line message naming the problem and
the fix, never a traceback, and a log that cannot be written never changes an outcome.

Full files are made with RLIMIT_FSIZE in the CLI's process (inherited by its children):
a write past the limit fails with EFBIG as a full disk fails with ENOSPC, for root too.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support import CLI_TIMEOUT, cli_args, cli_env, done, plan_rule, record_types

from localagent.models.fake import FakeServer

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")
QUICK = {"rules": [plan_rule(("T", ["one step"]))], "default": done()}
LIMIT = 64 * 1024


def limited(size: int) -> Callable[[], None]:
    """A preexec function: no file of the child may grow past `size` bytes."""
    import resource

    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

    return apply


def run_limited(
    env: dict[str, str], *args: str, size: int = LIMIT
) -> subprocess.CompletedProcess[str]:
    done_ = subprocess.run(
        cli_args(*args),
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=CLI_TIMEOUT,
        preexec_fn=limited(size),
    )
    assert "Traceback" not in done_.stderr and "internal error" not in done_.stderr, done_.stderr
    return done_


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


def test_a_log_that_cannot_be_written_never_changes_the_outcome(ws: Path) -> None:
    log = ws / ".agent_context" / "agent.log"
    log.parent.mkdir()
    log.write_bytes(b"an old log line\n" * (LIMIT // 16))  # already as large as allowed
    with FakeServer(QUICK) as fake:
        ran = run_limited(cli_env(fake.url), "start", "a goal", "-w", str(ws), "--foreground")
    assert ran.returncode == 0, ran.stderr
    assert record_types(ws)[-1] == "goal_completed"
    assert f"the log {log} could not be written (File too large)" in ran.stderr
    assert log.stat().st_size == LIMIT


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """`folder` refuses new entries, for root too: immutable (chattr +i) when root, or
    without write permission otherwise."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            yield
        finally:
            folder.chmod(0o755)
        return
    if shutil.which("chattr") is None:
        pytest.skip("root, and no chattr to make a folder read-only")
    made = subprocess.run(["chattr", "+i", str(folder)], capture_output=True)
    if made.returncode != 0:
        pytest.skip(f"root, and this filesystem has no immutable folders: {made.stderr!r}")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(folder)], check=True)


def test_a_read_only_workspace_is_a_clear_usage_error(ws: Path) -> None:
    with FakeServer(QUICK) as fake, read_only(ws):
        env = cli_env(fake.url)
        for attached in (["--foreground"], []):
            ran = run_limited(env, "start", "a goal", "-w", str(ws), *attached, size=LIMIT)
            assert ran.returncode == 2, ran.stderr
            line = ran.stderr.strip()
            assert "\n" not in line and line.startswith(f"localagent: cannot write {ws}/"), line
            assert "make the workspace writable" in line and "-w" in line
    assert not (ws / ".agent_context").exists()


def test_a_full_disk_at_start_is_said_with_the_fix(ws: Path) -> None:
    with FakeServer(QUICK) as fake:
        env = cli_env(fake.url)
        attached = run_limited(env, "start", "a goal", "-w", str(ws), "--foreground", size=0)
        detached = run_limited(env, "start", "a goal", "-w", str(ws), size=0)
    assert attached.returncode == 1, attached.stderr
    assert "File too large; the disk is full" in attached.stderr
    assert "Free some space" in attached.stderr
    assert detached.returncode == 1, detached.stderr
    assert "(a full disk?)" in detached.stderr and "--foreground" in detached.stderr
    assert record_types(ws) == []


def test_a_held_registry_lock_is_said_and_never_changes_the_outcome(
    ws: Path, isolated_home: Path
) -> None:
    from filelock import FileLock

    from localagent.journal.registry import registry_path

    registry_path().parent.mkdir(parents=True, exist_ok=True)
    with FakeServer(QUICK) as fake, FileLock(str(registry_path()) + ".lock"):
        env = cli_env(fake.url)
        ran = run_limited(env, "start", "a goal", "-w", str(ws), "--foreground")
        listed = run_limited(env, "list")
    assert ran.returncode == 0, ran.stderr
    assert f"the registry lock {registry_path()}.lock has been held" in ran.stderr
    assert "find and end the process that holds that file" in ran.stderr
    assert record_types(ws)[-1] == "goal_completed"
    assert listed.returncode == 0 and "read without it" in listed.stderr
