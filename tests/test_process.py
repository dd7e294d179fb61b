from __future__ import annotations

import json
import re
import sys
import time
import tracemalloc
from pathlib import Path

import orjson
import psutil
import pytest
from support import TREE_SCRIPT

from localagent.process import LaunchError, ProcessResult, run_process

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
    if sys.platform != "win32":
        assert wait_all_dead([pid]) == []
    else:
        psutil.Process(pid).kill()


def test_timeout_with_orphaned_grandchild_holding_the_pipe(tmp_path: Path) -> None:
    started = time.monotonic()
    result = run_process(script(tmp_path, "orphan.py", ORPHAN_SCRIPT), tmp_path, 2, 4000)
    assert time.monotonic() - started < 8
    assert result.timed_out
    pids = pids_in(result.output)
    assert len(pids) == 2, result.output
    if sys.platform != "win32":
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
