"""The journal's one seam to the disk."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import IO

from localagent.system import safefs


class Disk:
    """Every write, fsync and rename the journal does goes through here (one seam)."""

    def write(self, fh: IO[bytes], data: bytes) -> None:
        view = memoryview(data)
        while view:  # an unbuffered write may be short; never leave a record half-written
            written = fh.write(view)
            if not written:
                raise OSError(f"wrote nothing of {len(view)} bytes")
            view = view[written:]

    def fsync(self, fh: IO[bytes]) -> None:
        fh.flush()
        os.fsync(fh.fileno())

    def truncate(self, fh: IO[bytes], size: int) -> None:
        fh.truncate(size)

    def replace(self, src: Path, dst: Path) -> None:
        safefs.replace(src, dst)

    def fsync_dir(self, path: Path) -> None:
        if sys.platform == "win32":
            return  # NTFS has no directory handle to fsync; the rename is journaled by NTFS
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
