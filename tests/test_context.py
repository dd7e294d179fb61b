"""The focused context: a window that slides in chunks, a fixed order, a bounded size
and a stable front, checked on states built by the real journal and reducer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from localagent import tools
from localagent.journal import Journal
from localagent.loop import context
from localagent.loop import facts as round_facts
from localagent.prompts.promptset import DEFAULT
from localagent.state import Exchange

KEEP = 5
ALLOWED = ("python", "pytest", "ruff", "pip")
SUBTASKS = [f"Write module m{i:02d}.py" for i in range(40)]


def test_window_slides_in_chunks() -> None:
    sizes = []
    for n in range(1, 41):
        exchanges = [Exchange(round=i) for i in range(1, n + 1)]
        shown = context.window(exchanges, KEEP)
        assert shown == exchanges[len(exchanges) - len(shown) :], "a window is the newest ones"
        assert min(n, KEEP) <= len(shown) <= 3 * KEEP - 1
        sizes.append(len(shown))
    drops = [n for n in range(1, 40) if sizes[n] < sizes[n - 1]]
    assert drops == [14, 24, 34]  # n = 15, 25, 35: back to KEEP exchanges, every 2 * KEEP
    assert sizes[:14] == list(range(1, 15)) and sizes[14] == KEEP


def test_the_window_slides_in_chunks_from_where_a_replan_started_it() -> None:
    """The round after each is journaled with where its window starts (`window`), which
    the next round starts from: a replan at round 9 starts it there, and it moves only
    in chunks from there (an absolute schedule moved it by one at round 15)."""
    start, starts = 9, []
    for n in range(10, 60):
        shown = context.window([Exchange(round=i) for i in range(1, n + 1)], KEEP, start)
        assert shown[-1].round == n and len(shown) <= 3 * KEEP - 1
        start = shown[0].round - 1
        starts.append(start)
    assert sorted(set(starts)) == [9, 19, 29, 39, 49]
    assert starts.index(19) == 24 - 10  # at round 24: 3 * KEEP - 1 exchanges shown before


def new_journal(root: Path) -> Journal:
    journal = Journal(root)
    journal.load()
    journal.append("goal_started", goal="Write the modules m00.py to m39.py", model="m")
    journal.append("plan", tasks=[{"description": "Write every module", "subtasks": SUBTASKS}])
    return journal


def play_round(journal: Journal, n: int) -> None:
    """One round as the agent journals it: the reply, then the action's start and end."""
    path = f"m{n % 40:02d}.py"
    args = {"path": path, "content": f"VALUE = {n}\n" + "# filler line\n" * 6}
    journal.append(
        "llm_call",
        purpose="round",
        prompt_tokens=900,
        completion_tokens=40,
        duration_ms=5.0,
        content="",
        probe=round_facts.probe(journal.state, journal.workspace, max_rounds=300),
        tool_calls=[{"name": "write_file", "arguments": args}],
    )
    sig = f"write_file {n}"
    journal.append("action_started", tool="write_file", args=args, signature=sig, round=n)
    journal.append(
        "action_finished",
        tool="write_file",
        args=args,
        ok=True,
        result=f"wrote {len(args['content'])} bytes to '{path}' (replaced)",
        changed=True,
        returncode=None,
    )
    if n % 10 == 0:
        journal.append("subtask_completed", reason=f"{path} is written")


def messages_for(journal: Journal, root: Path) -> list[dict[str, Any]]:
    system = context.system_prompt(ALLOWED, tools.catalog(), native=True)
    facts = round_facts.probe(journal.state, root, max_rounds=300)
    return context.build(journal.state, system, KEEP, True, facts)


def size(messages: list[dict[str, Any]]) -> int:
    return sum(len(str(m)) for m in messages)


def test_build_order_system_summary_exchanges_probe(tmp_path: Path) -> None:
    journal = new_journal(tmp_path)
    for n in range(1, 4):
        play_round(journal, n)
    messages = messages_for(journal, tmp_path)
    assert messages[0]["role"] == "system"
    assert messages[0]["content"] == context.system_prompt(ALLOWED, tools.catalog(), native=True)
    assert messages[1]["role"] == "user" and "1.1. Write module m00.py" in messages[1]["content"]
    assert messages[-1]["role"] == "user" and messages[-1]["content"].startswith("[status]")
    assert "ACTIVE SUBTASK: Write module m00.py" in messages[-1]["content"]
    middle = messages[2:-1]
    assert [m["role"] for m in middle] == ["user", "assistant", "tool"] * 3
    assert [m["content"].split("\n")[0] for m in middle[::3]] == [
        f"[status] round {n} of 300" for n in (1, 2, 3)
    ]
    assert [m["tool_calls"][0]["arguments"]["content"][:9] for m in middle[1::3]] == [
        "VALUE = 1",
        "VALUE = 2",
        "VALUE = 3",
    ]


def test_each_round_s_facts_show_what_changed_since_the_round_before(tmp_path: Path) -> None:
    """A round's facts stay in the prompts after it, each read once; the lines a round's
    facts repeat of the round before (about 100 of the 250 tokens a round of the 1.5B
    added) are left out. The first round shown has them all; the first line and the active
    subtask (the last line, for a small model) are always there."""
    journal = new_journal(tmp_path)
    for n in range(1, 4):
        play_round(journal, n)
    messages = messages_for(journal, tmp_path)
    shown = [m["content"] for m in messages[2:-1:3]] + [messages[-1]["content"]]
    full = [round_facts.probe_message(e.probe) for e in journal.state.exchanges]
    full.append(round_facts.probe_message(round_facts.probe(journal.state, tmp_path, 300)))
    assert shown[0] == full[0] and "Plan progress:" in shown[0]
    for before, now, whole in zip(full[:-1], shown[1:], full[1:], strict=True):
        lines = now.split("\n")
        assert lines[0] == whole.split("\n")[0] and lines[-1] == whole.split("\n")[-1]
        assert lines[-1].startswith("ACTIVE SUBTASK:")
        kept = set(before.split("\n"))
        # What is left out is in the facts just above, or what the results just above
        # show (the commands run and files written before them, the errors); nothing
        # else is.
        echoed = ("Recent commands: ", "Files written: ", "Last errors: ", "  ")
        assert [x for x in whole.split("\n") if x not in lines] == [
            x for x in whole.split("\n") if (x in kept or x.startswith(echoed)) and x not in lines
        ]
        assert "Plan progress:" not in now  # unchanged since round 1
    assert "Files written: m02.py" in shown[2]  # written since


def test_text_protocol_prompt_lists_every_tool_and_results_come_as_user_turns(
    tmp_path: Path,
) -> None:
    journal = new_journal(tmp_path)
    play_round(journal, 1)
    system = context.system_prompt(ALLOWED, tools.catalog(), native=False)
    assert "no native tool calling" in system
    for name in tools.catalog().names():
        assert f"- {name}(" in system
    facts = round_facts.probe(journal.state, tmp_path, max_rounds=30)
    messages = context.build(journal.state, system, KEEP, False, facts)
    roles = [m["role"] for m in messages]
    assert roles == ["system", "user", "user", "assistant", "user", "user"]
    assert messages[4]["content"].startswith("[result of write_file]")


def test_probe_names_mentioned_files_that_exist_and_are_missing(tmp_path: Path) -> None:
    journal = new_journal(tmp_path)
    (tmp_path / "m00.py").write_text("x = 1\n")
    facts = round_facts.probe(journal.state, tmp_path, max_rounds=30, notice="NOTE: restarted")
    assert facts["existing"] == ["m00.py"]
    assert "m39.py" in facts["missing"]
    text = round_facts.probe_message(facts)
    assert "Files that exist: m00.py" in text and "NOTE: restarted\nACTIVE TASK" in text
    play_round(journal, 40)  # writes m00.py: "Files written" names it, not "Files that exist"
    facts = round_facts.probe(journal.state, tmp_path, max_rounds=30)
    assert facts["written"] == ["m00.py"] and facts["existing"] == []
    assert "Files that exist" not in round_facts.probe_message(facts)


def test_versions_and_abbreviations_are_no_files_the_probe_names(tmp_path: Path) -> None:
    """The 1.5B's mathx step, verbatim: "write_file mathx/__version__.py with the version
    number (e.g., '0.1.0')"; every round's facts then said "Files mentioned but missing:
    0.1.0, e.g"."""
    journal = Journal(tmp_path)
    journal.load()
    step = "write_file mathx/__version__.py with the version number (e.g., '0.1.0')"
    journal.append("goal_started", goal="Write mathx, i.e. a package, v1.2 with data.v2", model="m")
    journal.append("plan", tasks=[{"description": "Write it", "subtasks": [step]}])
    facts = round_facts.probe(journal.state, tmp_path, max_rounds=30)
    assert facts["missing"] == ["data.v2", "mathx/__version__.py"]


def test_calls_a_subtask_quotes_are_no_files_the_probe_names(tmp_path: Path) -> None:
    """The hand-back's edit step, verbatim from a 1.5B mathx run: every round of it said
    "Files mentioned but missing: mathx.divide, pytest.raises", the calls in its code."""
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_mathx.py").write_text("import mathx\n")
    step = (
        "replace_in_file tests/test_mathx.py so that its test checks the raise as the code "
        "makes it: replace `assert mathx.divide(6, 0) == 'Cannot divide by zero'` with "
        "`with pytest.raises(ValueError):\n        mathx.divide(6, 0)`"
    )
    facts = _mathx_step_facts(tmp_path, step)
    assert facts["missing"] == [] and facts["existing"] == ["tests/test_mathx.py"]


def _mathx_step_facts(root: Path, step: str) -> dict[str, Any]:
    """The first round's facts of a mathx run whose one subtask is `step`."""
    journal = Journal(root)
    journal.load()
    journal.append("goal_started", goal="Create a Python package mathx", model="m")
    journal.append("plan", tasks=[{"description": "Fix it", "subtasks": [step]}])
    return round_facts.probe(journal.state, root, max_rounds=30)


def test_a_call_s_dotted_path_is_no_file_the_probe_names(tmp_path: Path) -> None:
    """The hand-back's step to fix a test's expected values, verbatim from a 1.5B mathx
    run: every round of it said "Files mentioned but missing: pytest.mark", the start of
    `@pytest.mark.parametrize(`."""
    step = (
        "replace_in_file tests/test_mathx.py to fix the value its test expects: divide(1, 2) "
        "returns 0.5, not 0: replace `@pytest.mark.parametrize('a, b, expected', [(1, 2, 0)])`"
        " with `@pytest.mark.parametrize('a, b, expected', [(1, 2, 0.5)])` (see notes.txt.)"
    )
    facts = _mathx_step_facts(tmp_path, step)
    assert facts["missing"] == ["notes.txt", "tests/test_mathx.py"]


# The 1.5B's failed edit, verbatim: sent five times, it filled "Last errors" with copies.
NOT_FOUND = (
    "old was not found in 'rps_game.py' (it must match exactly, spaces and indentation "
    "included; read_file shows the current text); the nearest lines are:\n"
    "   10|             return 'Player 1 wins!'\n   14|             return \"It's a tie!\""
)


def test_the_facts_name_the_task_and_each_recent_error_once_by_its_first_line(
    tmp_path: Path,
) -> None:
    """Every round's facts stay in every later prompt: what they repeat of the plan and
    the results is read again each round (the 1.5B's mathx task took 250 characters)."""
    journal = Journal(tmp_path)
    journal.load()
    goal = "Create a Python package mathx with the functions add, subtract, " * 4
    journal.append("goal_started", goal=goal, model="m")
    journal.append("plan", tasks=[{"description": goal, "subtasks": ["write_file a.py"]}])
    args = {"path": "rps_game.py", "old": "x", "new": "y"}
    for n in (1, 2):
        journal.append("action_started", tool="replace_in_file", args=args, signature="s", round=n)
        journal.append(
            "action_finished", tool="replace_in_file", args=args, ok=False, result=NOT_FOUND
        )
    facts = round_facts.probe(journal.state, tmp_path, max_rounds=30)
    first = NOT_FOUND.split("\n", 1)[0]
    assert facts["errors"] == [f"replace_in_file: {first}"[:159] + "…"]
    # A task that restates the goal is named as the plan names it; another, cut.
    assert facts["task"] == "The goal above."
    journal.append(
        "plan", tasks=[{"description": "Make it " * 30, "subtasks": ["write_file a.py"]}]
    )
    task = round_facts.probe(journal.state, tmp_path, max_rounds=30)["task"]
    assert len(task) == round_facts.FACT_TASK_CHARS and task.endswith("…")
    assert journal.state.errors == [f"replace_in_file: {NOT_FOUND}"] * 2  # kept whole
    shown = round_facts.probe_message(facts)
    assert "old was not found in 'rps_game.py'" in shown and "It's a tie" not in shown


def test_prompt_is_bounded_round_8_versus_round_40(tmp_path: Path) -> None:
    journal = new_journal(tmp_path)
    built = {}
    for n in range(1, 41):
        built[n] = size(messages_for(journal, tmp_path))  # the prompt of round n
        play_round(journal, n)
    assert built[40] <= built[8] * 1.3
    assert built[40] >= built[8] * 0.7


def prefix_share(previous: list[dict[str, Any]], now: list[dict[str, Any]]) -> tuple[float, float]:
    """The share of this round's messages, and of its characters, that repeat the
    previous round's messages unchanged from the front (what a KV cache can reuse)."""
    same = chars = 0
    for old, new in zip(previous, now, strict=False):
        if old != new:
            break
        same += 1
        chars += len(str(new))
    return same / len(now), chars / size(now)


def test_prefix_stays_stable_over_200_rounds(tmp_path: Path) -> None:
    journal = new_journal(tmp_path)
    previous = messages_for(journal, tmp_path)
    by_message, by_chars, sizes = [], [], []
    for n in range(1, 201):
        play_round(journal, n)
        now = messages_for(journal, tmp_path)
        share, chars = prefix_share(previous, now)
        by_message.append(share)
        by_chars.append(chars)
        sizes.append(size(now))
        previous = now
    mean = sum(by_chars) / len(by_chars)
    assert mean >= 0.70, f"on average only {mean:.0%} of a prompt is a reusable prefix"
    late = by_chars[100:]
    assert sum(late) / len(late) >= 0.70, "the front must stay stable as the history grows"
    # Counted in whole messages too: every round that neither drops the window back nor
    # changes the subtask starts with the whole previous prompt.
    assert sum(by_message) / len(by_message) >= 0.70
    assert max(sizes[100:]) <= max(sizes[:40]) * 1.1, "the prompt must not grow"


def test_the_front_is_byte_identical_across_a_subtask_change(tmp_path: Path) -> None:
    journal = new_journal(tmp_path)
    for n in range(1, 10):
        play_round(journal, n)
    before = messages_for(journal, tmp_path)
    play_round(journal, 10)  # completes the subtask
    after = messages_for(journal, tmp_path)
    assert after[:2] == before[:2]
    assert "ACTIVE SUBTASK: Write module m01.py" in after[-1]["content"]
    assert "completed 1.1" in after[-1]["content"]


def test_a_tight_budget_keeps_the_front_and_the_latest_exchange(tmp_path: Path) -> None:
    journal = new_journal(tmp_path)
    for n in range(1, 8):
        play_round(journal, n)
    system = context.system_prompt(ALLOWED, tools.catalog(), native=True)
    facts = round_facts.probe(journal.state, tmp_path, max_rounds=300)
    full = context.build(journal.state, system, KEEP, True, facts)
    tight = context.build(journal.state, system, KEEP, True, facts, budget_tokens=900)
    assert size(tight) < size(full)
    assert tight[:2] == full[:2] and tight[-1] == full[-1]
    assert tight[-3:] == full[-3:]  # the latest exchange's reply and result are whole
    assert sum(len(str(m.get("content", ""))) for m in tight) <= 900 * 4


def test_a_turn_of_its_own_takes_the_facts_place_within_the_budget(tmp_path: Path) -> None:
    """A verdict goes on from the rounds with its own turn last, in the room the round's
    facts had: a window that fits with the facts makes room for a longer turn."""
    journal = new_journal(tmp_path)
    for n in range(1, 8):
        play_round(journal, n)
    system = context.system_prompt(ALLOWED, tools.catalog(), native=True)
    facts = round_facts.probe(journal.state, tmp_path, max_rounds=300)
    turn = "[verdict] " + "evidence line\n" * 106  # 1,500 characters
    budget = 1500  # tokens, about 5,700 characters of room at 4 a token
    rounds = context.layout(journal.state, system, KEEP, True, facts, budget, DEFAULT)[0]
    asked = context.layout(journal.state, system, KEEP, True, facts, budget, DEFAULT, turn)[0]
    assert rounds == context.layout(journal.state, system, KEEP, True, facts)[0]  # all fit
    assert asked[-1] == {"role": "user", "content": turn}
    assert asked[:2] == rounds[:2] and asked[-4:-1] == rounds[-4:-1]  # the latest exchange
    assert len(asked) < len(rounds)  # older exchanges made room for the turn
    assert sum(len(str(m.get("content", ""))) for m in asked) <= budget * 4 * 0.95


@pytest.mark.parametrize("keep", [1, 5])
def test_the_window_keeps_sliding_in_chunks_after_a_long_history(tmp_path: Path, keep: int) -> None:
    journal = new_journal(tmp_path)
    starts = set()
    for n in range(1, 100):
        play_round(journal, n)
        shown = context.window(journal.state.exchanges, keep)
        assert min(n, keep) <= len(shown) <= max(3 * keep - 1, 1)
        assert shown[-1].round == n
        starts.add(shown[0].round)
    # The state keeps only the last exchanges; the window must still move in chunks.
    assert len(starts) <= 99 // keep + 1


def test_the_active_subtask_ends_the_status_so_nothing_follows_its_text() -> None:
    """Qwen2.5-Coder-0.5B, given the subtask "write_file hello_world.py with the following
    content: print('Hello, World!')" followed by the status lines, wrote those lines into
    the file. The subtask is the status's last line, after any notice."""
    subtask = "write_file hello_world.py with the following content: print('Hello, World!')"
    facts = {
        "round": 2,
        "max_rounds": 8,
        "task": "Write a hello world script",
        "subtask": subtask,
        "written": ["hello_world.py"],
        "existing": ["hello_world.py"],
        "missing": [],
        "commands": [],
        "errors": ["syntax error at line 2"],
        "notice": "NOTE: your last reply was cut off.",
    }
    lines = round_facts.probe_message(facts).splitlines()
    assert lines[0] == "[status] round 2 of 8"
    assert lines[-2:] == ["ACTIVE TASK: Write a hello world script", f"ACTIVE SUBTASK: {subtask}"]
    assert "NOTE: your last reply was cut off." in lines and "" not in lines
    quiet = round_facts.probe_message(facts | {"notice": "", "errors": []}).splitlines()
    assert quiet[-1] == f"ACTIVE SUBTASK: {subtask}" and "" not in quiet


def test_a_round_s_facts_name_only_the_commands_run_since_and_no_errors() -> None:
    """The results just above show the command the last round ran and its error; the
    1.5B's rock-paper-scissors rounds read the three latest commands and the errors again
    each round (20-40 tokens of the 180-320 a round read)."""
    before = {
        "round": 6, "max_rounds": 20, "task": "Play", "subtask": "run python rps.py",
        "written": ["rps.py"], "existing": ["rps.py"], "missing": [],
        "commands": ["python rps.py -> 0", "python rps.py -> 0"], "errors": [], "notice": "",
    }  # fmt: skip
    now = before | {
        "round": 7,
        "commands": [*before["commands"], "python rps.py -> 1"],
        "errors": ["run_cmd: exit code 1 …"],
    }
    shown = round_facts.probe_message(now, before=before).splitlines()
    assert shown == [
        "[status] round 7 of 20",
        "Recent commands: python rps.py -> 1",
        "ACTIVE SUBTASK: run python rps.py",
    ]
    whole = round_facts.probe_message(now).splitlines()  # where the window starts
    assert "Recent commands: python rps.py -> 0, python rps.py -> 0, python rps.py -> 1" in whole
    assert "  run_cmd: exit code 1 …" in whole
    later = now | {"round": 8, "commands": [*now["commands"][1:], "ruff check . -> 0"]}
    assert "Recent commands: ruff check . -> 0" in round_facts.probe_message(later, before=now)


def test_a_round_s_facts_name_only_the_files_written_since() -> None:
    """The 1.5B's mathx replan wrote four modules one a round, and each round's status
    listed every file written again ("Files written: mathx/__init__.py,
    tests/test_mathx.py, mathx/add.py, mathx/divide.py"): 15-20 tokens a round that the
    statuses just above had said. The window's first status still lists them all."""
    before = {
        "round": 6, "max_rounds": 20, "task": "Write", "subtask": "write_file mathx/divide.py",
        "written": ["mathx/__init__.py", "tests/test_mathx.py", "mathx/add.py"],
        "existing": [], "missing": ["mathx/divide.py"], "commands": [], "errors": [],
        "notice": "",
    }  # fmt: skip
    now = before | {
        "round": 7,
        "subtask": "write_file mathx/multiply.py",
        "written": [*before["written"], "mathx/divide.py"],
        "missing": ["mathx/multiply.py"],
    }
    shown = round_facts.probe_message(now, before=before).splitlines()
    assert shown == [
        "[status] round 7 of 20",
        "Files written: mathx/divide.py",
        "Files mentioned but missing: mathx/multiply.py",
        "ACTIVE SUBTASK: write_file mathx/multiply.py",
    ]
    later = now | {"round": 8, "written": [*now["written"][1:], "mathx/multiply.py"]}
    assert "Files written: mathx/multiply.py" in round_facts.probe_message(later, before=now)
    same = now | {"round": 8}
    assert "Files written" not in round_facts.probe_message(same, before=now)
    whole = round_facts.probe_message(now).splitlines()  # where the window starts
    assert (
        "Files written: mathx/__init__.py, tests/test_mathx.py, mathx/add.py, mathx/divide.py"
        in whole
    )


def test_a_replan_starts_the_window_after_the_rounds_before_it(tmp_path: Path) -> None:
    """The failed subtask's rounds are not the news after a replan: a small model copied
    its blocked call from them into every new subtask, and the prompt after the new plan
    (whose summary changed) was re-read whole by the server."""
    journal = new_journal(tmp_path)
    for n in range(1, 4):
        play_round(journal, n)
    journal.append("subtask_failed", reason="blocked three times")
    journal.append(
        "plan", tasks=[{"description": "Again", "subtasks": ["Write b.py"]}], replace_from=1
    )
    messages = messages_for(journal, tmp_path)
    assert len(messages) == 3  # the system prompt, the summary and the status
    assert "VALUE = " not in str(messages)
    play_round(journal, 4)
    shown = messages_for(journal, tmp_path)
    assert [m["role"] for m in shown[2:-1]] == ["user", "assistant", "tool"]
    assert shown[:2] == messages[:2]
