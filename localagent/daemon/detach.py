"""Starting the background agent so that closing the terminal does not end it.

POSIX: a new session (no controlling terminal, so no SIGHUP when it closes).

Windows: a new process group with no console window, and out of the terminal's job
object (`CREATE_BREAKAWAY_FROM_JOB`): Windows Terminal and some IDEs put what they run in
a job that kills every member when the tab closes. A job may forbid leaving it; then
CreateProcess refuses the flag (WinError 5) and the agent is started without it, still
detached from the console, and the caller is told (`BREAKAWAY_REFUSED`).
Not DETACHED_PROCESS: it gives every command the agent runs a console window.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path
from typing import IO, Any

BREAKAWAY_REFUSED = (
    "note: this terminal's job object does not let the agent leave it, so closing the "
    "terminal may end the agent; start it from another window, or let autostart resume it"
)
_BREAKAWAY_OK = 0x0800 | 0x1000  # JOB_OBJECT_LIMIT_BREAKAWAY_OK, ..._SILENT_BREAKAWAY_OK
_KILL_ON_JOB_CLOSE = 0x2000


def popen_detached(
    argv: list[str], cwd: Path, sink: IO[bytes], given: bytes = b""
) -> tuple[subprocess.Popen[bytes], str]:
    """Start `argv` detached, its output to `sink` and `given` on its standard input;
    returns it and a note ("" if none)."""
    if sys.platform != "win32":
        return _popen(argv, cwd, sink, given, start_new_session=True), ""
    flags = subprocess.CREATE_NO_WINDOW | subprocess.CREATE_NEW_PROCESS_GROUP
    try:
        breakaway = flags | subprocess.CREATE_BREAKAWAY_FROM_JOB
        return _popen(argv, cwd, sink, given, creationflags=breakaway), ""
    except OSError as exc:
        if getattr(exc, "winerror", None) != 5:
            raise
    return _popen(argv, cwd, sink, given, creationflags=flags), BREAKAWAY_REFUSED


def _popen(
    argv: list[str], cwd: Path, sink: IO[bytes], given: bytes, **detach: Any
) -> subprocess.Popen[bytes]:
    # The input is in a file before the child starts, not in a pipe the starter fills
    # after: a starter that is stopped or killed at that moment must not hold the child.
    if not given:
        return subprocess.Popen(
            argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.STDOUT, **detach
        )
    with tempfile.TemporaryFile() as stdin:
        stdin.write(given)
        stdin.seek(0)
        return subprocess.Popen(
            argv, cwd=cwd, stdin=stdin, stdout=sink, stderr=subprocess.STDOUT, **detach
        )


def job_note() -> str | None:
    """Why a background agent started from here may end with the terminal (Windows: this
    process is in a job that kills its members on close and forbids leaving), or None.
    For `doctor`."""
    if sys.platform != "win32":
        return None
    try:
        flags = _job_limit_flags()
    except (OSError, AttributeError, ValueError):
        return None
    if flags is None or flags & _BREAKAWAY_OK or not flags & _KILL_ON_JOB_CLOSE:
        return None
    return BREAKAWAY_REFUSED.removeprefix("note: ")


def _job_limit_flags() -> int | None:
    """The LimitFlags of this process's job object, or None when it is in none."""
    import ctypes
    from ctypes import wintypes

    from localagent.system.winjob import BasicLimits

    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined]
    kernel32.GetCurrentProcess.restype = wintypes.HANDLE
    kernel32.IsProcessInJob.argtypes = [
        wintypes.HANDLE,
        wintypes.HANDLE,
        ctypes.POINTER(wintypes.BOOL),
    ]
    in_job = wintypes.BOOL()
    if not kernel32.IsProcessInJob(kernel32.GetCurrentProcess(), None, ctypes.byref(in_job)):
        return None
    if not in_job.value:
        return None

    limits = BasicLimits()
    basic_limit_information = 2  # JobObjectBasicLimitInformation; NULL: our own job
    if not kernel32.QueryInformationJobObject(
        None, basic_limit_information, ctypes.byref(limits), ctypes.sizeof(limits), None
    ):
        return None
    return int(limits.LimitFlags)
