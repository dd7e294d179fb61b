"""After a replan, a small model sees the file it is to edit again.

Qwen2.5-Coder-1.5B's fixtest on the H200 (fixtest-1), replayed verbatim through the real
CLI on the scripted fake server: its first plan read stats.py, it copied its edit from
the test's output (`median([4, 1, 3, 2])`, old as new) until three strikes, and the
replan, "replace_in_file stats.py to fix the bug", had no read: the window no longer
showed the file, and the 1.5B sent `{"old": "old_text", "new": "new_text"}`. When a
replan did read it, its read was blocked, "already run 2 times since the workspace last
changed" (7 of 12 fixtest and refactor runs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from support import backend_env, done, plan_rule, records_of, run_cli

from localagent.models.fake import FakeServer

GOAL = (
    "python -m pytest fails in this folder: fix the bug in stats.py so that the tests pass, "
    "without changing test_stats.py"
)
STATS = (
    "def mean(values):\n    return sum(values) / len(values)\n\n\ndef median(values):\n"
    "    ordered = sorted(values)\n    middle = len(ordered) // 2\n    return ordered[middle]\n"
)
TEST_STATS = (
    "from stats import mean, median\n\n\ndef test_mean():\n    assert mean([1, 2, 3, 4]) == 2.5"
    "\n\n\ndef test_median_even():\n    assert median([4, 1, 3, 2]) == 2.5\n"
)
TASK = "Write stats.py with the bug fixed"
RUN = '{{"name": "run_cmd", "arguments": {"cmd": "python -m pytest"}}}}'
READ = '{{"name": "read_file", "arguments": {"path": "stats.py"}}}}'
COPIED = (
    '{{"name": "replace_in_file", "arguments": {"path": "stats.py", "old": "median([4, 1, 3,'
    ' 2])", "new": "median([4, 1, 3, 2])"}}}}'
)


# fixtest-3, verbatim: its three plans and its 21 round replies.
FIXTEST3_PLANS = [
    (
        '{"tasks": [{"description": "Read the contents of stats.py to identify the bug.", "subt'
        'asks": ["run python -m pytest to see what fails", "read_file stats.py"]}, {"descriptio'
        'n": "Replace the bug in stats.py.", "subtasks": ["replace_in_file stats.py to fix the '
        'bug"]}, {"description": "Run the pytest command to verify that the bug has been fixed.'
        '", "subtasks": ["run python -m pytest"]}]}'
    ),
    (
        '{"tasks": [{"description": "Replace the bug in stats.py to fix the bug in stats.py so '
        'that the tests pass, without changing test_stats.py", "subtasks": ["read_file stats.py'
        '", "replace_in_file stats.py to fix the bug"]}]}'
    ),
    (
        '{"tasks": [{"description": "Replace the bug in stats.py to fix the bug in stats.py so '
        'that the tests pass, without changing test_stats.py", "subtasks": ["read_file stats.py'
        '", "read_file stats.py", "replace_in_file stats.py to fix the bug", "run python -m pyt'
        'est"]}]}'
    ),
]
FIXTEST3_REPLIES = [
    '{{"name": "run_cmd", "arguments": {"cmd": "python -m pytest"}}}}',
    '{{"name": "read_file", "arguments": {"path": "stats.py"}}}}',
    (
        '{{"name": "replace_in_file", "arguments": {"path": "stats.py", "old": "median([4, 1, 3'
        ', 2])", "new": "median([4, 1, 3, 2])"}}}}'
    ),
    (
        '{{"name": "replace_in_file", "arguments": {"path": "stats.py", "old": "median([4, 1, 3'
        ', 2])", "new": "median(values)"}}}}'
    ),
    (
        '{{"name": "replace_in_file", "arguments": {"path": "stats.py", "old": "median(values)"'
        ', "new": "median(values)"}}}}'
    ),
    (
        '{{"name": "replace_in_file", "arguments": {"path": "stats.py", "old": "median(values)"'
        ', "new": "median(values)"}}}}'
    ),
    (
        '{{"name": "replace_in_file", "arguments": {"path": "stats.py", "old": "median(values)"'
        ', "new": "median(values)"}}}}'
    ),
    (
        '{{"name": "replace_in_file", "arguments": {"path": "stats.py", "old": "median(values)"'
        ', "new": "median(values)"}}}}'
    ),
    (
        '{{"name": "replace_in_file", "arguments": {"path": "stats.py", "old": "median(values)"'
        ', "new": "median(values)"}}}}'
    ),
    '```json\n{\n  "name": "read_file",\n  "arguments": {\n    "path": "stats.py"\n  }\n}\n```',
    (
        '```json\n{\n  "name": "replace_in_file",\n  "arguments": {\n    "path": "stats.py",\n '
        '   "old": "mean(values)",\n    "new": "mean(values) + 1"\n  }\n}\n```'
    ),
    (
        '```json\n{\n  "name": "replace_in_file",\n  "arguments": {\n    "path": "stats.py",\n '
        '   "old": "median(values)",\n    "new": "median(values) + 1"\n  }\n}\n```'
    ),
    (
        '```json\n{\n  "name": "replace_in_file",\n  "arguments": {\n    "path": "stats.py",\n '
        '   "old": "mean(values) + 1",\n    "new": "mean(values) + 1"\n  }\n}\n```'
    ),
    (
        '```json\n{\n  "name": "replace_in_file",\n  "arguments": {\n    "path": "stats.py",\n '
        '   "old": "median(values) + 1",\n    "new": "median(values) + 1"\n  }\n}\n```'
    ),
    (
        '```json\n{\n  "name": "replace_in_file",\n  "arguments": {\n    "path": "stats.py",\n '
        '   "old": "median(values) + 1",\n    "new": "median(values) + 1"\n  }\n}\n```'
    ),
    (
        '```json\n{\n  "name": "replace_in_file",\n  "arguments": {\n    "path": "stats.py",\n '
        '   "old": "median(values) + 1",\n    "new": "median(values) + 1"\n  }\n}\n```'
    ),
    (
        '```json\n{\n  "name": "replace_in_file",\n  "arguments": {\n    "path": "stats.py",\n '
        '   "old": "median(values) + 1",\n    "new": "median(values) + 1"\n  }\n}\n```'
    ),
    (
        '```json\n{\n  "name": "replace_in_file",\n  "arguments": {\n    "path": "stats.py",\n '
        '   "old": "median(values) + 1",\n    "new": "median(values) + 1"\n  }\n}\n```'
    ),
    '```json\n{\n  "name": "read_file",\n  "arguments": {\n    "path": "stats.py"\n  }\n}\n```',
    '```json\n{\n  "name": "read_file",\n  "arguments": {\n    "path": "stats.py"\n  }\n}\n```',
    '```json\n{\n  "name": "read_file",\n  "arguments": {\n    "path": "stats.py"\n  }\n}\n```',
]


def replay(ws: Path, replan: list[str]) -> list[dict[str, Any]]:
    (ws / "stats.py").write_text(STATS)
    (ws / "test_stats.py").write_text(TEST_STATS)
    first = ["run python -m pytest to see what fails", "read_file stats.py"]
    first.append("replace_in_file stats.py to fix the bug")
    rules = [
        plan_rule((TASK, replan), match="failed:"),
        plan_rule(
            (TASK, first), ("Run pytest to check if the bug is fixed", ["run python -m pytest"])
        ),
    ]
    # It read stats.py twice before the replan (its read step, then once more).
    replies = [RUN, READ, READ, *[COPIED] * 5, READ]
    scenario = {"models": [{"name": "qwen2.5-coder:1.5b"}], "llama_cpp": True}
    scenario |= {"rules": rules, "replies": [{"content": r} for r in replies]}
    scenario |= {"default": done("done")}
    with FakeServer(scenario) as server:
        env = {"OLLAMA_MODEL": "qwen2.5-coder:1.5b", "LOCALAGENT_VERIFY": "0"}
        env |= {"LOCALAGENT_MAX_ROUNDS": str(len(replies))}
        run_cli(
            backend_env("openai", server.url, **env), "start", GOAL, "-w", str(ws), "--foreground"
        )
    return [p for p in records_of(ws, "plan") if p.get("replace_from")]


def test_a_replan_s_edit_comes_after_a_read_of_its_file(tmp_path: Path) -> None:
    (replanned,) = replay(tmp_path, ["replace_in_file stats.py to fix the bug"])
    assert replanned["tasks"][0]["subtasks"][:2] == [
        "read_file stats.py",
        "replace_in_file stats.py to fix the bug",
    ]
    read = records_of(tmp_path, "action_finished")[-1]
    assert read["tool"] == "read_file" and read["ok"]
    assert "def median(values):" in read["result"]
    assert records_of(tmp_path, "subtask_completed")[-1]["by"] == "read"


def test_the_read_a_replan_asks_for_is_not_blocked(tmp_path: Path) -> None:
    """fixtest-3: its third plan began "read_file stats.py"; the read was blocked three
    times, and the subtask failed."""
    (tmp_path / "stats.py").write_text(STATS)
    (tmp_path / "test_stats.py").write_text(TEST_STATS)
    rules = [{"kind": "plan", "times": 1, "reply": {"content": p}} for p in FIXTEST3_PLANS]
    scenario = {"models": [{"name": "qwen2.5-coder:1.5b"}], "llama_cpp": True, "rules": rules}
    scenario |= {"replies": [{"content": r} for r in FIXTEST3_REPLIES], "default": done("done")}
    with FakeServer(scenario) as server:
        env = {"OLLAMA_MODEL": "qwen2.5-coder:1.5b", "LOCALAGENT_VERIFY": "0"}
        env |= {"LOCALAGENT_MAX_ROUNDS": str(len(FIXTEST3_REPLIES))}
        run_cli(
            backend_env("openai", server.url, **env),
            "start",
            GOAL,
            "-w",
            str(tmp_path),
            "--foreground",
        )
    third = records_of(tmp_path, "plan")[2]["seq"]
    after = [r for r in records_of(tmp_path, "action_blocked") if r["seq"] > third]
    assert [r for r in after if r["tool"] == "read_file"] == []
    done_after = [r for r in records_of(tmp_path, "subtask_completed") if r["seq"] > third]
    assert done_after[0]["by"] == "read"
