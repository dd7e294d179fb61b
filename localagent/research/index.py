"""The code index: every searchable file's chunks (with their term counts) and call-graph
facts, kept in `.agent_context/index/files.json` and brought up to date on each use.

A file whose size and mtime are unchanged is not read; one whose content hash is
unchanged is not re-chunked; so a re-index after one edit costs about one file. The walk
is the one search_files uses (no .git, journals, virtual environments, binary files,
links or what .gitignore ignores); a folder that cannot be written gets an index held in
memory only, and says so.

A repository can ship any `.agent_context/index/`: an index whose chunks and call-graph
facts were never read from its files would steer every search. So the file is sealed: a
MAC under this user's key (`userkey`) over the folder it lies in and its bytes. One that
does not carry this user's seal for this folder is ignored, and the index is built anew.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from localagent.research.chunks import chunk_file, parse
from localagent.research.tokens import term_counts
from localagent.system import safefs, userkey
from localagent.system.errors import JournalCorrupt
from localagent.tools.walk import Walk

VERSION = 2
FILE_NAME = "files.json"
INDEX_SECONDS = 300.0  # a walk longer than this saves what it has and says so
HEAD_CHARS = 120
PURPOSE = b"research index"


def _never() -> bool:
    return False


def digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


@dataclass
class Index:
    """Per file: {"mtime": ns, "size", "sha", "chunks": [[start, end, symbol, kind, key,
    head, terms]], and once the call graph has read it, "facts"} ("sha" is "" for a
    file that is not searched: binary, too large, unreadable)."""

    root: Path
    files: dict[str, dict[str, Any]] = field(default_factory=dict)
    counts: Counter[str] = field(default_factory=Counter)  # read, chunked, removed
    notes: list[str] = field(default_factory=list)
    texts: dict[str, str] = field(default_factory=dict)  # chunk key -> text, this run's

    def chunk_rows(self) -> list[tuple[str, list[Any]]]:
        return [(path, row) for path, entry in self.files.items() for row in entry["chunks"]]


def sealed(folder: Path, body: bytes, purpose: bytes) -> bytes:
    """`body` with this user's seal for `folder` as a first line."""
    seal = userkey.tag(os.fsencode(folder) + b"\0" + body, purpose)
    return orjson.dumps({"seal": seal}) + b"\n" + body


def unsealed(folder: Path, data: bytes, purpose: bytes) -> bytes | None:
    """The body of what `sealed` wrote in `folder`, or None when this user's agent did
    not write it there (a shipped or copied file, or one edited since)."""
    head, _, body = data.partition(b"\n")
    try:
        seal = orjson.loads(head)
    except orjson.JSONDecodeError:
        return None
    given = seal.get("seal") if isinstance(seal, dict) else None
    return body if userkey.is_ours(os.fsencode(folder) + b"\0" + body, given, purpose) else None


def load(folder: Path | None, notes: list[str] | None = None) -> dict[str, dict[str, Any]]:
    """The saved index, or nothing when there is none this user's agent made here (a
    note says when one was ignored)."""
    if folder is None:
        return {}
    try:
        body = unsealed(folder, safefs.read_bytes(folder / FILE_NAME), PURPOSE)
        data = orjson.loads(body) if body is not None else None
    except (FileNotFoundError, orjson.JSONDecodeError):
        return {}
    if body is None:
        if notes is not None:
            notes.append(
                f"ignored the index in {FILE_NAME}: this user's agent did not build it in this "
                f"workspace (a copied or shipped one); it is built anew"
            )
        return {}
    ok = isinstance(data, dict) and data.get("version") == VERSION
    return data.get("files", {}) if ok and isinstance(data.get("files"), dict) else {}


def save(folder: Path, files: dict[str, dict[str, Any]]) -> None:
    """Written under a temp name of this process and renamed: two searches at once never
    mix their writes, and a reader sees the old index or the new one."""
    data = sealed(folder, orjson.dumps({"version": VERSION, "files": files}), PURPOSE)
    temp = folder / f"{FILE_NAME}.{os.getpid()}.tmp"
    safefs.write_new(temp, data)
    safefs.replace(temp, folder / FILE_NAME)


def update(
    root: Path,
    folder: Path | None,
    cancelled: Callable[[], bool] = _never,
    seconds: float = INDEX_SECONDS,
) -> Index:
    """The index of `root`, brought up to date and saved in `folder` (None: not saved)."""
    index = Index(root)
    index.files = load(folder, index.notes)
    walk = Walk(root, time.monotonic() + seconds, cancelled)
    seen = set()
    for path in walk.files(root):
        seen.add(path)
        _refresh(index, walk, path)
    if not walk.stopped:  # a partial walk keeps the files it did not reach
        for gone in set(index.files) - seen:
            del index.files[gone]
            index.counts["removed"] += 1
    index.notes += walk.notes(seconds)
    if folder is not None and (
        index.counts["chunked"] or index.counts["removed"] or index.counts["touched"]
    ):
        try:
            save(folder, index.files)
        except (OSError, JournalCorrupt) as exc:
            index.notes.append(f"the index could not be saved ({exc}); it was built in memory")
    return index


def _refresh(index: Index, walk: Walk, path: str) -> None:
    try:
        info = os.stat(os.path.join(index.root, path), follow_symlinks=False)
    except OSError:
        index.files.pop(path, None)
        return
    old = index.files.get(path)
    if old and old["mtime"] == info.st_mtime_ns and old["size"] == info.st_size:
        return
    text = walk.read_text(path)
    index.counts["read"] += 1
    if text is None:  # binary, large or unreadable: remembered, so not read again
        index.files[path] = _skipped(info)
        index.counts["touched"] += 1
        return
    sha = digest(text)
    if old and old["sha"] == sha:
        old["mtime"], old["size"] = info.st_mtime_ns, info.st_size
        index.counts["touched"] += 1
        return
    index.files[path] = _entry(index, path, text, sha, info)
    index.counts["chunked"] += 1


def _entry(index: Index, path: str, text: str, sha: str, info: os.stat_result) -> dict[str, Any]:
    rows = []
    for chunk in chunk_file(path, text, parse(path, text)):
        if not chunk.text.strip():
            continue
        key = digest(chunk.text)
        index.texts[key] = chunk.text
        head = next((line.strip() for line in chunk.text.split("\n") if line.strip()), "")
        row = [chunk.start, chunk.end, chunk.symbol, chunk.kind, key, head[:HEAD_CHARS]]
        rows.append([*row, term_counts(chunk.text)])
    # The call graph's facts are read when the graph is first asked for (callgraph.py):
    # walking every node of every file would double the time of a first index.
    return {"mtime": info.st_mtime_ns, "size": info.st_size, "sha": sha, "chunks": rows}


def _skipped(info: os.stat_result) -> dict[str, Any]:
    return {"mtime": info.st_mtime_ns, "size": info.st_size, "sha": "", "chunks": []}
