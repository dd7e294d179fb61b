"""Which file runs for `pytest`, `ruff` and `pip`: an `.exe` from the workspace environment's
Scripts folder (bin on POSIX) or from PATH, never a `.bat`/`.cmd` (cmd.exe would run it and
read `&` in its arguments), never the workspace or the current folder."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from localagent.system.workspace_env import program_argv, venv_program, which
from localagent.tools import ToolContext, execute

WINDOWS = sys.platform == "win32"
PLANTED_BATCH = "@echo planted batch ran\r\n@type nul > %~dp0ran.txt\r\n"
PLANTED_SH = '#!/bin/sh\necho planted program ran\ntouch "$(dirname "$0")/ran.txt"\n'


def plant(folder: Path, names: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        text = PLANTED_BATCH if name.endswith((".bat", ".cmd")) else PLANTED_SH
        (folder / name).write_text(text)
        (folder / name).chmod(0o755)


@pytest.fixture
def hostile_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace, and batch files named after the allowed programs in it, in the current
    folder and in a PATH folder that comes first; returns the workspace."""
    root = tmp_path / "ws"
    here = tmp_path / "cwd"
    on_path = tmp_path / "bin"
    batches = [f"{name}{ext}" for name in ("pytest", "ruff", "pip") for ext in (".bat", ".cmd")]
    plant(root, [*batches, "pytest", "ruff", "pip"])
    plant(here, [*batches, "pytest", "ruff", "pip"])
    plant(on_path, batches)
    entries = [str(on_path), str(root), "", ".", os.environ.get("PATH", "")]
    monkeypatch.setenv("PATH", os.pathsep.join(entries))
    monkeypatch.chdir(here)
    return root


def planted_ran(tmp_path: Path) -> bool:
    return any((tmp_path / folder / "ran.txt").exists() for folder in ("ws", "cwd", "bin"))


@pytest.mark.parametrize("name", ["pytest", "ruff", "pip"])
def test_path_lookup_never_takes_a_batch_file_or_the_current_folder(
    hostile_path: Path, name: str
) -> None:
    found = which(name, hostile_path)
    if found is not None:
        assert Path(found).parent not in (hostile_path, Path.cwd()), found
        assert not found.casefold().endswith((".bat", ".cmd")), found
    argv = program_argv(hostile_path, name) if name != "pip" else []
    assert not any(arg.casefold().endswith((".bat", ".cmd")) for arg in argv), argv


def test_an_ampersand_in_an_argument_is_only_an_argument(hostile_path: Path) -> None:
    result = execute(
        ToolContext(hostile_path), "run_cmd", {"cmd": "pytest --version x&echo INJECTED"}
    )
    assert "INJECTED" not in result.text, result.text
    assert "planted" not in result.text, result.text
    assert not planted_ran(hostile_path.parent)


def test_a_batch_file_in_the_workspace_venv_is_not_its_pytest(tmp_path: Path) -> None:
    venv = tmp_path / ".venv"
    scripts = venv_program(venv, "python").parent
    scripts.mkdir(parents=True)
    # A stand-in interpreter is enough: only which file would run is looked at.
    venv_program(venv, "python").write_bytes(b"")
    plant(scripts, ["pytest.bat", "pytest.cmd", "ruff.bat"])
    python = str(venv_program(venv, "python"))
    assert program_argv(tmp_path, "pytest") == [python, "-m", "pytest"]
    assert not program_argv(tmp_path, "ruff")[0].casefold().endswith(".bat")
    if WINDOWS:
        assert Path(python).parent.name == "Scripts"
