"""Background runs: detaching, stopping, following logs, resuming after a reboot.

The background process is `python -m localagent run-agent ...`; it records its own pid
(a venv launcher's pid differs on Windows), so the pid printed is the one that works.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil

from localagent.errors import AgentError, WorkspaceBusy, disk_error
from localagent.journal import Journal
from localagent.lock import WorkspaceLock, held, owner
from localagent.names import display

STARTUP_WAIT = 30.0  # for the lock and the preflight; the server check is bounded below
PREFLIGHT_WAIT = 15.0  # how long an interactive start waits for a model server that is down
READY = frozenset({"preflight", "suspended"})
RELEASE_WAIT = 5.0  # Windows may release a dead process's lock a moment late


def child_argv(workspace: Path, goal: str | None, flags: dict[str, Any]) -> list[str]:
    argv = [sys.executable, "-m", "localagent", "run-agent", "-w", str(workspace)]
    if goal is not None:
        argv += ["--goal", goal]
    if flags.get("model"):
        argv += ["--model", str(flags["model"])]
    if flags.get("max_rounds"):
        argv += ["--max-rounds", str(flags["max_rounds"])]
    for check in flags.get("checks") or ():
        argv.append(f"--check={check}")
    if flags.get("verify") is False:
        argv += ["--no-verify"]
    if flags.get("repair"):
        argv += ["--repair"]
    if flags.get("preflight_deadline") is not None:
        argv += ["--preflight-deadline", str(flags["preflight_deadline"])]
    return argv


def _popen(argv: list[str], cwd: Path, journal: Journal) -> subprocess.Popen[bytes]:
    if sys.platform == "win32":
        # Not DETACHED_PROCESS: it gives every command the agent runs a console window.
        detach: dict[str, Any] = {
            "creationflags": subprocess.CREATE_NO_WINDOW | subprocess.CREATE_NEW_PROCESS_GROUP
        }
    else:
        detach = {"start_new_session": True}
    with journal.open_out() as sink:
        return subprocess.Popen(
            argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.STDOUT, **detach
        )


class _Mark:
    """Where the history stood before the child started: its file's identity and last
    `seq`. A new goal archives the old history and starts again at seq 1 in a new file,
    so a record is the child's when it is in another file, or past `seq` in the same."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self.identity = self._identity()
        self.seq = 0
        with contextlib.suppress(AgentError, OSError):
            tail = journal.tail(1)
            self.seq = tail[0]["seq"] if tail else 0

    def _identity(self) -> tuple[int, int] | None:
        try:
            st = os.stat(self.journal.history_path)
        except OSError:
            return None
        return st.st_ino, st.st_dev

    def since(self, n: int = 8) -> list[dict[str, Any]]:
        """The records among the last `n` that were written after the mark."""
        try:
            recent = self.journal.tail(n)
        except (AgentError, OSError):
            return []
        if self._identity() != self.identity:
            return recent
        return [r for r in recent if r["seq"] > self.seq]


def _ours(info: dict[str, Any], proc: subprocess.Popen[bytes]) -> bool:
    """The pid file names our child (or, behind a venv launcher, its child)."""
    if info.get("pid") == proc.pid:
        return True
    try:
        return psutil.Process(int(info["pid"])).ppid() == proc.pid
    except (psutil.Error, ValueError, KeyError, TypeError):
        return False


def spawn(
    workspace: Path,
    goal: str | None,
    flags: dict[str, Any],
    settings: Any = None,
    repair: bool = False,
    preflight_wait: float | None = PREFLIGHT_WAIT,
) -> str:
    """Start the agent in the background and wait until it holds the workspace and has
    passed its preflight (server answering, model present); return what to tell the user.

    A run that cannot work (model missing, server down past `preflight_wait`) exits 3
    here with the reason; a second agent on a busy workspace exits 4.
    """
    journal = Journal(workspace)
    if (info := owner(journal.dir)) is not None:
        raise WorkspaceBusy(
            f"the workspace {display(workspace)} is held by a running agent "
            f"(pid {info['pid']}); see `localagent status -w {display(workspace)}`"
        )
    if goal is None and not repair:
        from localagent.runner import over, resume_mode

        if resume_mode(journal, journal.load(repair=False)) != "resume":
            ended = over(journal.state)
            return f"the goal in {display(workspace)} is already {ended}; nothing to resume"
    argv = child_argv(
        workspace, goal, {**flags, "repair": repair, "preflight_deadline": preflight_wait}
    )
    try:
        journal.ensure_dir()
        before = _Mark(journal)
        proc = _popen(argv, workspace, journal)
    except OSError as exc:
        raise disk_error(Path(exc.filename or journal.dir), exc) from None
    deadline = time.monotonic() + STARTUP_WAIT + (preflight_wait or 0)
    while time.monotonic() < deadline:
        if (code := proc.poll()) is not None:
            return _early_exit(journal, code, before)
        info = owner(journal.dir)
        if info is not None and _ours(info, proc) and _ready(before):
            return (
                f"started in the background\nworkspace  {display(workspace)}\npid        "
                f"{info['pid']}\nlog        {display(journal.log_path)}"
            )
        time.sleep(0.05)
    return f"starting in the background (pid {proc.pid})\nlog        {display(journal.log_path)}"


def _ready(before: _Mark) -> bool:
    return any(r["type"] in READY for r in before.since())


def _early_exit(journal: Journal, code: int, before: _Mark) -> str:
    if code == 0:
        return f"the goal finished at once\nworkspace  {display(journal.workspace)}"
    if code == WorkspaceBusy.exit_code:
        # Another start got the workspace first (its agent holds the lock).
        raise WorkspaceBusy(_lost_race(journal))
    reason = next(
        (
            str(r.get("reason", ""))
            for r in reversed(before.since())
            if r["type"] in ("suspended", "goal_failed")
        ),
        "",
    )
    if not reason:
        reason = _last_output(journal) or (
            f"it ended at once (exit code {code}) and could not even write its error to "
            f"{display(journal.out_path)} (a full disk?); run it attached to see why, with "
            f"--foreground"
        )
    error = AgentError(f"the background agent could not run: {reason}")
    error.exit_code = code if code in (1, 2, 3) else 1
    raise error


def _last_output(journal: Journal, containing: str = "") -> str:
    tail = ""
    with contextlib.suppress(OSError, AgentError):
        tail = journal.read_text(journal.out_path, limit=4096).strip()
    lines = [line for line in tail.splitlines() if containing in line]
    return lines[-1].removeprefix("localagent: ") if lines else ""


def _lost_race(journal: Journal) -> str:
    """Why our child could not take the workspace, whatever else agent.out holds."""
    if said := _last_output(journal, "is held by"):
        return said
    info = owner(journal.dir)
    who = f" (pid {info['pid']})" if info else ""
    return (
        f"the workspace {display(journal.workspace)} is held by another agent{who} that started "
        f"first; see `localagent status -w {display(journal.workspace)}`"
    )


def stop(workspace: Path, grace: float = 15.0) -> str:
    """Ask the agent to stop between steps; escalate to terminate, then kill.

    The agent may end on its own at any moment meanwhile (its goal done): what is said
    is read from the journal afterwards, so the message is true whichever came first.
    """
    journal = Journal(workspace)
    journal.check_dir()
    info = _running_owner(journal)
    if info is None:
        if not held(journal.dir):
            return _not_running(journal)
        return _stop_unnamed(journal, grace)
    try:
        proc = psutil.Process(info["pid"])
    except psutil.Error:
        return _not_running(journal)
    _ask_to_stop(journal)
    began = time.monotonic()
    if _gone(proc, grace):
        return _after_exit(journal, info["pid"], time.monotonic() - began)
    try:
        proc.terminate()
        if not _gone(proc, 10.0):
            proc.kill()
            _gone(proc, 5.0)
    except psutil.Error:
        pass  # it ended on its own meanwhile
    _record_stop(journal, "stopped with `localagent stop` (forced)")
    return (
        f"the agent (pid {info['pid']}) did not stop within {grace:g} s and was ended by "
        f"force; the journal is intact; {_resume_hint(journal)}"
    )


def _running_owner(journal: Journal, wait: float = 2.0) -> dict[str, Any] | None:
    """The agent's pid file, waiting a moment when the lock is held but the pid file is
    not written yet (an agent that is just starting)."""
    end = time.monotonic() + wait
    while (info := owner(journal.dir)) is None and time.monotonic() < end:
        if not held(journal.dir):
            return None
        time.sleep(0.05)
    return info


def _stop_unnamed(journal: Journal, grace: float) -> str:
    """An agent holds the lock but cannot be named (no trustworthy pid file): ask it
    through the stop request, which it polls, and wait for the lock; never signal."""
    _ask_to_stop(journal)
    began = time.monotonic()
    while held(journal.dir):
        if time.monotonic() - began > grace:
            return (
                f"asked the agent in {display(journal.workspace)} to stop, but it still holds the "
                f"workspace after {grace:g} s and its pid file cannot be trusted, so it was "
                f"not forced; run `localagent stop -w {display(journal.workspace)}` again"
            )
        time.sleep(0.1)
    return _after_exit(journal, None, time.monotonic() - began)


def _ask_to_stop(journal: Journal) -> None:
    try:
        journal.request_stop()
    except FileExistsError:
        pass  # another `stop` asked at the same moment: the request is there
    except OSError as exc:
        raise AgentError(
            f"cannot write the stop request {display(journal.stop_path)}: {exc.strerror or exc}; "
            f"check that the workspace is writable"
        ) from None


def _final_status(journal: Journal) -> str | None:
    try:
        return journal.peek()[1]
    except (AgentError, OSError, ValueError):
        return None


def _resume_hint(journal: Journal) -> str:
    return f"resume with: localagent resume -w {display(journal.workspace)}"


def _not_running(journal: Journal) -> str:
    status = _final_status(journal)
    said = f"no agent is running in {display(journal.workspace)}"
    if status in ("completed", "failed"):
        return f"{said}; its goal is {status}"
    if status in ("stopped", "in_progress"):
        return f"{said}; its goal is {status.replace('_', ' ')} ({_resume_hint(journal)})"
    return said


def _after_exit(journal: Journal, pid: int | None, took: float) -> str:
    """What to say once the agent is gone: stopped by us, or ended on its own first."""
    who = f"the agent (pid {pid})" if pid else "the agent"
    status = _final_status(journal)
    if status in ("completed", "failed"):
        _withdraw_request(journal)
        return f"{who} ended on its own before it could be stopped; its goal is {status}"
    if status == "in_progress":
        # It died without journaling the stop (a crash, a kill by someone else).
        _record_stop(journal, "stopped with `localagent stop` (the agent had ended)")
        return f"{who} ended without finishing its step; {_resume_hint(journal)}"
    return f"stopped {who} after {took:.1f} s; {_resume_hint(journal)}"


def _withdraw_request(journal: Journal) -> None:
    """A request that came too late is removed, unless another agent holds the workspace."""
    if not held(journal.dir):
        with contextlib.suppress(OSError, AgentError):
            journal.clear_stop()


def _gone(proc: psutil.Process, seconds: float) -> bool:
    try:
        proc.wait(timeout=seconds)
    except psutil.TimeoutExpired:
        return False
    except psutil.Error:
        pass
    return True


def _record_stop(journal: Journal, reason: str, wait: float = RELEASE_WAIT) -> None:
    """A killed agent could not journal `stopped`; do it for it, under the same lock.

    Windows may release a dead process's lock a moment late, so the lock is retried for
    a few seconds; a new agent that took the workspace meanwhile is left alone."""
    lock = WorkspaceLock(journal.dir)
    end = time.monotonic() + wait
    while True:
        try:
            lock.acquire()
            break
        except WorkspaceBusy:
            if owner(journal.dir) is not None or time.monotonic() > end:
                return
        except (AgentError, OSError):
            return
    try:
        state = journal.load()
        if state.goal is not None and state.goal.status == "in_progress":
            if state.open_action is not None and state.open_action.pid:
                from localagent.process import kill_recorded

                kill_recorded(state.open_action.pid, state.open_action.create_time or 0.0)
            journal.append("stopped", reason=reason, by="user")
        journal.clear_stop()
    except (AgentError, OSError) as exc:
        why = exc.message if isinstance(exc, AgentError) else exc.strerror or str(exc)
        raise AgentError(f"the agent is gone but `stopped` could not be journaled: {why}") from None
    finally:
        journal.close()
        lock.release()


def follow(path: Path, write: Any, poll: float = 0.5) -> None:
    """Print the log and then what is appended to it, across rotations, until Ctrl-C.

    The file is held open and told apart by its identity, so when it is rotated the
    rest of the old file is read to its end before the new one is followed: no line is
    lost. (Windows cannot rotate a file held open, so there it is reopened each time.)
    """
    from localagent import safefs

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
        from localagent import safefs

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


def resumable(notes: list[str]) -> list[Path]:
    """Workspaces whose goal is unfinished and was not stopped by the user: the agent
    died, was suspended waiting for the server, or was ended by a logout or shutdown."""
    from localagent.registry import workspaces

    found = []
    for path in workspaces(notes):
        workspace = Path(path)
        journal = Journal(workspace)
        try:
            if not journal.exists() or owner(journal.dir) is not None:
                continue
            state = journal.load(repair=False)
        except AgentError as exc:
            notes.append(f"skipped {display(workspace)}: {exc.message}")
            continue
        except (OSError, ValueError) as exc:
            notes.append(f"skipped {display(workspace)}: cannot read its journal ({exc})")
            continue
        if state.goal is None:
            continue
        if state.goal.status == "in_progress" or (
            state.goal.status == "stopped" and state.stopped_by != "user"
        ):
            found.append(workspace)
    return found


def resume_all(settings: Any, flags: dict[str, Any], wait: Any = time.sleep) -> str:
    """Resume every goal a crash or reboot interrupted, each in its own background process."""
    from localagent.model import OllamaModel

    notes: list[str] = []
    targets = resumable(notes)
    if not targets:
        return "\n".join([*notes, "nothing to resume"])
    OllamaModel(settings, wait=wait).wait_for_server()
    lines = list(notes)
    # One after another: each waits until its agent has passed the preflight, so the
    # server is not asked to load a model for every goal at the same moment.
    for workspace in targets:
        try:
            started = spawn(workspace, None, flags, preflight_wait=None)
            lines.append(started.replace("\n", "; "))
        except AgentError as exc:
            lines.append(f"{display(workspace)}: {exc.message}")
    return "\n".join(lines)
