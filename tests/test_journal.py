import os
import random
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import orjson
import pytest

from localagent.errors import JournalCorrupt
from localagent.journal import Journal, decode, encode


def make(workspace: Path, n: int) -> Journal:
    journal = Journal(workspace)
    journal.load()
    journal.append("goal_started", goal="G")
    journal.append("plan", tasks=[{"description": "T", "subtasks": ["a", "b"]}])
    for i in range(n):
        journal.append(
            "action_started", tool="read_file", args={"path": f"f{i}"}, signature=f"s{i}"
        )
        journal.append(
            "action_finished",
            tool="read_file",
            args={"path": f"f{i}"},
            ok=True,
            result=f"content {i} é 中",
        )
    journal.close()
    return journal


def seqs(journal: Journal) -> list[int]:
    return [r["seq"] for r in journal.records()]


def test_record_roundtrip_and_checksum() -> None:
    rec = {"seq": 1, "ts": "t", "type": "x", "text": 'é\n"q"', "n": 1.5}
    line = encode(rec)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert decode(line) == rec
    flipped = line.replace(b"1.5", b"1.6")
    assert decode(flipped) is None


def test_append_then_load_gives_the_same_state(tmp_path: Path) -> None:
    live = make(tmp_path, 5)
    loaded = Journal(tmp_path)
    state = loaded.load()
    assert state.model_dump() == live.state.model_dump()
    assert seqs(loaded) == list(range(1, 13))


def test_replay_after_the_snapshot(tmp_path: Path) -> None:
    journal = make(tmp_path, 3)
    snap = orjson.loads(journal.state_path.read_bytes())
    assert snap["seq"] == 2  # written at the plan, not per action
    state = Journal(tmp_path).load()
    assert state.seq == 8 and len(state.recent_actions) == 3


@pytest.mark.parametrize("damage", ["missing", "garbage", "wrong_shape", "ahead"])
def test_lost_snapshot_is_rebuilt_from_history(tmp_path: Path, damage: str) -> None:
    live = make(tmp_path, 4)
    path = live.state_path
    if damage == "missing":
        path.unlink()
    elif damage == "garbage":
        path.write_bytes(b"\x00\x00{not json")
    elif damage == "wrong_shape":
        path.write_bytes(b'{"schema_version": 1, "goal": 7}')
    else:
        path.write_bytes(orjson.dumps({"schema_version": 1, "seq": 99, "history_offset": 10**9}))
    loaded = Journal(tmp_path)
    assert loaded.load().model_dump(exclude={"history_offset"}) == live.state.model_dump(
        exclude={"history_offset"}
    )
    assert loaded.notes and "rebuilt" in loaded.notes[0]


def test_newer_schema_is_a_clear_error(tmp_path: Path) -> None:
    journal = make(tmp_path, 1)
    journal.state_path.write_bytes(b'{"schema_version": 42}')
    with pytest.raises(JournalCorrupt, match="newer"):
        Journal(tmp_path).load()


def test_missing_history_with_a_snapshot_is_an_error(tmp_path: Path) -> None:
    journal = make(tmp_path, 1)
    journal.history_path.unlink()
    with pytest.raises(JournalCorrupt, match="missing"):
        Journal(tmp_path).load()


def test_damage_in_the_middle_is_reported_not_dropped(tmp_path: Path) -> None:
    journal = make(tmp_path, 5)
    journal.state_path.unlink()
    lines = journal.history_path.read_bytes().splitlines(keepends=True)
    assert b"content" in lines[3]
    lines[3] = lines[3].replace(b"content", b"CONTENT")
    journal.history_path.write_bytes(b"".join(lines))
    before = journal.history_path.read_bytes()
    with pytest.raises(JournalCorrupt, match="damaged"):
        Journal(tmp_path).load()
    assert journal.history_path.read_bytes() == before


def test_torn_tail_fuzz_every_offset_in_the_last_two_records(tmp_path: Path) -> None:
    source = make(tmp_path / "src", 3)
    data = source.history_path.read_bytes()
    lines = data.splitlines(keepends=True)
    start = len(data) - len(lines[-1]) - len(lines[-2])
    ends = [len(b"".join(lines[: i + 1])) for i in range(len(lines))]
    rng = random.Random(7)
    for cut in range(start, len(data) + 1):
        for junk in (b"", b"\x00" * rng.randint(1, 300), b"garbage{]\n\x01", b"\n\n\x00\x00\x00"):
            ws = tmp_path / "case"
            (ws / ".agent_context").mkdir(parents=True, exist_ok=True)
            history = ws / ".agent_context" / "history.jsonl"
            history.write_bytes(data[:cut] + junk)
            (ws / ".agent_context" / "state.json").unlink(missing_ok=True)
            # A record cut just before its newline is whole unless junk runs into it.
            whole_line = junk == b"" or junk.startswith(b"\n")
            intact = sum(1 for e in ends if e <= cut or (e - 1 == cut and whole_line))
            journal = Journal(ws)
            state = journal.load()
            assert state.seq == intact, (cut, junk)
            assert seqs(journal) == list(range(1, intact + 1))
            journal.append("feedback", text="after repair")
            journal.close()
            assert seqs(journal) == list(range(1, intact + 2))
            assert Journal(ws).load().seq == intact + 1


def test_tail_reads_the_last_records(tmp_path: Path) -> None:
    journal = make(tmp_path, 300)
    assert [r["seq"] for r in journal.tail(3)] == [600, 601, 602]
    assert len(journal.tail(10_000)) == 602


def test_snapshot_stays_bounded(tmp_path: Path) -> None:
    journal = make(tmp_path, 50)
    small = len(journal.state_path.read_bytes())
    journal = Journal(tmp_path)
    journal.load()
    for i in range(2000):
        journal.append(
            "action_started", tool="run_cmd", args={"cmd": f"pytest {i}"}, signature=str(i)
        )
        journal.append(
            "action_finished",
            tool="run_cmd",
            args={"cmd": f"pytest {i}"},
            ok=False,
            result="E" * 500,
            returncode=1,
        )
    journal.snapshot()
    big = len(journal.state_path.read_bytes())
    assert big < max(small * 3, 60_000)


def test_archive_moves_everything_and_deletes_nothing(tmp_path: Path) -> None:
    journal = make(tmp_path, 2)
    target = journal.archive()
    assert target is not None and (target / "history.jsonl").exists()
    assert not journal.history_path.exists() and not journal.state_path.exists()
    assert Journal(tmp_path).load().goal is None


CHILD = textwrap.dedent("""
    import sys
    from pathlib import Path
    from localagent.journal import Journal
    journal = Journal(Path(sys.argv[1]))
    journal.load()
    if journal.state.goal is None:
        journal.append("goal_started", goal="G")
    while True:
        rec = journal.append("feedback", text="x" * (journal.state.seq % 700))
        print(rec["seq"], flush=True)
""")


def test_sigkill_never_loses_an_acknowledged_record(tmp_path: Path) -> None:
    if sys.platform == "win32":
        pytest.skip("SIGKILL is POSIX")
    rng = random.Random(int.from_bytes(os.urandom(4), "little"))
    acknowledged: set[int] = set()
    for _ in range(50):
        proc = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(tmp_path)], stdout=subprocess.PIPE
        )
        assert proc.stdout is not None
        target = rng.randint(1, 40)
        for _ in range(target):
            line = proc.stdout.readline()
            if not line:
                break
            acknowledged.add(int(line))
        os.kill(proc.pid, signal.SIGKILL)
        rest = proc.stdout.read()
        acknowledged.update(int(x) for x in rest.split())
        proc.wait()
        journal = Journal(tmp_path)
        state = journal.load()
        present = set(seqs(journal))
        assert acknowledged <= present
        assert present == set(range(1, state.seq + 1))
