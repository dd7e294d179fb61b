"""A write subtask ends with its write: what Qwen2.5-Coder-0.5B on llama-server did with
"Write a hello world script", replayed verbatim on the scripted fake server through the
real CLI. It wrote hello_world.py in round 1, never called mark_subtask_complete, sent
the same write again and again (a streamed reply cut off as a loop), was blocked, failed
the subtask by three strikes, and the replan gave the same subtask back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support import (
    call,
    messages_text,
    plan_rule,
    records,
    records_of,
    round_calls,
    small_model_goal,
)

from localagent.journal import Journal
from localagent.loop import writedone
from localagent.loop.subtasks import writes_unnamed, written_file
from localagent.prompts.promptset import PromptSet, problems
from localagent.state import DueCompletion, DueRound, next_due
from localagent.tools import pyscript

GOAL = "Write a hello world script"
SUBTASKS = ["write_file hello_world.py", "run python hello_world.py"]
PLAN = plan_rule((GOAL, SUBTASKS))
ARGS = '"arguments": {"path": "hello_world.py", "content": "print(\'Hello, world!\')"}'
# Round 1 as the journal has it (its last brace missing), and as issue 25 saw 1.5B's calls.
FIRST = {
    "missing-brace": '{"name": "write_file", ' + ARGS,
    "doubled-brace": '{{"name": "write_file", ' + ARGS + "}}",
}
# Round 2 verbatim: the same call four times, every other one complete, until the loop cut.
REPEATED = ('{"name": "write_file", ' + ARGS + "\n" + '{"name": "write_file", ' + ARGS + "}\n") * 2
RUN_AND_DONE = {
    "content": '{"name": "run_cmd", "arguments": {"cmd": "python hello_world.py"}}\n'
    '{"name": "mark_subtask_complete", "arguments": {"success": true, '
    '"reason": "it printed Hello, world!"}}'
}


def run_goal(
    ws: Path, replies: list[dict[str, Any]], plan: dict[str, Any] = PLAN, **env: str
) -> tuple[Any, list[Any]]:
    return small_model_goal(ws, GOAL, plan, replies, **env)


of = records_of
rounds = round_calls


def looped() -> dict[str, Any]:
    """The repeated-call reply as llama-server streamed it: far past the loop cut."""
    return {"content": REPEATED * 40, "chunks": 320}


def check_no_strikes(ws: Path) -> None:
    assert of(ws, "action_blocked") == [] and of(ws, "subtask_failed") == []
    assert [p["replace_from"] for p in of(ws, "plan") if p.get("replace_from")] == []


@pytest.mark.parametrize("form", sorted(FIRST))
def test_an_unchanged_rewrite_after_the_write_completes_the_write_subtask(
    tmp_path: Path, form: str
) -> None:
    replies = [{"content": FIRST[form]}, looped(), RUN_AND_DONE]
    ran, sent = run_goal(tmp_path, replies, LOCALAGENT_PROFILE="full")
    assert ran.returncode == 0, ran.stderr + ran.stdout
    assert (tmp_path / "hello_world.py").read_text() == "print('Hello, world!')"
    assert len(rounds(tmp_path)) <= 3 and rounds(tmp_path)[1]["cut_off"] == "loop"
    check_no_strikes(tmp_path)
    first, then = of(tmp_path, "subtask_completed")
    write = of(tmp_path, "action_finished")[0]
    assert first["by"] == "write" and first["evidence"] == [write["seq"]]
    assert "written again unchanged" in first["reason"] and first["verified"] is False
    rewrite = of(tmp_path, "action_finished")[1]
    assert "already has this content" in rewrite["result"]
    assert rewrite["completes"]["path"] == "hello_world.py"
    told = rewrite["result"].split("\n", 1)[1]
    assert "SUBTASK COMPLETE: 1.1" in told and told.endswith("Next: subtask 1.2.")
    assert told in messages_text(sent[-1])  # the model read it in the next round
    assert then["reason"] == "it printed Hello, world!"


@pytest.mark.parametrize("form", sorted(FIRST))
def test_with_a_small_model_the_first_write_completes_the_write_subtask(
    tmp_path: Path, form: str
) -> None:
    replies = [{"content": FIRST[form]}, RUN_AND_DONE]
    ran, _ = run_goal(tmp_path, replies)
    assert ran.returncode == 0, ran.stderr + ran.stdout
    assert len(rounds(tmp_path)) == 2
    check_no_strikes(tmp_path)
    first = of(tmp_path, "subtask_completed")[0]
    write = of(tmp_path, "action_finished")[0]
    assert first["by"] == "write" and first["evidence"] == [write["seq"]]
    assert "SUBTASK COMPLETE" in write["result"] and write["completes"]


def test_the_real_run_s_replies_complete_the_goal_in_three_rounds(tmp_path: Path) -> None:
    """The 0.5B's rounds as they came: the write, the looped repeats (now in the run
    subtask: no progress, no completion), then the run, which ends the run subtask."""
    replies = [{"content": FIRST["missing-brace"]}, looped(), RUN_AND_DONE]
    ran, _ = run_goal(tmp_path, replies)
    assert ran.returncode == 0, ran.stderr + ran.stdout
    assert len(rounds(tmp_path)) == 3
    check_no_strikes(tmp_path)
    completed = of(tmp_path, "subtask_completed")
    assert [r.get("by") for r in completed] == ["write", "run"]
    # The rewrites in the run subtask did nothing: unchanged, and never a completion.
    rewrites = [r for r in of(tmp_path, "action_finished") if r["tool"] == "write_file"][1:]
    assert rewrites and all("already has this content" in r["result"] for r in rewrites)
    assert not any(r.get("completes") for r in rewrites)


def test_without_a_later_subtask_for_the_file_the_first_write_leaves_the_check_to_the_model(
    tmp_path: Path,
) -> None:
    """A plan whose one subtask writes the file: the model's own run is the evidence a
    small verifier needs, so the first write does not end the subtask."""
    plan = plan_rule((GOAL, ["write_file hello_world.py"]))
    ran, _ = run_goal(tmp_path, [{"content": FIRST["missing-brace"]}, RUN_AND_DONE], plan)
    assert ran.returncode == 0, ran.stderr + ran.stdout
    assert not of(tmp_path, "action_finished")[0].get("completes")
    assert [r.get("by") for r in of(tmp_path, "subtask_completed")] == [None]


def test_a_replan_that_gives_back_a_written_write_subtask_carries_it_as_done(
    tmp_path: Path,
) -> None:
    """The write succeeded, then the subtask failed only through repeats of a call that
    succeeded (a read, blocked by the third time); the replan gives the same plan back.
    Its write subtask is carried as done instead of being blocked again forever."""
    read = '{"name": "read_file", "arguments": {"path": "hello_world.py"}}\n'
    # One read per reply: the same call twice in one reply is cut as a loop.
    replies = [{"content": FIRST["missing-brace"]}, *[{"content": read}] * 5]
    ran, _ = run_goal(
        tmp_path, [*replies, RUN_AND_DONE], LOCALAGENT_PROFILE="full", LOCALAGENT_MAX_ROUNDS="8"
    )
    assert ran.returncode == 0, ran.stderr + ran.stdout
    failed = of(tmp_path, "subtask_failed")
    assert len(failed) == 1 and "repeating blocked actions" in failed[0]["reason"]
    replan = [p for p in of(tmp_path, "plan") if p.get("replace_from")]
    assert len(replan) == 1 and replan[0]["tasks"][0]["subtasks"] == SUBTASKS
    assert [c["subtask"] for c in replan[0]["carried"]] == ["write_file hello_world.py"]
    assert "already written by this run" in replan[0]["carried"][0]["reason"]
    assert len(rounds(tmp_path)) == 7
    assert records(tmp_path)[-1]["type"] == "goal_completed"


def test_an_unchanged_rewrite_completes_a_write_subtask_whose_file_an_earlier_one_wrote(
    tmp_path: Path,
) -> None:
    """Qwen2.5-Coder-0.5B's next run: the small verifier asked for the write again, and
    the replan's first subtask was "write_file hello_world.py" once more. The model sent
    the same write, unchanged; the file is what the subtask asks, so it is done."""
    sentence = '{"name": "write_file hello_world.py", ' + ARGS  # verbatim, brace missing
    plan = plan_rule((GOAL, ["write_file hello_world.py", *SUBTASKS]))
    replies = [{"content": sentence}, {"content": sentence}, RUN_AND_DONE]
    ran, _ = run_goal(tmp_path, replies, plan)
    assert ran.returncode == 0, ran.stderr + ran.stdout
    check_no_strikes(tmp_path)
    assert [r.get("by") for r in of(tmp_path, "subtask_completed")] == ["write", "write", "run"]
    assert len(rounds(tmp_path)) == 3


def test_an_unchanged_rewrite_completes_a_write_subtask_that_names_no_file(tmp_path: Path) -> None:
    """The 0.5B model's one-subtask plan, "Write a hello world script": it wrote
    hello_world.py and then sent the same write (verbatim) until three strikes failed
    the subtask. The file this subtask wrote, rewritten unchanged, ends it."""
    write = (
        '{"name": "write_file", "arguments": {"path": "hello_world.py", '
        '"content": "print(\'Hello, world!\')\\n"}}'
    )
    plan = plan_rule((GOAL, [GOAL]))
    ran, _ = run_goal(tmp_path, [{"content": write}, {"content": write + "\n"}], plan)
    assert ran.returncode == 0, ran.stderr + ran.stdout
    check_no_strikes(tmp_path)
    assert [r.get("by") for r in of(tmp_path, "subtask_completed")] == ["write"]
    assert len(rounds(tmp_path)) == 2


@pytest.mark.parametrize(
    ("subtask", "unnamed"),
    [
        ("Write a hello world script", True),
        ("Create the game", True),
        ("Write the tests", False),
        ("Write hello.py", False),  # it names its file
        ("Write a script and run it", False),
        ("Create the mathx package", False),
    ],
)
def test_what_is_a_write_subtask_that_names_no_file(subtask: str, unnamed: bool) -> None:
    assert writes_unnamed(subtask) is unnamed


def test_a_write_with_a_syntax_error_completes_nothing(tmp_path: Path) -> None:
    # No one-line fix makes it compile (the small profile makes such a fix itself).
    broken = call("write_file", path="hello_world.py", content="print('Hello' +")
    fixed = call("write_file", path="hello_world.py", content="print('Hello, world!')")
    ran, _ = run_goal(tmp_path, [broken, broken, fixed, RUN_AND_DONE])
    assert ran.returncode == 0, ran.stderr + ran.stdout
    finished = of(tmp_path, "action_finished")
    assert [bool(r.get("completes")) for r in finished[:3]] == [False, False, True]


@pytest.mark.parametrize(
    ("subtask", "path"),
    [
        ("write_file hello_world.py", "hello_world.py"),
        ("Create hello.py that prints hi", "hello.py"),
        ("write_file rps_game.py with game logic", "rps_game.py"),
        ("Write mathx/core.py with add and sub", "mathx/core.py"),
        ("run python hello_world.py", ""),
        ("Create hello.py and run it", ""),
        ("Write tests in test_core.py", "test_core.py"),
        # Qwen2.5-Coder-1.5B's mathx plan: the file's folder and the noun are no test run
        ("write_file tests/test_mathx.py with the test cases", "tests/test_mathx.py"),
        # the 1.5B's, verbatim: pytest the kind of tests, not a run of it
        ("write_file tests/test_mathx.py with the pytest tests", "tests/test_mathx.py"),
        ("write_file tests/test_mathx.py and run pytest", ""),
        ("Write calc.py and test it", ""),
        ("Write test_calc.py, then run pytest", ""),
        ("Write a.py and b.py", ""),
        ("Fix the bug in app.py", ""),
    ],
)
def test_what_is_a_write_subtask(subtask: str, path: str) -> None:
    assert written_file(subtask) == path


def test_a_completion_owed_by_a_write_is_journaled_on_resume(tmp_path: Path) -> None:
    """A crash between the write's record and the subtask's completion: the state names
    the completion as owed, so a resumed run journals it before anything else."""
    (tmp_path / "hello_world.py").write_text("print('Hello, world!')")
    journal = Journal(tmp_path)
    journal.load()
    journal.append("goal_started", goal=GOAL, model="m", settings={})
    journal.append("plan", tasks=[{"description": GOAL, "subtasks": SUBTASKS}])
    args = {"path": "hello_world.py", "content": "print('Hello, world!')"}
    journal.append("action_started", tool="write_file", args=args, signature="w", call=None)
    owed = {"path": "hello_world.py", "reason": "hello_world.py is written"}
    journal.append(
        "action_finished",
        tool="write_file",
        args=args,
        ok=True,
        result="wrote 22 bytes",
        facts={"wrote": ["hello_world.py"]},
        completes=owed,
    )
    journal.close()
    again = Journal(tmp_path)
    state = again.load()
    assert next_due(state) == DueCompletion(owed)
    fields = writedone.completion(state, tmp_path, owed)
    again.append("subtask_completed", call=None, **fields)
    assert isinstance(next_due(again.state), DueRound)
    assert again.state.goal is not None
    assert [s.status for s in again.state.goal.tasks[0].subtasks] == ["completed", "in_progress"]
    assert fields["evidence"] == [4]
    again.close()


def test_the_prompts_are_named() -> None:
    prompts = PromptSet({})
    text = prompts.render("write_completes", number="1.1", reason="b", next="c")
    assert text.startswith("SUBTASK COMPLETE")
    # A replacement written for the subtask's text, as the note named it before, still
    # holds: the note is given both.
    old = "SUBTASK COMPLETE: '{subtask}' is done ({reason}). Next: {next}."
    assert problems({"write_completes": old}, str) == []
    assert problems({"write_completes": "Done."}, str) != []  # {reason} and {next} required


def test_the_1_5b_plan_of_a_brace_is_the_goal_and_its_rewrite_ends_it(tmp_path: Path) -> None:
    """Qwen2.5-Coder-1.5B through the Ollama API planned `"subtasks": ["{{"]` (twice), then
    wrote app.py with a doubled-brace call and sent it again and again: the subtask "{{"
    was no write subtask, so three strikes failed it and every replan gave it back. A
    subtask with no words is refused; the goal becomes the one subtask, and the
    unchanged rewrite of the file it wrote ends it. The replies are verbatim."""
    write = (
        '{{"name": "write_file", "arguments": {"path": "app.py", '
        '"content": "print(\'Hello, world!\')"}}}}'
    )
    plan = plan_rule((GOAL, ["{{"]))
    ran, asked = run_goal(tmp_path, [{"content": write}, {"content": write + "\n"}], plan)
    assert ran.returncode == 0, ran.stderr + ran.stdout
    assert 'subtask "{{" has no words' in messages_text(asked[1])
    assert of(tmp_path, "plan")[0]["tasks"] == [{"description": GOAL, "subtasks": [GOAL]}]
    check_no_strikes(tmp_path)
    assert [r.get("by") for r in of(tmp_path, "subtask_completed")] == ["write"]
    assert (tmp_path / "app.py").read_text() == "print('Hello, world!')"


def test_a_stub_completes_nothing_and_its_run_is_told_it_does_nothing(tmp_path: Path) -> None:
    """Qwen2.5-Coder-1.5B's first round of "Create a rock-paper-scissors game", verbatim:
    a function whose body is `pass`, which the first-write rule took as the game; then
    `python rps_game.py` ran with no output until three strikes. A stub ends no write
    subtask, the write says which functions are empty, and a run of a script that calls
    nothing says so."""
    goal = "Create a rock-paper-scissors game"
    write_task = "Write a named file rps_game.py with the game logic"
    plan = plan_rule(
        (write_task, ["write_file rps_game.py with the game logic"]),
        ("Run python rps_game.py", ["run python rps_game.py"]),
    )
    stub = (
        '{{"name": "write_file", "arguments": {"path": "rps_game.py", "content": "def '
        'game_logic(player1, player2):\\n    # Implement the game logic here\\n    pass"}}}}'
    )
    run = '{{"name": "run_cmd", "arguments": {"cmd": "python rps_game.py"}}}}'
    ran, _ = small_model_goal(
        tmp_path, goal, plan, [{"content": stub}, {"content": run}], LOCALAGENT_MAX_ROUNDS="2"
    )
    assert ran.returncode != 0 and of(tmp_path, "subtask_completed") == []
    write, started = of(tmp_path, "action_finished")
    assert "but game_logic is only `pass`: write its code" in write["result"]
    assert "NOTE: rps_game.py printed nothing: its code only defines" in started["result"]


@pytest.mark.parametrize(
    ("source", "acts", "reads", "stubs"),
    [
        ("def f(a):\n    # Implement here\n    pass", False, False, ["f"]),
        ('def f():\n    """Doc."""\n    ...\nf()', True, False, ["f"]),
        ("def f():\n    return 1\n\nif __name__ == '__main__':\n    print(f())", True, False, []),
        ("import sys\nprint(sys.stdin.read())", True, True, []),
        ("class A:\n    @property\n    def x(self):\n        pass", False, False, []),
    ],
)
def test_what_a_script_does_when_run(
    source: str, acts: bool, reads: bool, stubs: list[str]
) -> None:
    script = pyscript.parse(source)
    assert script is not None
    assert (script.acts, script.reads_input, script.stubs) == (acts, reads, stubs)


@pytest.mark.parametrize(
    ("source", "entry", "tail"),
    [
        ("def helper(x):\n    return x\n\ndef main():\n    print(1)\n", "main", "    print(1)"),
        ("def play_game(rounds=3):\n    print(1)\n", "play_game", "    print(1)"),
        (
            "def only():\n    return 1\n\ndef twice(x):\n    return 1\n",
            "only",
            "def twice(x):\n    return 1",
        ),
        ("def a():\n    print(1)\n\ndef b():\n    print(2)\n", "", ""),  # which one?
        ("def main(args):\n    print(args)\n", "", ""),  # it needs an argument
        ("def main():\n    pass\n", "", ""),  # a stub
        ("def main():\n    print(1)\nmain()\n", "", ""),  # it calls it already
        ("def main(*, k):\n    print(k)\n", "", ""),
        ("@app.command()\ndef main():\n    print(1)\n", "", ""),
    ],
)
def test_which_function_a_script_that_calls_nothing_would_call(
    source: str, entry: str, tail: str
) -> None:
    """The call a note offers goes after the fewest last lines found once in the file."""
    script = pyscript.parse(source)
    assert script is not None and (script.entry, script.tail) == (entry, tail)
    call = pyscript.call_entry("g.py", script)
    if entry:
        assert call is not None
        edited = source.replace(call["arguments"]["old"], call["arguments"]["new"])  # type: ignore[index]
        assert pyscript.parse(edited).acts  # type: ignore[union-attr]
        # a function that returns its result and prints nothing is called inside print()
        shown = f"print({entry}())" if entry in script.quiet else f"{entry}()"
        assert edited.rstrip().endswith(f"    {shown}")
    else:
        assert call is None


def test_a_test_file_written_early_is_done_by_its_unchanged_rewrite(tmp_path: Path) -> None:
    """Qwen2.5-Coder-1.5B's mathx run: it wrote tests/test_mathx.py while the module's
    subtask was active, then rewrote it unchanged in "write_file tests/test_mathx.py with
    the test cases" until three strikes: "test" in the path and the noun read as a test
    run, so that subtask was no write subtask."""
    module = {"path": "mathx.py", "content": "def add(a, b):\n    return a + b\n"}
    tests = {"path": "tests/test_mathx.py", "content": "import mathx\n\n\ndef test_add():\n"
             "    assert mathx.add(1, 2) == 3\n"}  # fmt: skip
    plan = plan_rule(
        ("mathx", ["write_file mathx.py with the function definitions",
                   "write_file tests/test_mathx.py with the test cases"]),
    )  # fmt: skip
    replies = [call("write_file", **a) for a in (module, tests, module, tests)]
    ran, _ = small_model_goal(tmp_path, "Create mathx", plan, replies)
    assert ran.returncode == 0, ran.stderr + ran.stdout
    check_no_strikes(tmp_path)
    assert [r.get("by") for r in of(tmp_path, "subtask_completed")] == ["write", "write"]
    assert len(rounds(tmp_path)) == 4


def test_the_first_write_of_a_package_s_module_completes_its_subtask(tmp_path: Path) -> None:
    """Qwen2.5-Coder-1.5B's mathx plan wrote one module a subtask, and each subtask took a
    second round to send the same write again, unchanged: no one runs a package's module."""
    steps = {
        "mathx/__init__.py": "from . import add, subtract, multiply, divide",
        "mathx/add.py": "def add(a, b): return a + b",
        "mathx/subtract.py": "def subtract(a, b): return a - b",
    }  # verbatim, subtasks and writes
    plan = plan_rule(
        *((f"write {p}", [f"write_file {p} with the content '{c}'"]) for p, c in steps.items())
    )
    replies = [call("write_file", path=p, content=c) for p, c in steps.items()]
    ran, _ = small_model_goal(tmp_path, "Create a Python package mathx", plan, replies)
    assert ran.returncode == 0, ran.stderr + ran.stdout
    check_no_strikes(tmp_path)
    assert [r.get("by") for r in of(tmp_path, "subtask_completed")] == ["write"] * 3
    assert len(rounds(tmp_path)) == 3
    # A module outside a package is a program: its first write leaves the check to the model.
    alone = tmp_path / "alone"
    plan = plan_rule(("add", ["write_file add.py with the content 'def add(a, b): return a + b'"]))
    replies = [call("write_file", path="add.py", content=steps["mathx/add.py"])] * 2
    ran, _ = small_model_goal(alone, "Create add.py", plan, replies)
    assert ran.returncode == 0, ran.stderr + ran.stdout
    assert len(rounds(alone)) == 2


def test_a_package_that_imports_from_itself_what_it_lacks_is_told_so(tmp_path: Path) -> None:
    """The 1.5B's mathx/__init__.py, verbatim, the package's only file: the tests' `import
    mathx` then failed ("cannot import name 'add' from partially initialized module"). The
    small profile writes it as the import of the functions of modules yet to be written,
    and says which. The write still ends its subtask: held back, the model sent the same
    write until three strikes, twice, in a real run."""
    init = "from mathx import add, subtract, multiply, divide"
    plan = plan_rule(("mathx", ["write_file mathx/__init__.py with the package structure and "
                                "functions", "run python -m pytest"]))  # fmt: skip
    replies = [call("write_file", path="mathx/__init__.py", content=init)]
    ran, _ = small_model_goal(tmp_path, "Create a Python package mathx", plan, replies)
    assert ran.returncode in (0, 1), ran.stderr + ran.stdout
    write = next(r for r in of(tmp_path, "action_finished") if r["tool"] == "write_file")
    assert (
        "; mathx loads once mathx/add.py, mathx/divide.py, mathx/multiply.py, "
        "mathx/subtract.py are written, each with its function" in (write["result"])
    )
    assert write.get("completes")


def test_the_prompts_a_script_shows_are_read_from_its_source() -> None:
    source = (
        "name = input('Your name: ')\nmove = input(f'{name}, your move? ')\n"
        "again = input(f'Again, {name}? ')\nraw = input()\nother = input(PROMPT)\n"
    )
    script = pyscript.parse(source)
    assert script is not None and script.reads_input
    assert script.prompts == ["Your name: ", "Again, "]


def test_a_rewrite_that_restructures_the_code_is_not_taken_for_emptying_it(tmp_path: Path) -> None:
    """The 1.5B rewrote its class-based game as functions: new names, still code."""
    from localagent.tools import catalog
    from localagent.tools.base import ToolContext

    ctx = ToolContext(root=tmp_path)
    tools = catalog()
    (tmp_path / "g.py").write_text("class RPSGame:\n    def play(self):\n        return 1\n")
    result = tools.execute(
        ctx,
        "write_file",
        {"path": "g.py", "content": "def game():\n    move = input()\n    return move\n"},
    )
    assert "emptied" not in result.facts and "no longer defines" not in result.text
    result = tools.execute(ctx, "write_file", {"path": "g.py", "content": "print('end')\n"})
    assert result.facts["emptied"] == ["g.py"]
    assert result.text.endswith("; but it no longer defines game: the code it had is gone")
    # As long as the code it replaces: a program written without functions (greet.py).
    (tmp_path / "g.py").write_text("def g(n):\n    print(n)\n")
    script = "import sys\n\nif __name__ == '__main__':\n    print(sys.argv[1])\n"
    result = tools.execute(ctx, "write_file", {"path": "g.py", "content": script})
    assert "emptied" not in result.facts and "no longer defines" not in result.text


GREET = (
    "Write greet.py: python greet.py NAME prints Hello, NAME! and exits 0; run without "
    "arguments it prints a usage message and exits with status 2"
)
# Qwen2.5-Coder-1.5B's rounds on an H100, verbatim: a function and no call, three runs
# that printed nothing, then, asked to make it call its code, the program the goal asks
# for, written without the function. It was taken for emptying the file and held; the
# same write again was blocked, the subtask failed, and the replan lost the program.
GREET_ROUNDS = [
    '{{"name": "write_file", "arguments": {"path": "greet.py", "content": "def greet(NAME):\\n'
    "    print(f'Hello, {NAME}!')\\n    exit(0)\"}}}",
    *['{{"name": "run_cmd", "arguments": {"cmd": "python greet.py"}}}}'] * 3,
    '{{"name": "write_file", "arguments": {"path": "greet.py", "content": "import sys\\n\\nif '
    "__name__ == '__main__':\\n    if len(sys.argv) > 1:\\n        print('Hello, {}!'.format("
    "sys.argv[1]))\\n        sys.exit(0)\\n    else:\\n        print('Usage: python greet.py "
    "NAME')\\n        sys.exit(2)\"}}}",
]


def test_a_program_rewritten_without_its_functions_ends_the_write(tmp_path: Path) -> None:
    plan = plan_rule((GREET, ["write_file greet.py with its code", "run python greet.py"]))
    replies = [{"content": r} for r in GREET_ROUNDS]
    replies.append({"content": '{"name": "run_cmd", "arguments": {"cmd": "python greet.py Ada"}}'})
    small_model_goal(tmp_path, GREET, plan, replies, LOCALAGENT_MAX_ROUNDS="8")
    rewrite = of(tmp_path, "action_finished")[-2]
    assert rewrite["tool"] == "write_file" and "no longer defines" not in rewrite["result"]
    assert "SUBTASK COMPLETE" in rewrite["result"]
    assert [c.get("by") for c in of(tmp_path, "subtask_completed")] == ["write", "write", "run"]
    assert "Hello, Ada!" in of(tmp_path, "action_finished")[-1]["result"]


MATHX = "mathx: add, with tests, and a demo"
MATHX_STEPS = [
    "write_file mathx/__init__.py with the add function",
    "write_file tests/test_mathx.py with the tests",
    "run python -m pytest tests/test_mathx.py",
    "run python demo.py",
]
MATHX_TESTS = "from mathx import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"


def mathx_files(operator: str = "+", tests: str = MATHX_TESTS) -> list[dict[str, Any]]:
    """The replies that write the package (its add using `operator`) and its tests."""
    add = f"def add(a, b):\n    return a {operator} b\n"
    return [
        call("write_file", path="mathx/__init__.py", content=add),
        call("write_file", path="tests/test_mathx.py", content=tests),
    ]


def test_a_replan_after_the_tests_passed_carries_the_files_they_passed_with(
    tmp_path: Path,
) -> None:
    """Qwen2.5-Coder-1.5B's mathx runs on the H100: the tests passed, a later step failed
    by three strikes, and the replan planned every file again; the model, its fix out of
    the window, wrote the broken `__init__.py` back. Files this run wrote that the tests
    then passed with, and the test run itself, are carried as done: the replan resumes at
    the step that failed."""
    plan = plan_rule((MATHX, MATHX_STEPS))
    replies = [
        *mathx_files(),
        call("run_cmd", cmd="python -m pytest tests/test_mathx.py"),
        *[call("run_cmd", cmd="python demo.py")] * 5,
        call("write_file", path="demo.py", content="from mathx import add\n\nprint(add(2, 3))\n"),
        call("run_cmd", cmd="python demo.py"),
    ]
    ran, _ = small_model_goal(tmp_path, MATHX, plan, replies, LOCALAGENT_MAX_ROUNDS="12")
    assert ran.returncode == 0, ran.stderr + ran.stdout
    (failed,) = records_of(tmp_path, "subtask_failed")
    assert failed["reason"].startswith("The model kept repeating blocked actions")
    # The replan is told what failed: the blocked command and what its last run said.
    assert "The last: `python demo.py`; it gave: " in failed["reason"], failed["reason"]
    assert "script 'demo.py' does not exist" in failed["reason"]
    (replan,) = [p for p in records_of(tmp_path, "plan") if p.get("replace_from")]
    carried = {c["subtask"]: c["reason"] for c in replan["carried"]}
    assert list(carried) == MATHX_STEPS[:3]
    assert "`python -m pytest tests/test_mathx.py` passed with it" in carried[MATHX_STEPS[0]]
    assert "already succeeded in this run" in carried[MATHX_STEPS[2]]
    writes = [r for r in records_of(tmp_path, "action_finished") if r["tool"] == "write_file"]
    assert [w["args"]["path"] for w in writes] == [
        "mathx/__init__.py",
        "tests/test_mathx.py",
        "demo.py",
    ]
    assert records(tmp_path)[-1]["type"] == "goal_completed"


def test_a_replan_after_tests_that_failed_carries_no_file(tmp_path: Path) -> None:
    """The same run with tests that fail: the files may be what failed, so the replan's
    write subtasks stay to do. (Its test is named after no function here, and its failure
    names no call's value, so the failed run goes to the model's replan, not back to a
    function: `loop/testback.py`.)"""
    plan = plan_rule((MATHX, MATHX_STEPS))
    tests = MATHX_TESTS.replace("test_add", "test_sum")
    tests = tests.replace("assert add(1, 2) == 3", "total = add(1, 2)\n    assert total == 3")
    replies = [
        *mathx_files("-", tests),
        *[call("run_cmd", cmd="python -m pytest tests/test_mathx.py")] * 5,
    ]
    small_model_goal(tmp_path, MATHX, plan, replies, LOCALAGENT_MAX_ROUNDS="8")
    (replan, *_) = [p for p in records_of(tmp_path, "plan") if p.get("replace_from")]
    assert not replan.get("carried")
    # A blocked run says what its last run gave: after a replan the window does not.
    blocked = records_of(tmp_path, "action_blocked")
    said = "Its last run (`python -m pytest tests/test_mathx.py`) gave: "
    assert blocked and all(said in b["reason"] for b in blocked), blocked[0]["reason"]
    assert "test_sum - assert -1 == 3" in blocked[0]["reason"]
    # And the strike's reason, which the replan quotes, says what the run gave.
    (failed, *_) = records_of(tmp_path, "subtask_failed")
    assert failed["reason"].endswith(
        "The last: `python -m pytest tests/test_mathx.py`; it gave: "
        "FAILED tests/test_mathx.py::test_sum - assert -1 == 3."
    ), failed["reason"]


def test_a_test_file_s_write_ends_its_subtask_when_a_later_one_runs_the_tests(
    tmp_path: Path,
) -> None:
    """Qwen2.5-Coder-1.5B's mathx plans: "write_file tests/test_mathx.py with the test
    cases", then "run pytest to ensure the tests pass", which names no file; each test
    file was written twice, the second time unchanged, to end its subtask."""
    steps = [
        "write_file mathx/__init__.py with the add function",
        "write_file tests/test_mathx.py with the test cases",
        "run pytest to ensure the tests pass",
    ]
    replies = [
        *mathx_files(),
        call("run_cmd", cmd="python -m pytest tests/test_mathx.py"),
    ]
    ran, _ = small_model_goal(tmp_path, MATHX, plan_rule((MATHX, steps)), replies)
    assert ran.returncode == 0, ran.stderr + ran.stdout
    assert [r.get("by") for r in records_of(tmp_path, "subtask_completed")] == [
        "write",
        "write",
        "run",
    ]
    assert len([r for r in records_of(tmp_path, "llm_call") if r["purpose"] == "round"]) == 3


GREET = (
    "Write greet.py: python greet.py NAME prints Hello, NAME! and exits 0; run without "
    "arguments it prints a usage message and exits with status 2"
)
# greet-1 on the CPU, round 1 verbatim (its plan fell back to the goal): a greet.py that
# does all the goal asks, then sent twice more unchanged, blocked, and the subtask failed.
GREET_WRITE = (
    '{{"name": "write_file", "arguments": {"path": "greet.py", "content": "import sys\\n\\n'
    "def greet(name):\\n    print(f'Hello, {name}!')\\n    sys.exit(0)\\n\\ndef main():\\n    "
    "if len(sys.argv) == 1:\\n        print('Usage: python greet.py NAME')\\n        "
    "sys.exit(2)\\n    name = sys.argv[1]\\n    greet(name)\\n\\nif __name__ == '__main__':"
    '\\n    main()"}}}'
)


@pytest.mark.parametrize(
    ("goal", "ends"),
    [
        (GREET, True),
        # A goal that names two files: the rewrite of one does not end it.
        (GREET.replace("Write greet.py:", "Write greet.py and test_greet.py:"), False),
    ],
)
def test_the_unchanged_rewrite_of_the_one_file_a_goal_names_ends_the_goal_as_its_subtask(
    tmp_path: Path, goal: str, ends: bool
) -> None:
    replies = [{"content": GREET_WRITE}] * 2
    small_model_goal(tmp_path, goal, plan_rule((goal, [goal])), replies, LOCALAGENT_MAX_ROUNDS="2")
    done = records_of(tmp_path, "subtask_completed")
    assert [d.get("by") for d in done] == (["write"] if ends else []), done
    if ends:
        assert records_of(tmp_path, "goal_completed"), records(tmp_path)[-3:]
