"""The CLI's output survives any code page: status, list, history and the background agent
write goals in any script to a pipe or a file on Windows (cp1252 there by default).

The code page is forced with PYTHONIOENCODING=cp1252, so these show the same on Linux."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from localagent.journal import Journal, registry
from localagent.system.console import live_line_supported, utf8_streams

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
    prelude = "from localagent.system.console import utf8_streams\nutf8_streams()\n"
    done = run_python(PROBE.format(prelude=prelude))
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode("utf-8").splitlines() == ["out ✓ 日本語 ?"]
    assert done.stderr.decode("utf-8").splitlines() == ["err → ɸ"]


CLI = (
    "import sys\n"
    "from localagent.system.console import utf8_streams\n"
    "utf8_streams()\n"
    "from localagent.cli import main\n"
    "for command in sys.argv[1:]:\n"
    "    print(f'== {command}', flush=True)\n"
    "    try:\n"
    "        main(command.split('|'))\n"
    "    except SystemExit as exc:\n"
    "        print(f'exit {exc.code or 0}', flush=True)\n"
)


def test_status_list_and_history_print_any_goal(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    journal.ensure_dir()
    journal.append("goal_started", goal=GOAL)
    journal.close()
    registry.remember(tmp_path, GOAL)
    ws = str(tmp_path)
    commands = [f"status|-w|{ws}", f"status|--json|-w|{ws}", f"history|-w|{ws}", "list"]
    done = run_python(CLI, *commands, "list|--json")
    assert b"Traceback" not in done.stderr, done.stderr.decode("utf-8", "replace")
    out = done.stdout.decode("utf-8")
    parts = out.split("== ")[1:]
    assert len(parts) == 5, out
    for part in parts:
        assert "exit 0" in part, out
        assert "✓ 日本語" in part or "\\u2713" in part, part


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
