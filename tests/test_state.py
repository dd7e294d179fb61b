import pytest

from localagent.state import State, apply, counts, current, migrate, next_open_subtask


def feed(state: State, *records: dict) -> State:
    for rec in records:
        apply(state, {"seq": state.seq + 1, **rec})
    return state


PLAN = {
    "type": "plan",
    "tasks": [
        {"description": "T1", "subtasks": ["a", "b"]},
        {"description": "T2", "subtasks": ["c"]},
    ],
}


def planned() -> State:
    return feed(State(), {"type": "goal_started", "goal": "G"}, PLAN)


def test_plan_starts_the_first_subtask() -> None:
    state = planned()
    task, sub = current(state)
    assert (task.description, sub.description) == ("T1", "a")
    assert (task.status, sub.status) == ("in_progress", "in_progress")
    assert state.goal.tasks[1].status == "pending"


def test_complete_and_fail_advance_through_tasks() -> None:
    state = feed(planned(), {"type": "subtask_completed"}, {"type": "subtask_failed"})
    assert state.goal.tasks[0].status == "failed"
    assert current(state)[1].description == "c"
    feed(state, {"type": "subtask_completed"})
    assert current(state) is None and next_open_subtask(state) is None
    assert counts(state) == {"subtasks": 3, "completed": 2, "failed": 1}
    assert state.goal.tasks[1].status == "completed"


def test_replan_replaces_only_the_remaining_tasks() -> None:
    state = feed(
        planned(),
        {"type": "subtask_failed"},
        {"type": "subtask_failed"},
        {
            "type": "plan",
            "replace_from": 1,
            "tasks": [{"description": "T2b", "subtasks": ["x", "y"]}],
        },
    )
    assert [t.description for t in state.goal.tasks] == ["T1", "T2b"]
    assert current(state)[1].description == "x" and state.replans == 1


def test_actions_update_the_bounded_views() -> None:
    state = planned()
    for i in range(30):
        feed(
            state,
            {
                "type": "action_started",
                "tool": "write_file",
                "args": {"path": f"f{i}"},
                "signature": f"s{i}",
            },
            {
                "type": "action_finished",
                "tool": "write_file",
                "args": {"path": f"f{i}"},
                "ok": True,
                "result": "x" * 10_000,
                "changed": True,
            },
        )
    assert len(state.recent_actions) == 20
    # One cap everywhere: head and tail with a marker, so the end of an output survives.
    assert all(len(a.result) <= 6000 and "characters cut" in a.result for a in state.recent_actions)
    assert state.guard.epoch == 30 and len(state.guard.window) == 10
    assert state.files_written[-1] == "f29" and len(state.files_written) <= 32


def test_goal_status_records() -> None:
    state = feed(planned(), {"type": "stopped", "reason": "asked"})
    assert state.goal.status == "stopped" and state.goal.reason == "asked"
    feed(state, {"type": "resumed"})
    assert state.goal.status == "in_progress"


def test_migrate_refuses_newer_schema() -> None:
    with pytest.raises(ValueError, match="newer"):
        migrate({"schema_version": 99})
    assert migrate({"schema_version": 0})["schema_version"] == 3


def test_a_v1_snapshot_is_migrated() -> None:
    data = migrate(
        {
            "schema_version": 1,
            "guard": {"epoch": 2, "window": [["sig", 2]]},
            "exchanges": [
                {
                    "round": 3,
                    "tool_calls": [{"name": "a"}, {"name": "b"}],
                    "results": [{"tool": "a", "content": "x"}],
                }
            ],
        }
    )
    state = State.model_validate(data)
    assert state.guard.window[0].sig == "sig" and state.guard.window[0].epoch == 2
    assert state.exchanges[0].settled == ["3.1"]
    assert state.exchanges[0].results == [{"tool": "a", "content": "x", "call": "3.1"}]


def test_a_v2_result_without_a_call_id_is_given_its_call() -> None:
    exchange = {
        "round": 2,
        "tool_calls": [{"id": "2.1", "name": "a"}, {"id": "2.2", "name": "b"}],
        "results": [{"tool": "a", "content": "x"}, {"tool": "format", "content": "note"}],
        "settled": ["2.1", "2.2"],
    }
    data = migrate({"schema_version": 2, "exchanges": [exchange]})
    results = State.model_validate(data).exchanges[0].results
    assert results[0]["call"] == "2.1" and "call" not in results[1]
    assert results[2] == {"tool": "b", "content": "", "call": "2.2", "status": "skipped"}


def test_a_failed_subtask_owes_a_replan_that_the_plan_settles() -> None:
    state = feed(planned(), {"type": "subtask_failed", "reason": "no", "replan": True})
    assert state.replan_due is not None and state.replan_due.task_index == 0
    feed(
        state,
        {"type": "plan", "replace_from": 1, "tasks": [{"description": "N", "subtasks": ["n"]}]},
    )
    assert state.replan_due is None
    # The kept task's subtask 'b' had been started by the cursor: it is superseded, not
    # left in progress.
    assert [s.description for s in state.goal.tasks[0].subtasks] == ["a"]
    assert current(state)[1].description == "n"


def test_calls_after_a_subtask_boundary_are_settled_as_skipped() -> None:
    state = planned()
    calls = [
        {"name": "mark_subtask_complete", "arguments": {}},
        {"name": "list_dir", "arguments": {}},
    ]
    feed(state, {"type": "llm_call", "purpose": "round", "tool_calls": calls})
    feed(state, {"type": "subtask_completed", "call": "1.1"})
    assert state.exchanges[-1].settled == ["1.1", "1.2"]
    statuses = [(r.get("call"), r.get("status")) for r in state.exchanges[-1].results]
    assert statuses == [("1.1", "done"), ("1.2", "skipped")]


def test_a_second_observation_of_a_settled_call_is_a_note() -> None:
    state = planned()
    feed(
        state,
        {"type": "llm_call", "purpose": "round", "tool_calls": [{"name": "x", "arguments": {}}]},
    )
    feed(
        state,
        {
            "type": "action_blocked",
            "call": "1.1",
            "tool": "x",
            "args": {},
            "signature": "s",
            "pattern": "repeat",
            "reason": "BLOCKED",
        },
    )
    feed(state, {"type": "subtask_failed", "call": "1.1", "reason": "stuck", "replan": False})
    results = state.exchanges[-1].results
    assert [(r.get("call"), r.get("status")) for r in results] == [("1.1", "blocked"), (None, None)]
