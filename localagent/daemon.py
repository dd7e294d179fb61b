"""Background runs: detaching, stopping, following logs, resuming after a reboot.

The background process is `python -m localagent run-agent ...`; it records its own pid
(a venv launcher's pid differs on Windows), so the pid printed is the one that works.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil

from localagent.errors import AgentError, WorkspaceBusy
from localagent.journal import Journal
from localagent.lock import WorkspaceLock, owner

STARTUP_WAIT = 5.0


def child_argv(workspace: Path, goal: str | None, flags: dict[str, Any]) -> list[str]:
    argv = [sys.executable, "-m", "localagent", "run-agent", "-w", str(workspace)]
    if goal is not None:
        argv += ["--goal", goal]
    if flags.get("model"):
        argv += ["--model", str(flags["model"])]
    if flags.get("max_rounds"):
        argv += ["--max-rounds", str(flags["max_rounds"])]
    return argv


def _popen(argv: list[str], cwd: Path, out: Path) -> subprocess.Popen[bytes]:
    if sys.platform == "win32":
        # Not DETACHED_PROCESS: it gives every command the agent runs a console window.
        detach: dict[str, Any] = {
            "creationflags": subprocess.CREATE_NO_WINDOW | subprocess.CREATE_NEW_PROCESS_GROUP
        }
    else:
        detach = {"start_new_session": True}
    with out.open("ab") as sink:
        return subprocess.Popen(
            argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.STDOUT, **detach
        )


def spawn(workspace: Path, goal: str | None, flags: dict[str, Any]) -> str:
    """Start the agent in the background; return what to tell the user."""
    journal = Journal(workspace)
    if (info := owner(journal.dir)) is not None:
        raise WorkspaceBusy(
            f"the workspace {workspace} is held by a running agent "
            f"(pid {info['pid']}); see `localagent status -w {workspace}`"
        )
    if goal is None:
        from localagent.runner import over, resume_mode

        if resume_mode(journal, journal.load(repair=False)) != "resume":
            return f"the goal in {workspace} is already {over(journal.state)}; nothing to resume"
    journal.dir.mkdir(parents=True, exist_ok=True)
    proc = _popen(child_argv(workspace, goal, flags), workspace, journal.out_path)
    deadline = time.monotonic() + STARTUP_WAIT
    while time.monotonic() < deadline:
        if (info := owner(journal.dir)) is not None:
            return (
                f"started in the background\nworkspace  {workspace}\npid        "
                f"{info['pid']}\nlog        {journal.log_path}"
            )
        if (code := proc.poll()) is not None:
            return _early_exit(journal, code)
        time.sleep(0.05)
    return f"starting in the background (pid {proc.pid})\nlog        {journal.log_path}"


def _early_exit(journal: Journal, code: int) -> str:
    if code == 0:
        return f"the goal finished at once\nworkspace  {journal.workspace}"
    tail = journal.out_path.read_text(encoding="utf-8", errors="replace").strip()
    last = tail.splitlines()[-1] if tail else "(no output)"
    error = AgentError(f"the background agent exited with code {code}: {last}")
    error.exit_code = code if code in (1, 2, 3, 4) else 1
    raise error


def stop(workspace: Path, grace: float = 15.0) -> str:
    """Ask the agent to stop between steps; escalate to terminate, then kill."""
    journal = Journal(workspace)
    info = owner(journal.dir)
    if info is None:
        return f"no agent is running in {workspace}"
    journal.request_stop()
    proc = psutil.Process(info["pid"])
    resume = f"resume with: localagent resume -w {workspace}"
    if _gone(proc, grace):
        return f"stopped the agent (pid {info['pid']}); {resume}"
    proc.terminate()
    if not _gone(proc, 10.0):
        proc.kill()
        _gone(proc, 5.0)
    _record_forced_stop(journal)
    return f"stopped the agent (pid {info['pid']}) by force; the journal is intact; {resume}"


def _gone(proc: psutil.Process, seconds: float) -> bool:
    try:
        proc.wait(timeout=seconds)
    except psutil.TimeoutExpired:
        return False
    except psutil.NoSuchProcess:
        pass
    return True


def _record_forced_stop(journal: Journal) -> None:
    """A killed agent could not journal `stopped`; do it for it, under the same lock."""
    lock = WorkspaceLock(journal.dir)
    try:
        lock.acquire()
    except WorkspaceBusy:
        return
    try:
        state = journal.load()
        if state.goal is not None and state.goal.status == "in_progress":
            journal.append("stopped", reason="stopped with `localagent stop` (forced)")
        journal.clear_stop()
    finally:
        journal.close()
        lock.release()


def follow(path: Path, write: Any, poll: float = 0.5) -> None:
    """Print the log and then what is appended to it, across rotations, until Ctrl-C."""
    position = 0
    try:
        while True:
            try:
                size = path.stat().st_size
            except FileNotFoundError:
                size = 0
            if size < position:
                position = 0  # rotated: the new file starts from the beginning
            if size > position:
                with path.open("rb") as fh:
                    fh.seek(position)
                    chunk = fh.read()
                position += len(chunk)
                write(chunk.decode("utf-8", errors="replace"))
            time.sleep(poll)
    except KeyboardInterrupt:
        return


def resumable(notes: list[str]) -> list[Path]:
    """Workspaces whose agent died while its goal was in progress (not stopped by hand)."""
    from localagent.registry import workspaces

    found = []
    for path in workspaces(notes):
        workspace = Path(path)
        journal = Journal(workspace)
        if not journal.exists() or owner(journal.dir) is not None:
            continue
        try:
            state = journal.load(repair=False)
        except AgentError as exc:
            notes.append(f"skipped {workspace}: {exc.message}")
            continue
        if state.goal is not None and state.goal.status == "in_progress":
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
    for workspace in targets:
        try:
            lines.append(spawn(workspace, None, flags).replace("\n", "; "))
        except AgentError as exc:
            lines.append(f"{workspace}: {exc.message}")
    return "\n".join(lines)
