"""One agent per workspace: an OS file lock held for the whole run, plus a pid file.

The OS releases the lock when its holder dies (even on SIGKILL), so a lock file left
behind is reclaimed by simply acquiring it. The lock is the truth about whether an agent
runs (`held`); the pid file only says which process it is (`owner`), and is trusted, so
that `stop` may signal that process, only when every check passes: a well-formed file,
not pid 0, 1 or ours, the process alive with the same start time, its command line a
localagent one, and this very lock file open in it (the holder keeps it open for the
whole run). A workspace copied while its agent runs carries the pid file along, and a
pid file can be planted: either names a process that holds another workspace's lock.

The start time: psutil's `create_time` is boot time plus the process's start offset,
and on Linux the boot time it reads moves when the wall clock is stepped, so a check
against it alone says "not running" after a clock change. On Linux the pid file also
records the start offset in clock ticks and the boot id, which no clock change moves,
and those are compared exactly; elsewhere (Windows, macOS record the start as a fixed
absolute time) `create_time` is compared with a tolerance of one second.
"""

from __future__ import annotations

import math
import os
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import psutil
from filelock import FileLock, Timeout

from localagent.system import fsretry, safefs
from localagent.system.clock import now_iso
from localagent.system.errors import WorkspaceBusy, disk_error
from localagent.system.names import display

LOCK_NAME = "agent.lock"
PID_NAME = "agent.pid"
CREATE_TIME_TOLERANCE = 1.0
# A probe by `status` holds the lock for microseconds; a start that meets one waits it out.
ACQUIRE_WAIT = 0.5
_PROC = Path("/proc")


def _start_ticks(pid: int) -> int | None:
    """The process's start in clock ticks after boot (Linux), immune to clock changes."""
    try:
        data = (_PROC / str(pid) / "stat").read_bytes()
        return int(data[data.rindex(b")") + 2 :].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def _boot_id() -> str | None:
    try:
        return (_PROC / "sys/kernel/random/boot_id").read_text().strip() or None
    except OSError:
        return None


def identity(proc: psutil.Process) -> dict[str, Any]:
    """What the pid file records to recognise this process later."""
    info: dict[str, Any] = {"pid": proc.pid, "create_time": float(proc.create_time())}
    if sys.platform.startswith("linux") and (ticks := _start_ticks(proc.pid)) is not None:
        info.update(start_ticks=ticks, boot_id=_boot_id())
    return info


def parse_pid_file(raw: bytes) -> dict[str, Any] | None:
    """The pid file's content if it is well-formed, strictly; None otherwise."""
    try:
        info = orjson.loads(raw)
    except ValueError:
        return None
    if not isinstance(info, dict):
        return None
    pid, created = info.get("pid"), info.get("create_time")
    if type(pid) is not int or pid <= 1 or type(created) is not float:
        return None
    if not math.isfinite(created) or created <= 0:
        return None
    ticks, boot = info.get("start_ticks"), info.get("boot_id")
    if ticks is not None and (type(ticks) is not int or ticks < 0):
        return None
    if boot is not None and not isinstance(boot, str):
        return None
    return info


def is_localagent(cmdline: list[str]) -> bool:
    """Whether a command line runs localagent (`python -m localagent`, the script)."""
    for i, arg in enumerate(cmdline):
        if arg in ("-mlocalagent", "-m localagent") or (
            arg == "-m" and cmdline[i + 1 : i + 2] == ["localagent"]
        ):
            return True
    for arg in cmdline[:2]:
        name = Path(arg.replace("\\", "/")).name.lower()
        for suffix in (".exe", "-script.py", ".py"):
            name = name.removesuffix(suffix)
        if name == "localagent":
            return True
    return False


def _same_start(proc: psutil.Process, info: dict[str, Any]) -> bool:
    ticks = info.get("start_ticks")
    if ticks is not None and sys.platform.startswith("linux"):
        now = _start_ticks(proc.pid)
        if now is not None:
            return now == ticks and info.get("boot_id") in (None, _boot_id())
    return abs(proc.create_time() - info["create_time"]) <= CREATE_TIME_TOLERANCE


def owner(context_dir: Path) -> dict[str, Any] | None:
    """The live localagent process recorded in the pid file, or None. Only a process
    this returns may be signalled."""
    try:
        raw = fsretry.retry(lambda: safefs.read_bytes(context_dir / PID_NAME, limit=4096))
        info = parse_pid_file(raw)
    except (OSError, safefs.UnsafeFile):
        return None
    if info is None or info["pid"] == os.getpid():
        return None
    try:
        proc = psutil.Process(info["pid"])
        if not _same_start(proc, info) or proc.status() == psutil.STATUS_ZOMBIE:
            return None
        if not is_localagent(proc.cmdline()) or not _holds(proc, context_dir / LOCK_NAME):
            return None
    except (OSError, psutil.Error):
        return None
    return info


def _holds(proc: psutil.Process, lock_path: Path) -> bool:
    """Whether `proc` has this lock file open: the same file (device and inode), not one
    of the same name elsewhere, such as the original of a copied workspace."""
    try:
        ours = os.stat(lock_path)
    except OSError:
        return False
    for opened in proc.open_files():
        try:
            if os.path.samestat(os.stat(opened.path), ours):
                return True
        except OSError:
            continue
    return False


def held(context_dir: Path) -> bool:
    """Whether some process holds the workspace's lock right now (the lock is taken and
    released at once when it is free). Never creates the lock file."""
    path = context_dir / LOCK_NAME
    if safefs.lstat_kind(path) is not None:
        return False  # missing (never locked) or not a file we would lock
    probe = FileLock(str(path), timeout=0)
    try:
        probe.acquire()
    except Timeout:
        return True
    except OSError:
        return False
    probe.release()
    return False


class WorkspaceLock:
    def __init__(self, context_dir: Path) -> None:
        self.dir = context_dir
        self._lock = FileLock(str(context_dir / LOCK_NAME), timeout=ACQUIRE_WAIT)

    def acquire(self, log_path: Path | None = None) -> None:
        """Take the workspace, or raise WorkspaceBusy (exit 4); a workspace that cannot be
        written (read-only, a full disk) is a clear error, never a traceback."""
        safefs.check_dir(self.dir)
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise disk_error(self.dir, exc) from None
        safefs.check_dir(self.dir)
        path = self.dir / LOCK_NAME
        if (kind := safefs.lstat_kind(path)) not in (None, "missing"):
            raise safefs.unsafe(path, kind)
        try:
            self._lock.acquire()
        except Timeout:
            raise WorkspaceBusy(self._busy()) from None
        except OSError as exc:
            raise disk_error(path, exc) from None
        try:
            self._write_pid(log_path)
        except BaseException:
            self._lock.release()
            raise

    def _busy(self) -> str:
        # The winner of a race may not have written its pid file yet: wait a moment for it.
        end = time.monotonic() + ACQUIRE_WAIT
        while (info := owner(self.dir)) is None and time.monotonic() < end:
            time.sleep(0.05)
        who = f"pid {info['pid']}" if info else "another process"
        where = display(_workspace_of(self.dir))
        return (
            f"the workspace {where} is held by a running agent ({who}); watch it with "
            f"`localagent status -w {where}` or end it with `localagent stop -w {where}`"
        )

    def _write_pid(self, log_path: Path | None) -> None:
        info = {
            **identity(psutil.Process(os.getpid())),
            "started": now_iso(),
            "log": display(log_path) if log_path else "",
        }
        try:
            fsretry.retry(lambda: safefs.write_atomic(self.dir / PID_NAME, orjson.dumps(info)))
        except OSError as exc:
            raise disk_error(self.dir / PID_NAME, exc) from None

    def release(self) -> None:
        try:
            fsretry.unlink(self.dir / PID_NAME)
        finally:
            self._lock.release()

    def __enter__(self) -> WorkspaceLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _workspace_of(folder: Path) -> Path:
    """The workspace whose `.agent_context/` (or a folder below it: the questions') the
    lock's folder is."""
    for path in (folder, *folder.parents):
        if path.name == ".agent_context":
            return path.parent
    return folder.parent
