"""What the loop tells the model about its replies and calls: feedback, notices, reasons
a subtask fails and notes on tool output, as templates (`texts.PROMPTS` names each one,
so a user can replace it). Placeholders are `{name}`; a literal brace is written doubled.
"""

from __future__ import annotations

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

BLOCKED_LAST_RUN = "Its last run (`{cmd}`) gave: {summary}"

BLOCKED_ALTERNATING = """\
BLOCKED: you are alternating between {tool} and {other} without changing anything. \
It was not executed. Change a file to make progress, try another approach, or call \
mark_subtask_complete(success=false, reason=...)."""

INSISTED = (
    "The model kept repeating blocked actions ({count} times); giving up on this subtask.{last}"
)

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

CUT_OFF_WRITE = """\
NOTE: your last reply was cut off ({why}; replies are capped at {limit} tokens) inside \
a file's content. Write a shorter file: fewer cases, no long \
tables or comments; one tool call."""

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

PRINTED_NOTHING = """\
NOTE: {script} printed nothing: its code only defines functions or classes and calls \
none of them, so running it does nothing. Make it call them (for example under \
if __name__ == "__main__":), then run it again.{fix}"""

PROMPTS_ONLY = """\
NOTE: {script} printed only its input prompts, no result of its own, so this run does \
not show that it works.{fix}"""

DROPPED_RESULT = "NOTE: {script} printed nothing.{fix}"

MISSING_INPUT = """\
NOTE: {files} does not exist in the workspace, so this run read no input and does not \
show that the program works: write a small sample file first, then run `{cmd}`. To \
write one, send: {call}"""

FILE_UNREAD = """\
NOTE: {script} was given {file}, but its code never opens a file{how}, so this run does \
not show that it works on {file}: make it open the file it is given (for example \
`with open(args.file) as f:`), then run it again."""

USAGE_ONLY = """\
NOTE: this run printed only the usage text of {script}, which its argument parser writes \
by itself, so it does not show that the program works: run it as the goal says (on a \
small sample file first, if it reads one)."""

NOT_ON_PATH = """\
NOTE: {module} is in the workspace, but `pytest` started as a program does not put the \
workspace folder on Python's import path. Run it as `{cmd}` instead, which does."""

PYTEST_MODULE = """\
NOTE: `{called}` ran as `{cmd}`, which puts the workspace on Python's import path, as \
pytest started as a program does not."""

RUFF_CHECK = "NOTE: ruff checks files with its check command: `{called}` ran as `{cmd}`."

RUFF_FIX = "NOTE: ruff fixes the problems marked [*] itself: run `{cmd}`, e.g. send: {call}"

RUFF_REDEFINED = """\
NOTE: {path} defines {name} twice (lines {first} and {line}): the first never runs, and ruff \
does not fix that itself. To rename the second, send: {call}"""

RAISE_EXPECTED = """\
NOTE: {call} raises {error} on purpose ({where}: `{raised}`), so {test} has no value to \
compare in `{line}`. If raising is right, the test must expect it{imported}, e.g. send: \
{edit}"""

RAISE_UNMET = """\
NOTE: {call} raised no {error}: {code} raises it only when {condition} (line {line}). For \
the test to check that raise, call it so, e.g. send: {edit}"""

WAITED_FOR_INPUT = """\
NOTE: the program waited for input and got none. Run it again with its input in \
stdin, e.g. send: {call}"""

FED_REPEAT = """\
NOTE: run again without input, it could only wait for input again, so it ran with stdin \
{stdin}, an answer to each of its input() prompts."""

CUT_REPLY = "[my reply: {what}]"

CALL_SKIPPED = (
    "NOT RUN: the subtask ended with an earlier call of this reply, so this call was skipped."
)

SAME_OUTPUT = (
    "{status}\n(The same output, word for word, as this call gave in round {round}, above.)"
)

DONE_BY_WRITE = "{path} is written, which is all the subtask asks"

DONE_BY_EDIT = (
    "{path} is changed, which is all the subtask asks; the next subtask shows if it works"
)

NOTHING_TO_FIX = (
    "`{cmd}` passed ({summary}) with nothing changed since: the step has nothing left to fix"
)

DONE_BY_REWRITE = "{path} was already written by this run and is written again unchanged"

UNCHANGED_STOPPED = (
    "NOTE: {path} is unchanged, and {what}: this step is done when {path} is written "
    "changed so that it does not"
)

# The subtask by its number: its text is the status's ACTIVE SUBTASK just above, the next
# one's the status just after (both named whole here were 30-100 tokens a completion).
WRITE_COMPLETES = """\
SUBTASK COMPLETE: {number} ({reason}). Do not write it again. Next: {next}."""

CARRIED = "{path} is already written by this run: doing it again could only rewrite it unchanged"

DONE_BY_READ = "{path} was read, which is all the subtask asks"

READ_COMPLETES = """\
SUBTASK COMPLETE: {number} ({reason}). Do not read it again: its text is above. Next: {next}."""

DONE_BY_SEARCH = "{path} was searched ({summary}), which is all the subtask asks"

SEARCH_COMPLETES = """\
SUBTASK COMPLETE: {number} ({reason}). Do not search it again: what it found is above. \
Next: {next}."""

DONE_BY_RUN = "`{cmd}` ran and succeeded ({summary}), which is all the subtask asks"

DONE_BY_RERUN = "`{cmd}` already succeeded in this subtask ({summary}) and nothing changed since"

DONE_BY_CHECKS = (
    "{runs} passed in this subtask with nothing changed since: every check the goal names "
    "passed, which is all the subtask asks"
)

RUN_COMPLETES = """\
SUBTASK COMPLETE: {number} ({reason}). Do not run it again. Next: {next}."""

RERUN_SKIPPED = "NOT RUN: running it again could only show the same."

CARRIED_TESTED = (
    "{path} is already written by this run, and `{cmd}` passed with it ({summary}); nothing "
    "changed since"
)
CARRIED_RUN = "`{cmd}` already succeeded in this run ({summary}) and nothing changed since"

LOAD_FAILED = "the run stopped on an error in {path}: {error}"

RUFF_FIXABLE = "`{cmd}` found only what ruff fixes itself ({summary}), and nothing changed since"

FAILED_AFTER_EDIT = "the tests still fail after the change to {path}: {failure}"

STOOD_BY = (
    "asked for {name} fixed, the model gave it back unchanged: it stands by what {name} "
    "returns, so the test's expected value is what to fix"
)

OPTION_LACKED = "{script} has no {flag} option: argparse stopped the run on it"

HANDBACK_EDIT = "replace_in_file {path} to fix the failing test: {failure}"

HANDBACK_READ = "read_file {path}"

HANDBACK_EXPECTED = (
    "replace_in_file {path} to fix the value its test expects: {call} returns {got}, not "
    "{expected} (fix each other expected value in it that is wrong the same way)"
)

HANDBACK_EXPECTED_ROW = (
    "replace_in_file {path} to fix the value its test expects: {call} returns {got}, not "
    "{expected}: replace `{old}` with `{new}` (and each other expected value in it that is "
    "wrong the same way)"
)

HANDBACK_APPROX = (
    "replace_in_file {path} so that its test compares floats with pytest.approx: {call} "
    "returns {got}, which is {expected} but for float rounding: replace `{old}` with `{new}`"
)

HANDBACK_RAISE = (
    "replace_in_file {path} so that its test checks the raise as the code makes it: "
    "replace `{old}` with `{new}`"
)

SEE_FAILURE = "run {cmd} to see what fails"

SAMPLE_WRITE = "write_file {path} with a few lines of sample text"

DONE_BY_LOOK = "`{cmd}` ran ({summary}): what fails is in its output, which is all the subtask asks"

HANDBACK_FIX = "write_file {path} again, changed so that it no longer raises {error}"

HANDBACK_TESTS = (
    "write_file {path} again with test functions (def test_...) that assert what the code returns"
)

NO_TEST_RAN = "no test ran: {path} defines no test function"

HANDBACK_STATUS = (
    "replace_in_file {path} so that, without arguments, it prints a usage message and exits "
    "with status {status}"
)

HANDBACK_OPEN = "write_file {script} again, changed so that it opens and reads the file it is given"

HANDBACK_MISCOUNT = (
    "write_file {script} again, changed so that it counts {things} right{how}: the file it "
    "was given has {counts}, and it printed `{printed}`"
)

HANDBACK_RECOUNT = (
    "replace_in_file {script} to count {things} right: replace `{old}` with `{new}` (the "
    "file it was given has {counts}, and it printed `{printed}`)"
)

HANDBACK_ONLY = (
    "write_file {script} again, changed so that with {flag} it prints only the number of "
    "{thing}, one number"
)

HANDBACK_OPTION = (
    "write_file {script} again, changed so that its argparse takes {flag} "
    "(`parser.add_argument('{flag}', action='store_true')`): {said}"
)

HANDBACK_COUNTS = (
    "write_file {script} again, changed so that it prints each number the goal asks for: "
    "the number of {counted} in the file it is given, each on a line of its own"
)

HANDBACK_MODULE = "write_file {path} with the code of {names}"

HANDBACK_ADD = (
    "write_file {path} with only `def {header}:` and its code as the content (it goes "
    "above {first}, and the rest of {path} stays)"
)

RENAMES_ONLY = "{name} is defined nowhere, and this step's edits rename what other files import"

HANDBACK_USE = (
    "write_file {path} whole: {name} as it is, and {users} changed so that they call {name} "
    "instead of repeating its code"
)

HANDBACK_USE_EACH = (
    "write_file {path} with only `{header}:` and its code changed to call {name} as the "
    "content (it takes the place of the one {path} has, and the rest of {path} stays); then "
    "{rest} the same way, one at a time"
)

USE_UNMET = (
    "NOTE: {users} {verb} not call {name} yet, and this step is done only when each of them "
    "calls it instead of repeating its code. Next: write_file {path} with only `{header}:` "
    "and its code changed to call {name} as the content; it takes the place of the one "
    "{path} has, and the rest of {path} stays"
)

USE_LOST = (
    "NOTE: {path} no longer defines {name}, and this step is done only when it does and "
    "{users} call it. Next: write_file {path} with only `{header}:` and its code as the "
    "content; it goes above the other functions, and the rest of {path} stays"
)

HANDBACK_WRITE = (
    "write_file {script} that keeps its code and calls it at the end "
    '(under if __name__ == "__main__":)'
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

UNRUN_FORMS = """\
NOT VERIFIED: the goal states {forms}, and no run since the last change made it with \
success (the verification's own run of such a line shows how it exits, not what it \
prints); the verifier model is small ({size}), and its word is no evidence of them"""

COMPUTED_OUTPUT = """\
NOT VERIFIED: {runs}: a run shows that the program runs, not that the values it prints \
are right, no test checks them, and the verifier model is small ({size}): its word is no \
evidence of them"""

VAGUE_DOUBT = """\
PARTIAL: the checks show the goal's work, and the verifier model, which is small ({size}), \
named only the goal itself as unmet: the work is kept, not planned again"""

OUTPUT_STORED = """\
[output {id} stored whole ({lines} lines); read more with read_output(id={id}, start_line=.., \
end_line=..) or search_output(id={id}, pattern=..)]"""

OUTPUT_STORED_CUT = """\
[output {id} stored ({lines} lines: its first {size} bytes; {dropped} more bytes were not kept); \
read more with read_output(id={id}, start_line=.., end_line=..) or search_output(id={id}, \
pattern=..)]"""

OUTPUT_NOT_STORED = "[the whole output could not be stored: {problem}]"

REWRITE_SYSTEM = """\
You fix one Python function so that a failing test passes. Reply with one ```python code \
block holding the whole function, fixed, and nothing else. Never change the test."""

REWRITE_USER = """\
{path}:
```python
{file}
```
The tests fail: {failure}.{test}
Write the function {name} of {path} again, whole, fixed so that this test passes."""

REWRITE_TEST = """
The failing test:
```python
{test}
```"""
