"""The agent loop: ask the model, run the tools, journal, advance (SPEC §6).

Read top to bottom: `run` loops over `step`, and `step` does the next piece of owed
work the state names (`next_due`): the plan, a replan, an action a crash interrupted,
a tool call of the latest reply, or a new round. Every state change is a journal record
written before the next model call, so a resumed run does exactly what the crashed run
would have done. What one call of a reply leads to (run, redirected, blocked, or the
subtask failed) is `localagent.loop.acting`; how a tool call is run, settled after a
crash or accepted as done, `localagent.loop.actions`; how the goal is verified once its
last subtask is done, `localagent.loop.verifying`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from collections.abc import Callable, Sequence
from typing import Any

from localagent import tools
from localagent.config.settings import Settings
from localagent.journal import Journal
from localagent.loop import (
    acting,
    actions,
    context,
    ending,
    loopguard,
    planner,
    replans,
    rewrite,
    roundcall,
    rundone,
    stoodback,
    verifying,
)
from localagent.loop import facts as facts_of
from localagent.loop.strikes import Strikes
from localagent.models import Model, Reply
from localagent.prompts.front import Conversation, Front
from localagent.prompts.promptset import PromptSet
from localagent.state import ReplanDue, State, current
from localagent.state import due as owed
from localagent.system.exits import Outcome
from localagent.system.stopping import StopRequested, StopSignal
from localagent.textcalls import ToolCall, parse_reply
from localagent.tools.examples import example_call

log = logging.getLogger("localagent.loop.agent")
MAX_CALLS_PER_REPLY = roundcall.MAX_CALLS_PER_REPLY


class Agent:
    def __init__(
        self,
        journal: Journal,
        model: Model,
        settings: Settings,
        ctx: tools.ToolContext,
        stop: StopSignal,
        on_progress: Callable[[State], None] = lambda state: None,
        extra_tools: Sequence[tools.Tool] = (),
    ) -> None:
        self.journal = journal
        self.model = model
        self.settings = settings
        self.ctx = ctx
        self.stop = stop
        self.on_progress = on_progress
        # What this process has to tell the model once (an MCP server that did not start,
        # an action the crash interrupted); notices a reply earns are journaled with it
        # (`state.notice`), so a resumed run's prompt is the one the crashed run would send.
        self.notice = ""
        # Fixed for the whole run: the tool list sits at the front of every prompt.
        small = settings.profile == "small"
        delegates = list(settings.delegates)
        self.tools = tools.run_tools(settings.tools, delegates, extra_tools, essential=small)
        self.prompts = PromptSet(settings.prompts, small=small)
        self.ctx = ctx = dataclasses.replace(ctx, prompts=self.prompts)  # tools' notes too
        steps = [tool.name for tool in self.tools if not tool.policy.control]
        self.planner = planner.Planner(
            model, self.prompts, steps, small, self.request_front, ctx.root,
            max(settings.temperature, settings.repeat_temperature),
        )  # fmt: skip
        # Rendered once per run (per tool-calling mode), so the front of every prompt
        # stays byte-identical and the model server reuses its KV cache.
        self.system: dict[bool, str] = {}
        self.actions = actions.Actions(
            journal,
            self.tools,
            ctx,
            self.prompts,
            Strikes(self.prompts, settings.max_blocked, settings.max_format_errors),
            snapshot_bytes=settings.snapshot_store_mb << 20,
            small=small,
        )
        self.verifier = verifying.Verifier(
            journal,
            settings,
            ctx,
            model,
            self.prompts,
            self.actions.snapshots,
            stop,
            self._recorder("verify"),
            self.conversation,
        )

    @property
    def state(self) -> State:
        return self.journal.state

    def run(self) -> Outcome:
        """Work until the goal ends; returns how it ended (the caller journals it)."""
        while (outcome := self.finished()) is None:
            with contextlib.suppress(StopRequested):  # `finished` sees the stop
                self.step()
            self.on_progress(self.state)
        return outcome

    def step(self) -> None:
        match owed.next_due(self.state):
            case owed.DuePlan():
                self.plan()
            case owed.DueReplan(due):
                self.replan(due)
            case owed.DueRecovery(action):
                self.notice = "\n".join(filter(None, [self.notice, self.actions.recover(action)]))
            case owed.DueCompletion(done):
                self.actions.completed_by(done)
            case owed.DueCall(call):
                acting.act(self, call)
            case owed.DueVerify(under_way):
                self.verifier.step(under_way)
            case owed.DueRound():
                self.ask()

    def finished(self) -> Outcome | None:
        return ending.finished(self.state, self.stop, self.settings.max_rounds, self.prompts)

    # ---- planning --------------------------------------------------------------

    def plan(self) -> None:
        assert self.state.goal is not None
        tasks = self.planner.decompose(self.state.goal.text, self._recorder("plan"))
        log.info("plan: %s", "; ".join(t["description"] for t in tasks))
        self.journal.append("plan", tasks=tasks)

    def replan(self, due: ReplanDue) -> None:
        on_call = self._recorder("replan")
        most = self.settings.max_replans
        fields = replans.revise(
            self.state, due, self.planner, self.ctx.root, self.prompts, on_call, most
        )
        if fields is None:
            self.journal.append("replan_skipped", reason="no valid plan came back")
        else:
            self.journal.append("plan", **fields)

    def _recorder(self, purpose: str) -> Callable[[Reply], None]:
        return lambda reply: self.record_call(purpose, reply)

    # ---- one model call ------------------------------------------------------

    def front(self) -> Front:
        """How every model call opens, rounds and plans alike (in the current mode)."""
        native = self.model.native_tools
        if native not in self.system:
            self.system[native] = context.system_prompt(
                self.settings.allowed_commands, self.tools, native, self.prompts
            )
        return Front(self.system[native], self.tools.specs() if native else None)

    def request_front(self) -> Front | None:
        """How a plan or replan request opens: as the rounds do, or in the small profile
        with its own instructions as the system prompt (None).

        Without the tools: Qwen2.5-Coder-1.5B answers every plan request that carries them
        with a tool call begun inside the JSON (`"subtasks": ["{{"]`), and llama-server
        does not hold a request with tools to its schema. Nor with the rounds' system
        prompt: a request that shares the start of the rounds' prompt takes their cache
        slot (llama-server picks the slot sharing the most), and keeps the engine from
        restoring their state after it; one that shares nothing goes to another slot, or
        the rounds' state comes back from the engine's prompt cache (`--cache-ram`)."""
        return None if self.planner.small else self.front()

    def conversation(self, turn: str) -> Conversation:
        """The rounds' messages as the next round would send them, `turn` last instead of
        its facts, and their tools: a verdict request goes on from there (`Conversation`)."""
        return Conversation(self.laid_out(self.probe(), turn)[0], self.tools.specs())

    def laid_out(
        self, facts: dict[str, Any], turn: str | None = None
    ) -> tuple[list[dict[str, Any]], int]:
        """The round's prompt in the run's budget, and where its window starts."""
        budget = context.budget(self.model.num_ctx, self.settings.num_predict)
        return context.layout(
            self.state,
            self.front().system,
            self.settings.history_keep,
            self.model.native_tools,
            facts,
            budget,
            self.prompts,
            turn,
        )

    def ask(self) -> None:
        if self.planner.small and (
            done := rundone.nothing_to_fix(self.state, self.prompts)
            or rundone.ran_already(self.state, self.prompts)
        ):
            self.actions.completed_by(done.owed())  # the tests passed: nothing to fix or run
            return
        if self.planner.small and (why := stoodback.reason(self.state, self.prompts)):
            self.fail_subtask(why)  # the model gave the function back unchanged
            return
        if self.planner.small and (due := rewrite.due(self.state, self.ctx.root)) is not None:
            self.ask_rewrite(due)
            return
        native = self.model.native_tools
        facts = self.probe()
        messages, start = self.laid_out(facts)
        # A model whose last two calls are one call is copying its own reply: at 0.2 the
        # 1.5B sent one stub of rps_game.py six times running.
        hot = max(self.settings.temperature, self.settings.repeat_temperature)
        raised = loopguard.repeating(self.state.guard) and hot > self.settings.temperature
        temperature = hot if raised else None
        reply = self.model.chat(messages, tools=self.tools.specs(), temperature=temperature)
        self.notice = ""
        calls, problem, recogniser = self._calls(reply)
        notice = roundcall.earned(self.prompts, reply, len(calls), self.settings.num_predict)
        calls = calls[:MAX_CALLS_PER_REPLY]
        if native and not self.model.native_tools and not calls:
            # The server refused tools during this call and the reply holds no call: the
            # next round asks again with the text protocol described; no mistake counted.
            self.record_call("retry", reply)
            return
        how = (recogniser, notice, start)
        fields = roundcall.fields(self.state.rounds + 1, reply, calls, facts, messages, how)
        fields |= {"temperature": temperature} if temperature is not None else {}
        self.record_call("round", reply, fields)
        if calls:
            return
        if problem:
            names = ", ".join(self.tools.names())
            example = example_call(self.tools, str(facts["subtask"]), reply.content)
            text = self.prompts.render(
                "format_error", problem=example.fill(problem), tools=names, example=example.text
            )
        else:
            text = self.prompts.render("no_tool_call")
        self.journal.append("feedback", text=text, tool="format", format_error=True)
        if (reason := self.actions.strikes.format_errors(self.state)) is not None:
            self.fail_subtask(reason)

    def probe(self) -> dict[str, Any]:
        """The round's facts, with what this process and the last reply have to tell."""
        told = "\n".join(filter(None, [self.state.notice, self.notice]))
        return facts_of.probe(
            self.state, self.ctx.root, self.settings.max_rounds, told, self.prompts
        )

    def ask_rewrite(self, due: rewrite.Rewrite) -> None:
        """The round as a request for the function the tests show wrong (`rewrite`)."""
        facts = self.probe()
        facts[rewrite.RECOGNISER] = due.name
        messages = rewrite.messages(due, self.prompts)
        reply = self.model.chat(messages, max_tokens=rewrite.REPLY_TOKENS)
        self.notice = ""
        found = rewrite.call(due, reply.content)
        # A reply that is a tool call after all is read as one.
        calls, _, recogniser = ([found], "", rewrite.RECOGNISER) if found else self._calls(reply)
        calls = calls[:MAX_CALLS_PER_REPLY]
        stood = not calls and rewrite.unchanged(due, reply.content)
        if stood:
            facts[rewrite.STOOD] = due.name  # its edit subtask fails next (`stoodback`)
        how = (recogniser or rewrite.RECOGNISER, "", self.state.window_start)
        fields = roundcall.fields(self.state.rounds + 1, reply, calls, facts, messages, how)
        if found is not None:
            # Later rounds show the round as the call it made: shown the reply's code block
            # instead, the 1.5B answered its next subtask with a code block too (the CPU).
            fields |= rewrite.as_written(found, reply.content)
        self.record_call("round", reply, fields)
        if not calls and not stood:
            self.journal.append("feedback", text=self.prompts.render("no_tool_call"), tool="format")

    def _calls(self, reply: Reply) -> tuple[list[ToolCall], str, str]:
        """The reply's calls (all of them), what was wrong when it tried one, and how it
        was written."""
        calls, recogniser = reply.tool_calls, "native"
        if not calls:
            parsed = parse_reply(reply.content, set(self.tools.names()))
            if not parsed.calls:
                return [], parsed.problem, ""
            calls, recogniser = parsed.calls, parsed.recogniser or "text"
        return calls, "", recogniser

    def record_call(self, purpose: str, reply: Reply, fields: dict[str, Any] | None = None) -> None:
        fields = dict(fields or {})
        if reply.cut_off:
            fields["cut_off"] = reply.cut_off
        self.journal.append("llm_call", purpose=purpose, **reply.usage(), **fields)
        log.info(
            "model call (%s): %d+%d tokens, %.1f s%s",
            purpose,
            reply.prompt_tokens,
            reply.completion_tokens,
            reply.duration_ms / 1000,
            f", cut off ({reply.cut_off})" if reply.cut_off else "",
        )

    # ---- a subtask that cannot go on ------------------------------------------

    def fail_subtask(
        self, reason: str, call_id: str | None = None, claim: str = "", stuck: bool = False
    ) -> None:
        """Fail the active subtask; a replan follows while replans are left, unless the
        goal is `stuck` (it then ends failed)."""
        here = current(self.state)
        assert here is not None
        log.warning("subtask failed: %s: %s", here[1].description, reason)
        most, small, root = self.settings.max_replans, self.planner.small, self.ctx.root
        replan = not stuck and replans.left(self.state, most, small, root, self.prompts, reason)
        extra = {"claim": claim} if claim else {}
        self.journal.append(
            "subtask_failed", reason=reason, call=call_id, replan=replan, stuck=stuck, **extra
        )
