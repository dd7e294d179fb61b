"""What a run_cmd result says beyond the program's output: the notes that name what went
wrong and the call that fixes it (a run that waited for input, a script that calls
nothing, a file it was given that does not exist, a test that expects the wrong thing...),
and why a run that succeeded shows nothing about whether the program works."""

from __future__ import annotations

import json
import shlex
from typing import Any

from localagent.system.process import ProcessResult
from localagent.tools import notests, pyscript, ruffnotes, runproof
from localagent.tools.base import ToolContext
from localagent.tools.cmdline import split_command
from localagent.tools.loaderror import NO_MODULE, file_as_text_note, located
from localagent.tools.nameerrors import undefined_note
from localagent.tools.pkgexports import script_note, unexported_note
from localagent.tools.pkgimports import module_imports_note
from localagent.tools.raisedtests import raise_expected_note, unraised_note

__all__ = ["answered", "blocked_note", "fed", "note"]

_EOF = "EOFError: EOF when reading a line"  # Python's input() found no input
_TRACEBACK = "Traceback (most recent call last)"


def note(
    ctx: ToolContext,
    cmd: str,
    result: ProcessResult,
    stdin: str,
    empty: list[str],
    broken: tuple[str, str] | None,
) -> tuple[str, str]:
    """(the note that ends a run's result, why a successful run shows nothing ("" when it
    may show something)): the first that applies, in turn, of a run that waited for
    input, printed nothing, or could not import a module here; for a failed run, the
    first note that names its cause (`empty`: the test files that define no test;
    `broken`: the file and error the run stopped on); for a successful one, `unproven`."""
    ok, output = result.returncode == 0, result.output
    waited = ""
    if _EOF in output and not stdin:
        waited = _with_input(ctx, cmd, output)
    if ok and not output.strip() and (idle := _idle_script(ctx, cmd)):
        waited = ctx.prompts.render("printed_nothing", script=idle[0], fix=idle[1])
    if not ok and (unfound := _not_on_path(ctx, cmd, output)):
        waited = ctx.prompts.render("not_on_path", module=unfound[0], cmd=unfound[1])
    program = bool(runproof.script_words(cmd))
    if not ok and not waited:
        waited = (
            notests.run_note(empty)
            or notests.absent_note(ctx.root, output)
            or _not_found(ctx, cmd, output)
            or module_imports_note(ctx.root, output)
            or unexported_note(ctx.root, output)
            or script_note(ctx.root, " ".join(runproof.script_words(cmd)[:1]), output)
            or undefined_note(ctx.root, output)
            or raise_expected_note(ctx.root, output, ctx.prompts)
            or unraised_note(ctx.root, output, ctx.prompts)
            or file_as_text_note(broken if program else located(ctx.root, output, True))
            or ruffnotes.note(ctx, cmd, output)
        )
    why, said = _unproven(ctx, cmd, result, stdin) if ok and not waited else ("", "")
    return waited or said, why


def _unproven(ctx: ToolContext, cmd: str, result: ProcessResult, stdin: str) -> tuple[str, str]:
    """Why a script's successful run shows nothing about whether it works, and the note
    that says so with what to do ("", "" when it shows something, or is no script)."""
    words = runproof.script_words(cmd)
    if not words:
        return "", ""
    path = words[0].replace("\\", "/")
    script = pyscript.read(ctx.root, path)
    if missing := runproof.missing_inputs(ctx.root, words):
        files = ", ".join(missing)
        return f"{files} does not exist, so it read no input", _missing_note(ctx, cmd, missing)
    if runproof.usage_only(words, result.output):
        return "it printed only its usage", ctx.prompts.render("usage_only", script=words[0])
    if script is not None and (given := runproof.unopened(ctx.root, words, script)):
        how = " (it reads sys.stdin, which this run left empty)" if script.stdin else ""
        why = f"{runproof.NEVER_OPENS} {given[0]}, the file it was given"
        note = ctx.prompts.render("file_unread", script=words[0], file=given[0], how=how)
        return why, note
    fix = runproof.fix_text(path, script)
    if not result.output.strip():
        return "", ctx.prompts.render("dropped_result", script=words[0], fix=fix) if fix else ""
    shown = runproof.own_output(result.output, script) if script is not None else "-"
    if stdin and script is not None and script.prompts and not shown.strip():
        why = "it printed only its input prompts, no result"
        return why, ctx.prompts.render("prompts_only", script=words[0], fix=fix)
    return "", ""


def _missing_note(ctx: ToolContext, cmd: str, missing: list[str]) -> str:
    """The `missing_input` note: the files a script was given that do not exist, the
    write of a sample ready to copy, and the run on it. Qwen2.5-Coder-1.5B ran `python
    wordcount.py test.txt` six times on an H100, told each time test.txt did not exist."""
    path, content = runproof.sample_file(missing[0])
    call = {"name": "write_file", "arguments": {"path": path, "content": content}}
    then = runproof.on_samples(cmd, missing[:1])
    return ctx.prompts.render(
        "missing_input", files=", ".join(missing), call=json.dumps(call), cmd=then
    )


def _not_found(ctx: ToolContext, cmd: str, output: str) -> str:
    """For a script that stopped on a file it was given that does not exist, the
    `missing_input` note ("" otherwise)."""
    if "FileNotFoundError" not in output:
        return ""
    words = runproof.script_words(cmd)
    missing = runproof.missing_inputs(ctx.root, words) if words else []
    return _missing_note(ctx, cmd, missing) if missing else ""


def blocked_note(ctx: ToolContext, args: dict[str, object]) -> str:
    """A blocked repeat of `python X.py` for an X.py that calls nothing says so again,
    with its fix (Qwen2.5-Coder-1.5B ran such a game until three strikes, and the note
    was no longer the latest thing it read). (A run without stdin of an X.py that reads
    input is never blocked: sent again, it runs given some, see `fed`.)"""
    cmd = args.get("cmd")
    if not isinstance(cmd, str):
        return ""
    if (idle := _idle_script(ctx, cmd)) is not None:
        return ctx.prompts.render("printed_nothing", script=idle[0], fix=idle[1])
    return ""


def fed(ctx: ToolContext, args: dict[str, Any]) -> tuple[dict[str, Any], str] | None:
    """A run without stdin of a script whose code acts and reads input, as the run given
    an answer to each of its input() prompts, and the `fed_repeat` line; None for any
    other run. Qwen2.5-Coder-1.5B ran its game without stdin three times more after the
    note that gave it the call with input, and the strikes failed the step (the CPU)."""
    cmd = args.get("cmd")
    if not isinstance(cmd, str) or args.get("stdin"):
        return None
    found = _script(ctx, cmd)
    if found is None or not (found[1].acts and found[1].reads_input):
        return None
    stdin = runproof.sample_answers(found[1].prompts)
    return {**args, "stdin": stdin}, ctx.prompts.render("fed_repeat", stdin=json.dumps(stdin))


def _with_input(ctx: ToolContext, cmd: str, output: str) -> str:
    """The `waited_for_input` note: `cmd` again, given an answer to each input() prompt
    of its script (else to the prompt its `output` ended on). Told to send "rock", the
    1.5B sent it to a game that asks two players, which died at the second prompt."""
    found = _script(ctx, cmd)
    if found is not None and found[1].prompts:
        stdin = runproof.sample_answers(found[1].prompts)
    else:
        stdin = runproof.sample_input(output)
    call = {"name": "run_cmd", "arguments": {"cmd": cmd, "stdin": stdin}}
    return ctx.prompts.render("waited_for_input", call=json.dumps(call))


def _not_on_path(ctx: ToolContext, cmd: str, output: str) -> tuple[str, str] | None:
    """A `pytest ...` that could not import a module the workspace holds (the workspace
    is not on the path of pytest started as a program, with tests in a folder without
    `__init__.py`): the module, and the command that imports it. Qwen2.5-Coder-1.5B's
    plan said `run pytest tests/test_mathx.py`, and it ran that until three strikes."""
    try:
        words = split_command(cmd)
    except ValueError:
        return None
    found = NO_MODULE.search(output)
    if not words or words[0] not in ("pytest", "py.test") or found is None:
        return None
    top = found[1].split(".")[0]
    if not ((ctx.root / top).is_dir() or (ctx.root / f"{top}.py").is_file()):
        return None
    return top, shlex.join(["python", "-m", "pytest", *words[1:]])


def answered(ctx: ToolContext, cmd: str, output: str) -> bool:
    """Whether a program given input printed a line of its own after it read the first
    of it: after the first of its input() prompts that the output shows, a line ends.
    The 1.5B fed one move to a game that asks two players in turn: it printed its
    welcome, both prompts, then died reading the second move, and no result; that run
    proves nothing. Where no prompt is known (none in the source, or none shown), the
    input is taken as answered."""
    found = _script(ctx, cmd)
    before = output.split(_TRACEBACK, 1)[0]
    shown = [(before.find(p), p) for p in found[1].prompts if p in before] if found else []
    if not shown:
        return True
    at, prompt = min(shown)
    return "\n" in before[at + len(prompt) :]


def _script(ctx: ToolContext, cmd: str) -> tuple[str, pyscript.Script] | None:
    """The Python script `python X.py` runs (as named, and as read), or None."""
    words = runproof.script_words(cmd)
    script = pyscript.read(ctx.root, words[0].replace("\\", "/")) if words else None
    return (words[0], script) if script is not None else None


def _idle_script(ctx: ToolContext, cmd: str) -> tuple[str, str] | None:
    """The script `python X.py` ran when its code calls nothing at its top level, and the
    call that makes it call its entry function, ready to copy ("" when none is clear)."""
    found = _script(ctx, cmd)
    if found is None or found[1].acts:
        return None
    name, script = found
    path = name.replace("\\", "/")
    call = pyscript.call_entry(path, script)
    said = f"{script.entry}(parser.parse_args())" if script.parsing else f"{script.entry}()"
    fix = f" To call {said} when it runs, send: {json.dumps(call)}" if call else ""
    return name, fix
