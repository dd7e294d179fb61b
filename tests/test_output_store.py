"""Outputs longer than an observation: stored whole in `.agent_context/outputs/`, bounded,
written atomically, never through a planted link or FIFO, and read back by read_output
and search_output (issue 12, "Large outputs")."""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

import pytest
from support import call, cli_env, done, plan_rule, records, run_cli

from localagent.journal import Journal
from localagent.journal.outputstore import OutputStore
from localagent.models.fake import FakeServer
from localagent.system.safefs import UnsafeFile
from localagent.tools import ToolContext, execute
from localagent.tools import outputs as output_tools

POSIX = pytest.mark.skipif(sys.platform == "win32", reason="symlinks and FIFOs: POSIX")
OUTSIDE = b"precious data outside the workspace\n"
NUMBERED = "".join(f"line {n} of 3000\n" for n in range(1, 3001))
LONG_SCRIPT = "for n in range(1, 3001):\n    print(f'line {n} of 3000')\n"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


def store_of(ws: Path, max_bytes: int = 50 << 20) -> OutputStore:
    journal = Journal(ws)
    journal.ensure_dir()
    store = journal.output_store(max_bytes)
    assert store is not None
    return store


def ctx_for(ws: Path, store: OutputStore | None, output_id: int | None = None) -> ToolContext:
    return ToolContext(ws, outputs=store, output_id=output_id)


def outside_file(tmp_path: Path) -> Path:
    target = tmp_path / "outside" / "victim.txt"
    target.parent.mkdir(exist_ok=True)
    target.write_bytes(OUTSIDE)
    return target


# ---- the store -------------------------------------------------------------------------


def test_the_oldest_outputs_go_once_the_store_passes_its_bound(ws: Path) -> None:
    store = store_of(ws, max_bytes=10_000)
    for output_id in range(1, 6):
        stored = store.save(output_id, f"{output_id}" * 3000)
        assert (stored.size, stored.lines, stored.dropped) == (3000, 1, 0)
    assert store.ids() == [3, 4, 5]
    assert sum(store.path(i).stat().st_size for i in store.ids()) <= 10_000
    assert store.path(5).read_text() == "5" * 3000


def test_one_output_keeps_at_most_the_store_bound(ws: Path) -> None:
    store = store_of(ws, max_bytes=1000)
    store.save(1, "x" * 500)
    stored = store.save(2, "y\n" * 2500)
    assert (stored.size, stored.dropped, stored.lines) == (1000, 4000, 500)
    assert store.ids() == [2]
    assert "4,000 more bytes were not kept" in output_tools.stored_note(ctx_for(ws, store), stored)


def test_an_output_appears_whole_or_not_at_all(ws: Path) -> None:
    store = store_of(ws)
    store.save(7, "old\n")
    with store.writer(7) as out:
        out.write(b"new and ")
        assert store.path(7).read_text() == "old\n"  # readers see the old copy meanwhile
        out.write(b"longer\n")
        out.keep()
    assert store.path(7).read_text() == "new and longer\n"
    with store.writer(8) as out:
        out.write(b"never kept")
    assert store.ids() == [7]
    assert sorted(os.listdir(store.folder)) == ["7.txt"]


def test_temp_files_a_killed_run_left_are_removed(ws: Path) -> None:
    store = store_of(ws)
    store.save(1, "kept\n")
    (store.folder / "9.txt.tmp").write_text("half an output")
    store_of(ws)
    assert os.listdir(store.folder) == ["1.txt"]


def test_a_store_of_zero_megabytes_stores_nothing(ws: Path) -> None:
    assert Journal(ws).output_store(0) is None
    result = execute(ctx_for(ws, None, 3), "read_output", {"id": 3})
    assert not result.ok and "output_store_mb setting is 0" in result.text


# ---- planted files -----------------------------------------------------------------------


@POSIX
def test_a_planted_outputs_link_is_refused_and_its_target_untouched(
    ws: Path, tmp_path: Path
) -> None:
    store = store_of(ws)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    store.folder.symlink_to(elsewhere)
    with pytest.raises(UnsafeFile, match="symbolic link"):
        store.save(1, "x")
    with pytest.raises(UnsafeFile, match="outputs"):
        Journal(ws).load()
    (ws / "big.txt").write_text(NUMBERED)
    result = execute(ctx_for(ws, store, 4), "read_file", {"path": "big.txt"})
    assert result.ok and result.output is None
    assert "could not be stored" in result.text and "symbolic link" in result.text
    assert len(result.text) <= 6000
    assert os.listdir(elsewhere) == []


@POSIX
def test_a_planted_outputs_fifo_never_hangs(ws: Path) -> None:
    store = store_of(ws)
    os.mkfifo(store.folder)
    with pytest.raises(UnsafeFile, match="FIFO"):
        store.save(1, "x")
    result = execute(ctx_for(ws, store), "read_output", {"id": 1})
    assert not result.ok and "FIFO" in result.text


@POSIX
def test_planted_output_files_are_never_read_or_written_through(ws: Path, tmp_path: Path) -> None:
    store = store_of(ws)
    target = outside_file(tmp_path)
    store.folder.mkdir()
    store.path(1).symlink_to(target)
    os.mkfifo(store.path(2))
    (store.folder / "3.txt.tmp").symlink_to(target)
    ctx = ctx_for(ws, store)
    for output_id, kind in ((1, "symbolic link"), (2, "FIFO")):
        for tool, args in (("read_output", {}), ("search_output", {"pattern": "data"})):
            result = execute(ctx, tool, {"id": output_id, **args})
            assert not result.ok and kind in result.text, result.text
            assert "precious" not in result.text
    for output_id in (1, 2, 3):
        store.save(output_id, f"output {output_id}\n")
        assert store.path(output_id).read_text() == f"output {output_id}\n"
        assert not store.path(output_id).is_symlink()
    assert target.read_bytes() == OUTSIDE


# ---- read_output and search_output --------------------------------------------------------


def test_read_output_shows_numbered_ranges(ws: Path) -> None:
    store = store_of(ws)
    store.save(12, NUMBERED)
    ctx = ctx_for(ws, store)
    result = execute(ctx, "read_output", {"id": 12, "start_line": 2, "end_line": 3})
    assert result.ok
    assert result.text == (
        "output 12 lines 2-3 of 3000:\n    2| line 2 of 3000\n    3| line 3 of 3000"
    )
    whole = execute(ctx, "read_output", {"id": 12}).text
    assert whole.startswith("output 12 lines 1-") and len(whole) <= ctx.output_limit
    assert "not shown; read on with start_line=" in whole
    end = execute(ctx, "read_output", {"id": 12, "start_line": 2999}).text
    assert end.endswith(" 2999| line 2999 of 3000\n 3000| line 3000 of 3000")


def test_read_output_explains_bad_ranges_and_ids(ws: Path) -> None:
    store = store_of(ws)
    store.save(3, "a\nb\n")
    store.save(5, "c\n")
    ctx = ctx_for(ws, store)
    past = execute(ctx, "read_output", {"id": 3, "start_line": 9})
    assert not past.ok and "has 2 lines; start_line 9 is past its end" in past.text
    backwards = execute(ctx, "read_output", {"id": 3, "start_line": 2, "end_line": 1})
    assert not backwards.ok and "end_line 1 is before start_line 2" in backwards.text
    unknown = execute(ctx, "read_output", {"id": 4})
    assert not unknown.ok and "no stored output 4; stored outputs: 3, 5" in unknown.text
    absurd = execute(ctx, "read_output", {"id": 10**300})
    assert not absurd.ok and "stored outputs: 3, 5" in absurd.text
    fresh = ws / "fresh"
    fresh.mkdir()
    nothing = execute(ctx_for(fresh, store_of(fresh)), "read_output", {"id": 1})
    assert not nothing.ok and "no output is stored yet" in nothing.text


def test_a_very_long_line_is_shown_cut(ws: Path) -> None:
    store = store_of(ws)
    store.save(1, "short\n" + "z" * 100_000 + "\nlast\n")
    text = execute(ctx_for(ws, store), "read_output", {"id": 1, "start_line": 2}).text
    assert f"[... {100_000 - output_tools.LINE_BYTES} more bytes]" in text
    assert text.endswith("    3| last")


def test_search_output_finds_plain_strings_and_regular_expressions(ws: Path) -> None:
    store = store_of(ws)
    store.save(2, NUMBERED)
    ctx = ctx_for(ws, store)
    plain = execute(ctx, "search_output", {"id": 2, "pattern": "line 2999 "})
    assert plain.ok and plain.text.endswith("\n2999: line 2999 of 3000")
    regex = execute(ctx, "search_output", {"id": 2, "pattern": r"^line 1\d{3} of"})
    assert regex.ok and regex.text.startswith("1000 lines of output 2 match")
    assert "(the first 50 shown)" in regex.text and "\n1049: line 1049 of 3000" in regex.text
    broken = execute(ctx, "search_output", {"id": 2, "pattern": "of 3000("})
    assert broken.ok and "as plain text: not a valid regular expression" in broken.text
    none = execute(ctx, "search_output", {"id": 2, "pattern": "FAILED"})
    assert none.ok and none.text == "no line of output 2 matches 'FAILED'"
    unknown = execute(ctx, "search_output", {"id": 9, "pattern": "x"})
    assert not unknown.ok and "stored outputs: 2" in unknown.text


def test_search_results_fit_in_one_observation(ws: Path) -> None:
    store = store_of(ws)
    store.save(1, "".join(f"match {n} " + "w" * 250 + "\n" for n in range(1, 101)))
    result = execute(ctx_for(ws, store, 2), "search_output", {"id": 1, "pattern": "match"})
    assert result.ok and result.output is None and len(result.text) <= 6000
    header = r"100 lines of output 1 match 'match' \(the first \d+ shown\):\n1: match 1 w"
    assert re.match(header, result.text)


def test_a_catastrophic_regular_expression_is_cut_off_in_time(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(output_tools, "REGEX_SECONDS", 1.0)
    store = store_of(ws)
    store.save(1, "a" * 40 + "!\n")
    began = time.monotonic()
    result = execute(ctx_for(ws, store), "search_output", {"id": 1, "pattern": "(a+)+$"})
    assert time.monotonic() - began < 5
    assert not result.ok and "took longer than 1s" in result.text


# ---- observations ---------------------------------------------------------------------------


def test_a_long_observation_is_stored_and_says_how_to_read_on(ws: Path) -> None:
    store = store_of(ws)
    (ws / "big.txt").write_text(NUMBERED)
    result = execute(ctx_for(ws, store, 6), "read_file", {"path": "big.txt", "max_bytes": 10**5})
    assert result.output is not None and result.output.id == 6
    assert len(result.text) <= 6000
    assert result.text.startswith("line 1 of 3000") and "characters cut" in result.text
    assert result.text.endswith(
        "[output 6 stored whole (3,000 lines); read more with read_output(id=6, "
        "start_line=.., end_line=..) or search_output(id=6, pattern=..)]"
    )
    assert store.path(6).read_text() == NUMBERED
    short = execute(ctx_for(ws, store, 7), "list_dir", {})
    unstored = execute(ctx_for(ws, None, 8), "read_file", {"path": "big.txt"})
    assert short.output is None and unstored.output is None and store.ids() == [6]
    assert "stored" not in unstored.text and len(unstored.text) <= 6000


def test_run_cmd_stores_the_whole_output_as_it_streams(ws: Path) -> None:
    store = store_of(ws)
    (ws / "long.py").write_text(LONG_SCRIPT)
    (ws / "short.py").write_text("print('hi')\n")
    result = execute(ctx_for(ws, store, 11), "run_cmd", {"cmd": "python long.py"})
    assert result.ok and result.output is not None and result.output.lines == 3000
    assert store.path(11).read_text() == NUMBERED
    assert result.text.startswith("exit code 0\nline 1 of 3000")
    assert "bytes cut" in result.text
    assert "line 3000 of 3000\n[output 11 stored whole" in result.text
    assert len(result.text) <= 6000
    short = execute(ctx_for(ws, store, 12), "run_cmd", {"cmd": "python short.py"})
    assert short.text == "exit code 0\nhi\n" and short.output is None
    assert sorted(os.listdir(store.folder)) == ["11.txt"]


def test_a_long_output_read_back_end_to_end(ws: Path, tmp_path: Path) -> None:
    """Through the CLI: a long command's observation names its stored output, and the
    model reads the end of it with read_output."""
    (ws / "long.py").write_text(LONG_SCRIPT)
    scenario = {
        "rules": [
            plan_rule(("Check", ["Run long.py and read the end of its output"])),
            {
                "match": r"\[output (\d+) stored whole \(3,000 lines\)",
                "times": 1,
                "reply": call("read_output", id="$1", start_line=2998),
            },
            {
                "match": r"(?s)\[output (\d+) stored whole.*2999\| line 2999 of 3000",
                "times": 1,
                "reply": call("search_output", id="$1", pattern="line 12.. of"),
            },
        ],
        "replies": [call("run_cmd", cmd="python long.py")],
        "default": done("the output ends with line 3000 of 3000"),
    }
    env = cli_env("", LOCALAGENT_HOME=str(tmp_path / "home"))
    with FakeServer(scenario) as fake:
        env["OLLAMA_HOST"] = fake.url
        ran = run_cli(env, "start", "Run long.py", "-w", str(ws), "--foreground")
    assert ran.returncode == 0, ran.stderr
    recs = records(ws)
    started = {r["tool"]: r["seq"] for r in recs if r["type"] == "action_started"}
    finished = {r["tool"]: r for r in recs if r["type"] == "action_finished"}
    run, read = finished["run_cmd"], finished["read_output"]
    assert run["output"] == started["run_cmd"] and "output" not in read
    assert f"[output {run['output']} stored whole (3,000 lines)" in run["result"]
    assert read["args"] == {"id": str(run["output"]), "start_line": 2998}
    assert read["ok"]
    assert read["result"].endswith("2999| line 2999 of 3000\n 3000| line 3000 of 3000")
    searched = finished["search_output"]
    assert searched["ok"] and searched["args"]["id"] == str(run["output"])
    assert searched["result"].startswith(
        f"100 lines of output {run['output']} match 'line 12.. of' (the first 50 shown):\n"
        "1200: line 1200 of 3000\n"
    )
    assert searched["result"].endswith("1249: line 1249 of 3000")
    stored = ws / ".agent_context" / "outputs" / f"{run['output']}.txt"
    assert stored.read_text() == NUMBERED
