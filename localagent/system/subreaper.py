"""Keeping a command's orphans findable where no sandbox holds them (Linux).

A helper that leaves the command's session and drops its environment (the marker of
`localagent.system.process` with it) is re-parented to init the moment its parent exits, and
nothing tells it from any other process. Run as a script in front of the command, this
module makes itself a child subreaper: every orphan of the command becomes its child
instead, stays in the tree that a timeout or a stop kills, and is killed here when the
command ends. It imports only the standard library: it runs with `python -I -S`.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys

PR_SET_CHILD_SUBREAPER = 36
SWEEPS = 100  # kill-and-reap rounds after the command ended; each ends a generation


def wrap(argv: list[str]) -> list[str]:
    """argv run under the subreaper, where one exists (Linux); argv itself elsewhere."""
    if not sys.platform.startswith("linux"):
        return argv
    return [sys.executable, "-I", "-S", os.path.abspath(__file__), *argv]


def _children() -> list[int]:
    """The pids of this process's children (orphans it adopted included), from /proc."""
    me, found = os.getpid(), []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError, IndexError):
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
            # The name in parentheses may hold spaces; the parent pid follows it.
            if int(stat.rsplit(b")", 1)[1].split()[1]) == me:
                found.append(int(name))
    return found


def _reap_until(pid: int) -> int:
    """Reaps children until `pid` ends; its wait status."""
    while True:
        done, status = os.waitpid(-1, 0)
        if done == pid:
            return status


def _sweep() -> None:
    """Kills whatever the command left behind; each killed process's own children come
    to this process in turn, so a few rounds end every generation."""
    for _ in range(SWEEPS):
        children = _children()
        if not children:
            return
        for child in children:
            with contextlib.suppress(OSError):
                os.kill(child, signal.SIGKILL)
        for child in children:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(child, 0)


def main() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    pid = os.fork()
    if pid == 0:
        try:
            os.execv(sys.argv[1], sys.argv[1:])
        except OSError as exc:
            sys.stderr.write(f"cannot start {sys.argv[1]}: {exc.strerror}\n")
        os._exit(127)
    code = os.waitstatus_to_exitcode(_reap_until(pid))
    _sweep()
    if code < 0:  # end the way the command ended, so the caller sees the signal
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    sys.exit(code)


if __name__ == "__main__":
    main()
