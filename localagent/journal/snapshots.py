"""The snapshot store: `.agent_context/snapshots/`, owned by the journal's folder.

`blobs/ab/cdef...` holds each content once, named by its SHA-256; `tree.json` is the
store's view of the workspace (each file's size, time and content id) as of a journal
record, so the next scan hashes only what moved. The tree is rewritten (temp file and
replace) only after the record it reflects is durable, so it is never ahead of the
journal; one that is behind is caught up from the records after it (`Snapshots`).

The store is bounded: past `max_bytes` the oldest blobs that the workspace no longer
holds are removed (the contents of the latest tree are always kept: they are what the
next step would undo to). A step whose earlier content was removed can still be shown
by name, not restored; `restore` refuses it, naming the files.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from localagent.system import safefs

FOLDER = "snapshots"
TREE = "tree.json"
CHUNK = 1 << 20
_HEX = frozenset("0123456789abcdef")
_NEW = (
    os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
)


class MissingBlob(Exception):
    """A content the store no longer holds (pruned), or one damaged since."""


@dataclass
class Tree:
    """The workspace as the store last saw it: path -> [size, mtime_ns, id]."""

    seq: int = 0  # the last journal record it reflects
    offset: int = 0  # the history's length just after that record
    files: dict[str, list[Any]] = field(default_factory=dict)
    stored: int = 0  # bytes written to the store since the last prune (an estimate)

    def ids(self) -> dict[str, str]:
        return {path: entry[2] for path, entry in self.files.items()}


def sha_of(file_id: str | None) -> str | None:
    """The SHA-256 an id names ("<sha>" or "<sha>:x"); None for absent or big files."""
    if not file_id or file_id.startswith("big:"):
        return None
    sha = file_id.split(":", 1)[0]
    return sha if len(sha) == 64 and set(sha) <= _HEX else None


class Store:
    def __init__(self, folder: Path, max_bytes: int) -> None:
        self.folder = folder
        self.blobs = folder / "blobs"
        self.max_bytes = max_bytes
        self._made: set[str] = set()  # the blob folders known to exist

    def ensure(self) -> None:
        for path in (self.folder.parent, self.folder, self.blobs):
            safefs.check_dir(path)
            path.mkdir(exist_ok=True)
            safefs.check_dir(path)

    def path(self, sha: str) -> Path:
        return self.blobs / sha[:2] / sha[2:]

    def has(self, sha: str) -> bool:
        return safefs.lstat_kind(self.path(sha)) is None  # None: a regular file

    def put(self, data: bytes, durable: bool) -> tuple[str, int]:
        """Store `data`; its SHA-256 and the bytes newly written (0 when already held)."""
        sha = hashlib.sha256(data).hexdigest()
        if self.has(sha):
            return sha, 0
        self._place(sha, data, durable)
        return sha, len(data)

    def put_file(self, path: Path, size: int, durable: bool) -> tuple[str, int]:
        """Store a workspace file's content (never opened through a link)."""
        with safefs.open_file(path, "rb") as fh:
            data = fh.read(size + 1)
            while len(data) > size and (more := fh.read(CHUNK)):
                data += more  # it grew while read: store what it holds now
        return self.put(data, durable)

    def _place(self, sha: str, data: bytes, durable: bool) -> None:
        final = self.path(sha)
        if sha[:2] not in self._made:
            safefs.check_dir(final.parent)
            final.parent.mkdir(exist_ok=True)
            self._made.add(sha[:2])
        # A fresh random name, created exclusively and never through a link: the store's
        # own folder, so nothing planted is written through. Whole, then renamed.
        temp = final.with_name(f"{final.name}.{secrets.token_hex(4)}.tmp")
        fd = os.open(temp, _NEW, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        safefs.replace(temp, final)

    def read(self, sha: str) -> bytes:
        """A stored content, checked against its name; MissingBlob if gone or damaged."""
        try:
            data = safefs.read_bytes(self.path(sha))
        except (OSError, safefs.UnsafeFile):
            raise MissingBlob(sha) from None
        if hashlib.sha256(data).hexdigest() != sha:
            raise MissingBlob(sha)
        return data

    def load_tree(self) -> Tree | None:
        try:
            raw = orjson.loads(safefs.read_bytes(self.folder / TREE))
            files = raw["files"]
            if not isinstance(files, dict):
                return None
            return Tree(int(raw["seq"]), int(raw["offset"]), files, int(raw.get("stored", 0)))
        except (OSError, ValueError, KeyError, TypeError, safefs.UnsafeFile):
            return None

    def save_tree(self, tree: Tree) -> None:
        body = {"seq": tree.seq, "offset": tree.offset, "stored": tree.stored, "files": tree.files}
        temp = self.folder / f"{TREE}.tmp"
        safefs.write_new(temp, orjson.dumps(body))
        safefs.replace(temp, self.folder / TREE)

    def prune(self, tree: Tree) -> None:
        """Past the bound, remove the oldest blobs the workspace no longer holds."""
        if tree.stored <= self.max_bytes // 4:
            return  # a walk of every blob now and then, not after every step
        keep = {sha for entry in tree.files.values() if (sha := sha_of(entry[2]))}
        blobs = sorted(self._blobs(), key=lambda item: item[1])
        total = sum(size for _, _, size, _ in blobs)
        for _, _, size, path in blobs:
            if total <= self.max_bytes:
                break
            if path.parent.name + path.name not in keep:
                with contextlib.suppress(OSError):
                    safefs.unlink(path)
                    total -= size
        tree.stored = 0

    def _blobs(self) -> list[tuple[str, int, int, Path]]:
        found = []
        with contextlib.suppress(OSError):
            for sub in os.scandir(self.blobs):
                if sub.is_dir(follow_symlinks=False):
                    found += [_blob(entry) for entry in os.scandir(sub.path) if _is_blob(entry)]
        return found

    def remove_temps(self) -> None:
        """Temp files a kill left while storing a content go (links are not followed)."""
        with contextlib.suppress(OSError):
            for sub in os.scandir(self.blobs):
                if sub.is_dir(follow_symlinks=False):
                    for entry in os.scandir(sub.path):
                        if entry.name.endswith(".tmp"):
                            with contextlib.suppress(OSError):
                                safefs.unlink(Path(entry.path))


def _is_blob(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file(follow_symlinks=False) and ".tmp" not in entry.name
    except OSError:
        return False


def _blob(entry: os.DirEntry[str]) -> tuple[str, int, int, Path]:
    try:
        info = entry.stat(follow_symlinks=False)
    except OSError:
        return entry.name, 0, 0, Path(entry.path)
    return entry.name, info.st_mtime_ns, info.st_size, Path(entry.path)
