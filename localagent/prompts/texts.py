"""Every prompt and observation text the model reads, as templates (localagent.prompts.templates).

Each has a name, a default text and a `Spec` of its placeholders (`PROMPTS`), and the
user may replace any of them (localagent.prompts.promptset); the loop's feedback and
notices are in localagent.prompts.feedback, the tools' guides and results in
localagent.prompts.tooltexts.
Placeholders are `{name}`; a literal brace is written doubled.
"""

from __future__ import annotations

from typing import Any

from localagent.prompts.feedback import (
    BLOCKED_ALTERNATING,
    BLOCKED_LAST_RUN,
    BLOCKED_REPEAT,
    CALL_SKIPPED,
    CARRIED,
    CARRIED_RUN,
    CARRIED_TESTED,
    CLAIM_LOOP,
    COMPLETION_REFUSED,
    COMPUTED_OUTPUT,
    CUT_OFF,
    CUT_OFF_WRITE,
    CUT_REPLY,
    DONE_BY_CHECKS,
    DONE_BY_EDIT,
    DONE_BY_LOOK,
    DONE_BY_READ,
    DONE_BY_RERUN,
    DONE_BY_REWRITE,
    DONE_BY_RUN,
    DONE_BY_SEARCH,
    DONE_BY_WRITE,
    DROPPED_RESULT,
    FAILED_AFTER_EDIT,
    FAILURE_REPEATED,
    FAILURE_UNTRIED,
    FED_REPEAT,
    FILE_UNREAD,
    FORMAT_ERROR,
    HANDBACK_ADD,
    HANDBACK_APPROX,
    HANDBACK_COUNTS,
    HANDBACK_EDIT,
    HANDBACK_EXPECTED,
    HANDBACK_EXPECTED_ROW,
    HANDBACK_FIX,
    HANDBACK_MISCOUNT,
    HANDBACK_MODULE,
    HANDBACK_ONLY,
    HANDBACK_OPEN,
    HANDBACK_OPTION,
    HANDBACK_RAISE,
    HANDBACK_READ,
    HANDBACK_RECOUNT,
    HANDBACK_STATUS,
    HANDBACK_TESTS,
    HANDBACK_USE,
    HANDBACK_USE_EACH,
    HANDBACK_WRITE,
    INSISTED,
    INTERRUPTED_CMD,
    INTERRUPTED_KILLED,
    LOAD_FAILED,
    MAX_ROUNDS,
    MISSING_INPUT,
    NO_TEST_RAN,
    NO_TOOL_CALL,
    NOT_ACCEPTED_YET,
    NOT_ON_PATH,
    NOTHING_TO_FIX,
    OPTION_LACKED,
    OUTPUT_NOT_STORED,
    OUTPUT_STORED,
    OUTPUT_STORED_CUT,
    PRINTED_NOTHING,
    PROMPTS_ONLY,
    PYTEST_MODULE,
    RAISE_EXPECTED,
    RAISE_UNMET,
    READ_COMPLETES,
    REFUSED_TOO_OFTEN,
    RENAMES_ONLY,
    REPLANNED,
    RERUN_SKIPPED,
    REWRITE_SYSTEM,
    REWRITE_TEST,
    REWRITE_USER,
    RUFF_CHECK,
    RUFF_FIX,
    RUFF_FIXABLE,
    RUFF_REDEFINED,
    RUN_COMPLETES,
    SAME_OUTPUT,
    SAMPLE_WRITE,
    SEARCH_COMPLETES,
    SEE_FAILURE,
    SMALL_VERIFIER,
    STOOD_BY,
    TOO_MANY_CALLS,
    TOO_MANY_FORMAT_ERRORS,
    UNCHANGED_STOPPED,
    UNPROVEN,
    UNRUN_FORMS,
    USAGE_ONLY,
    USE_LOST,
    USE_UNMET,
    VAGUE_DOUBT,
    WAITED_FOR_INPUT,
    WRITE_COMPLETES,
)
from localagent.prompts.plan import (
    PLAN_REPAIR,
    PLAN_SYSTEM,
    PLAN_SYSTEM_SMALL,
    PLAN_USER,
    REPLAN_USER,
    UNMET_USER,
    VALUE_SYSTEM,
    VALUE_USER,
)
from localagent.prompts.refusals import REFUSALS
from localagent.prompts.refusals_run import REFUSALS_RUN
from localagent.prompts.research import RESEARCH
from localagent.prompts.templates import Prompt
from localagent.prompts.templates import render as fill
from localagent.prompts.templates import spec as _spec
from localagent.prompts.tooltexts import TOOL_TEXTS

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

# The active subtask is the last line: a small model copies whatever follows a subtask
# that ends "with the following content: ..." into the file it writes.
PROBE = """\
[status] round {round} of {max_rounds}
Plan progress: {progress}
Files written: {written}
Files that exist: {existing}
Files mentioned but missing: {missing}
Recent commands: {commands}
Last errors: {errors}
{notice}ACTIVE TASK: {task}
ACTIVE SUBTASK: {subtask}"""

# The verdict request is the turn after the rounds' last (their prompt up to it is in the
# model server's cache): the goal and the plan are above it, and the schema the request
# is held to keeps the answer from being a call of the tools listed there.
VERIFY_TURN = """\
[verdict] The work on the plan has ended. Check whether the goal above is achieved: \
answer with JSON only, no tool call. Judge only from the evidence below (each line starts \
with its seq number): a claim without evidence is not evidence.
Plan progress: {progress}
EVIDENCE:
{ledger}
verdict: VERIFIED only if the evidence shows every requirement of the goal is met.
unmet: each requirement that is not shown to be met, as a short instruction.
evidence: the seq numbers your verdict rests on.
next: finish, retry_subtask or replan."""


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
        _spec("", "tools good"),
    ),
    "plan_repair": Prompt(
        PLAN_REPAIR,
        "the one request to mend a plan no tool can carry out",
        _spec("problems", "tools"),
    ),
    "plan_user": Prompt(PLAN_USER, "the goal to decompose", _spec("goal")),
    "value_system": Prompt(
        VALUE_SYSTEM,
        "the question a failed test of the run's own tests asks (small profile): what a call "
        "returns, answered without the code",
        _spec(),
    ),
    "value_user": Prompt(VALUE_USER, "that question", _spec("goal call")),
    "replan_user": Prompt(
        REPLAN_USER,
        "a failed subtask to plan around (replan)",
        _spec("goal subtask reason", "task done"),
    ),
    "unmet_user": Prompt(
        UNMET_USER, "what the verifier found unmet, to plan for", _spec("goal unmet", "done")
    ),
    "rewrite_system": Prompt(
        REWRITE_SYSTEM, "the request for a function the tests show wrong (small profile)", _spec()
    ),
    "rewrite_user": Prompt(
        REWRITE_USER,
        "the file, the failure and the function to write again, whole and fixed",
        _spec("path file failure name", "test"),
    ),
    "rewrite_test": Prompt(
        REWRITE_TEST, "the failing test's lines, in that request", _spec("test")
    ),
    "verify_turn": Prompt(
        VERIFY_TURN,
        "the verdict request, the turn after the rounds' last: the evidence to judge",
        _spec("ledger", "progress"),
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
    "blocked_last_run": Prompt(
        BLOCKED_LAST_RUN,
        "added to a blocked command: what its latest run gave, when it failed",
        _spec("cmd summary"),
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
    "cut_off_write": Prompt(
        CUT_OFF_WRITE,
        "notice: the last reply was cut off inside a file's content",
        _spec("", "why limit"),
    ),
    "too_many_calls": Prompt(
        TOO_MANY_CALLS, "notice: only the first calls of a reply ran", _spec("", "count limit")
    ),
    "interrupted_cmd": Prompt(
        INTERRUPTED_CMD, "notice: an action a crash interrupted", _spec("what")
    ),
    "interrupted_killed": Prompt(
        INTERRUPTED_KILLED, "notice: an interrupted command that was killed", _spec("what")
    ),
    "call_skipped": Prompt(CALL_SKIPPED, "result: a call skipped as the subtask ended", _spec()),
    "cut_reply": Prompt(
        CUT_REPLY,
        "the model's own reply, cut off with no call read, as later rounds show it",
        _spec("what"),
    ),
    "same_output": Prompt(
        SAME_OUTPUT,
        "result: a call's result the same as the same call's earlier in the window",
        _spec("round", "status"),
    ),
    "write_completes": Prompt(
        WRITE_COMPLETES,
        "result: a write that completed its write subtask",
        _spec("reason next", "subtask number"),
    ),
    "done_by_write": Prompt(
        DONE_BY_WRITE, "why a write subtask is done: its file is written", _spec("path")
    ),
    "done_by_edit": Prompt(
        DONE_BY_EDIT, "why an edit subtask is done: its file changed", _spec("path")
    ),
    "nothing_to_fix": Prompt(
        NOTHING_TO_FIX,
        "why an edit step that says to fix its file is done when the tests pass already",
        _spec("cmd summary"),
    ),
    "done_by_rewrite": Prompt(
        DONE_BY_REWRITE,
        "why a write subtask is done: its file written again unchanged",
        _spec("path"),
    ),
    "unchanged_stopped": Prompt(
        UNCHANGED_STOPPED,
        "what a write subtask's unchanged rewrite of its file adds when the file's last run "
        "stopped on an error in it, never opened the file it was given, or printed other "
        "than the goal states (small profile; the subtask goes on)",
        _spec("path what"),
    ),
    "carried": Prompt(CARRIED, "why a replan's write subtask is carried as done", _spec("path")),
    "carried_tested": Prompt(
        CARRIED_TESTED,
        "why a replan's write subtask is carried as done: the tests passed with its file",
        _spec("path cmd summary"),
    ),
    "read_completes": Prompt(
        READ_COMPLETES,
        "result: a read that completed its read subtask",
        _spec("reason next", "subtask number"),
    ),
    "done_by_read": Prompt(
        DONE_BY_READ, "why a read subtask is done: its file read", _spec("path")
    ),
    "search_completes": Prompt(
        SEARCH_COMPLETES,
        "result: a search that completed its search subtask",
        _spec("reason next", "subtask number"),
    ),
    "done_by_search": Prompt(
        DONE_BY_SEARCH,
        "why a search subtask is done: its file searched, whatever it found",
        _spec("path summary"),
    ),
    "run_completes": Prompt(
        RUN_COMPLETES,
        "result: a run that completed its run subtask",
        _spec("reason next", "subtask number"),
    ),
    "done_by_run": Prompt(
        DONE_BY_RUN, "why a run subtask is done: its command succeeded", _spec("cmd summary")
    ),
    "done_by_rerun": Prompt(
        DONE_BY_RERUN,
        "why a run subtask is done: its command, already successful, sent again",
        _spec("cmd summary"),
    ),
    "done_by_checks": Prompt(
        DONE_BY_CHECKS,
        "why the subtask that is the goal itself is done: every check the goal names passed",
        _spec("runs"),
    ),
    "rerun_skipped": Prompt(RERUN_SKIPPED, "result: a repeat of a successful run", _spec()),
    "carried_run": Prompt(
        CARRIED_RUN, "why a replan's run subtask is carried as done", _spec("cmd summary")
    ),
    "ruff_fixable": Prompt(
        RUFF_FIXABLE,
        "why a run step failed: its ruff check found only what ruff fixes itself, sent again",
        _spec("cmd summary"),
    ),
    "load_failed": Prompt(
        LOAD_FAILED,
        "why a run subtask failed: a file the run loads does not (small profile)",
        _spec("path error"),
    ),
    "option_lacked": Prompt(
        OPTION_LACKED,
        "why a run subtask failed: argparse stopped the program on an option the goal states "
        "(small profile)",
        _spec("script flag"),
    ),
    "failed_after_edit": Prompt(
        FAILED_AFTER_EDIT,
        "why a test run subtask failed: the tests fail after an edit (small profile)",
        _spec("path failure"),
    ),
    "stood_by": Prompt(
        STOOD_BY,
        "why an edit subtask of the code failed: asked for the function the run's own test "
        "shows wrong, the model gave it back unchanged (small profile)",
        _spec("name"),
    ),
    "handback_edit": Prompt(
        HANDBACK_EDIT,
        "the edit subtask a test run that failed after an edit goes back to",
        _spec("path failure"),
    ),
    "handback_expected": Prompt(
        HANDBACK_EXPECTED,
        "the edit subtask a test run goes back to when the run's own test expects another "
        "value than its code returns and the model, asked alone, gives the code's",
        _spec("path call got expected"),
    ),
    "handback_expected_row": Prompt(
        HANDBACK_EXPECTED_ROW,
        "that edit subtask when the test's row or assertion of the call is found: the "
        "text to replace and its replacement",
        _spec("path call got expected old new"),
    ),
    "handback_approx": Prompt(
        HANDBACK_APPROX,
        "the edit a test run that failed by float rounding alone goes back to (small "
        "profile): the test's comparison, and those beside it, with pytest.approx",
        _spec("path old new", "call got expected"),
    ),
    "handback_raise": Prompt(
        HANDBACK_RAISE,
        "that edit subtask when the failed tests check a raise the code does not make so: "
        "the edit the run's note gave",
        _spec("path old new"),
    ),
    "handback_read": Prompt(
        HANDBACK_READ,
        "subtask: the read of the file a failed test run goes back to, before its edit",
        _spec("path"),
    ),
    "see_failure": Prompt(
        SEE_FAILURE,
        "subtask: the run of the tests a goal to fix them gets before its first edit",
        _spec("cmd"),
    ),
    "sample_write": Prompt(
        SAMPLE_WRITE,
        "subtask: the write of a sample input file a run step gives its program",
        _spec("path"),
    ),
    "done_by_look": Prompt(
        DONE_BY_LOOK,
        "why a run subtask to see what fails is done: its command ran, passed or not",
        _spec("cmd summary"),
    ),
    "handback_status": Prompt(
        HANDBACK_STATUS,
        "the edit a run of the goal's script without arguments goes back to, when it exited "
        "with another status than the goal states (no usage line to name)",
        _spec("path status"),
    ),
    "handback_open": Prompt(
        HANDBACK_OPEN,
        "the write subtask a run of a program that never opens the file it was given goes back to",
        _spec("script"),
    ),
    "handback_option": Prompt(
        HANDBACK_OPTION,
        "the write a verdict goes back to when the goal's checks of its script's option "
        'failed on argparse\'s "unrecognized arguments" (small profile)',
        _spec("script flag said"),
    ),
    "handback_counts": Prompt(
        HANDBACK_COUNTS,
        "the write subtask a run of the goal's script that printed fewer numbers than the "
        "goal says it counts goes back to",
        _spec("script counted"),
    ),
    "handback_recount": Prompt(
        HANDBACK_RECOUNT,
        "the edit a run of the goal's script goes back to when none of its numbers is right "
        "for a count and the one line that counts it is certain",
        _spec("script things old new counts printed"),
    ),
    "handback_miscount": Prompt(
        HANDBACK_MISCOUNT,
        "the write subtask a run of the goal's script goes back to when none of its numbers "
        "is right for a count of the file it was given ({how}: how Python counts them)",
        _spec("script things counts printed", "how"),
    ),
    "handback_only": Prompt(
        HANDBACK_ONLY,
        "the write a run of the goal's script with the option that prints one count goes "
        "back to when it printed more numbers, or none",
        _spec("script flag thing"),
    ),
    "handback_module": Prompt(
        HANDBACK_MODULE,
        "subtask: a write of a module a package's __init__.py imports that is not there",
        _spec("path names"),
    ),
    "handback_add": Prompt(
        HANDBACK_ADD,
        "the write an edit step goes back to when it failed and the function it names is "
        "defined nowhere (small profile)",
        _spec("path header first"),
    ),
    "renames_only": Prompt(
        RENAMES_ONLY,
        "why an edit step failed at its first rename of what other files import while the "
        "function it names is defined nowhere (small profile)",
        _spec("name"),
    ),
    "handback_use": Prompt(
        HANDBACK_USE,
        "the write after that write (both after a read of the file): the file whole, its "
        "functions calling the new one",
        _spec("path users name"),
    ),
    "handback_use_each": Prompt(
        HANDBACK_USE_EACH,
        "the same write for up to four functions: the first alone, its header shown, then "
        "the rest the same way",
        _spec("path header name rest"),
    ),
    "use_unmet": Prompt(
        USE_UNMET,
        "what a write in that step adds while the functions it names do not call the new "
        "one yet (the step goes on), and the write of the first of them alone it asks for",
        _spec("path users name verb header"),
    ),
    "use_lost": Prompt(
        USE_LOST,
        "what a write in that step adds when the file no longer defines the function the "
        "others are to call (the step goes on), and the write of it alone it asks for",
        _spec("path users name header"),
    ),
    "handback_fix": Prompt(
        HANDBACK_FIX,
        "the write subtask a run that stopped on a file that does not load goes back to",
        _spec("path error"),
    ),
    "handback_tests": Prompt(
        HANDBACK_TESTS,
        "the write subtask a test run that ran nothing goes back to: its test file has no test",
        _spec("path"),
    ),
    "no_test_ran": Prompt(
        NO_TEST_RAN,
        "why a test run subtask failed: its test file defines no test (small profile)",
        _spec("path"),
    ),
    "handback_write": Prompt(
        HANDBACK_WRITE,
        "the write subtask a run of a program that calls nothing goes back to",
        _spec("script"),
    ),
    "replanned": Prompt(REPLANNED, "notice: the plan was revised", _spec()),
    "waited_for_input": Prompt(
        WAITED_FOR_INPUT, "note on a command that waited for input", _spec("", "call")
    ),
    "fed_repeat": Prompt(
        FED_REPEAT, "note on a repeated run without input, run with some", _spec("", "stdin")
    ),
    "prompts_only": Prompt(
        PROMPTS_ONLY,
        "note on a script given input that printed only its prompts",
        _spec("script", "fix"),
    ),
    "dropped_result": Prompt(
        DROPPED_RESULT,
        "note on a script that printed nothing and drops a call's result",
        _spec("script", "fix"),
    ),
    "missing_input": Prompt(
        MISSING_INPUT,
        "note on a script run on a file that does not exist",
        _spec("files", "call cmd"),
    ),
    "file_unread": Prompt(
        FILE_UNREAD,
        "note on a script run on a file that its code never opens",
        _spec("script file", "how"),
    ),
    "usage_only": Prompt(
        USAGE_ONLY, "note on a script run only with --help that printed its usage", _spec("script")
    ),
    "not_on_path": Prompt(
        NOT_ON_PATH,
        "note on pytest that could not import a module of the workspace",
        _spec("module cmd"),
    ),
    "pytest_module": Prompt(
        PYTEST_MODULE, "note on `pytest ...`: it ran as python -m pytest", _spec("called", "cmd")
    ),
    "ruff_fix": Prompt(
        RUFF_FIX,
        "note on a `ruff check` that found problems ruff fixes itself",
        _spec("cmd", "call"),
    ),
    "ruff_redefined": Prompt(
        RUFF_REDEFINED,
        "note on a `ruff check` that found a function defined twice (F811): the rename",
        _spec("path name first line call"),
    ),
    "raise_expected": Prompt(
        RAISE_EXPECTED,
        "note on a failed test that compares what a call returns, where the call raised on purpose",
        _spec("call error where raised test line edit", "imported"),
    ),
    "raise_unmet": Prompt(
        RAISE_UNMET,
        "note on a failed test that expects a raise of a call that misses the one condition "
        "the function raises under",
        _spec("call error code condition line edit"),
    ),
    "ruff_check": Prompt(
        RUFF_CHECK,
        "note on `ruff FILE`, which ruff refuses: it ran as ruff check",
        _spec("called", "cmd"),
    ),
    "printed_nothing": Prompt(
        PRINTED_NOTHING,
        "note on a script that ran, printed nothing and calls nothing",
        _spec("script", "fix"),
    ),
    "output_stored": Prompt(
        OUTPUT_STORED, "note on a long output kept whole", _spec("id", "lines")
    ),
    "output_stored_cut": Prompt(
        OUTPUT_STORED_CUT,
        "note on a long output kept in part",
        _spec("id", "lines size dropped"),
    ),
    "output_not_stored": Prompt(
        OUTPUT_NOT_STORED, "note on a long output that could not be kept", _spec("", "problem")
    ),
    "failure_untried": Prompt(
        FAILURE_UNTRIED, "feedback: a cannot-be-done claim with nothing tried", _spec()
    ),
    "failure_repeated": Prompt(
        FAILURE_REPEATED, "feedback: a cannot-be-done claim an earlier subtask made", _spec()
    ),
    "insisted": Prompt(
        INSISTED, "why a subtask failed: blocked actions repeated", _spec("", "count last")
    ),
    "refused_too_often": Prompt(
        REFUSED_TOO_OFTEN, "why a subtask failed: claims refused", _spec("", "count problems")
    ),
    "too_many_format_errors": Prompt(
        TOO_MANY_FORMAT_ERRORS,
        "why a subtask failed: replies without a usable tool call",
        _spec("", "count"),
    ),
    "claim_loop": Prompt(
        CLAIM_LOOP, "why the goal failed: one failure claim made again", _spec("", "count reason")
    ),
    "max_rounds": Prompt(MAX_ROUNDS, "why the goal failed: the round limit", _spec("", "limit")),
    "unproven": Prompt(
        UNPROVEN, "verdict note: nothing shows the programs work", _spec("", "programs")
    ),
    "small_verifier": Prompt(
        SMALL_VERIFIER, "verdict note: the verifier model is small", _spec("", "size")
    ),
    "unrun_forms": Prompt(
        UNRUN_FORMS,
        "verdict note: command lines the goal states that no run made (small verifier)",
        _spec("forms", "size"),
    ),
    "computed_output": Prompt(
        COMPUTED_OUTPUT,
        "verdict note: runs printed values no test checks (small verifier)",
        _spec("runs", "size"),
    ),
    "vague_doubt": Prompt(
        VAGUE_DOUBT,
        "verdict note: a small verifier named only the goal as unmet; no replan",
        _spec("", "size"),
    ),
    **RESEARCH,
    **TOOL_TEXTS,
    **REFUSALS,
    **REFUSALS_RUN,
}


def render(template: str, **values: Any) -> str:
    return fill(template, values)
