"""Files a stranger planted or swapped: links that lead out of the workspace or the prompts
folder, a folder turned into a link between a check and a write, files too big to hold,
a history without newlines, and Python too deeply nested to compile."""

from __future__ import annotations

import os
import sys
import time
import tracemalloc
from pathlib import Path

import pytest
from support import call, cli_env, done, plan_rule, records, run_cli

from localagent.journal import Journal
from localagent.models.fake import FakeServer
from localagent.prompts import promptset
from localagent.system import safefs
from localagent.system.errors import JournalCorrupt, UsageError
from localagent.tools import ToolContext, ToolError, execute, resolve_in_workspace
from localagent.tools.edits import MAX_EDIT_BYTES
from localagent.tools.fileio import DIR_FD, open_regular, write_atomically
from localagent.verify import evidence
from localagent.verify.checks import goal_checks, run_check

SECRET = "the-outside-secret-0451"
links = pytest.mark.skipif(sys.platform == "win32", reason="symbolic links need a privilege")
dir_fd = pytest.mark.skipif(not DIR_FD, reason="no dir_fd here: the write goes by name")
# Python that makes compile() raise RecursionError (CPython 3.11's compiler recursion).
DEEP_PYTHON = "x = 1" + "+1" * 200_000 + "\n"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text(SECRET + "\n")
    return folder


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root.resolve()


# ---- links out of the workspace or the prompts folder -------------------------------


@links
def test_a_shipped_expected_file_that_links_outside_is_not_read(ws: Path, outside: Path) -> None:
    (ws / "main.py").write_text(f"print({SECRET!r})\n")
    (ws / "expected.txt").symlink_to(outside / "secret.txt")
    checks = goal_checks([], ws)
    assert [c["source"] for c in checks] == ["expected"]
    result = run_check(ToolContext(ws), checks[0])
    assert result["status"] == "not_run", result
    assert "outside" in result["summary"] and "expected.txt" in result["summary"]
    assert SECRET not in result["summary"]


@links
def test_a_prompt_file_that_links_outside_its_folder_is_refused(
    tmp_path: Path, outside: Path
) -> None:
    folder = tmp_path / "prompts"
    folder.mkdir()
    (folder / "system.txt").symlink_to(outside / "secret.txt")
    texts, found = promptset.read_folder(folder)
    assert "system" not in texts
    assert any("outside the prompts folder" in p.message for p in found), found
    with pytest.raises(UsageError) as refused:
        promptset.load_folder(folder)
    assert SECRET not in str(refused.value)


@links
def test_the_prompts_folder_itself_may_be_a_link(tmp_path: Path) -> None:
    real = tmp_path / "real-prompts"
    real.mkdir()
    (real / "planner.txt").write_text("Plan {goal} as {format_rules}\n")
    (tmp_path / "prompts").symlink_to(real, target_is_directory=True)
    texts, _ = promptset.read_folder(tmp_path / "prompts")
    assert "planner" in texts


@links
def test_prompts_check_through_the_cli_refuses_a_link_outside(
    tmp_path: Path, outside: Path
) -> None:
    folder = tmp_path / "prompts"
    folder.mkdir()
    (folder / "system.txt").symlink_to(outside / "secret.txt")
    result = run_cli(cli_env("127.0.0.1:9"), "prompts", "check", str(folder))
    assert result.returncode == 2, result.stderr
    assert "outside the prompts folder" in result.stdout + result.stderr
    assert SECRET not in result.stdout + result.stderr


# ---- a folder swapped for a link between the check and the open ----------------------


@links
@dir_fd
def test_a_folder_swapped_for_a_link_after_the_check_gets_no_write(ws: Path, outside: Path) -> None:
    (ws / "sub").mkdir()
    target = resolve_in_workspace(ws, "sub/secret.txt")  # checked while sub is a folder
    (ws / "sub").rmdir()
    (ws / "sub").symlink_to(outside, target_is_directory=True)
    with pytest.raises(ToolError, match="changed after the path was checked"):
        write_atomically(ws, target, b"overwritten")
    assert (outside / "secret.txt").read_text() == SECRET + "\n"
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


@links
@dir_fd
def test_a_file_swapped_for_a_link_after_the_check_is_not_read(ws: Path, outside: Path) -> None:
    (ws / "notes.txt").write_text("mine\n")
    target = resolve_in_workspace(ws, "notes.txt")
    (ws / "notes.txt").unlink()
    (ws / "notes.txt").symlink_to(outside / "secret.txt")
    with pytest.raises(ToolError, match="changed after the path was checked"):
        open_regular(ws, target)


@links
def test_a_link_planted_as_a_write_target_is_replaced_not_written_through(
    ws: Path, outside: Path
) -> None:
    (ws / "out.txt").symlink_to(outside / "secret.txt")
    target = ws / "out.txt"  # as if the check had seen a plain name there
    write_atomically(ws, target, b"new\n")
    assert not (ws / "out.txt").is_symlink() and (ws / "out.txt").read_text() == "new\n"
    assert (outside / "secret.txt").read_text() == SECRET + "\n"


# ---- sizes ----------------------------------------------------------------------------


def test_reading_a_range_of_a_huge_single_line_file_holds_only_what_it_shows(ws: Path) -> None:
    with (ws / "blob.txt").open("wb") as fh:
        for _ in range(40):
            fh.write(b"y" * (1 << 20))
        fh.write(b"\nsecond line\n")
    tracemalloc.start()
    try:
        result = execute(
            ToolContext(ws),
            "read_file",
            {"path": "blob.txt", "start_line": 1, "end_line": 2, "max_bytes": 2000},
        )
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result.ok, result.text
    assert "lines 1-1 of 2" in result.text and "read on with start_line=2" in result.text
    assert peak < 8 << 20, f"read_file held {peak} bytes for a 2,000-byte range"


def test_a_range_read_counts_lines_as_before(ws: Path) -> None:
    (ws / "a.txt").write_text("one\ntwo\nthree")
    result = execute(ToolContext(ws), "read_file", {"path": "a.txt", "start_line": 2})
    assert result.text.splitlines() == ["'a.txt' lines 2-3 of 3:", "    2| two", "    3| three"]
    result = execute(ToolContext(ws), "read_file", {"path": "a.txt", "end_line": 1})
    assert result.text.splitlines() == ["'a.txt' lines 1-1 of 3:", "    1| one"]


@pytest.mark.parametrize("tool", ["replace_in_file", "append_file"])
def test_an_edit_of_a_file_over_the_bound_is_refused_and_changes_nothing(
    ws: Path, tool: str
) -> None:
    big = ws / "big.txt"
    with big.open("wb") as fh:
        fh.write(b"x = 1\n" * (MAX_EDIT_BYTES // 6 + 10))
    before = big.stat()
    args = {"old": "x = 1", "new": "x = 2", "count": 1} if tool == "replace_in_file" else {}
    args = args or {"content": "y = 2\n"}
    result = execute(ToolContext(ws), tool, {"path": "big.txt", **args})
    assert not result.ok
    assert f"up to {MAX_EDIT_BYTES:,} bytes" in result.text and "write_file" in result.text
    assert big.stat().st_size == before.st_size and big.stat().st_mtime == before.st_mtime


def test_a_count_mismatch_in_a_file_of_many_occurrences_is_answered_at_once(ws: Path) -> None:
    """The places were counted from the file's start for each occurrence: quadratic."""
    (ws / "many.py").write_bytes(b"x = 1\n" * 600_000)
    started = time.monotonic()
    result = execute(
        ToolContext(ws), "replace_in_file", {"path": "many.py", "old": "x = 1", "new": "x = 2"}
    )
    assert not result.ok
    assert "old occurs 600000 times" in result.text and "(at lines 1, 2, 3" in result.text
    assert "10 ..." in result.text
    assert time.monotonic() - started < 20


def test_the_tail_of_a_history_without_newlines_is_read_in_bounded_memory(ws: Path) -> None:
    journal = Journal(ws)
    journal.load()
    journal.append("goal_started", goal="Tail", model="m", settings={})
    with journal.history_path.open("ab") as fh:
        for _ in range(40):
            fh.write(b"z" * (1 << 20))
    tracemalloc.start()
    try:
        with pytest.raises(JournalCorrupt, match="damaged near its end"):
            Journal(ws).tail(5)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 24 << 20, f"tail held {peak} bytes of a 40 MB line"


# ---- Python the compiler cannot check -------------------------------------------------


def test_python_too_deep_to_compile_is_written_and_said_to_be_unchecked(ws: Path) -> None:
    result = execute(ToolContext(ws), "write_file", {"path": "deep.py", "content": DEEP_PYTHON})
    assert result.ok and result.changed, result.text
    assert "could not be syntax-checked" in result.text and "syntax error" not in result.text
    assert (ws / "deep.py").read_text() == DEEP_PYTHON
    assert evidence.syntax_problem(ws, ws / "deep.py") is None


def test_an_edit_making_python_too_deep_says_so(ws: Path) -> None:
    (ws / "deep.py").write_text("x = 1\n")
    args = {"path": "deep.py", "old": "x = 1\n", "new": DEEP_PYTHON}
    result = execute(ToolContext(ws), "replace_in_file", args)
    assert result.ok, result.text
    assert "could not be syntax-checked" in result.text


# ---- a killed write's temp file, through the CLI ------------------------------------

WRITE_GOAL = "Write notes.txt"


def test_the_temp_file_of_a_killed_write_is_gone_after_the_resume(ws: Path) -> None:
    scenario = {
        "rules": [
            plan_rule(("Write", ["Write notes.txt"])),
            {"match": "wrote|already has", "reply": done()},
            {
                "match": "ACTIVE SUBTASK: Write notes.txt",
                "in": "last",
                "reply": call("write_file", path="notes.txt", content="hello\n"),
            },
        ]
    }
    with FakeServer(scenario) as server:
        env = cli_env(server.url, LOCALAGENT_VERIFY="0")
        first = run_cli(env, "start", WRITE_GOAL, "-w", str(ws), "--foreground")
        assert first.returncode == 0, first.stderr
        _cut_after_the_write_started(ws)
        # What a kill in the middle of the write leaves, a moment before the resume.
        temp = ws / ".notes.txt.localagent-0a1b2c3d.tmp"
        temp.write_text("hel")
        resumed = run_cli(env, "resume", "-w", str(ws), "--foreground")
    assert resumed.returncode == 0, resumed.stderr
    assert not temp.exists()
    assert (ws / "notes.txt").read_text() == "hello\n"
    assert any(r["type"] == "resumed" for r in records(ws))


def _cut_after_the_write_started(root: Path) -> None:
    context = root / ".agent_context"
    history = (context / "history.jsonl").read_bytes().splitlines(keepends=True)
    started = next(i for i, line in enumerate(history) if b'"action_started"' in line)
    (context / "history.jsonl").write_bytes(b"".join(history[: started + 1]))
    (context / "state.json").unlink()
    (root / "notes.txt").unlink()


def test_safefs_reads_inside_a_folder_only(ws: Path, outside: Path) -> None:
    (ws / "in.txt").write_bytes(b"inside\n")
    assert safefs.read_inside(ws, ws / "in.txt", 100) == b"inside\n"
    if sys.platform != "win32":
        os.symlink(outside / "secret.txt", ws / "out.txt")
        with pytest.raises(safefs.UnsafeFile, match="outside"):
            safefs.read_inside(ws, ws / "out.txt", 100)
