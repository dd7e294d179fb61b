"""The processes a command owns, and killing them without hitting anyone else's.

A command's descendants are seen while it runs and remembered with their create times; each
also carries MARKER_VARIABLE in its environment, so one that double-forked out of the tree
is still found. A pid reused since it was seen is never signalled.
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import time

import psutil

from localagent.system.winjob import KillOnCloseJob

KILL_WAIT = 3.0
# psutil may report a process's create time a little differently from call to call.
CREATE_TIME_TOLERANCE = 0.05
# Every command gets a random value in this variable; its descendants inherit it, even
# those that double-fork away from its process tree and session.
MARKER_VARIABLE = "LOCALAGENT_COMMAND_ID"


def _kill_group(pgid: int) -> None:
    killpg = getattr(os, "killpg", None)
    if killpg is not None:
        with contextlib.suppress(OSError):
            killpg(pgid, getattr(signal, "SIGKILL", signal.SIGTERM))


def _is_gone(proc: psutil.Process) -> bool:
    # A killed orphan stays a zombie until init reaps it; it runs nothing.
    try:
        return proc.status() == psutil.STATUS_ZOMBIE
    except psutil.Error:
        return True


def _same_process(proc: psutil.Process, create_time: float) -> bool:
    """True while proc runs and is the process that started at create_time (no reused pid)."""
    try:
        return abs(proc.create_time() - create_time) < CREATE_TIME_TOLERANCE and not _is_gone(proc)
    except psutil.Error:
        return False


def _kill_all(procs: list[psutil.Process]) -> None:
    """Kills procs (each already known to be ours) and waits until none of them runs."""
    for proc in procs:
        with contextlib.suppress(psutil.Error):
            proc.kill()
    deadline = time.monotonic() + KILL_WAIT
    while not all(_is_gone(proc) for proc in procs) and time.monotonic() < deadline:
        time.sleep(0.02)


def kill_marked(marker: str) -> int:
    """Kills every process that carries this marker (see MARKER_VARIABLE); how many."""
    found = marked(marker)
    _kill_all(found)
    return len(found)


def marked(marker: str) -> list[psutil.Process]:
    """Every other process whose environment carries this command's marker.

    A descendant that double-forks into a session of its own is no longer a child of
    anything we know, but it inherited the environment, marker included.
    """
    found = []
    for proc in psutil.process_iter():
        if proc.pid == os.getpid():
            continue
        with contextlib.suppress(psutil.Error, OSError):
            if proc.environ().get(MARKER_VARIABLE) == marker:
                found.append(proc)
    return found


def _marker_of(proc: psutil.Process) -> str | None:
    try:
        return proc.environ().get(MARKER_VARIABLE) or None
    except (psutil.Error, OSError):
        return None


class Tree:
    """A command and the descendants seen while it ran, each remembered with its create time.

    psutil.Process checks the create time before it signals, so a pid that was reused
    since it was seen is left alone.
    """

    def __init__(
        self, root: psutil.Process, marker: str | None, job: KillOnCloseJob | None = None
    ) -> None:
        self.root = root
        self.marker = marker
        self.job = job
        self.seen: dict[int, psutil.Process] = {}

    def watch(self) -> None:
        with contextlib.suppress(psutil.Error):
            for child in self.root.children(recursive=True):
                self.seen.setdefault(child.pid, child)

    def kill(self, group: bool) -> None:
        """Kills the command, its process group if `group`, and every descendant seen or marked."""
        self.watch()
        if self.job is not None:
            self.job.close()
        if group:
            _kill_group(self.root.pid)
        procs = [self.root, *self.seen.values()]
        if self.marker is not None:
            procs += [proc for proc in marked(self.marker) if proc.pid not in self.seen]
        _kill_all(procs)


def kill_recorded(pid: int, create_time: float) -> bool:
    """Kills the process tree of a command that a crashed run recorded (pid, create time).

    Only if `pid` is alive and started at `create_time` (a reused pid is never hit), and
    never pid 0, 1 or our own. Its process group (when it leads one) and everything
    carrying its environment marker go too. True if something was killed.
    """
    if pid in (0, 1, os.getpid()) or pid < 0 or not math.isfinite(create_time):
        return False
    try:
        proc = psutil.Process(pid)
    except (psutil.Error, OSError, OverflowError, ValueError):
        return False
    if not _same_process(proc, create_time):
        return False
    Tree(proc, _marker_of(proc)).kill(group=_leads_group(pid))
    return True


def _leads_group(pid: int) -> bool:
    getpgid = getattr(os, "getpgid", None)
    try:
        return getpgid is not None and getpgid(pid) == pid
    except OSError:
        return False
