"""The shape of each record type, as the reducer reads it.

`check` refuses a record the reducer could not fold (a missing field, a field of the
wrong type): the journal checks every record before it is written and again before it
is replayed, so a model server's odd number or a planted line is a clear refusal, never
a crash of the reducer halfway through a state. Fields the reducer does not read may
hold anything; record types it does not fold are not checked.
"""

from __future__ import annotations

from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
)

from localagent.state.model import Verdict

TOKENS_MAX = 2**53  # far above any real count; the sum over a run stays a 64-bit integer


class MalformedRecord(ValueError):
    """A record of a known type whose fields the reducer cannot read."""


class _Record(BaseModel):
    # Lax containers (a tuple is written as a list), strict leaves (a number is no text).
    model_config = ConfigDict(extra="ignore", hide_input_in_errors=True, defer_build=True)


class _Call(_Record):
    call: StrictStr | None = None


class GoalStarted(_Record):
    goal: StrictStr
    settings: dict[str, Any] | None = None


class PlannedTask(_Record):
    description: StrictStr
    subtasks: list[StrictStr]


class Carried(_Record):
    subtask: StrictStr
    reason: StrictStr


class Plan(_Record):
    tasks: list[PlannedTask]
    replace_from: StrictInt = Field(0, ge=0)
    carried: list[Carried] = Field(default_factory=list)  # subtasks done before they start


class ActionStarted(_Call):
    tool: StrictStr
    args: dict[str, Any]
    signature: StrictStr
    marker: StrictStr | None = None
    pid: StrictInt | None = None
    create_time: float | None = None
    before: dict[StrictStr, StrictStr] | None = None


class ActionFinished(_Call):
    tool: StrictStr
    args: dict[str, Any]
    ok: StrictBool
    result: StrictStr
    returncode: StrictInt | None = None
    completes: dict[StrictStr, StrictStr] | None = None  # the subtask this write or run ended


class ActionBlocked(_Call):
    tool: StrictStr
    signature: StrictStr
    reason: StrictStr


class ActionInterrupted(_Call):
    tool: StrictStr
    text: StrictStr


class Feedback(_Call):
    text: StrictStr
    tool: StrictStr = ""
    completes: dict[StrictStr, StrictStr] | None = None  # the run subtask a repeat ended


class ToolCall(_Record):
    name: StrictStr
    arguments: dict[str, Any]
    id: StrictStr | None = None


class LlmCall(_Record):
    prompt_tokens: StrictInt = Field(0, ge=0, le=TOKENS_MAX)
    completion_tokens: StrictInt = Field(0, ge=0, le=TOKENS_MAX)
    cached_tokens: StrictInt | None = Field(None, ge=0, le=TOKENS_MAX)
    estimated: StrictBool = False  # the token counts are ours: the reply was cut off
    content: StrictStr = ""
    notice: StrictStr = ""
    window: StrictInt | None = Field(None, ge=0, le=TOKENS_MAX)
    probe: dict[str, Any] = Field(default_factory=dict)
    tool_calls: list[ToolCall] = Field(default_factory=list)
    temperature: StrictFloat | StrictInt | None = Field(None, ge=0, le=2)  # when raised


class Resumed(_Record):
    settings: dict[str, Any] | None = None


class VerifyStarted(_Record):
    checks: list[dict[str, Any]] | None = None


class CheckEvent(_Record):
    id: StrictStr | StrictInt


class GoalEnded(_Record):
    reason: StrictStr = ""


FileChange = tuple[StrictStr, StrictStr | None, StrictStr | None]  # path, id before, after


class Snapshot(_Record):
    tool: StrictStr
    round: StrictInt
    scope: list[StrictStr] | None = None
    files: list[FileChange]


class Changes(_Record):
    action: StrictInt
    tool: StrictStr
    round: StrictInt
    files: list[FileChange]


class Rewinding(_Record):
    to: StrictInt = Field(ge=1)
    files: list[FileChange]


class Rewound(Rewinding):
    undone: StrictStr
    reopen: list[tuple[StrictInt, StrictInt]] = Field(default_factory=list)


_SCHEMAS: dict[str, type[BaseModel]] = {
    "goal_started": GoalStarted,
    "plan": Plan,
    "action_started": ActionStarted,
    "action_finished": ActionFinished,
    "action_blocked": ActionBlocked,
    "action_interrupted": ActionInterrupted,
    "subtask_completed": _Call,
    "subtask_failed": _Call,
    "feedback": Feedback,
    "llm_call": LlmCall,
    "resumed": Resumed,
    "stopped": GoalEnded,
    "verify_started": VerifyStarted,
    "check_started": CheckEvent,
    "check_finished": CheckEvent,
    "verdict": Verdict,
    "goal_completed": GoalEnded,
    "goal_failed": GoalEnded,
    "snapshot": Snapshot,
    "changes": Changes,
    "rewinding": Rewinding,
    "rewound": Rewound,
}


def check(record: dict[str, Any]) -> None:
    """Raise MalformedRecord if the reducer could not fold `record`."""
    kind = record.get("type")
    if not isinstance(kind, str):
        raise MalformedRecord(f"its type is {type(kind).__name__}, not a name")
    if "mac" in record:
        raise MalformedRecord("a field is named mac, the name of the journal's seal")
    schema = _SCHEMAS.get(kind)
    if schema is None:
        return
    try:
        schema.model_validate(record)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(StrictStr(part) for part in error["loc"]) or "the record"
        raise MalformedRecord(f"{where}: {error['msg']}") from None
