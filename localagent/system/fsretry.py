"""File operations that Windows refuses for a moment while another process has the file
open: a reader, `logs -f`, an editor, a virus scanner, a process just ending.

There, replacing, deleting, and creating a file whose old self is still being deleted
fail with WinError 5 (access denied), 32 (sharing violation) or 33 (lock violation), all
seen by Python as PermissionError; they pass once the other handle closes. `retry` runs
an operation again until it passes or `seconds` have gone by, then raises the last
error. Elsewhere a PermissionError is a real refusal and is raised at once.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")
WINDOWS = sys.platform == "win32"
RETRY_SECONDS = 2.0
POLL = 0.05
# ERROR_ACCESS_DENIED, ERROR_SHARING_VIOLATION, ERROR_LOCK_VIOLATION
TRANSIENT_WINERRORS = frozenset({5, 32, 33})


def is_transient(exc: OSError) -> bool:
    """Whether `exc` is Windows saying "another process has this file open"."""
    if not WINDOWS:
        return False
    winerror = getattr(exc, "winerror", None)
    if winerror is None:
        return isinstance(exc, PermissionError)
    return winerror in TRANSIENT_WINERRORS


def retry(
    action: Callable[[], T],
    seconds: float = RETRY_SECONDS,
    transient: Callable[[OSError], bool] = is_transient,
) -> T:
    """`action()`, run again while it fails transiently, for at most `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return action()
        except OSError as exc:
            if not transient(exc) or time.monotonic() >= deadline:
                raise
        time.sleep(POLL)


def replace(src: Path, dst: Path, seconds: float = RETRY_SECONDS) -> None:
    """`os.replace`, waiting out another process that holds `dst` (or `src`) open."""
    retry(lambda: os.replace(src, dst), seconds)


def unlink(path: Path, seconds: float = RETRY_SECONDS) -> None:
    """Delete a file (the link itself, never its target); a missing file is fine."""

    def remove() -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)

    retry(remove, seconds)
