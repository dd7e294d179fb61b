"""Commands leave nothing behind on Windows too: each runs in a kill-on-close job object.

These run on every platform. On POSIX the command's session (its process group) catches
the same grandchildren; on Windows only the job does, since nothing else links an
orphaned grandchild without our environment marker to the command.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from localagent.system import winjob
from localagent.system.process import run_process

# The parent starts a grandchild that carries none of our environment, and exits at once:
# the grandchild is an orphan that nothing but the job (or the process group) ties to us.
ORPHAN_WITHOUT_MARKER = """
import os, subprocess, sys
env = {k: v for k, v in os.environ.items() if not k.startswith("LOCALAGENT")}
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(f"pid={child.pid}", flush=True)
"""


def running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def still_running_after(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while running(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return running(pid)


def test_an_orphaned_grandchild_without_the_marker_does_not_outlive_the_call(
    tmp_path: Path,
) -> None:
    (tmp_path / "orphan.py").write_text(ORPHAN_WITHOUT_MARKER)
    result = run_process([sys.executable, "orphan.py"], tmp_path, 60, 10_000)
    assert result.returncode == 0, result.output
    pids = [int(pid) for pid in re.findall(r"pid=(\d+)", result.output)]
    assert len(pids) == 1, result.output
    alive = still_running_after(pids[0], 3.0)
    if alive:
        psutil.Process(pids[0]).kill()
    assert not alive


@pytest.mark.skipif(sys.platform != "win32", reason="job objects are Windows'")
def test_closing_the_job_ends_what_it_holds_and_a_refused_job_never_freezes(
    tmp_path: Path,
) -> None:
    job = winjob.KillOnCloseJob()
    assert job.available
    sleeper = [sys.executable, "-c", "import time; time.sleep(60)"]
    proc = subprocess.Popen(sleeper, creationflags=winjob.CREATE_SUSPENDED)
    assert job.adopt(proc.pid)
    job.close()
    assert proc.wait(5) == winjob.KILLED_EXIT_CODE
    job.close()  # twice is fine
    # A job that cannot take the process (here: closed already) still lets it run.
    quick = [sys.executable, "-c", "print('ran')"]
    late = subprocess.Popen(quick, creationflags=winjob.CREATE_SUSPENDED, stdout=subprocess.PIPE)
    assert not job.adopt(late.pid)
    assert late.communicate(timeout=30)[0].strip() == b"ran"


def test_the_job_is_nothing_off_windows() -> None:
    job = winjob.KillOnCloseJob()
    assert job.available is (sys.platform == "win32")
    job.close()


# Asks to leave every job and to have no console: what a Windows "daemon" does.
BREAKAWAY = """
import subprocess, sys
flags = 0x01000000 | 0x00000008 | 0x00000200  # BREAKAWAY_FROM_JOB, DETACHED, NEW_GROUP
try:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                             creationflags=flags)
except OSError as exc:
    print(f"refused: {exc}", flush=True)
else:
    print(f"pid={child.pid}", flush=True)
"""


@pytest.mark.skipif(sys.platform != "win32", reason="job breakaway is Windows'")
def test_a_grandchild_that_asks_to_break_away_does_not_outlive_the_call(tmp_path: Path) -> None:
    (tmp_path / "breakaway.py").write_text(BREAKAWAY)
    result = run_process([sys.executable, "breakaway.py"], tmp_path, 60, 10_000)
    assert result.returncode == 0, result.output
    pids = [int(pid) for pid in re.findall(r"pid=(\d+)", result.output)]
    # Our job does not allow breakaway, so Windows refuses it; if it started, it must end.
    assert pids or "refused" in result.output, result.output
    for pid in pids:
        alive = still_running_after(pid, 3.0)
        if alive:
            psutil.Process(pid).kill()
        assert not alive


# An agent that runs one long command and dies without any cleanup (as TerminateProcess
# or a crash leaves it): the job's last handle closes with it.
DYING_AGENT = """
import os, sys, threading
from localagent.system.process import run_process
def die_soon(pid):
    print(f"pid={pid}", flush=True)
    threading.Timer(1.0, os._exit, args=(9,)).start()
run_process([sys.executable, "-c", "import time; time.sleep(60)"], __import__("pathlib").Path("."),
            60, 1000, on_start=lambda pid, created: die_soon(pid))
"""


@pytest.mark.skipif(sys.platform != "win32", reason="kill-on-close jobs are Windows'")
def test_a_command_ends_when_its_agent_dies_without_cleanup(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(DYING_AGENT)
    agent = subprocess.run(
        [sys.executable, "agent.py"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert agent.returncode == 9, agent.stderr
    pids = [int(pid) for pid in re.findall(r"pid=(\d+)", agent.stdout)]
    assert len(pids) == 1, agent.stdout
    alive = still_running_after(pids[0], 3.0)
    if alive:
        psutil.Process(pids[0]).kill()
    assert not alive
