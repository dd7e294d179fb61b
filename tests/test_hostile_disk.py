"""A disk that refuses writes: the log, the journal at start, a read-only workspace, a
registry lock held elsewhere. Each ends with a one-line message naming the problem and
the fix, never a traceback, and a log that cannot be written never changes an outcome.

Full files are made with RLIMIT_FSIZE in the CLI's process (inherited by its children):
a write past the limit fails with EFBIG as a full disk fails with ENOSPC, for root too.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from support import CLI_TIMEOUT, cli_args, cli_env, done, plan_rule, record_types

from localagent.fake_ollama import FakeOllama

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
    with FakeOllama(QUICK) as fake:
        ran = run_limited(cli_env(fake.url), "start", "a goal", "-w", str(ws), "--foreground")
    assert ran.returncode == 0, ran.stderr
    assert record_types(ws)[-1] == "goal_completed"
    assert f"the log {log} could not be written (File too large)" in ran.stderr
    assert log.stat().st_size == LIMIT
