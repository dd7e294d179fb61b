"""A reader never stops the writer: while `logs -f` or `status` holds a journal file open,
the agent can still rotate agent.log (Windows refuses to rename or delete a file that
another handle holds open without FILE_SHARE_DELETE)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from localagent.journal import Journal
from localagent.system import safefs


def test_a_file_held_open_for_reading_can_be_renamed_and_deleted(tmp_path: Path) -> None:
    # Replacing a file held open may still fail for a moment on Windows (safefs.replace
    # retries); renaming it away, as log rotation does, works at once.
    path = tmp_path / "agent.log"
    path.write_bytes(b"old")
    with safefs.open_file(path, "rb") as held:
        os.rename(path, tmp_path / "agent.log.1")
        path.write_bytes(b"new")
        assert held.read() == b"old"
        os.unlink(tmp_path / "agent.log.1")
    assert path.read_bytes() == b"new"


def test_files_held_for_appending_keep_appending_and_can_be_rotated(tmp_path: Path) -> None:
    path = tmp_path / "agent.out"
    with safefs.open_file(path, "ab") as out:
        out.write(b"one\n")
        out.flush()
        with safefs.open_file(path, "ab") as again:
            again.write(b"two\n")
        out.write(b"three\n")
        out.flush()
        assert path.read_bytes() == b"one\ntwo\nthree\n"
        os.rename(path, tmp_path / "agent.out.1")
    assert (tmp_path / "agent.out.1").read_bytes() == b"one\ntwo\nthree\n"


def test_the_log_rotates_while_a_follower_holds_it(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    handler = journal.log_handler(max_bytes=300, backups=2)
    logger = logging.getLogger(f"rotation-{id(tmp_path)}")
    logger.propagate = False
    logger.addHandler(handler)
    try:
        logger.warning("first line")
        with safefs.open_file(journal.log_path, "rb") as follower:
            for n in range(40):
                logger.warning("line %d of the run", n)
            assert follower.read().startswith(b"first line")
    finally:
        logger.removeHandler(handler)
        handler.close()
    rotated = journal.log_path.with_name(journal.log_path.name + ".1")
    assert rotated.exists()
    assert b"line 39 of the run" in journal.log_path.read_bytes()


def test_opening_errors_keep_their_kind_and_name_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "missing.json"
    try:
        safefs.open_file(missing, "rb")
    except FileNotFoundError as exc:
        assert exc.filename is not None and "missing.json" in str(exc.filename)
    else:
        raise AssertionError("a missing file opened")
    (tmp_path / "taken").write_bytes(b"x")
    try:
        safefs.open_file(tmp_path / "taken", "xb")
    except FileExistsError:
        pass
    else:
        raise AssertionError("an existing file was created anew")
