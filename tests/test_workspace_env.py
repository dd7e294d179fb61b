from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from localagent.system.workspace_env import (
    describe_interpreter,
    find_venv,
    path_python,
    program_argv,
    venv_program,
    which,
)
from localagent.tools import ToolContext, ToolResult, execute

PLANTED = "#!/bin/sh\necho planted program ran\n"


def run(root: Path, cmd: str) -> ToolResult:
    return execute(ToolContext(root), "run_cmd", {"cmd": cmd, "timeout_sec": 300})


def make_venv(folder: Path) -> None:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)


def stand_in_venv(folder: Path) -> None:
    """The layout of a venv with an empty interpreter: enough where only resolution counts."""
    venv_program(folder, "python").parent.mkdir(parents=True)
    venv_program(folder, "python").write_bytes(b"")


# The Windows CPython run under Wine is the embeddable build, which has no venv module.
needs_venv = pytest.mark.skipif(
    importlib.util.find_spec("venv") is None,
    reason="this Python has no venv module (the embeddable CPython used under Wine)",
)


@needs_venv
def test_python_runs_in_the_workspace_venv(tmp_path: Path) -> None:
    make_venv(tmp_path / ".venv")
    (tmp_path / "where.py").write_text("import sys\nprint('prefix=' + sys.prefix)\n")
    result = run(tmp_path, "python where.py")
    assert result.ok, result.text
    assert f"prefix={(tmp_path / '.venv').resolve()}" in result.text
    assert f"prefix={sys.prefix}" not in result.text
    # The venv has no pytest: the workspace's own environment answers, not localagent's.
    pytest_run = run(tmp_path, "python -m pytest --version")
    assert not pytest_run.ok and "No module named pytest" in pytest_run.text
    assert "workspace's virtual environment .venv/" in describe_interpreter(tmp_path)


def test_a_folder_named_venv_counts_too(tmp_path: Path) -> None:
    stand_in_venv(tmp_path / "venv")
    assert find_venv(tmp_path) == tmp_path / "venv"
    assert (tmp_path / "venv").name in describe_interpreter(tmp_path)


@needs_venv
def test_pip_without_a_venv_creates_one_and_never_touches_localagent(tmp_path: Path) -> None:
    # Only --version: should this ever regress, it must not break the test environment.
    assert "pip first creates .venv/" in describe_interpreter(tmp_path)
    result = run(tmp_path, "pip --version")
    venv = (tmp_path / ".venv").resolve()
    assert venv_program(venv, "python").is_file(), result.text
    assert result.ok and str(venv) in result.text, result.text
    again = run(tmp_path, "python -m pip --version")
    assert again.ok and str(venv) in again.text, again.text
    assert "workspace's virtual environment .venv/" in describe_interpreter(tmp_path)
    # What the interpreter the commands ran with before could import, the new environment
    # can: the 1.5B ran `pip install -r requirements.txt`, and every test run after it
    # failed with "No module named pytest".
    before = subprocess.run([path_python(tmp_path), "-c", "import pytest"], check=False)
    tests = run(tmp_path, "python -m pytest --version")
    assert tests.ok == (before.returncode == 0), tests.text


@pytest.mark.skipif(
    sys.platform == "win32", reason="a POSIX shell script stands in (test_windows_programs: .bat)"
)
def test_path_lookup_skips_the_workspace_and_relative_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    planted = tmp_path / "pytest"
    planted.write_text(PLANTED)
    planted.chmod(0o755)
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "ruff").write_text(PLANTED)
    (tmp_path / "bin" / "ruff").chmod(0o755)
    path = os.environ.get("PATH", "")
    monkeypatch.setenv(
        "PATH", os.pathsep.join([str(tmp_path), str(tmp_path / "bin"), "", ".", path])
    )
    monkeypatch.chdir(tmp_path)
    assert which("pytest", tmp_path) not in (str(planted), "pytest", "./pytest")
    assert which("ruff", tmp_path) != str(tmp_path / "bin" / "ruff")
    for cmd in ("pytest --version", "ruff --version"):
        result = run(tmp_path, cmd)
        assert "planted" not in result.text, result.text


@pytest.mark.skipif(
    sys.platform == "win32", reason="symbolic links need a privilege on Windows (Wine 8: none)"
)
def test_a_venv_link_to_localagents_own_environment_is_refused(tmp_path: Path) -> None:
    (tmp_path / ".venv").symlink_to(sys.prefix, target_is_directory=True)
    assert find_venv(tmp_path) is None
    before = sorted(p.name for p in Path(sys.prefix).iterdir())
    result = run(tmp_path, "pip --version")
    assert not result.ok and "virtual environment" in result.text, result.text
    assert sorted(p.name for p in Path(sys.prefix).iterdir()) == before


def test_in_a_venv_pytest_uses_its_python_and_ruff_may_come_from_path(tmp_path: Path) -> None:
    stand_in_venv(tmp_path / ".venv")
    python = str(venv_program(tmp_path / ".venv", "python"))
    assert program_argv(tmp_path, "pytest") == [python, "-m", "pytest"]
    ruff = which("ruff", tmp_path)
    assert program_argv(tmp_path, "ruff") == ([ruff] if ruff else [python, "-m", "ruff"])


@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX shell script stands in")
def test_path_lookup_does_not_depend_on_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The foreground agent runs where the user is, the background one in the workspace:
    # an absolute entry below the current folder (an activated venv) counts for both.
    ws, tools = tmp_path / "ws", tmp_path / "home" / "tools"
    ws.mkdir()
    tools.mkdir(parents=True)
    (tools / "ruff").write_text(PLANTED)
    (tools / "ruff").chmod(0o755)
    path = os.pathsep.join([str(tools), "tools", os.environ.get("PATH", "")])
    monkeypatch.setenv("PATH", path)
    found = []
    for here in (tmp_path / "home", ws, tmp_path):
        monkeypatch.chdir(here)
        found.append(which("ruff", ws))
    assert found == [str(tools / "ruff")] * 3
    assert "PATH entries ignored: 'tools' (relative)" in describe_interpreter(ws)
