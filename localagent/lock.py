"""One agent per workspace: an OS file lock held for the whole run, plus a pid file.

The OS releases the lock when its holder dies (even on SIGKILL), so a lock file left
behind is reclaimed by simply acquiring it. The pid file tells others who holds it;
it is trusted only when that pid is alive with the same create time (pids get reused).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import psutil
from filelock import FileLock, Timeout

from localagent.errors import WorkspaceBusy
from localagent.journal import now_iso

LOCK_NAME = "agent.lock"
PID_NAME = "agent.pid"


def owner(context_dir: Path) -> dict[str, Any] | None:
    """The live process recorded in the pid file, or None if there is none."""
    try:
        info = orjson.loads((context_dir / PID_NAME).read_bytes())
        proc = psutil.Process(int(info["pid"]))
        if abs(proc.create_time() - float(info["create_time"])) > 1.0:
            return None
        if proc.status() == psutil.STATUS_ZOMBIE:
            return None
    except (OSError, ValueError, KeyError, TypeError, psutil.Error):
        return None
    return info


class WorkspaceLock:
    def __init__(self, context_dir: Path) -> None:
        self.dir = context_dir
        self._lock = FileLock(str(context_dir / LOCK_NAME), timeout=0)

    def acquire(self, log_path: Path | None = None) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        try:
            self._lock.acquire()
        except Timeout:
            info = owner(self.dir)
            who = f"pid {info['pid']}" if info else "another process"
            raise WorkspaceBusy(
                f"the workspace {self.dir.parent} is held by a running agent ({who}); "
                f"use `localagent status` to watch it or `localagent stop` to end it"
            ) from None
        me = psutil.Process(os.getpid())
        info = {
            "pid": me.pid,
            "create_time": me.create_time(),
            "started": now_iso(),
            "log": str(log_path) if log_path else "",
        }
        tmp = self.dir / (PID_NAME + ".tmp")
        tmp.write_bytes(orjson.dumps(info))
        os.replace(tmp, self.dir / PID_NAME)

    def release(self) -> None:
        (self.dir / PID_NAME).unlink(missing_ok=True)
        self._lock.release()

    def __enter__(self) -> WorkspaceLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
