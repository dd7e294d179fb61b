"""`localagent rewind` as a function: take the workspace (the lock: never while an agent
runs in it), finish a rewind a kill cut short, journal what changed outside the agent,
then plan, journal, restore and journal the end (see `restore`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localagent.journal import Journal
from localagent.rewind import restore
from localagent.rewind.snapshots import Snapshots
from localagent.rewind.steps import Timeline, boundary, timeline
from localagent.state import MalformedRecord, State, apply
from localagent.state.model import Rewinding
from localagent.system.errors import UsageError
from localagent.system.lock import WorkspaceLock

FILES_TOLD = 12  # files named to the model


@dataclass
class Rewound:
    """What a rewind did: the step it went back to (just before), the files put back
    ([path, id before the rewind, id after]), those left as they were, and the seq of a
    cut-short rewind it finished first."""

    to: int = 0
    files: list[list[Any]] = field(default_factory=list)
    left: list[str] = field(default_factory=list)
    finished: int | None = None


def rewind(
    workspace: Path, to: str | None = None, last: bool = False, force: bool = False
) -> Rewound:
    """UsageError (exit 2) for a refusal, WorkspaceBusy (exit 4) while an agent runs."""
    from localagent.config.userconfig import load_settings

    journal = Journal(workspace)
    if not journal.exists():
        raise UsageError(f"nothing to rewind: no goal has run in {workspace}")
    with WorkspaceLock(journal.dir):
        journal.load()
        journal.refuse_foreign()
        try:
            if journal.state.goal is None:
                raise UsageError(f"nothing to rewind: no goal has run in {workspace}")
            mb = max(load_settings().snapshot_store_mb, 1)
            return _rewind(journal, Snapshots(journal, workspace, mb << 20), to, last, force)
        finally:
            journal.finish(best_effort=True)


def _rewind(journal: Journal, snaps: Snapshots, to: str | None, last: bool, force: bool) -> Rewound:
    pending = journal.state.rewinding
    if pending is not None:  # whatever was asked: the same command again must not go on
        done = _finish(journal, snaps, pending)
        done.finished = done.to
        return done
    if to is None and not last:
        raise UsageError("say how far back: --to ROUND, --to sSEQ (a step) or --last")
    snaps.before("rewind", journal.state.rounds)  # what changed outside the agent, first
    line = timeline(journal.records())
    target = boundary(line, to, last)
    tree = snaps.current()
    assert snaps.store is not None
    found = restore.plan(line.steps, target, tree.ids(), snaps.store)
    why = restore.refusal(found, force)
    if why is not None:
        raise UsageError(why)
    intent = journal.append("rewinding", to=target, files=found.files)
    done = _complete(journal, snaps, intent["seq"], target, found.files, tree.ids(), line)
    done.left += found.lost
    return done


def _finish(journal: Journal, snaps: Snapshots, pending: Rewinding) -> Rewound:
    """The rewind a kill cut short, to its end."""
    _, files = snaps.look([path for path, _, _ in pending.files])
    now = {path: entry[2] for path, entry in files.items()}
    line = timeline(journal.records())
    return _complete(journal, snaps, pending.seq, pending.to, pending.files, now, line)


def _complete(
    journal: Journal,
    snaps: Snapshots,
    intent: int,
    to: int,
    files: list[list[Any]],
    now: dict[str, str],
    line: Timeline,
) -> Rewound:
    assert snaps.store is not None
    left = restore.apply(journal.workspace, snaps.store, files, now, intent)
    done = [f for f in files if f[0] not in left]
    rec = journal.append(
        "rewound",
        to=to,
        intent=intent,
        files=done,
        undone=told(to, done, line),
        reopen=reopened(journal, to),
    )
    snaps.follow(rec)
    return Rewound(to, done, left)


def reopened(journal: Journal, to: int) -> list[list[int]]:
    """The subtasks (task, subtask indices) finished at or after step `to`."""
    state, found = State(), []
    for rec in journal.records():
        try:
            if rec["type"] in ("subtask_completed", "subtask_failed") and rec["seq"] >= to:
                found.append([state.task_index, state.subtask_index])
            apply(state, rec)
        except (MalformedRecord, KeyError, TypeError, AssertionError):
            continue
    return found


def told(to: int, files: list[list[Any]], line: Timeline) -> str:
    """What the model is told of the rewind in its next round."""
    step = next((s for s in line.steps if s.at == to and s.kind == "agent"), None)
    where = f"step s{to}" + (f" (round {step.round}, {step.tool})" if step else "")
    names = [f"{p} ({'removed' if want is None else 'restored'})" for p, _, want in files]
    shown = ", ".join(names[:FILES_TOLD]) + (" and more" if len(names) > FILES_TOLD else "")
    return (
        f"NOTE: the user rewound the workspace to just before {where}: what that step and "
        f"every later one did to the files is undone ({shown or 'no file needed it'}). "
        "Results you saw from those steps no longer hold; look again before going on."
    )
