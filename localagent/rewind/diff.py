"""`localagent diff`: each step's changes to the files as unified diffs, attributed to the
step that made them (its seq, round and tool: commands' and goal checks' changes too),
with changes made outside the agent and rewinds shown as such."""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localagent.journal import Journal
from localagent.journal.snapshots import MissingBlob, Store, sha_of
from localagent.rewind.steps import Step, timeline
from localagent.system.errors import UsageError

MAX_DIFF_LINES = 2000  # of one file's diff
MAX_TEXT = 4 << 20  # bytes of a side compared as text


@dataclass
class FileDiff:
    path: str
    before: str | None
    after: str | None
    text: str  # the unified diff, or a line saying why there is none


def steps(workspace: Path, round_: int | None = None, since: int | None = None) -> list[Step]:
    """The steps that changed files: of round `round_`, or at or after seq `since`."""
    journal = Journal(workspace)
    if not journal.exists():
        raise UsageError(f"no goal has run in {workspace}: there is nothing to show")
    line = timeline(journal.records())
    if round_ is not None and not 1 <= round_ <= max(line.rounds, 1):
        raise UsageError(f"there is no round {round_}: the run has {line.rounds} rounds")
    return [
        s
        for s in line.steps
        if (round_ is None or s.round == round_) and (since is None or s.at >= since)
    ]


def store_of(workspace: Path) -> Store:
    store = Journal(workspace).snapshot_store(1)
    assert store is not None
    return store


def file_diffs(step: Step, store: Store) -> list[FileDiff]:
    return [FileDiff(p, b, a, unified(store, p, b, a)) for p, b, a in step.files]


def heading(step: Step) -> str:
    what = f" `{step.what}`" if step.what else ""
    undone = f" (undone by the rewind at s{step.undone_by})" if step.undone_by else ""
    if step.kind == "outside":
        return f"## s{step.seq} changed outside the agent (found before round {step.round})"
    if step.kind == "rewind":
        return f"## s{step.seq} rewind {step.what}{undone}"
    return f"## s{step.at} round {step.round} {step.tool}{what}{undone}"


def show(workspace: Path, round_: int | None, since: int | None) -> Iterator[str]:
    """The lines `localagent diff` prints."""
    found = steps(workspace, round_, since)
    if not found:
        yield "no changes to files were recorded" + (" for that" if round_ or since else "")
        return
    store = store_of(workspace)
    for step in found:
        yield heading(step)
        for item in file_diffs(step, store):
            yield item.text


def unified(store: Store, path: str, before: str | None, after: str | None) -> str:
    old, old_note = _side(store, before)
    new, new_note = _side(store, after)
    a, b = (
        ("/dev/null" if before is None else f"a/{path}"),
        ("/dev/null" if after is None else f"b/{path}"),
    )
    note = old_note or new_note
    if note:
        return f"--- {a}\n+++ {b}\n{note}"
    assert old is not None and new is not None
    if old == new:  # the content is the same: only the executable bit moved
        bit = "on" if (after or "").endswith(":x") else "off"
        return f"--- {a}\n+++ {b}\n(mode: executable {bit})"
    if b"\0" in old[:8192] + new[:8192] or max(len(old), len(new)) > MAX_TEXT:
        return f"Binary files {a} and {b} differ"
    lines = list(
        difflib.unified_diff(
            _text(old).splitlines(keepends=True),
            _text(new).splitlines(keepends=True),
            a,
            b,
        )
    )
    more = len(lines) - MAX_DIFF_LINES
    text = "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
        for line in lines[:MAX_DIFF_LINES]
    )
    return text.rstrip("\n") + (f"\n... ({more} more lines)" if more > 0 else "")


def _side(store: Store, file_id: str | None) -> tuple[bytes | None, str]:
    if file_id is None:
        return b"", ""
    if file_id.startswith("big:"):
        size = file_id.split(":")[1]
        return None, (
            f"(not snapshotted: {size} bytes, over the size cap; recorded by size and time "
            "only, so it cannot be restored)"
        )
    sha = sha_of(file_id)
    if sha is None:
        return None, "(not snapshotted: it could not be read or stored; it cannot be restored)"
    try:
        return store.read(sha), ""
    except MissingBlob:
        return None, "(its content is no longer in the snapshot store: it cannot be restored)"


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def as_dicts(workspace: Path, round_: int | None, since: int | None) -> list[dict[str, Any]]:
    """The steps and their diffs as plain data (the Python API's `diff`)."""
    found = steps(workspace, round_, since)
    store = store_of(workspace) if found else None
    return [
        {
            "seq": s.at,
            "record": s.seq,
            "kind": s.kind,
            "round": s.round,
            "tool": s.tool,
            "what": s.what,
            "undone_by": s.undone_by,
            "files": [vars(d) for d in file_diffs(s, store)] if store else [],
        }
        for s in found
    ]
