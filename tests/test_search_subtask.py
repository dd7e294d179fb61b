"""A search subtask ends with its search: Qwen2.5-Coder-1.5B's refactor plan on the CPU had
the step "search_files shapes.py to find the area formulas". It searched shapes.py for
"area formulas" (no matches), searched again, and was blocked on the third search; three
blocks failed the subtask, and the replan gave the step back: it searched for "area" (4
matches), twice, and was blocked again, through two more replans (12 of 20 rounds).
Replayed verbatim on the scripted fake server through the real CLI."""

from __future__ import annotations

from pathlib import Path

from support import plan_rule, records_of, small_model_goal

from localagent.loop.subtasks import search_of

SHAPES = (
    '"""Areas of shapes given as (kind, size) pairs; unknown kinds are left out."""\n\n\n'
    "def total_area(shapes):\n    total = 0.0\n    for kind, size in shapes:\n"
    '        if kind == "circle":\n            total += 3.14159 * size * size\n'
    '        elif kind == "square":\n            total += size * size\n    return total\n'
)
GOAL = (
    "Refactor shapes.py: the area formulas are repeated in total_area, largest and report; "
    "move them into one function area(kind, size) and use it in all three"
)
STEP = "search_files shapes.py to find the area formulas"
# verbatim, the two searches of the run (the first with its four closing braces)
NOTHING = (
    '{{"name": "search_files", "arguments": {"pattern": "area formulas", "path": "shapes.py"}}}}'
)
FOUND = '{{"name": "search_files", "arguments": {"pattern": "area", "path": "shapes.py"}}}'
READ = '{{"name": "read_file", "arguments": {"path": "shapes.py"}}}'


def test_a_search_that_finds_nothing_ends_its_search_subtask(tmp_path: Path) -> None:
    (tmp_path / "shapes.py").write_text(SHAPES)
    plan = plan_rule(("Find the area formulas", [STEP, "read_file shapes.py"]))
    replies = [{"content": NOTHING}, {"content": READ}]
    ran, _ = small_model_goal(tmp_path, GOAL, plan, replies, LOCALAGENT_MAX_ROUNDS="3")
    assert ran.returncode is not None
    done = records_of(tmp_path, "subtask_completed")
    first = records_of(tmp_path, "action_finished")[0]
    assert [d["by"] for d in done[:2]] == ["search", "read"], done
    assert done[0]["evidence"] == [first["seq"]]
    assert done[0]["reason"] == (
        "shapes.py was searched (no matches for 'area formulas' (1 file searched under "
        "'shapes.py')), which is all the subtask asks"
    )
    assert first["result"].startswith("no matches for 'area formulas'")
    assert "SUBTASK COMPLETE: 1.1 (shapes.py was searched" in first["result"]
    assert first["result"].endswith("Next: subtask 1.2.")
    assert records_of(tmp_path, "action_blocked") == []
    assert [p for p in records_of(tmp_path, "plan") if p.get("replace_from")] == []


def test_the_search_its_step_asks_for_is_not_blocked(tmp_path: Path) -> None:
    """The same search run twice already (here in the step before) is blocked as a loop
    anywhere else; as the search its own search step asks for, it runs and ends the step
    (as a replan that gives the step back would have it)."""
    (tmp_path / "shapes.py").write_text(SHAPES)
    plan = plan_rule(("Find the area formulas", ["read_file shapes.py", STEP]))
    replies = [{"content": FOUND}, {"content": FOUND}, {"content": READ}, {"content": FOUND}]
    ran, _ = small_model_goal(tmp_path, GOAL, plan, replies, LOCALAGENT_MAX_ROUNDS="4")
    assert ran.returncode is not None
    assert records_of(tmp_path, "action_blocked") == []
    done = records_of(tmp_path, "subtask_completed")
    assert [d["by"] for d in done[:2]] == ["read", "search"], done
    last = records_of(tmp_path, "action_finished")[3]
    assert last["result"].startswith("shapes.py:4: def total_area(shapes):")
    assert "SUBTASK COMPLETE" in last["result"]
    assert "(shapes.py was searched (1 match in 1 file" in last["result"]


def test_which_subtasks_are_one_search() -> None:
    assert search_of(STEP) == "shapes.py"
    assert search_of("search_files shapes.py") == "shapes.py"
    assert search_of("Search shapes.py for the area formulas.") == "shapes.py"
    assert search_of("search_files src/app.py for def main") == "src/app.py"
    assert search_of("search_files shapes.py to find the area formulas and move them") == ""
    assert search_of("search_files shapes.py and replace_in_file it") == ""
    assert search_of("search_files a.py b.py") == ""
    assert search_of("read_file shapes.py") == ""
    assert search_of("search for the area formulas") == ""
