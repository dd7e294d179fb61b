"""The Windows logon task's program: `resume --all`, logged to a file (pythonw has no
console), then a wait while the resumed agents run so the task's end cannot end them."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

from localagent.daemon import logon

HOLD_LOCK = """
import sys
from filelock import FileLock
lock = FileLock(sys.argv[1])
lock.acquire()
print("held", flush=True)
sys.stdin.read()
"""


def windowless_python() -> str:
    pythonw = Path(sys.executable).with_name("pythonw.exe")
    return str(pythonw) if pythonw.is_file() else sys.executable


def test_with_nothing_to_resume_it_logs_and_ends(isolated_home: Path) -> None:
    done = subprocess.run(
        [windowless_python(), "-m", "localagent.logon"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=120,
    )
    assert done.returncode == 0
    log = (isolated_home / "data" / logon.LOG_NAME).read_text(encoding="utf-8")
    assert "resuming unfinished goals" in log and "nothing to resume" in log
    assert "the logon task ends" in log


def test_it_waits_while_an_agent_holds_its_workspace(tmp_path: Path) -> None:
    context = tmp_path / ".agent_context"
    context.mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(context / "agent.lock")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == b"held"
        assert logon.running_agents([str(tmp_path)]) == [str(tmp_path)]
        waiter = threading.Thread(target=logon.wait_for_agents, args=([str(tmp_path)], 0.05))
        waiter.start()
        time.sleep(0.5)
        assert waiter.is_alive()
        holder.communicate(b"", timeout=30)
        waiter.join(10)
        assert not waiter.is_alive()
    finally:
        holder.kill()
        holder.wait()


def test_the_log_stays_bounded(tmp_path: Path) -> None:
    path = tmp_path / "autostart.log"
    path.write_text("x" * (logon.MAX_LOG_BYTES + 1))
    logon.write_log("fresh entry ✓", path)
    assert path.read_text(encoding="utf-8").endswith("fresh entry ✓\n")
    assert path.stat().st_size < 100
    assert path.with_suffix(".log.1").stat().st_size > logon.MAX_LOG_BYTES
