"""What the tools tell the model: the rule lines a tool adds to the system prompt while
it is enabled (`guide_*`), and the observations the registry and tools send back, as
templates (`texts.PROMPTS` names each one, so a user can replace it). Placeholders are
`{name}`; a literal brace is written doubled.

The errors of the call readers (`textcalls`) are not here: each names the exact format
the reader parses, so a replaced wording could contradict the reader; they reach the
model inside `format_error`, which is.
"""

from __future__ import annotations

from localagent.prompts.templates import Prompt, spec

GUIDE_RUN_CMD = """\
- run_cmd runs one program without a shell: no pipes, redirections, `&&` or `;`.
  Allowed programs: {allowed}. `python` runs scripts in the workspace
  (`python app.py`) or `python -m pytest|pip|ruff|unittest`."""

GUIDE_COMPLETE = """\
- When the active subtask is done, call mark_subtask_complete(success=true, reason=...).
  If it cannot be done, call mark_subtask_complete(success=false, reason=...)."""

GUIDE_EDIT = """\
- To change part of a file, prefer replace_in_file with the exact old text over
  rewriting the whole file."""

UNKNOWN_TOOL = "unknown tool {tool}; did you mean {nearest}? Available tools: {tools}"

UNKNOWN_TOOL_NO_MATCH = "unknown tool {tool} Available tools: {tools}"

RAN_AS = "{called} ran as {ran}"

RAN_AS_CALL = "{called} is not a tool; it ran as {call}. Next time write the call like that"

RIGHT_CALL = "Nothing ran. The right call looks like: {call}"

ARGUMENTS_READ = "arguments read: {renamed}"

FOLDER_CREATED = """\
folder {path}/ created. write_file creates missing folders itself: next time write the \
file directly, e.g. write_file(path={example}, ...)"""

FOLDER_EXISTS = """\
folder {path}/ already exists. write_file creates missing folders itself: next time \
write the file directly, e.g. write_file(path={example}, ...)"""

EDIT_KEPT = (
    "added {added} to {path}, above {kept}, which other files import and which stays as it "
    "was (the edit would have removed it): change {kept} next so that it uses {added}"
)
EDIT_AS_FIX = (
    "old was not in {path}, but new is the fix its syntax error was shown with, so that fix "
    "is made: `{old}` is now `{new}`"
)
EDIT_AS_MODULE = (
    "old was the text of the docstring of {path}, so new went in as code below it, not "
    "inside it: {done}"
)
SAME_CONTENT = "{path} already has this content ({size} bytes)"

INVALID_ARGUMENTS = "invalid arguments for {tool}: {problems}. Expected {signature}"

MISSING_PARAMETER = "missing required parameter '{parameter}'"

UNKNOWN_PARAMETER = "unknown parameter '{parameter}'"

BAD_PARAMETER = "parameter '{parameter}': {problem} (got {value})"

SUBTASK_MARKED = "subtask marked {status}: {reason}"

TOOL_OS_ERROR = "{tool} failed: {problem}{where}"

TOOL_CRASHED = "tool {tool} failed: {error}"

APPLIED_BEFORE = "{tool} had been applied before the agent was interrupted; nothing was redone"


TOOL_TEXTS: dict[str, Prompt] = {
    "guide_run_cmd": Prompt(
        GUIDE_RUN_CMD, "system prompt rules while run_cmd is enabled", spec("", "allowed")
    ),
    "guide_complete": Prompt(
        GUIDE_COMPLETE, "system prompt rules on mark_subtask_complete", spec("", "allowed")
    ),
    "guide_edit": Prompt(
        GUIDE_EDIT, "system prompt rules while replace_in_file is enabled", spec("", "allowed")
    ),
    "unknown_tool": Prompt(
        UNKNOWN_TOOL,
        "result: a call of a tool the run does not have",
        spec("tool", "nearest tools"),
    ),
    "unknown_tool_no_match": Prompt(
        UNKNOWN_TOOL_NO_MATCH,
        "result: a call of a tool the run does not have, like none of its tools",
        spec("tool", "tools"),
    ),
    "ran_as": Prompt(
        RAN_AS, "result's first line: a tool called by another name", spec("ran", "called")
    ),
    "ran_as_call": Prompt(
        RAN_AS_CALL,
        "result's first line: a call named with a sentence, run as the tool its verb says",
        spec("called call"),
    ),
    "right_call": Prompt(
        RIGHT_CALL,
        "result: after unknown_tool, the call built from what the model sent",
        spec("call"),
    ),
    "arguments_read": Prompt(
        ARGUMENTS_READ, "result's first line: arguments given under other names", spec("renamed")
    ),
    "folder_created": Prompt(
        FOLDER_CREATED, "result: a folder made on its own (mkdir)", spec("path", "example")
    ),
    "folder_exists": Prompt(
        FOLDER_EXISTS, "result: a folder asked for that was there", spec("path", "example")
    ),
    "edit_kept": Prompt(
        EDIT_KEPT,
        "result: replace_in_file that would drop what other files import, made as an addition",
        spec("path added kept"),
    ),
    "edit_as_fix": Prompt(
        EDIT_AS_FIX,
        "result: replace_in_file whose new is the offered fix, made though old did not match",
        spec("path old new"),
    ),
    "edit_as_module": Prompt(
        EDIT_AS_MODULE,
        "result: replace_in_file of a docstring's text with functions, made as code below it",
        spec("path done"),
    ),
    "same_content": Prompt(
        SAME_CONTENT, "result: write_file with the content the file has", spec("path", "size")
    ),
    "invalid_arguments": Prompt(
        INVALID_ARGUMENTS,
        "result: a call whose arguments the tool cannot take",
        spec("problems", "tool signature"),
    ),
    "missing_parameter": Prompt(
        MISSING_PARAMETER,
        "one problem of invalid_arguments: a required one left out",
        spec("parameter"),
    ),
    "unknown_parameter": Prompt(
        UNKNOWN_PARAMETER,
        "one problem of invalid_arguments: one the tool has not",
        spec("parameter"),
    ),
    "bad_parameter": Prompt(
        BAD_PARAMETER,
        "one problem of invalid_arguments: a value of the wrong kind",
        spec("parameter problem", "value"),
    ),
    "subtask_marked": Prompt(
        SUBTASK_MARKED,
        "result of mark_subtask_complete (status: completed or failed)",
        spec("status", "reason"),
    ),
    "tool_os_error": Prompt(
        TOOL_OS_ERROR,
        "result: a tool the system refused (where: the path, in brackets)",
        spec("problem", "tool where"),
    ),
    "tool_crashed": Prompt(
        TOOL_CRASHED, "result: a tool that failed unexpectedly", spec("error", "tool")
    ),
    "applied_before": Prompt(
        APPLIED_BEFORE, "result: an interrupted change found applied on resume", spec("tool")
    ),
}
