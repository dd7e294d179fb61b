"""Errors that end a command, each carrying the exit code of SPEC §2.

Only the CLI turns these into messages and exit codes; everything below it
raises them and never prints.
"""

from __future__ import annotations

import errno
from pathlib import Path

from localagent.system.names import display


class AgentError(Exception):
    """Base of every error a user may see; `exit_code` is the process exit code."""

    exit_code = 1

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class UsageError(AgentError):
    exit_code = 2


class JournalCorrupt(AgentError):
    """The journal is damaged in a way that cannot be repaired without losing records."""

    exit_code = 2


class ForeignJournal(UsageError):
    """The workspace's journal was not written by this user's agent: what it names runs
    only once the user adopts it (`--adopt`)."""


class RecordRefused(AgentError):
    """A record the journal could not read back was about to be written; nothing was."""

    exit_code = 1


class JournalWriteFailed(AgentError):
    """The disk refused a write or fsync; the run stops rather than carry on unjournaled."""

    exit_code = 1


class WorkspaceUnwritable(AgentError):
    """The workspace (or its disk) refuses writes: read-only, or no permission (exit 2)."""

    exit_code = 2


class ModelUnavailable(AgentError):
    exit_code = 3


class ModelRefused(AgentError):
    """The model server answered, but refused the request (a 4xx other than 404)."""

    exit_code = 1


class WorkspaceBusy(AgentError):
    exit_code = 4


_REFUSED = frozenset({errno.EACCES, errno.EPERM, errno.EROFS})
_FULL = frozenset({errno.ENOSPC, errno.EFBIG, getattr(errno, "EDQUOT", errno.ENOSPC)})


def disk_error(path: Path, exc: OSError) -> AgentError:
    """What a failed write at `path` means for the user, with the fix, in one line:
    a read-only workspace (exit 2), a full disk (exit 1), or another disk error."""
    why = exc.strerror or str(exc)
    if exc.errno in _REFUSED or isinstance(exc, PermissionError):
        return WorkspaceUnwritable(
            f"cannot write {display(path)}: {why}. localagent keeps its journal in the workspace's "
            f".agent_context folder: make the workspace writable (its permissions, or a disk "
            f"mounted read-only), or choose another folder with -w"
        )
    if exc.errno in _FULL:
        return JournalWriteFailed(
            f"cannot write {display(path)}: {why}; the disk is full (or a file size limit is "
            f"reached). Free some space, then run the command again"
        )
    return JournalWriteFailed(
        f"cannot write {display(path)}: {why}; check the disk, then try again"
    )
