"""One tool call as the journal sees it (SPEC §5, §7, §11).

An action runs between `action_started` and `action_finished`, and nothing of it runs
before its `action_started` is durable: a program started first would run again on
resume if a crash came before the record. One a crash interrupted is settled as its
tool's policy says; one the loop guard refuses is journaled as blocked; and a "done"
from the model is accepted only on the journal's evidence.
"""

from __future__ import annotations

import dataclasses
import logging
import secrets
from typing import Any

from localagent.journal import Journal
from localagent.loop import loopguard, rundone, unchangedwrite, usestep
from localagent.loop.strikes import Strikes
from localagent.prompts.promptset import PromptSet
from localagent.rewind.snapshots import Snapshots
from localagent.state import Action, State
from localagent.system.proctree import kill_marked, kill_recorded
from localagent.system.textcap import clip
from localagent.textcalls import given_arguments
from localagent.tools import ToolContext, ToolRegistry, ToolResult
from localagent.tools.fingerprint import fingerprint
from localagent.verify.outputs import off_run

log = logging.getLogger("localagent.loop.agent")
ARGS_KEPT = 300  # `action_started` holds the arguments in full; the finish needs no copy


def _brief(args: dict[str, Any]) -> str:
    return " ".join(f"{k}={str(v)[:60]!r}" for k, v in clip(args, 60).items())


def _what(action: Action) -> str:
    """An interrupted action as its notice names it: a command, or a call with arguments."""
    cmd = action.args.get("cmd")
    if isinstance(cmd, str):
        return f"the command `{cmd}`"
    shown = ", ".join(f"{k}={str(v)[:80]!r}" for k, v in action.args.items())
    return f"the call `{action.tool}({shown})`"


def kill_leftovers(action: Action) -> bool:
    """Kills what still runs of an interrupted action's processes; True if something did.
    They carry the marker its `action_started` names; a journal from before markers
    named the process itself."""
    if action.marker:
        return kill_marked(action.marker) > 0
    return bool(action.pid) and kill_recorded(action.pid or 0, action.create_time or 0.0)


class Actions:
    def __init__(
        self,
        journal: Journal,
        tools: ToolRegistry,
        ctx: ToolContext,
        prompts: PromptSet,
        strikes: Strikes,
        snapshot_bytes: int = 0,
        small: bool = False,
    ) -> None:
        self.small = small  # the small-model profile: a write or run subtask ends with it
        self.journal = journal
        self.tools = tools
        self.ctx = ctx
        self.prompts = prompts
        self.strikes = strikes
        self.snapshots = Snapshots(journal, ctx.root, snapshot_bytes)
        self.snapshots.refuse_half_rewound()

    @property
    def state(self) -> State:
        return self.journal.state

    def instead(
        self, name: str, args: dict[str, Any], sig: str
    ) -> tuple[dict[str, Any], str] | None:
        """For a call that repeats one made since the workspace last changed, the arguments
        its tool runs instead (see `Policy.repeat_with`) and the line that tells the model
        so; None to run (or block) it as it is."""
        given = given_arguments(args)
        tool = self.tools.get(name, given)
        if tool is None or tool.policy.repeat_with is None or not isinstance(given, dict):
            return None
        if not loopguard.ran(self.state.guard, sig):
            return None
        return tool.policy.repeat_with(self.ctx, given)

    def execute(
        self, name: str, args: dict[str, Any], call_id: str, sig: str, said: str = ""
    ) -> ToolResult:
        """Run the call and journal its result (and the completion it earns); the result.
        `said` ends the tool's own observation: why it ran with other arguments."""
        given = given_arguments(args)
        tool = self.tools.get(name, given)
        # The processes a tool starts carry this marker, journaled (durably) before any of
        # them exists: after a crash at any moment they can be found, and killed.
        marker = secrets.token_hex(8) if tool is not None and tool.policy.spawns else None
        before = self.tools.digest(self.ctx, name, given)
        if tool is not None and tool.policy.changes:  # what it may change, kept first
            self.snapshots.before(tool.name, self.state.rounds, self.snapshots.scope(tool, given))
        started = self.journal.append(
            "action_started",
            tool=name,
            args=args,
            signature=sig,
            round=self.state.rounds,
            call=call_id,
            **({"marker": marker} if marker else {}),
            **({"before": before} if before is not None else {}),
            **({"said": said} if said else {}),
        )
        ctx = dataclasses.replace(self.ctx, marker=marker, output_id=started["seq"])
        result = self.tools.execute(ctx, name, given)
        state, root = self.state, self.ctx.root
        if off := self._off(result):  # journaled with the run: replay reads the same
            result = dataclasses.replace(result, facts={**result.facts, "off": [off]})
        earned = rundone.earned(state, root, result.facts, result.text, self.small, self.prompts)
        if earned:
            added = earned[1]
        else:  # what a step still owes, said while it goes on
            added = (
                usestep.note(state, root, result.facts, self.prompts)
                or unchangedwrite.unchanged_note(state, root, result.facts, self.prompts)
                if self.small
                else ""
            )
        notes = [n for n in (said, added) if n]
        own = len(result.text)  # the tool's own observation ends here; the notes follow
        result = dataclasses.replace(
            result, text="\n".join([result.text, *notes]), own=own if notes else None
        )
        owed = {"completes": earned[0]} if earned else {}
        self.finish(name, args, call_id, result, **owed, **({"note_at": own} if notes else {}))
        return result

    def _off(self, result: ToolResult) -> str:
        """What the goal states of the run just made that it did not show (its output,
        status or the numbers it counts), "" when nothing: such a run failed."""
        goal = self.state.goal.text if self.state.goal is not None else ""
        ran = result.facts.get("ran", []) if result.ok and goal else []
        return next((o for cmd in ran if (o := off_run(goal, cmd, result.text, self.ctx.root))), "")

    def completed_by(self, owed: dict[str, str]) -> None:
        """Journal the completion a write or run subtask's own call earned (see `writedone`,
        `rundone`)."""
        fields = rundone.completion(self.state, self.ctx.root, owed)
        log.info("subtask completed by its %s: %s", fields["by"], fields["reason"])
        self.journal.append("subtask_completed", call=None, **fields)

    def repeat_completes(self, name: str, args: dict[str, Any], call_id: str) -> bool:
        """Whether a run the loop guard blocks ends its run subtask instead: the same
        command succeeded in it with nothing changed since (journaled then)."""
        ran = rundone.rerun(self.state, self.tools.get(name, given_arguments(args)), args)
        done = rundone.repeated(self.state, ran, self.prompts) if ran else None
        if done is None:
            return False
        text = rundone.note(self.state, done, self.prompts, rerun=True)
        log.info("subtask completed by its earlier run: %s", done.reason)
        self.journal.append("feedback", text=text, tool=name, call=call_id, completes=done.owed())
        return True

    def finish(
        self,
        name: str,
        args: dict[str, Any],
        call_id: str | None,
        result: ToolResult,
        **extra: Any,
    ) -> None:
        self.snapshots.settle()
        print_ = fingerprint(self.ctx.root)
        changed = result.changed or bool(
            self.state.fingerprint and print_ != self.state.fingerprint
        )
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
            changed=changed,
            fingerprint=print_,
            returncode=result.returncode,
            call=call_id,
            **({"facts": result.facts} if result.facts else {}),
            **({"output": result.output.id} if result.output else {}),
            **extra,
        )

    def recover(self, action: Action) -> str:
        """Settle an action a crash interrupted as its tool's policy says: redo it, redo it
        unless it was applied, or tell the model its effect is unknown (the notice for the
        model is returned; "" when there is none)."""
        given = given_arguments(action.args)
        tool = self.tools.get(action.tool, given)
        resume = "never" if tool is None else tool.policy.resume
        if resume == "check" and action.before is not None:
            applied = self.tools.applied(self.ctx, action.tool, given, action.before)
            if applied is not None:
                log.info("interrupted %s %s was applied", action.tool, _brief(action.args))
                self.finish(action.tool, action.args, action.call, applied, applied=True)
                return ""
        if resume != "never":
            log.info("redoing interrupted %s %s", action.tool, _brief(action.args))
            kill_leftovers(action)  # a read still running from before is not needed
            ctx = dataclasses.replace(self.ctx, marker=action.marker, output_id=action.seq)
            result = self.tools.execute(ctx, action.tool, given)
            self.finish(action.tool, action.args, action.call, result, redone=True)
            return ""
        killed = kill_leftovers(action)
        self.snapshots.settle()
        notice = "interrupted_killed" if killed else "interrupted_cmd"
        text = self.prompts.render(notice, what=_what(action))
        log.warning(
            "interrupted %s %s (still running: %s)", action.tool, _brief(action.args), killed
        )
        self.journal.append(
            "action_interrupted",
            tool=action.tool,
            args=action.args,
            text=text,
            call=action.call,
            killed=killed,
        )
        return text

    def blocked(self, name: str, args: dict[str, Any], call_id: str, block: loopguard.Block) -> str:
        """Journal the block; the tool's note on it (see `Policy.blocked_note`), or ""."""
        reason = loopguard.explain(block, self.prompts)
        tool = self.tools.get(name, given_arguments(args))
        note = ""
        if tool is not None and tool.policy.blocked_note is not None:
            note = tool.policy.blocked_note(self.ctx, args)
        reason = "\n".join(
            filter(
                None, [reason, rundone.failed_before(self.state, tool, args, self.prompts), note]
            )
        )
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
            call=call_id,
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
        return note
