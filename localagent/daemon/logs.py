"""`localagent logs -f`: the agent's log and then what is appended to it, across
rotations."""

from __future__ import annotations

import codecs
import os
import sys
import time
from pathlib import Path
from typing import Any

from localagent.system.errors import AgentError


def follow(path: Path, write: Any, poll: float = 0.5) -> None:
    """Print the log and then what is appended to it, across rotations, until Ctrl-C.

    The file is held open and told apart by its identity, so when it is rotated the
    rest of the old file is read to its end before the new one is followed: no line is
    lost. (Windows cannot rotate a file held open, so there it is reopened each time.)
    """
    from localagent.system import safefs

    reader = _LogReader(path, write, hold=sys.platform != "win32")
    try:
        while True:
            reader.poll()
            time.sleep(poll)
    except KeyboardInterrupt:
        return
    except safefs.UnsafeFile as exc:
        raise AgentError(str(exc)) from None
    finally:
        reader.close()


class _LogReader:
    def __init__(self, path: Path, write: Any, hold: bool) -> None:
        self.path, self.write, self.hold = path, write, hold
        self.fh: Any = None
        self.identity: tuple[int, int] | None = None
        self.position = 0
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def _current(self) -> tuple[int, int] | None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        return st.st_ino, st.st_dev

    def poll(self) -> None:
        from localagent.system import safefs

        if self.fh is None:
            try:
                self.fh = safefs.open_file(self.path, "rb")
            except FileNotFoundError:
                return
            st = os.fstat(self.fh.fileno())
            if (st.st_ino, st.st_dev) != self.identity:
                self.identity, self.position = (st.st_ino, st.st_dev), 0
            elif st.st_size < self.position:
                self.position = 0  # cut or replaced in place
            self.fh.seek(self.position)
        self._drain()
        if not self.hold or self._current() != self.identity:
            self.close()  # rotated (or reopened each time): what was left has been read

    def _drain(self) -> None:
        while chunk := self.fh.read(65536):
            self.position += len(chunk)
            self.write(self.decoder.decode(chunk))

    def close(self) -> None:
        if self.fh is not None:
            self.fh.close()
            self.fh = None
