from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import orjson
import psutil
import pytest
from support import TREE_SCRIPT

from localagent.system.process import LaunchError, ProcessResult, run_process
from localagent.system.proctree import MARKER_VARIABLE, kill_recorded

# The parent exits at once; its child keeps the inherited stdout pipe open.
LEFTOVER_SCRIPT = """
import subprocess, sys
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
print(f"pid={child.pid}", flush=True)
"""

# The middle process exits, so the grandchild is re-parented and no longer a
# descendant psutil can find; it still holds the pipe.
ORPHAN_SCRIPT = """
import os, subprocess, sys, time
if len(sys.argv) > 1:
    grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    print(f"pid={grandchild.pid}", flush=True)
    sys.exit(0)
print(f"pid={os.getpid()}", flush=True)
subprocess.run([sys.executable, __file__, "middle"])
time.sleep(60)
"""


def script(tmp_path: Path, name: str, source: str) -> list[str]:
    path = tmp_path / name
    path.write_text(source, encoding="utf-8")
    return [sys.executable, str(path)]


def pids_in(output: str) -> list[int]:
    return [int(found) for found in re.findall(r"pid=(\d+)", output)]


def running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def wait_all_dead(pids: list[int], seconds: float = 3.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while (alive := [pid for pid in pids if running(pid)]) and time.monotonic() < deadline:
        time.sleep(0.02)
    return alive


def test_captures_stdout_and_stderr_with_exit_code(tmp_path: Path) -> None:
    code = "import sys; print('to out'); print('to err', file=sys.stderr); sys.exit(3)"
    result = run_process([sys.executable, "-c", code], tmp_path, 10, 4000)
    assert result == ProcessResult(3, result.output, False, 0)
    assert "to out" in result.output
    assert "to err" in result.output


def test_runs_in_the_given_folder_with_utf8(tmp_path: Path) -> None:
    code = "import os, sys; print(os.getcwd()); print(sys.stdout.encoding); print('é✓')"
    result = run_process([sys.executable, "-c", code], tmp_path, 10, 4000)
    lines = result.output.splitlines()
    assert Path(lines[0]).resolve() == tmp_path.resolve()
    assert lines[1].lower().replace("-", "") == "utf8"
    assert lines[2] == "é✓"


def test_huge_output_keeps_head_and_tail_in_bounded_memory(tmp_path: Path) -> None:
    source = (
        "import sys\nout = sys.stdout.buffer\nout.write(b'BEGIN\\n')\n"
        "for _ in range(50):\n    out.write(b'x' * (1 << 20))\nout.write(b'\\nEND\\n')\n"
    )
    tracemalloc.start()
    try:
        result = run_process(script(tmp_path, "big.py", source), tmp_path, 60, 4000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    total = len(b"BEGIN\n") + 50 * (1 << 20) + len(b"\nEND\n")
    assert result.returncode == 0
    assert result.truncated_bytes == total - 4000
    assert result.output.startswith("BEGIN\nxxx")
    assert result.output.endswith("xxx\nEND\n")
    assert f"[... {total - 4000} bytes cut ...]" in result.output
    assert len(result.output) < 4100
    assert peak < 4 * 1024 * 1024


def test_binary_output_is_decoded_into_json_safe_text(tmp_path: Path) -> None:
    code = "import sys; sys.stdout.buffer.write(bytes(range(256)) * 64 + b'\\xff\\xfe\\x00\\xc3')"
    result = run_process([sys.executable, "-c", code], tmp_path, 10, 100_000)
    assert result.returncode == 0
    assert "\x00" not in result.output
    assert "\ufffd" in result.output
    assert json.loads(json.dumps(result.output)) == result.output
    assert orjson.loads(orjson.dumps(result.output)) == result.output


def test_timeout_kills_the_whole_tree_and_keeps_partial_output(tmp_path: Path) -> None:
    started = time.monotonic()
    result = run_process(script(tmp_path, "tree.py", TREE_SCRIPT), tmp_path, 2, 4000)
    assert time.monotonic() - started < 8
    assert result.timed_out
    assert result.returncode is None
    pids = pids_in(result.output)
    assert len(pids) == 3, result.output
    assert wait_all_dead(pids) == []


def test_leftover_child_holding_the_pipe_does_not_hang(tmp_path: Path) -> None:
    started = time.monotonic()
    result = run_process(script(tmp_path, "leftover.py", LEFTOVER_SCRIPT), tmp_path, 30, 4000)
    assert time.monotonic() - started < 8
    assert result.returncode == 0
    assert not result.timed_out
    (pid,) = pids_in(result.output)
    # On Windows too: the command's job object ends it.
    assert wait_all_dead([pid]) == []


def test_timeout_with_orphaned_grandchild_holding_the_pipe(tmp_path: Path) -> None:
    started = time.monotonic()
    result = run_process(script(tmp_path, "orphan.py", ORPHAN_SCRIPT), tmp_path, 2, 4000)
    assert time.monotonic() - started < 8
    assert result.timed_out
    pids = pids_in(result.output)
    assert len(pids) == 2, result.output
    assert wait_all_dead(pids) == []


def test_missing_program_is_a_launch_error(tmp_path: Path) -> None:
    with pytest.raises(LaunchError, match="not found"):
        run_process(["no-such-program-anywhere-4711"], tmp_path, 5, 1000)


def test_missing_folder_is_a_launch_error(tmp_path: Path) -> None:
    with pytest.raises(LaunchError, match="does not exist"):
        run_process([sys.executable, "--version"], tmp_path / "absent", 5, 1000)


def test_empty_command_is_a_launch_error(tmp_path: Path) -> None:
    with pytest.raises(LaunchError, match="empty"):
        run_process([], tmp_path, 5, 1000)


def test_a_stop_request_kills_the_tree_long_before_the_timeout(tmp_path: Path) -> None:
    asked_at = time.monotonic() + 1.0
    started = time.monotonic()
    result = run_process(
        script(tmp_path, "tree.py", TREE_SCRIPT),
        tmp_path,
        60,
        4000,
        cancelled=lambda: time.monotonic() > asked_at,
    )
    assert time.monotonic() - started < 5
    assert result.cancelled and not result.timed_out and result.returncode is None
    pids = pids_in(result.output)
    assert len(pids) == 3, result.output
    assert wait_all_dead(pids) == []


# The command double-forks a daemon into a session of its own, as servers do; the
# daemon is no longer a descendant of the command and has its own process group.
# The first child leaves only once the daemon has printed its pid: with no life of its
# own, the program could otherwise end, and its tree be killed, before the daemon said it.
DAEMON_SCRIPT = """
import os, sys, time
print(f"pid={os.getpid()}", flush=True)
said, say = os.pipe()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        print(f"pid={os.getpid()}", flush=True)
        os.write(say, b"x")
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        time.sleep(60)
    os.read(said, 1)
    os._exit(0)
os.wait()
time.sleep(float(sys.argv[1]))
"""

posix_only = pytest.mark.skipif(
    sys.platform == "win32", reason="fork and setsid are POSIX (test_windows_process: breakaway)"
)


@posix_only
@pytest.mark.parametrize("lives", [0.0, 30.0])
def test_a_daemon_in_its_own_session_does_not_outlive_the_call(
    tmp_path: Path, lives: float
) -> None:
    argv = [*script(tmp_path, "daemon.py", DAEMON_SCRIPT), str(lives)]
    result = run_process(argv, tmp_path, 2, 4000)
    assert result.timed_out == (lives > 2)
    pids = pids_in(result.output)
    assert len(pids) == 2, result.output
    assert wait_all_dead(pids) == []


def test_on_start_gets_the_pid_and_create_time(tmp_path: Path) -> None:
    seen: list[tuple[int, float]] = []
    code = "import os; print(f'pid={os.getpid()}')"
    result = run_process(
        [sys.executable, "-c", code], tmp_path, 10, 4000, on_start=lambda *a: seen.append(a)
    )
    assert pids_in(result.output) == [seen[0][0]]
    assert abs(seen[0][1] - time.time()) < 10


def test_a_failing_on_start_kills_the_command_before_it_acts(tmp_path: Path) -> None:
    code = "import time, pathlib; time.sleep(0.5); pathlib.Path('acted').touch()"
    started: list[int] = []

    def refuse(pid: int, create_time: float) -> None:
        started.append(pid)
        raise OSError("the journal is full")

    with pytest.raises(OSError, match="journal is full"):
        run_process([sys.executable, "-c", code], tmp_path, 10, 4000, on_start=refuse)
    assert wait_all_dead(started) == []
    time.sleep(0.7)
    assert not (tmp_path / "acted").exists()


# A stand-in for an agent: runs a command tree, records its pid and create time as the
# journal would, then waits to be killed with the command still running.
AGENT_SCRIPT = """
import json, sys
from pathlib import Path
from localagent.system.process import run_process
record = Path(sys.argv[1])
def journal(pid, create_time):
    record.with_suffix(".tmp").write_text(json.dumps([pid, create_time]))
    record.with_suffix(".tmp").replace(record)
run_process([sys.executable, sys.argv[2], "0"], record.parent, 60, 4000, on_start=journal)
"""


# Like TREE_SCRIPT, but silent: once the agent is killed nobody reads the pipe, and a
# print would end the printing level with SIGPIPE.
QUIET_TREE = """
import subprocess, sys, time
depth = int(sys.argv[1])
if depth < 2:
    subprocess.Popen([sys.executable, __file__, str(depth + 1)])
time.sleep(60)
"""


def crashed_agent_leaving(tmp_path: Path, command: str) -> tuple[int, float]:
    """The recorded pid and create time of a command whose agent was SIGKILLed."""
    (tmp_path / "command.py").write_text(command, encoding="utf-8")
    if sys.platform == "win32":
        # There the command's job ends it with its agent (test_windows_process); where
        # Windows refuses the job, the command outlives its agent like this one, started
        # outside any job with its environment marker.
        marker = {MARKER_VARIABLE: "crashed-run-0001"}
        orphan = subprocess.Popen(
            [sys.executable, str(tmp_path / "command.py"), "0"], env={**os.environ, **marker}
        )
        return orphan.pid, psutil.Process(orphan.pid).create_time()
    record = tmp_path / "record.json"
    agent = subprocess.Popen(
        [sys.executable, "-c", AGENT_SCRIPT, str(record), str(tmp_path / "command.py")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while not record.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    agent.kill()
    agent.wait()
    pid, create_time = json.loads(record.read_text())
    return pid, create_time


def command_tree(pid: int, size: int) -> list[psutil.Process]:
    deadline = time.monotonic() + 10
    tree: list[psutil.Process] = []
    while len(tree) < size and time.monotonic() < deadline:
        root = psutil.Process(pid)
        tree = [root, *root.children(recursive=True)]
        time.sleep(0.02)
    return tree


def test_kill_recorded_ends_the_tree_of_a_crashed_run(tmp_path: Path) -> None:
    pid, create_time = crashed_agent_leaving(tmp_path, QUIET_TREE)
    tree = command_tree(pid, 3)
    pids = [proc.pid for proc in tree]
    try:
        assert len(tree) == 3
        assert not kill_recorded(pid, create_time + 5)
        assert wait_all_dead(pids, 0.3) == pids, "a mismatching create time must kill nothing"
        assert kill_recorded(pid, create_time)
        assert wait_all_dead(pids) == []
        assert not kill_recorded(pid, create_time)
    finally:
        for proc in tree:  # should the test fail, leave nothing running
            with contextlib.suppress(psutil.Error):
                proc.kill()


@pytest.mark.parametrize("pid", [0, os.getpid()], ids=["pid-0", "own-pid"])
def test_kill_recorded_never_touches_pid_0_or_itself(pid: int) -> None:
    started = psutil.Process(pid).create_time() if pid else 0.0
    assert not kill_recorded(pid, started)
    assert running(os.getpid())


# The command's daemon double-forks into a session of its own and notes its pid.
QUIET_DAEMON = """
import os, time
from pathlib import Path
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        Path("daemon.tmp").write_text(str(os.getpid()))
        os.replace("daemon.tmp", "daemon.pid")
        time.sleep(60)
    os._exit(0)
os.wait()
time.sleep(60)
"""


@posix_only
def test_kill_recorded_also_ends_a_daemon_that_left_the_session(tmp_path: Path) -> None:
    pid, create_time = crashed_agent_leaving(tmp_path, QUIET_DAEMON)
    deadline = time.monotonic() + 10
    while not (tmp_path / "daemon.pid").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    daemon = psutil.Process(int((tmp_path / "daemon.pid").read_text()))
    try:
        assert daemon.pid not in [c.pid for c in psutil.Process(pid).children(recursive=True)]
        assert kill_recorded(pid, create_time)
        assert wait_all_dead([pid, daemon.pid]) == []
    finally:
        for proc in (daemon, psutil.Process(pid)) if running(pid) else (daemon,):
            with contextlib.suppress(psutil.Error):
                proc.kill()
