"""The agent loop: ask the model, run the tools, journal, advance (SPEC §6).

Read top to bottom: `run` loops over `step` until the goal ends; every state change is
a journal record written before the next model call, so a crash anywhere resumes here.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from localagent import context, loopguard, planner, tools
from localagent.journal import Journal
from localagent.model import UNPARSED, OllamaModel, Reply
from localagent.prompts import (
    FORMAT_ERROR,
    INSISTED,
    INTERRUPTED_CMD,
    MAX_ROUNDS,
    NO_TOOL_CALL,
    RESUMED_NOTICE,
    TOO_MANY_CALLS,
    TOO_MANY_FORMAT_ERRORS,
    render,
)
from localagent.settings import Settings
from localagent.state import State, clip, current, pending_calls
from localagent.stopping import StopSignal
from localagent.textcalls import TextCallError, ToolCall, parse_text_calls

log = logging.getLogger("localagent.agent")
MAX_CALLS_PER_REPLY = 5
ARGS_KEPT = 300  # `action_started` holds the arguments in full; the finish needs no copy


def _failures(state: State) -> str:
    assert state.goal is not None
    failed = [s for t in state.goal.tasks for s in t.subtasks if s.status == "failed"]
    last = failed[-1]
    more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
    return f"subtask '{last.description}' failed: {last.reason}{more}"


def _brief(args: dict[str, Any]) -> str:
    return " ".join(f"{k}={str(v)[:60]!r}" for k, v in clip(args, 60).items())


class Agent:
    def __init__(
        self,
        journal: Journal,
        model: OllamaModel,
        settings: Settings,
        ctx: tools.ToolContext,
        stop: StopSignal,
        on_progress: Callable[[State], None] = lambda state: None,
    ) -> None:
        self.journal = journal
        self.model = model
        self.settings = settings
        self.ctx = ctx
        self.stop = stop
        self.on_progress = on_progress
        self.notice = ""

    @property
    def state(self) -> State:
        return self.journal.state

    def run(self) -> str:
        """Work until the goal ends; returns the goal's final status."""
        self.recover()
        while (outcome := self.finished()) is None:
            self.step()
            self.on_progress(self.state)
        return outcome

    def plan(self) -> None:
        assert self.state.goal is not None
        tasks = planner.decompose(self.model, self.state.goal.text, self._record_call("plan"))
        self.journal.append("plan", tasks=tasks)

    def recover(self) -> None:
        """Settle an action a crash interrupted: redo it if idempotent, else tell the model."""
        action = self.state.open_action
        if action is None:
            return
        if action.tool in tools.IDEMPOTENT_TOOLS:
            log.info("redoing interrupted %s %s", action.tool, action.args)
            self._execute(action.tool, action.args, redone=True)
        else:
            text = render(INTERRUPTED_CMD, cmd=action.args.get("cmd", action.tool))
            self.journal.append("action_interrupted", tool=action.tool, args=action.args, text=text)
            self.notice = text
        self.notice = self.notice or RESUMED_NOTICE

    def finished(self) -> str | None:
        state = self.state
        assert state.goal is not None
        if reason := self.stop.requested():
            self.journal.append("stopped", reason=reason)
            return "stopped"
        if current(state) is None:
            if state.unresolved:
                return self._end("goal_failed", _failures(state))
            return self._end("goal_completed", "every subtask is done")
        if state.rounds >= self.settings.max_rounds and not pending_calls(state):
            return self._end("goal_failed", render(MAX_ROUNDS, limit=self.settings.max_rounds))
        return None

    def _end(self, kind: str, reason: str) -> str:
        log.info("%s: %s", kind, reason)
        self.journal.append(kind, reason=reason)
        return "completed" if kind == "goal_completed" else "failed"

    def step(self) -> None:
        if not pending_calls(self.state):
            self.ask()
        cursor = (self.state.task_index, self.state.subtask_index)
        for call in pending_calls(self.state):
            if (self.state.task_index, self.state.subtask_index) != cursor:
                break
            self.act(call["name"], call["arguments"])

    # ---- one model call ------------------------------------------------------

    def ask(self) -> None:
        native = self.model.native_tools
        schemas = tools.tool_schemas()
        facts = context.probe(self.state, self.ctx.root, self.settings.max_rounds, self.notice)
        system = context.system_prompt(self.settings.allowed_commands, None if native else schemas)
        messages = context.build(self.state, system, self.settings.history_keep, native, facts)
        with self.stop.abandonable():
            reply = self.model.chat(messages, tools=schemas)
        self.notice = ""
        calls, problem = self._calls(reply)
        if native and not self.model.native_tools and not calls:
            # The server refused tools during this call, and the reply holds no call:
            # ask again with the text protocol described, rather than count a mistake.
            return self.ask()
        self._record_call("round", probe=facts, calls=calls)(reply)
        if calls:
            return
        text = render(FORMAT_ERROR, problem=problem, tools=", ".join(tools.tool_names()))
        self.journal.append(
            "feedback", text=text if problem else NO_TOOL_CALL, tool="format", format_error=True
        )
        if self.state.format_errors >= self.settings.max_format_errors:
            self.fail_subtask(render(TOO_MANY_FORMAT_ERRORS, count=self.state.format_errors))

    def _calls(self, reply: Reply) -> tuple[list[ToolCall], str]:
        calls = reply.tool_calls
        if not calls:
            try:
                calls = parse_text_calls(reply.content, set(tools.tool_names()))
            except TextCallError as exc:
                return [], str(exc)
        if len(calls) > MAX_CALLS_PER_REPLY:
            self.notice = render(TOO_MANY_CALLS, limit=MAX_CALLS_PER_REPLY, count=len(calls))
        return calls[:MAX_CALLS_PER_REPLY], ""

    def _record_call(
        self, purpose: str, probe: dict[str, Any] | None = None, calls: list[ToolCall] | None = None
    ) -> Callable[[Reply], None]:
        def record(reply: Reply) -> None:
            fields: dict[str, Any] = {}
            if purpose == "round":
                fields = {
                    "content": reply.content[:2000],
                    "probe": probe or {},
                    "tool_calls": [{"name": c.name, "arguments": c.arguments} for c in calls or []],
                }
            self.journal.append(
                "llm_call",
                purpose=purpose,
                prompt_tokens=reply.prompt_tokens,
                completion_tokens=reply.completion_tokens,
                duration_ms=round(reply.duration_ms, 1),
                **fields,
            )

        return record

    # ---- one tool call -------------------------------------------------------

    def act(self, name: str, args: dict[str, Any]) -> None:
        if name == "mark_subtask_complete":
            result = tools.execute(self.ctx, name, args)
            if result.verdict is None:
                self.journal.append("feedback", text=result.text, tool=name)
            elif result.verdict[0]:
                log.info("subtask completed: %s", result.verdict[1])
                self.journal.append("subtask_completed", reason=result.verdict[1])
            else:
                self.fail_subtask(result.verdict[1])
            return
        sig = loopguard.signature(name, args)
        block = loopguard.check(self.state.guard, sig)
        if block is None:
            self._execute(name, args)
            return
        self._blocked(name, args, block)
        if self.state.guard.insisted >= self.settings.max_blocked:
            self.fail_subtask(render(INSISTED, count=self.state.guard.insisted))

    def _execute(self, name: str, args: dict[str, Any], redone: bool = False) -> None:
        sig = loopguard.signature(name, args)
        if not redone:
            self.journal.append(
                "action_started", tool=name, args=args, signature=sig, round=self.state.rounds
            )
        result = tools.execute(self.ctx, name, args.get(UNPARSED, args))
        log.info(
            "round %d: %s %s -> %s",
            self.state.rounds,
            name,
            _brief(args),
            result.text.split("\n", 1)[0][:120],
        )
        self.journal.append(
            "action_finished",
            tool=name,
            args=clip(args, ARGS_KEPT),
            ok=result.ok,
            result=result.text,
            changed=result.changed,
            returncode=result.returncode,
            **({"redone": True} if redone else {}),
        )

    def _blocked(self, name: str, args: dict[str, Any], block: loopguard.Block) -> None:
        reason = loopguard.explain(block)
        log.warning(
            "blocked %s (%s, attempt %d)", block.signature[:120], block.pattern, block.count
        )
        start = self.state.seq + 1
        self.journal.append(
            "action_blocked",
            tool=name,
            args=args,
            signature=block.signature,
            pattern=block.pattern,
            reason=reason,
        )
        self.journal.append(
            "loop_detected",
            signature=block.signature,
            tool=name,
            args=args,
            count=block.count,
            pattern=block.pattern,
        )
        self.journal.record_loop(
            {
                "signature": block.signature,
                "tool": name,
                "args": args,
                "count": block.count,
                "pattern": block.pattern,
                "seq_range": [start, self.state.seq],
            }
        )

    def fail_subtask(self, reason: str) -> None:
        here = current(self.state)
        assert here is not None
        failed = (here[0].description, here[1].description)
        log.warning("subtask failed: %s: %s", failed[1], reason)
        failed_task = self.state.task_index
        self.journal.append("subtask_failed", reason=reason)
        if self.state.replans >= self.settings.max_replans:
            return
        with self.stop.abandonable():
            tasks = planner.replan(
                self.model, self.state, failed, reason, self._record_call("replan")
            )
        if tasks:
            self.journal.append("plan", tasks=tasks, replace_from=failed_task + 1)
