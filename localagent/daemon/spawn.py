"""Starting a background run and waiting until it has passed its preflight or failed it.

The background process is `python -m localagent run-agent -w WS --request`; what it
runs (a `RunRequest`: the goal, the settings given for it, how to start) comes as JSON
on its standard input, not as options to parse again. It records its own pid (a venv
launcher's pid differs on Windows), so the pid printed is the one that works.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil

from localagent.config.runconfig import RunRequest
from localagent.journal import QUESTIONS_DIR, Journal
from localagent.loop.placement import refuse_wide
from localagent.system.errors import AgentError, JournalCorrupt, WorkspaceBusy, disk_error
from localagent.system.lock import owner
from localagent.system.names import display

STARTUP_WAIT = 30.0  # for the lock and the preflight; the server check is bounded below
PREFLIGHT_WAIT = 15.0  # how long an interactive start waits for a model server that is down
SUSPENDED_EXIT_WAIT = 10.0  # a suspended child is ending; Windows takes a moment


def child_argv(workspace: Path) -> list[str]:
    """The background agent's command line; what it runs comes on its standard input."""
    return [sys.executable, "-m", "localagent", "run-agent", "-w", str(workspace), "--request"]


def request_bytes(request: RunRequest) -> bytes:
    return request.model_dump_json().encode()


def _popen(request: RunRequest, journal: Journal) -> tuple[subprocess.Popen[bytes], str]:
    from localagent.daemon.detach import popen_detached

    argv = child_argv(request.workspace)
    with journal.open_out() as sink:
        try:
            return popen_detached(argv, request.workspace, sink, request_bytes(request))
        except OSError as exc:  # the request goes in a temp file first: a full disk stops it
            error = AgentError(
                f"the background agent could not be started: its run request could not be "
                f"written ({exc.strerror or exc}) (a full disk?); run it attached to see why, "
                f"with --foreground"
            )
            error.exit_code = 1
            raise error from exc


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
    given: dict[str, Any],
    *,
    repair: bool = False,
    preflight_wait: float | None = PREFLIGHT_WAIT,
    adopt: bool = False,
    new: bool = False,
    allow_home: bool = False,
) -> str:
    """Start the agent in the background and wait until it holds the workspace and has
    passed its preflight (server answering, model present); return what to tell the user.

    A run that cannot work (model missing, server down past `preflight_wait`) exits 3
    here with the reason; a second agent on a busy workspace exits 4; a goal to resume
    from a journal another agent wrote exits 2 here, saying what it would run, unless
    `adopt`; so does a new goal in place of an unfinished one (unless `new`) and a goal
    in the home folder or a drive root (unless `allow_home`). `given` are the settings
    given as flags, by field; a question (`given["mode"] == "ask"`) runs in its own
    journal, beside the goal's.
    """
    journal = Journal(workspace, part=QUESTIONS_DIR if given.get("mode") == "ask" else "")
    if goal is not None and not allow_home:
        refuse_wide(workspace)  # before `.agent_context/` is made there
    if (info := owner(journal.dir)) is not None:
        raise WorkspaceBusy(
            f"the workspace {display(workspace)} is held by a running agent "
            f"(pid {info['pid']}); see `localagent status -w {display(workspace)}`"
        )
    if (ended := _before_start(journal, goal, repair, adopt, new)) is not None:
        return f"the goal in {display(workspace)} is already {ended}; nothing to resume"
    request = RunRequest(
        workspace=workspace,
        goal=goal,
        given={k: v for k, v in given.items() if v is not None},
        repair=repair,
        adopt=adopt,
        new=new,
        allow_home=allow_home,
        preflight_deadline=preflight_wait,
        patient=preflight_wait is None,
    )
    try:
        journal.ensure_dir()
        journal.clear_ready()  # a signal an earlier run left must not read as this one's
        before = _Mark(journal)
        proc, note = _popen(request, journal)
    except OSError as exc:
        raise disk_error(Path(exc.filename or journal.dir), exc) from None
    deadline = time.monotonic() + STARTUP_WAIT + (preflight_wait or 0)
    while time.monotonic() < deadline:
        if (code := proc.poll()) is not None:
            return _early_exit(journal, code, before)
        info = owner(journal.dir)
        ready = _ready(journal, proc) if info is not None and _ours(info, proc) else None
        if ready == "suspended":
            # It could not work (server down, model missing) and is ending: say why.
            with contextlib.suppress(subprocess.TimeoutExpired):
                return _early_exit(journal, proc.wait(SUSPENDED_EXIT_WAIT), before)
        if ready is not None:
            started = (
                f"started in the background\nworkspace  {display(workspace)}\npid        "
                f"{info['pid']}\nlog        {display(journal.log_path)}"
            )
            return f"{started}\n{note}" if note else started
        time.sleep(0.05)
    return f"starting in the background (pid {proc.pid})\nlog        {display(journal.log_path)}"


def _before_start(
    journal: Journal, goal: str | None, repair: bool, adopt: bool, new: bool
) -> str | None:
    """What the child would refuse, said here where the whole message reaches the user: a
    foreign journal to resume (ForeignJournal), an unfinished goal another would put away
    (UsageError), or a goal already over (its status)."""
    from localagent.loop.prepare import mode_of, over

    if goal is not None and not journal.exists():
        return None
    try:
        state = journal.load(repair=False)
    except JournalCorrupt:
        if repair:
            return None  # the child repairs it, then decides
        raise
    mode = mode_of(journal, state, goal, new)
    if mode == "resume" and not adopt:
        journal.refuse_foreign()
    if mode not in ("completed", "failed") or goal is not None:
        return None
    ended = over(state)
    if ended.status == "failed":
        raise AgentError(ended.said)  # exit 1: there is nothing to resume
    return ended.status


def _ready(journal: Journal, proc: subprocess.Popen[bytes]) -> str | None:
    """What our child signalled: "preflight" (it is working) or "suspended" (it cannot
    and is ending); None while it has signalled nothing."""
    signal = journal.ready()
    if signal is None or not _ours({"pid": signal[0]}, proc):
        return None
    return signal[1]


def _early_exit(journal: Journal, code: int, before: _Mark) -> str:
    if code == 0:
        return f"the goal finished at once\nworkspace  {display(journal.workspace)}"
    if code == WorkspaceBusy.exit_code:
        # Another start got the workspace first (its agent holds the lock).
        raise WorkspaceBusy(_lost_race(journal))
    ended = next(
        (r for r in reversed(before.since()) if r["type"] in ("suspended", "goal_failed")), None
    )
    reason = str(ended.get("reason", "")) if ended else ""
    if reason and ended and ended["type"] == "suspended":
        reason = f"{reason}; {journal.resume_hint()}"  # the goal is journaled: it goes on
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
