"""One tool of the registry, and its `Policy`: what the loop and resume do with it, so
neither ever dispatches on a tool's name."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from localagent.models.protocol import ToolSpec
from localagent.tools.base import ToolResult

# What resume does with a call that a crash interrupted: run it again (it reads, or
# writes what it was given whatever was there), check the paths it touches against their
# state when it started (unchanged: run it; changed: it was applied), or never run it
# again and tell the model (commands, commits: effects outside what can be checked).
Resume = Literal["redo", "check", "never"]


@dataclass(frozen=True)
class Policy:
    resume: Resume = "redo"
    changes: bool = False  # it may change the workspace
    spawns: bool = False  # it runs processes, marked as its `action_started` says (a crash)
    control: bool = False  # not an action: the loop reads its verdict (mark_subtask_complete)
    default: bool = True  # enabled unless the `tools` setting leaves it out
    paths: tuple[str, ...] = ()  # arguments that name workspace paths
    # Spells arguments the same way whatever the model wrote (a command re-spaced).
    canonical: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    guide: str = ""  # the prompt of its rule lines in the system prompt while it is enabled
    # What the observation of a blocked repeat of it adds: the note its last run ended
    # with, which nothing has changed since (a script that calls nothing, and its fix).
    blocked_note: Callable[[Any, dict[str, Any]], str] | None = None
    # The arguments a repeat of it runs with instead, where the repeat could show nothing
    # new and they can (a run without stdin of a script that reads input, given some),
    # and the line that ends its observation to say so.
    repeat_with: Callable[[Any, dict[str, Any]], tuple[dict[str, Any], str] | None] | None = None


@dataclass(frozen=True)
class Tool:
    name: str
    function: Callable[..., ToolResult]
    arguments: type[BaseModel]
    spec: ToolSpec
    signature: str
    policy: Policy
