"""Every prompt and observation text the model reads, as templates (localagent.prompts.templates).

Each prompt the user may replace has a name, a default text and a `Spec` of its
placeholders (`PROMPTS`); the texts after it (reasons and output markers) are ours only.
Placeholders are `{name}`; a literal brace is written doubled.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from localagent.prompts.plan import (
    PLAN_REPAIR,
    PLAN_SYSTEM,
    PLAN_SYSTEM_SMALL,
    PLAN_USER,
    REPLAN_USER,
    UNMET_USER,
)
from localagent.prompts.templates import Spec
from localagent.prompts.templates import render as fill

SYSTEM = """\
You are localagent, an autonomous coding agent working inside one workspace folder.
You work on one subtask at a time and act only through the tools you are given:
{names}.

Rules:
- Every reply is exactly one tool call. Do not explain; act.
- Paths are relative to the workspace. You cannot leave it.
{guides}
- Never repeat an action that already failed or gave the same result; change approach.
{protocol}"""

TEXT_PROTOCOL = """
This model has no native tool calling. Call a tool by replying with only a JSON object
in a ```json code fence, exactly like this:
```json
{{"name": "write_file", "arguments": {{"path": "hello.py", "content": "print('hi')\\n"}}}}
```
Tools and their parameters:
{tools}
"""

SYSTEM_SMALL = """\
You are a coding agent in one workspace folder. Work on the active subtask only.
Tools: {names}.
- Reply with one tool call and nothing else.
- Paths are relative to the workspace. Writing a file makes its folders.
{guides}
- Never repeat a call that failed; change something.
{protocol}"""

SUMMARY = """\
GOAL: {goal}

PLAN:
{plan}

Work only on the active subtask, named in the latest status. Call mark_subtask_complete \
when it is done."""

PROBE = """\
[status] round {round} of {max_rounds}
Plan progress: {progress}
ACTIVE TASK: {task}
ACTIVE SUBTASK: {subtask}
Files written: {written}
Files that exist: {existing}
Files mentioned but missing: {missing}
Recent commands: {commands}
Last errors: {errors}
{notice}"""

FORMAT_ERROR = """\
Your reply did not contain a tool call I could use: {problem}
Reply with exactly one tool call. If native tool calls do not work, reply with only:
```json
{example}
```
Available tools: {tools}"""

NO_TOOL_CALL = "Your reply had no tool call. Act with a tool; when the subtask is done call \
mark_subtask_complete."

BLOCKED_REPEAT = """\
BLOCKED: {tool} with these same arguments was already run {seen} times since the workspace \
last changed, so running it again cannot give a different result. It was not executed. \
Do something different: change a file to fix the cause, try another approach, or call \
mark_subtask_complete(success=false, reason=...) if the subtask cannot be done."""

BLOCKED_ALTERNATING = """\
BLOCKED: you are alternating between {tool} and {other} without changing anything. \
It was not executed. Change a file to make progress, try another approach, or call \
mark_subtask_complete(success=false, reason=...)."""

INSISTED = "The model kept repeating blocked actions ({count} times); giving up on this subtask."

INTERRUPTED_CMD = """\
NOTE: {what} was interrupted by a crash or stop before its result was \
recorded. Its effect is unknown: it may have run partly or fully. Check the workspace \
before deciding whether to run it again."""

INTERRUPTED_KILLED = """\
NOTE: {what} was interrupted by a crash or stop before its result was \
recorded; it was still running and has now been killed. Its effect is unknown: it may \
have run partly. Check the workspace before deciding whether to run it again."""

CUT_OFF = """\
NOTE: your last reply was cut off ({why}; replies are capped at {limit} tokens). \
Be brief: one tool call, no long explanations."""

MAX_ROUNDS = "round limit of {limit} reached before the goal was achieved"

TOO_MANY_CALLS = "NOTE: your last reply had {count} tool calls; only the first {limit} were run."

TOO_MANY_FORMAT_ERRORS = "the model gave {count} replies in a row without a usable tool call"

COMPLETION_REFUSED = """\
NOT ACCEPTED, the subtask is not done: {problems}
Fix this (and run the check again), then call mark_subtask_complete again."""

NOT_ACCEPTED_YET = """\
NOT ACCEPTED YET, nothing shows it works: {problems}
Run or read your work to check it, then call mark_subtask_complete again (a second call \
without checking is accepted, but recorded as unverified)."""

REFUSED_TOO_OFTEN = "completion was refused {count} times: {problems}"

FAILURE_UNTRIED = """\
NOT ACCEPTED: nothing was tried in this subtask, so nothing shows it cannot be done. \
Try it with a tool first: write_file creates a file (and its folders), run_cmd runs a \
program, read_file and list_dir look at the workspace. Then report what the tool showed."""

FAILURE_REPEATED = """\
NOT ACCEPTED: that reason only repeats what an earlier subtask saw; this is a new \
subtask. Try it with a tool (write_file creates a file and its folders, run_cmd runs a \
program) and report what that shows."""

CLAIM_LOOP = "the model made the same failure claim {count} times across subtasks: {reason}"

WAITED_FOR_INPUT = """\
NOTE: the program waited for input and got none. Run it again with its input in \
stdin, e.g. run_cmd(cmd="python game.py", stdin="rock\\n")."""

CALL_SKIPPED = (
    "NOT RUN: the subtask ended with an earlier call of this reply, so this call was skipped."
)

REPLANNED = """\
NOTE: the plan was revised. What failed before belongs to the old plan: work on the \
active subtask with the tools."""

UNPROVEN = """\
NOT VERIFIED: nothing shows that {programs} work: no run after the last change \
printed anything, and no tests of it passed"""

SMALL_VERIFIER = """\
NOT VERIFIED: the verifier model is small ({size}) and nothing deterministic shows the \
goal works (a goal check, tests that pass, or a program run that printed something)"""

VERIFY_SYSTEM = """\
You check whether a coding agent achieved its goal. You see the goal, the plan with the \
status of each step, and a ledger of evidence (each line starts with its seq number). \
Judge only from the evidence: a claim without evidence is not evidence. Answer with JSON \
only, matching this schema:
{schema}
verdict: VERIFIED only if the evidence shows every requirement of the goal is met.
unmet: each requirement that is not shown to be met, as a short instruction.
evidence: the seq numbers your verdict rests on.
next: finish, retry_subtask or replan."""

VERIFY_USER = """\
GOAL: {goal}

PLAN:
{plan}

EVIDENCE:
{ledger}"""

OUTPUT_STORED = """\
[output {id} stored whole ({lines} lines); read more with read_output(id={id}, start_line=.., \
end_line=..) or search_output(id={id}, pattern=..)]"""

OUTPUT_STORED_CUT = """\
[output {id} stored ({lines} lines: its first {size} bytes; {dropped} more bytes were not kept); \
read more with read_output(id={id}, start_line=.., end_line=..) or search_output(id={id}, \
pattern=..)]"""

OUTPUT_NOT_STORED = "[the whole output could not be stored: {problem}]"


class Prompt(NamedTuple):
    text: str
    about: str
    spec: Spec


def _spec(required: str = "", optional: str = "", volatile: str = "", prefix: bool = False) -> Spec:
    return Spec(
        frozenset(required.split()),
        frozenset((optional + " " + volatile).split()),
        frozenset(volatile.split()),
        prefix,
    )


_FACTS = "round progress task subtask written existing missing commands errors"

PROMPTS: dict[str, Prompt] = {
    "system": Prompt(
        SYSTEM,
        "the round system prompt: rules and tools, rendered once per run",
        _spec("protocol", "names guides", prefix=True),
    ),
    "text_protocol": Prompt(
        TEXT_PROTOCOL,
        "how to write a tool call, for a model without native tool calls",
        _spec("tools"),
    ),
    "summary": Prompt(
        SUMMARY,
        "the goal and the plan, sent after the system prompt every round",
        _spec("goal plan", "max_rounds", volatile=_FACTS, prefix=True),
    ),
    "probe": Prompt(
        PROBE,
        "the round's facts (active subtask, files, errors, notices), sent last",
        _spec("subtask notice", "max_rounds " + _FACTS),
    ),
    "system_small": Prompt(
        SYSTEM_SMALL,
        "the system prompt of the small-model profile (replaces system there)",
        _spec("protocol", "names guides", prefix=True),
    ),
    "plan_system": Prompt(
        PLAN_SYSTEM, "how to break a goal into tasks (decompose)", _spec("", "tools")
    ),
    "plan_system_small": Prompt(
        PLAN_SYSTEM_SMALL,
        "how to plan in the small-model profile (replaces plan_system there)",
        _spec("", "tools"),
    ),
    "plan_repair": Prompt(
        PLAN_REPAIR,
        "the one request to mend a plan no tool can carry out",
        _spec("problems", "tools"),
    ),
    "plan_user": Prompt(PLAN_USER, "the goal to decompose", _spec("goal")),
    "replan_user": Prompt(
        REPLAN_USER,
        "a failed subtask to plan around (replan)",
        _spec("goal subtask reason", "task done"),
    ),
    "unmet_user": Prompt(
        UNMET_USER, "what the verifier found unmet, to plan for", _spec("goal unmet", "done")
    ),
    "verify_system": Prompt(VERIFY_SYSTEM, "how the verifier judges the goal", _spec("", "schema")),
    "verify_user": Prompt(
        VERIFY_USER,
        "the goal, plan and evidence the verifier judges",
        _spec("goal ledger", "plan"),
    ),
    "format_error": Prompt(
        FORMAT_ERROR,
        "feedback: a reply without a usable tool call",
        _spec("problem", "tools example"),
    ),
    "no_tool_call": Prompt(NO_TOOL_CALL, "feedback: a reply with no tool call at all", _spec()),
    "blocked_repeat": Prompt(
        BLOCKED_REPEAT, "feedback: a repeated action was blocked", _spec("", "tool seen")
    ),
    "blocked_alternating": Prompt(
        BLOCKED_ALTERNATING, "feedback: alternating actions were blocked", _spec("", "tool other")
    ),
    "completion_refused": Prompt(
        COMPLETION_REFUSED, "feedback: a done claim the evidence contradicts", _spec("problems")
    ),
    "not_accepted_yet": Prompt(
        NOT_ACCEPTED_YET, "feedback: a done claim nothing supports yet", _spec("problems")
    ),
    "cut_off": Prompt(CUT_OFF, "notice: the last reply was cut off", _spec("", "why limit")),
    "too_many_calls": Prompt(
        TOO_MANY_CALLS, "notice: only the first calls of a reply ran", _spec("", "count limit")
    ),
    "interrupted_cmd": Prompt(
        INTERRUPTED_CMD, "notice: an action a crash interrupted", _spec("what")
    ),
    "interrupted_killed": Prompt(
        INTERRUPTED_KILLED, "notice: an interrupted command that was killed", _spec("what")
    ),
}


def render(template: str, **values: Any) -> str:
    return fill(template, values)
