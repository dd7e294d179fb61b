"""Whole outputs, out of band: `.agent_context/outputs/<id>.txt`, owned by the journal.

An observation longer than the cap reaches the model as its head and tail; the whole
output is kept here under the seq of its action's `action_started` record, so the model
can read or search what it did not see (read_output, search_output). The store is
bounded: once its files pass `max_bytes` in all, the oldest are removed, and one output
keeps at most `min(SPILL_LIMIT, max_bytes)` bytes. Each file is written under a temp name
and renamed into place once complete; nothing is opened through a symlink, a FIFO or a
device (safefs), and an `outputs` that is not a plain folder is refused.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO

from localagent.system import safefs

FOLDER = "outputs"
SPILL_LIMIT = 20 << 20  # bytes of one output kept at most
TEMP_SUFFIX = ".tmp"
# Of an output, what is also held in memory for readers of the whole of it: a pytest run
# of the 1.5B's mathx tables failed in 13 cases, 8,900 characters cut to its first and
# last lines for the model, and the wrong values in between were not read.
HEAD_BYTES = 64 << 10
_NAME = re.compile(r"([1-9][0-9]{0,17})\.txt")


@dataclass(frozen=True)
class Stored:
    """An output in the store: its id, its lines and bytes, and the bytes not kept."""

    id: int
    lines: int
    size: int
    dropped: int = 0


class OutputStore:
    def __init__(self, folder: Path, max_bytes: int) -> None:
        self.folder = folder
        self.max_bytes = max_bytes
        self.file_limit = min(SPILL_LIMIT, max_bytes)

    def path(self, output_id: int) -> Path:
        return self.folder / f"{output_id}.txt"

    def writer(self, output_id: int) -> OutputWriter:
        """A new output, written to a temp file until `keep`; UnsafeFile or OSError."""
        self._ensure()
        temp = self.folder / f"{output_id}.txt{TEMP_SUFFIX}"
        return OutputWriter(self, output_id, safefs.create_new(temp), temp)

    def save(self, output_id: int, text: str) -> Stored:
        """Store `text` whole (up to the limit for one output), replacing any older copy."""
        with self.writer(output_id) as out:
            out.write(text.encode("utf-8", errors="replace"))
            return out.keep()

    def open(self, output_id: int) -> IO[bytes]:
        """A stored output opened for reading; FileNotFoundError if there is none."""
        safefs.check_dir(self.folder)
        return safefs.open_file(self.path(output_id), "rb")

    def ids(self) -> list[int]:
        """The ids of the outputs stored, oldest first."""
        return sorted(self._files())

    def remove_temps(self) -> None:
        """Temp files a killed run left (or someone planted) go; links are never followed."""
        for entry in self._entries():
            if entry.name.endswith(TEMP_SUFFIX) and not entry.is_dir(follow_symlinks=False):
                with contextlib.suppress(OSError):
                    safefs.unlink(Path(entry.path))

    def _ensure(self) -> None:
        safefs.check_dir(self.folder.parent)
        safefs.check_dir(self.folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        safefs.check_dir(self.folder)

    def _entries(self) -> list[os.DirEntry[str]]:
        safefs.check_dir(self.folder)
        try:
            with os.scandir(self.folder) as scan:
                return list(scan)
        except (FileNotFoundError, NotADirectoryError):
            return []

    def _files(self) -> dict[int, int]:
        """The size of each stored output by id; only regular files count."""
        found = {}
        for entry in self._entries():
            name = _NAME.fullmatch(entry.name)
            with contextlib.suppress(OSError):
                if name and entry.is_file(follow_symlinks=False):
                    found[int(name[1])] = entry.stat(follow_symlinks=False).st_size
        return found

    def prune(self, newest: int) -> None:
        """Remove the oldest outputs until the store is within its bound; never `newest`."""
        sizes = self._files()
        total = sum(sizes.values())
        for output_id in sorted(sizes):
            if total <= self.max_bytes:
                return
            if output_id != newest:
                with contextlib.suppress(OSError):
                    safefs.unlink(self.path(output_id))
                    total -= sizes[output_id]


class OutputWriter:
    """One output being stored, written as it comes (from any one thread), up to the store's
    limit for one output with the rest counted; `keep` makes it `<id>.txt`, and leaving the
    `with` block without keeping it removes the temp file."""

    def __init__(self, store: OutputStore, output_id: int, fh: IO[bytes], temp: Path) -> None:
        self.store = store
        self.id = output_id
        self.temp = temp
        self.size = self.dropped = self.newlines = 0
        self.error: OSError | None = None
        self._fh: IO[bytes] | None = fh
        self._ends_line = True
        self._kept = False
        self._lock = threading.Lock()
        self._head = bytearray()  # the first HEAD_BYTES, for `head`

    def write(self, data: bytes) -> None:
        with self._lock:
            room = max(self.store.file_limit - self.size, 0)
            part = data[:room]
            self._head += part[: max(HEAD_BYTES - len(self._head), 0)]
            self.dropped += len(data) - len(part)
            if not part or self._fh is None or self.error is not None:
                return
            try:
                self._fh.write(part)
            except OSError as exc:  # a full disk: the output is not stored, the run goes on
                self.error = exc
                return
            self.size += len(part)
            self.newlines += part.count(b"\n")
            self._ends_line = part.endswith(b"\n")

    def head(self) -> str:
        """The output's first HEAD_BYTES as text: what a reader of the whole output (a test
        run's wrong values) reads where the observation was cut in its middle."""
        with self._lock:
            return self._head.decode("utf-8", errors="replace")

    def keep(self) -> Stored:
        """Flush and fsync the temp file, rename it into place, prune the store."""
        fh = self._close()
        if self.error is not None:
            raise self.error
        if fh is None:
            raise ValueError(f"output {self.id} was already kept or discarded")
        with fh:
            fh.flush()
            os.fsync(fh.fileno())
        safefs.replace(self.temp, self.store.path(self.id))
        self._kept = True
        self.store.prune(self.id)
        lines = self.newlines + (0 if self._ends_line else 1)
        return Stored(self.id, lines, self.size, self.dropped)

    def discard(self) -> None:
        fh = self._close()
        if fh is not None:
            with contextlib.suppress(OSError):
                fh.close()
        if not self._kept:
            with contextlib.suppress(OSError):
                safefs.unlink(self.temp)

    def _close(self) -> IO[bytes] | None:
        with self._lock:  # a write still under way ends first; later ones are ignored
            fh, self._fh = self._fh, None
        return fh

    def __enter__(self) -> OutputWriter:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.discard()
