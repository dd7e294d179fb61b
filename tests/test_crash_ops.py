"""Crash or fail at sampled file operations of the journal, then resume and check the
recovery (`scripts/crash_every_op.py` tries every operation).

A child process runs the goal with a `Disk` that dies or raises at operation N; the
real command line resumes it against the fake Ollama server. The sample takes, for a
crash before an operation and for a full disk, the first of each kind of operation
(history write and fsync, snapshot write, fsync, replace and folder fsync), so each kind
is crashed and fails; in every mode the last operation; one more picked at random with
the mode's name as the seed, so the same each run; and in a few modes the write (for
`after`: the fsync) of the first command's `action_started`: a command must not start
before that record is durable, or a crash there runs it twice.
"""

from __future__ import annotations

import importlib
import random
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType

import pytest

from localagent.models.fake import FakeServer

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"
# The modes that crash at the first of each kind of operation; the others take the
# first command's record, the last operation and one at random (the script tries all).
EVERY_KIND = ("before", "ENOSPC")


@pytest.fixture(scope="module")
def crash() -> Iterator[ModuleType]:
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(SCRIPTS))
        yield importlib.import_module("crash_every_op")


@pytest.fixture(scope="module")
def harness(
    crash: ModuleType, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[object, list[str]]]:
    root = tmp_path_factory.mktemp("crash-ops")
    with FakeServer(crash.scenario(crash.BATCHES, crash.PER_BATCH)) as server:
        runner = crash.Harness(root, crash.agent_env(server.url, root / "home"))
        yield runner, runner.count()


def _run(crash: ModuleType, harness: tuple[object, list[str]], trials: list[object]) -> None:
    runner, _ = harness
    assert trials
    with ThreadPoolExecutor(max_workers=2) as pool:
        outcomes = list(pool.map(runner.trial, trials))
    failed = [f"{o.trial.name} ({o.trial.op}): {o.problem}" for o in outcomes if o.problem]
    assert not failed, f"{len(failed)} of {len(trials)} trials failed:\n" + "\n".join(failed)


def _sample(crash: ModuleType, harness: tuple[object, list[str]], mode: str) -> list[object]:
    runner, ops = harness
    first = runner.command_ops(ops)[0]  # type: ignore[attr-defined]
    also = {"before": [first], "torn": [first], "ENOSPC": [first], "after": [first + 1]}
    fits = crash.choose(ops, mode, 1)
    picked = random.Random(mode).choice(fits)
    if mode in EVERY_KIND:
        # No every-K-th operation: an offset past the end picks none of them.
        chosen = crash.choose(ops, mode, len(ops) + 1, len(ops), [*also.get(mode, []), picked])
    else:
        chosen = sorted({*also.get(mode, []), picked, fits[-1]})
    return [crash.Trial(mode, n, ops[n - 1]) for n in chosen]


def test_a_clean_run_uses_every_kind_of_disk_operation(
    harness: tuple[object, list[str]],
) -> None:
    _, ops = harness
    assert set(ops) == {
        "write history.jsonl",
        "fsync history.jsonl",
        "write state.json.tmp",
        "fsync state.json.tmp",
        "replace state.json",
        "fsync_dir .agent_context",
    }
    # Each append is one write and one fsync, and comes before any snapshot of it.
    assert ops[:2] == ["write history.jsonl", "fsync history.jsonl"]
    assert ops.count("write history.jsonl") == ops.count("fsync history.jsonl") > 20


@pytest.mark.parametrize("mode", ["before", "after", "torn", "unterminated"])
def test_a_crash_at_any_operation_is_resumed_without_loss(
    crash: ModuleType, harness: tuple[object, list[str]], mode: str
) -> None:
    _run(crash, harness, _sample(crash, harness, mode))


@pytest.mark.parametrize("mode", ["ENOSPC", "EIO"])
def test_a_failing_disk_stops_the_run_with_a_message_and_resume_recovers(
    crash: ModuleType, harness: tuple[object, list[str]], mode: str
) -> None:
    _run(crash, harness, _sample(crash, harness, mode))


@pytest.mark.parametrize("mode", ["torn+ENOSPC", "unterminated+EIO"])
def test_a_disk_failing_while_a_torn_tail_is_repaired_stops_cleanly(
    crash: ModuleType, harness: tuple[object, list[str]], mode: str
) -> None:
    _, ops = harness
    writes = [n for n, op in enumerate(ops, 1) if op == "write history.jsonl"]
    at = writes[len(writes) // 2]
    trials = [crash.Trial(mode, at, ops[at - 1], k) for k in range(1, crash.REPAIR_OPS[mode] + 1)]
    _run(crash, harness, trials)
