"""How every prompt opens: the rounds' system prompt and tools first, so that a plan or
replan request after them does not evict what the server's cache holds (in the small
profile those requests open on their own instead: see `Agent.request_front`); a verdict
request goes on from the rounds' last prompt (`Conversation`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from localagent.models import ToolSpec


@dataclass(frozen=True)
class Front:
    """How every round's prompt opens: the run's system prompt and its tools. A plan,
    replan or verdict request opens the same way, its own instructions after it, so the
    server's prompt cache keeps serving the rounds' front instead of evicting it."""

    system: str
    tools: list[ToolSpec] | None

    def messages(self, instructions: str, request: str) -> list[dict[str, Any]]:
        return [
            {"role": "system", "content": self.system},
            {"role": "user", "content": f"{instructions}\n\n{request}"},
        ]


def opening(front: Front | None, instructions: str, request: str) -> list[dict[str, Any]]:
    """A one-off request's messages: after the rounds' front when there is one (a run),
    else with its instructions as the system prompt."""
    if front is not None:
        return front.messages(instructions, request)
    return [{"role": "system", "content": instructions}, {"role": "user", "content": request}]


@dataclass(frozen=True)
class Conversation:
    """A request that goes on from the rounds (the verdict): their messages as the next
    round would send them, its own turn last instead of that round's facts, and their
    tools. The server's cache holds all of it but the last round's results and the turn."""

    messages: list[dict[str, Any]]
    tools: list[ToolSpec] | None
