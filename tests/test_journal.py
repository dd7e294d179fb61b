import os
import random
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import orjson
import pytest

from localagent.journal import Journal, decode, encode
from localagent.system.errors import JournalCorrupt


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


@pytest.mark.parametrize("damage", ["missing", "garbage", "wrong_shape"])
def test_lost_snapshot_is_rebuilt_from_history(tmp_path: Path, damage: str) -> None:
    live = make(tmp_path, 4)
    path = live.state_path
    if damage == "missing":
        path.unlink()
    elif damage == "garbage":
        path.write_bytes(b"\x00\x00{not json")
    else:
        path.write_bytes(b'{"schema_version": 1, "goal": 7}')
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
        # What a crash mid-append leaves: a partial line, or pages never written (NULs);
        # each offset gets one of the three, in turn, so every kind meets every region.
        kinds = (b"", b"\x00" * rng.randint(1, 300), b"\x00" * rng.randint(1, 300) + b"\n")
        edge = cut + 1 in ends or cut in ends  # a line's last byte or its newline
        for junk in kinds if edge else (kinds[cut % 3],):
            ws = tmp_path / "case"
            (ws / ".agent_context").mkdir(parents=True, exist_ok=True)
            history = ws / ".agent_context" / "history.jsonl"
            history.write_bytes(data[:cut] + junk)
            (ws / ".agent_context" / "state.json").unlink(missing_ok=True)
            # A record cut just before its newline is whole unless junk runs into it.
            whole_line = junk == b""
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
    for i in range(400):  # unbounded, 400 results of 500 bytes would be 200 kB
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
    for _ in range(12):
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


# ---- damage is refused until the loss is accepted (issue 9 items 2-4) ----------------


def test_complete_lines_with_bad_checksums_at_the_end_are_damage(tmp_path: Path) -> None:
    journal = make(tmp_path, 3)
    good = journal.history_path.read_bytes()
    lines = good.splitlines(keepends=True)
    damaged = b"".join(lines[:-2]) + lines[-2].replace(b"f2", b"F2") + lines[-1].replace(b"2", b"9")
    journal.history_path.write_bytes(damaged)
    with pytest.raises(JournalCorrupt, match="--repair") as caught:
        Journal(tmp_path).load()
    assert "history.jsonl" in caught.value.message and "checksum" in caught.value.message
    assert journal.history_path.read_bytes() == damaged  # nothing cut
    with pytest.raises(JournalCorrupt):
        list(Journal(tmp_path).records())
    with pytest.raises(JournalCorrupt):
        Journal(tmp_path).tail(5)

    repaired = Journal(tmp_path)
    state = repaired.load(accept_loss=True)
    assert state.seq == 6 and seqs(repaired) == list(range(1, 7))
    assert any("records 7..8" in note for note in repaired.notes), repaired.notes
    assert journal.broken_path.read_bytes() == b"".join(damaged.splitlines(True)[-2:])
    assert Journal(tmp_path).load().seq == 6  # the acceptance holds for the next load


def test_a_partial_last_line_is_still_a_torn_write(tmp_path: Path) -> None:
    journal = make(tmp_path, 2)
    data = journal.history_path.read_bytes()
    journal.history_path.write_bytes(data[:-30])
    loaded = Journal(tmp_path)
    assert loaded.load().seq == 5
    assert "torn" in loaded.notes[-1]


@pytest.mark.parametrize("how", ["emptied", "cut"])
def test_a_history_shorter_than_the_snapshot_is_refused(tmp_path: Path, how: str) -> None:
    journal = make(tmp_path, 3)
    journal.snapshot()  # the snapshot covers all 8 records
    lines = journal.history_path.read_bytes().splitlines(keepends=True)
    left = [] if how == "emptied" else lines[:5]
    journal.history_path.write_bytes(b"".join(left))
    snapshot = journal.state_path.read_bytes()
    with pytest.raises(JournalCorrupt) as caught:
        Journal(tmp_path).load()
    message = caught.value.message
    assert "history.jsonl" in message and "state.json" in message
    assert "localagent resume --repair" in message and f"{len(left) + 1}..8" in message
    assert journal.state_path.read_bytes() == snapshot  # nothing touched
    assert len(journal.history_path.read_bytes().splitlines()) == len(left)

    repaired = Journal(tmp_path)
    state = repaired.load(accept_loss=True)
    assert state.seq == len(left)
    assert any(f"records {len(left) + 1}..8" in note for note in repaired.notes), repaired.notes
    assert (journal.dir / "state.json.broken").read_bytes() == snapshot
    again = Journal(tmp_path)
    assert again.load().seq == len(left) and not again.notes
    if how == "cut":
        again.append("feedback", text="goes on")
        assert seqs(again) == list(range(1, 7))


def test_a_missing_history_can_be_accepted_explicitly(tmp_path: Path) -> None:
    journal = make(tmp_path, 1)
    journal.snapshot()
    journal.history_path.unlink()
    repaired = Journal(tmp_path)
    assert repaired.load(accept_loss=True).goal is None
    assert any("records 1..4" in note for note in repaired.notes)


def test_damage_the_snapshot_covers_is_reported_by_records(tmp_path: Path) -> None:
    journal = make(tmp_path, 3)
    journal.snapshot()
    lines = journal.history_path.read_bytes().splitlines(keepends=True)
    lines[2] = b"\x00" * (len(lines[2]) - 1) + b"\n"
    journal.history_path.write_bytes(b"".join(lines))
    assert Journal(tmp_path).load().seq == 8  # the snapshot covers it: load need not read it
    with pytest.raises(JournalCorrupt, match="byte") as caught:
        list(Journal(tmp_path).records())
    assert "history.jsonl" in caught.value.message and "after record 2" in caught.value.message


# ---- values the journal cannot take as they are (issue 9 item 15, issue 8 item 12) -------


def test_hostile_values_are_journaled_not_refused(tmp_path: Path) -> None:
    deep: list[object] = []
    node = deep
    for _ in range(300):
        node.append([])
        node = node[0]  # type: ignore[assignment]
    journal = Journal(tmp_path)
    journal.load()
    journal.append("goal_started", goal="G")
    args = {"n": 2**70, "neg": -(2**80), "deep": deep, "text": "a\udc80b", 7: "int key"}
    journal.append("feedback", text="x", args=args)
    journal.snapshot()
    journal.close()
    record = list(Journal(tmp_path).records())[-1]
    assert record["args"]["n"] == str(2**70) and record["args"]["neg"] == str(-(2**80))
    assert record["args"]["text"] == "a\\udc80b" and record["args"]["7"] == "int key"
    depth, node = 0, record["args"]["deep"]
    while isinstance(node, list):
        depth, node = depth + 1, node[0]
    assert 150 < depth < 256 and isinstance(node, str)
    line = encode({"seq": 1, "ts": "t", "type": "x", "v": 2**64})
    assert decode(line) == {"seq": 1, "ts": "t", "type": "x", "v": str(2**64)}
    reloaded = Journal(tmp_path)
    assert reloaded.load().seq == 2


# ---- leftovers ----------------------------------------------------------------------------


def test_stale_temp_files_are_removed_by_the_owner(tmp_path: Path) -> None:
    journal = make(tmp_path, 1)
    for name in ("state.json.tmp", "loops.json.tmp"):
        (journal.dir / name).write_bytes(b"x" * 100_000)
    Journal(tmp_path).load(repair=False)
    assert (journal.dir / "state.json.tmp").exists()  # a reader changes nothing
    Journal(tmp_path).load()
    assert not (journal.dir / "state.json.tmp").exists()
    assert not (journal.dir / "loops.json.tmp").exists()


def test_archive_leaves_nothing_of_the_previous_goal(tmp_path: Path) -> None:
    journal = make(tmp_path, 2)
    journal.record_loop({"signature": "s"})
    extra = ["agent.log", "agent.log.1", "agent.log.2", "agent.out", "history.jsonl.broken"]
    for name in [*extra, "agent.pid", "agent.lock"]:
        (journal.dir / name).write_text(name)
    (journal.dir / "outputs").mkdir()
    (journal.dir / "outputs" / "o1.txt").write_text("big output")
    target = journal.archive()
    assert target is not None
    left = sorted(p.name for p in journal.dir.iterdir())
    assert left == ["agent.lock", "agent.out", "agent.pid", "archive"]
    assert journal.out_path.read_bytes() == b""  # emptied, still open by a background run
    moved = sorted(p.name for p in target.iterdir())
    expected = ["history.jsonl", "loops.json", "outputs", "state.json", *extra]
    assert moved == sorted(expected)
    assert (target / "agent.out").read_text() == "agent.out"
    assert Journal(tmp_path).load().goal is None
