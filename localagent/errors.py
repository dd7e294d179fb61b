"""Errors that end a command, each carrying the exit code of SPEC §2.

Only the CLI turns these into messages and exit codes; everything below it
raises them and never prints.
"""

from __future__ import annotations


class AgentError(Exception):
    """Base of every error a user may see; `exit_code` is the process exit code."""

    exit_code = 1

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class GoalFailed(AgentError):
    exit_code = 1


class UsageError(AgentError):
    exit_code = 2


class JournalCorrupt(AgentError):
    """The journal is damaged in a way that cannot be repaired without losing records."""

    exit_code = 2


class JournalWriteFailed(AgentError):
    """The disk refused a write or fsync; the run stops rather than carry on unjournaled."""

    exit_code = 1


class ModelUnavailable(AgentError):
    exit_code = 3


class WorkspaceBusy(AgentError):
    exit_code = 4


class Interrupted(AgentError):
    exit_code = 130
