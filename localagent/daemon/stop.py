"""Stopping a running agent from another process (`localagent stop`).

The agent is asked through `.agent_context/stop.request`, which it polls between steps,
during model calls and while a command runs (a detached agent has no console for
CTRL_BREAK). Only an agent that has not ended after the grace period is forced, and
only a process the pid file names and every check in `lock.owner` trusts. A forced agent
cannot journal its stop, so it is journaled for it, under the workspace lock, which
Windows may release a moment after the process is gone: the lock is retried.

The agent may end on its own at any moment meanwhile; what is said is read from the
journal afterwards, so the message is true whichever came first.
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import Any

import psutil

from localagent.journal import QUESTIONS_DIR, Journal
from localagent.system.errors import AgentError, WorkspaceBusy
from localagent.system.lock import WorkspaceLock, held, owner
from localagent.system.names import display

RELEASE_WAIT = 5.0  # Windows may release a dead process's lock a moment late


def stop(workspace: Path, grace: float = 15.0) -> str:
    """Ask the agent to stop between steps; force it only if it has not ended after
    `grace` seconds (terminate, then kill)."""
    journal = _running_journal(workspace)
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
        if _gone(proc, 10.0) and _final_status(journal) != "in_progress":
            # The signal reached a live agent, which stopped cleanly (it knows the
            # request came first: the user's stop) or had just ended on its own.
            return _after_exit(journal, info["pid"], time.monotonic() - began)
        proc.kill()
        _gone(proc, 5.0)
    except psutil.Error:
        pass  # it ended on its own meanwhile
    record_stop(journal, "stopped with `localagent stop` (forced)")
    return (
        f"the agent (pid {info['pid']}) did not stop within {grace:g} s and was ended by "
        f"force; the journal is intact; {journal.resume_hint()}"
    )


def _running_journal(workspace: Path) -> Journal:
    """The goal's journal, or the questions' (`ask`) when only a question is researched."""
    journal = Journal(workspace)
    journal.check_dir()
    if held(journal.dir):
        return journal
    questions = Journal(workspace, part=QUESTIONS_DIR)
    questions.check_dir()
    return questions if held(questions.dir) else journal


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


def _not_running(journal: Journal) -> str:
    status = _final_status(journal)
    said = f"no agent is running in {display(journal.workspace)}"
    if status in ("completed", "failed"):
        return f"{said}; its goal is {status}"
    if status in ("stopped", "in_progress"):
        return f"{said}; its goal is {status.replace('_', ' ')} ({journal.resume_hint()})"
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
        record_stop(journal, "stopped with `localagent stop` (the agent had ended)")
        return f"{who} ended without finishing its step; {journal.resume_hint()}"
    return f"stopped {who} after {took:.1f} s; {journal.resume_hint()}"


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


def record_stop(journal: Journal, reason: str, wait: float = RELEASE_WAIT) -> None:
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
            if state.open_action is not None:
                from localagent.loop.actions import kill_leftovers

                kill_leftovers(state.open_action)
            journal.append("stopped", reason=reason, by="user")
        journal.clear_stop()
    except (AgentError, OSError) as exc:
        why = exc.message if isinstance(exc, AgentError) else exc.strerror or str(exc)
        raise AgentError(f"the agent is gone but `stopped` could not be journaled: {why}") from None
    finally:
        journal.close()
        lock.release()
