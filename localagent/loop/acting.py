"""One tool call of the latest reply (SPEC §6): run as the loop guard allows, redirected
to what the step says to keep, or blocked; and where the call shows the subtask cannot
go on (a small model's run that could only fail again, an edit the tests still fail
after, insisting on a blocked call), the subtask failed so its replan follows."""

from __future__ import annotations

from typing import Any, Protocol

from localagent.config.settings import Settings
from localagent.loop import addback, claimed, handback, loopguard, readdone, searchdone, stepedit
from localagent.loop.actions import Actions
from localagent.loop.planner import Planner
from localagent.prompts.promptset import PromptSet
from localagent.state import State
from localagent.tools import ToolContext, ToolRegistry


class Loop(Protocol):
    """What of the agent a call needs (`localagent.loop.agent.Agent`)."""

    tools: ToolRegistry
    actions: Actions
    planner: Planner
    ctx: ToolContext
    prompts: PromptSet
    settings: Settings

    @property
    def state(self) -> State: ...

    def fail_subtask(
        self, reason: str, call_id: str | None = None, claim: str = "", stuck: bool = False
    ) -> None: ...


def act(agent: Loop, call: dict[str, Any]) -> None:
    """Run, block or redirect one call of the latest reply, and fail the active subtask
    where the call shows it cannot go on."""
    name, args, call_id = str(call["name"]), call["arguments"], call["id"]
    tool = agent.tools.get(name)
    if tool is not None and tool.policy.control:
        if (failed := claimed.complete(agent.actions, name, args, call_id)) is not None:
            agent.fail_subtask(failed.reason, call_id, failed.claim, failed.stuck)
        return
    sig, said = loopguard.sign(agent.tools, name, args), ""
    again = agent.planner.small and name == "run_cmd" and loopguard.ran(agent.state.guard, sig)
    if again and (reason := handback.back(agent.state, agent.ctx.root, agent.prompts)):
        # The same run sent again, nothing changed since it stopped on a file this run
        # wrote (or the tests failed after an edit): it could only do so again. The
        # 1.5B ran its mathx tests twice more, the second time blocked, before this.
        agent.fail_subtask(reason, call_id)
        return
    if (other := stepedit.as_said(agent.state, agent.ctx.root, name, args)) is not None:
        args, said = other  # what the step says to keep, kept
        sig = loopguard.sign(agent.tools, name, args)
    if (other := agent.actions.instead(name, args, sig)) is not None:
        args, said = other
        sig = loopguard.sign(agent.tools, name, args)
    block = loopguard.check(agent.state.guard, sig)
    if block is not None and agent.planner.small and looks_up(agent.state, name, args):
        block = None  # the read or search its subtask asks for, which ends it
    if block is None:
        result = agent.actions.execute(name, args, call_id, sig, said)
        if agent.planner.small and (
            why := handback.stops_now(agent.state, agent.ctx.root, result, agent.prompts)
            or addback.stops_now(
                agent.state,
                agent.ctx.root,
                name,
                args,
                result,
                agent.prompts,
                agent.settings.max_replans,
            )
        ):
            agent.fail_subtask(why)  # the first run that shows it, with the small profile
        return
    if agent.actions.repeat_completes(name, args, call_id):
        return
    note = agent.actions.blocked(name, args, call_id, block)
    if (reason := agent.actions.strikes.insisted(agent.state, name, args, note)) is not None:
        agent.fail_subtask(reason)
    elif note and handback.runs_idle(agent.state, agent.ctx.root):
        # Its program calls none of its code: running it again shows nothing new, so
        # the run subtask fails now and its replan goes back to a write.
        agent.fail_subtask(note.removeprefix("NOTE: "))
    elif agent.planner.small and (
        reason := handback.back(agent.state, agent.ctx.root, agent.prompts)
    ):
        # A file it wrote does not load, or the tests fail after the edit before:
        # the same, back to a write or an edit of that file.
        agent.fail_subtask(reason)


def looks_up(state: State, name: str, args: Any) -> bool:
    """Whether a call is the read or the search its read or search subtask asks for."""
    return readdone.asked(state, name, args) or searchdone.asked(state, name, args)
