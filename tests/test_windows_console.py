"""The CLI's output survives any code page: status, list, history and the background agent
write goals in any script to a pipe or a file on Windows (cp1252 there by default).

The code page is forced with PYTHONIOENCODING=cp1252, so these show the same on Linux."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from localagent.console import live_line_supported, utf8_streams
from localagent.journal import Journal

GOAL = "Schreibe ✓ 日本語 → ɸ"
PROBE = "import sys\n{prelude}print('out ✓ 日本語 \\udcff')\nprint('err → ɸ', file=sys.stderr)\n"


def run_python(code: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    env = dict(os.environ, PYTHONIOENCODING="cp1252")
    env.pop("PYTHONUTF8", None)
    return subprocess.run(
        [sys.executable, "-c", code, *args], env=env, capture_output=True, timeout=60
    )


def test_without_it_this_code_page_fails() -> None:
    # The situation being fixed: without utf8_streams, printing the goal raises.
    done = run_python(PROBE.format(prelude=""))
    assert done.returncode != 0 and b"UnicodeEncodeError" in done.stderr


def test_pipes_get_utf8_whatever_the_code_page() -> None:
    prelude = "from localagent.console import utf8_streams\nutf8_streams()\n"
    done = run_python(PROBE.format(prelude=prelude))
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode("utf-8").splitlines() == ["out ✓ 日本語 ?"]
    assert done.stderr.decode("utf-8").splitlines() == ["err → ɸ"]


CLI = (
    "import sys\n"
    "from localagent.console import utf8_streams\n"
    "utf8_streams()\n"
    "from localagent.cli import main\n"
    "main(sys.argv[1:])\n"
)


@pytest.mark.parametrize(
    "command", [["status"], ["status", "--json"], ["history"], ["list"], ["list", "--json"]]
)
def test_status_list_and_history_print_any_goal(tmp_path: Path, command: list[str]) -> None:
    journal = Journal(tmp_path)
    journal.ensure_dir()
    journal.append("goal_started", goal=GOAL)
    journal.close()
    args = [*command, "-w", str(tmp_path)] if command[0] != "list" else command
    done = run_python(CLI, *args)
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    assert b"Traceback" not in done.stderr
    if command[0] != "list":
        assert "✓ 日本語" in done.stdout.decode("utf-8")


def test_a_pipe_gets_no_live_line() -> None:
    read, write = os.pipe()
    with os.fdopen(write, "w") as stream:
        assert not live_line_supported(stream)
    os.close(read)


@pytest.mark.skipif(sys.platform == "win32", reason="a pseudo-terminal is POSIX")
def test_a_terminal_gets_the_live_line() -> None:
    leader, follower = os.openpty()
    with os.fdopen(follower, "w") as stream:
        assert live_line_supported(stream)
    os.close(leader)


def test_calling_it_twice_or_under_capture_is_harmless(capsys: pytest.CaptureFixture[str]) -> None:
    utf8_streams()
    utf8_streams()
    print("✓")
    assert capsys.readouterr().out == "✓\n"
