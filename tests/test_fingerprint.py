from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from localagent.tools.fingerprint import MAX_ENTRIES, fingerprint


def tree(root: Path, files: int = 20) -> None:
    for index in range(files):
        path = root / f"pkg{index % 4}" / f"mod{index}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"value = {index}\n")


def test_equal_until_something_changes(tmp_path: Path) -> None:
    tree(tmp_path)
    first = fingerprint(tmp_path)
    assert fingerprint(tmp_path) == first
    target = tmp_path / "pkg1" / "mod1.py"
    os.utime(target, ns=(target.stat().st_atime_ns, target.stat().st_mtime_ns + 1000))
    touched = fingerprint(tmp_path)
    assert touched != first
    (tmp_path / "pkg1" / "new.txt").write_text("x")
    added = fingerprint(tmp_path)
    assert added != touched
    (tmp_path / "pkg1" / "new.txt").unlink()
    assert fingerprint(tmp_path) == touched
    (tmp_path / "empty").mkdir()
    assert fingerprint(tmp_path) != touched


def test_caches_environments_and_the_journal_do_not_count(tmp_path: Path) -> None:
    tree(tmp_path)
    before = fingerprint(tmp_path)
    for folder in (
        ".git",
        ".agent_context",
        ".venv",
        "venv",
        "node_modules",
        ".pytest_cache",
        ".benchmarks",
    ):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "data").write_text("churn")
    for folder in ("__pycache__", ".ruff_cache", ".mypy_cache"):
        (tmp_path / "pkg0" / folder).mkdir()
        (tmp_path / "pkg0" / folder / "data").write_text("churn")
    (tmp_path / "pkg2" / "mod2.cpython-311.pyc").write_bytes(b"\x00")
    (tmp_path / ".AGENT_CONTEXT").mkdir()
    assert fingerprint(tmp_path) == before


def test_running_pytest_in_the_workspace_is_no_change(tmp_path: Path) -> None:
    (tmp_path / "test_a.py").write_text("def test_a():\n    assert True\n")
    before = fingerprint(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    argv = [sys.executable, "-m", "pytest", "-q"]
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, env=env)
    assert done.returncode == 0, done.stdout
    assert (tmp_path / "__pycache__").is_dir()
    assert fingerprint(tmp_path) == before


@pytest.mark.skipif(sys.platform == "win32", reason="symbolic links need privileges")
def test_links_are_not_followed_and_odd_entries_do_not_raise(tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    (tmp_path / "ws").mkdir()
    ws = tmp_path / "ws"
    (ws / "loop").symlink_to(ws, target_is_directory=True)
    (ws / "out").symlink_to(tmp_path / "outside", target_is_directory=True)
    (ws / "dangling").symlink_to(tmp_path / "absent")
    (ws / "caf\udce9.txt").write_bytes(b"latin-1 name")
    os.mkfifo(ws / "fifo")
    locked = ws / "locked"
    locked.mkdir()
    locked.chmod(0)
    try:
        before = fingerprint(ws)
        (tmp_path / "outside" / "new.txt").write_text("changes outside do not count")
        assert fingerprint(ws) == before
    finally:
        locked.chmod(0o755)


def test_the_walk_is_bounded_and_counts_what_it_saw(tmp_path: Path) -> None:
    for index in range(60):
        (tmp_path / f"f{index:02}").touch()
    bounded = fingerprint(tmp_path, limit=50)
    assert bounded != fingerprint(tmp_path, limit=51)
    (tmp_path / "f59").write_text("past the bound")
    # Past the bound a change may go unseen, but the fingerprint stays stable.
    assert fingerprint(tmp_path, limit=50) == bounded
    assert fingerprint(tmp_path) != fingerprint(tmp_path, limit=50)
    assert MAX_ENTRIES == 5000


def test_a_thousand_files_take_milliseconds(tmp_path: Path) -> None:
    tree(tmp_path, files=1000)
    fingerprint(tmp_path)
    started = time.perf_counter()
    for _ in range(5):
        fingerprint(tmp_path)
    elapsed = (time.perf_counter() - started) / 5
    print(f"fingerprint of 1000 files: {elapsed * 1000:.1f} ms")
    assert elapsed < 0.5
