"""The edit tools (replace_in_file, append_file, delete_file, move_file) and read_file's
line ranges: direct calls through the registry, and through the CLI against the fake
server, including an edit a crash interrupted (applied or not) and resumed."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from support import call, cli_env, done, plan_rule, records, records_of, run_cli, small_model_goal

from localagent.models.fake import FakeServer
from localagent.tools import ToolContext, catalog, execute
from localagent.tools.catalog import SMALL_MODEL_TOOLS


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(root=tmp_path)


def run(ctx: ToolContext, name: str, **args: Any) -> tuple[bool, str]:
    result = execute(ctx, name, args)
    return result.ok, result.text


# ---- replace_in_file ------------------------------------------------------------


def test_replace_edits_exact_text_and_shows_the_numbered_lines(ctx: ToolContext) -> None:
    (ctx.root / "app.py").write_text("a = 1\nb = 2\nc = 3\n")
    ok, text = run(ctx, "replace_in_file", path="app.py", old="b = 2", new="b = 20")
    assert ok, text
    assert (ctx.root / "app.py").read_text() == "a = 1\nb = 20\nc = 3\n"
    assert "replaced 1 occurrence in 'app.py'" in text and "    2| b = 20" in text


def test_replace_counts_occurrences_and_says_where(ctx: ToolContext) -> None:
    (ctx.root / "x.txt").write_text("x\ny\nx\n")
    ok, text = run(ctx, "replace_in_file", path="x.txt", old="x", new="z")
    assert not ok and "occurs 2 times" in text and "lines 1, 3" in text and "count=2" in text
    assert (ctx.root / "x.txt").read_text() == "x\ny\nx\n"
    ok, _ = run(ctx, "replace_in_file", path="x.txt", old="x", new="z", count=2)
    assert ok and (ctx.root / "x.txt").read_text() == "z\ny\nz\n"


def test_replace_not_found_shows_the_nearest_lines(ctx: ToolContext) -> None:
    (ctx.root / "m.py").write_text("def main():\n    print('hello')\n")
    ok, text = run(ctx, "replace_in_file", path="m.py", old="print('helo')", new="pass")
    assert not ok and "was not found" in text and "2|     print('hello')" in text


def test_replace_keeps_crlf_files_crlf(ctx: ToolContext) -> None:
    (ctx.root / "w.txt").write_bytes(b"one\r\ntwo\r\n")
    ok, text = run(ctx, "replace_in_file", path="w.txt", old="one\ntwo", new="1\n2")
    assert ok, text
    assert (ctx.root / "w.txt").read_bytes() == b"1\r\n2\r\n"


def test_replace_reports_a_syntax_error_it_introduced(ctx: ToolContext) -> None:
    (ctx.root / "s.py").write_text("x = 1\n")
    ok, text = run(ctx, "replace_in_file", path="s.py", old="x = 1", new="x = (")
    assert ok and "syntax error at line 1" in text


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        ({"path": "b.bin", "old": "a", "new": "b"}, "binary file"),
        ({"path": "l1.txt", "old": "a", "new": "b"}, "not UTF-8"),
        ({"path": "t.txt", "old": "", "new": "b"}, "old is empty"),
        ({"path": "t.txt", "old": "a", "new": "a"}, "same text"),
        ({"path": "t.txt", "old": "a", "new": "b", "count": 0}, "at least 1"),
        ({"path": "../t.txt", "old": "a", "new": "b"}, "outside the workspace"),
        ({"path": ".agent_context/state.json", "old": "a", "new": "b"}, "journal"),
        ({"path": "nope.txt", "old": "a", "new": "b"}, "does not exist"),
    ],
)
def test_replace_refuses_with_a_clear_observation(
    ctx: ToolContext, args: dict[str, Any], problem: str
) -> None:
    (ctx.root / "b.bin").write_bytes(b"a\x00b")
    (ctx.root / "l1.txt").write_bytes(b"a\xe9")
    (ctx.root / "t.txt").write_text("a")
    ok, text = run(ctx, "replace_in_file", **args)
    assert not ok and problem in text
    assert (ctx.root / "t.txt").read_text() == "a"


# ---- append, delete, move -------------------------------------------------------


def test_append_creates_then_appends(ctx: ToolContext) -> None:
    ok, _ = run(ctx, "append_file", path="logs/a.txt", content="one\n")
    assert ok
    ok, text = run(ctx, "append_file", path="logs/a.txt", content="two\n")
    assert ok and "now 8 bytes" in text
    assert (ctx.root / "logs" / "a.txt").read_text() == "one\ntwo\n"


def test_delete_removes_one_file_and_refuses_folders(ctx: ToolContext) -> None:
    (ctx.root / "d").mkdir()
    (ctx.root / "f.txt").write_text("x")
    assert not run(ctx, "delete_file", path="d")[0]
    assert (ctx.root / "d").is_dir()
    ok, text = run(ctx, "delete_file", path="f.txt")
    assert ok and not (ctx.root / "f.txt").exists()
    ok, text = run(ctx, "delete_file", path="f.txt")
    assert not ok and "does not exist" in text


def test_move_renames_and_refuses_to_overwrite_or_leave(ctx: ToolContext) -> None:
    (ctx.root / "a.txt").write_text("a")
    (ctx.root / "b.txt").write_text("b")
    ok, text = run(ctx, "move_file", src="a.txt", dst="b.txt")
    assert not ok and "already exists" in text
    ok, text = run(ctx, "move_file", src="a.txt", dst="../a.txt")
    assert not ok and "outside the workspace" in text
    ok, text = run(ctx, "move_file", src="a.txt", dst="sub/c.txt")
    assert ok, text
    assert (ctx.root / "sub" / "c.txt").read_text() == "a" and not (ctx.root / "a.txt").exists()
    (ctx.root / "dir").mkdir()
    ok, text = run(ctx, "move_file", src="dir", dst="dir/inner")
    assert not ok and "cannot hold itself" in text


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks need a privilege on Windows")
def test_edits_never_follow_a_link_out_of_the_workspace(tmp_path: Path) -> None:
    root, outside = tmp_path / "ws", tmp_path / "outside.txt"
    root.mkdir()
    outside.write_text("secret\n")
    os.symlink(outside, root / "link.txt")
    ctx = ToolContext(root=root)
    for name, args in [
        ("replace_in_file", {"path": "link.txt", "old": "secret", "new": "gone"}),
        ("append_file", {"path": "link.txt", "content": "more"}),
        ("move_file", {"src": "a", "dst": "link.txt/x"}),
    ]:
        ok, text = run(ctx, name, **args)
        assert not ok and "outside the workspace" in text, (name, text)
    assert outside.read_text() == "secret\n"


# ---- read_file line ranges --------------------------------------------------------


def test_read_file_shows_a_numbered_range(ctx: ToolContext) -> None:
    (ctx.root / "n.txt").write_text("".join(f"line {i}\n" for i in range(1, 101)))
    ok, text = run(ctx, "read_file", path="n.txt", start_line=40, end_line=42)
    assert ok
    assert text.splitlines() == [
        "'n.txt' lines 40-42 of 100:",
        *[f"{i:>5}| line {i}" for i in (40, 41, 42)],
    ]
    ok, text = run(ctx, "read_file", path="n.txt", start_line=200)
    assert not ok and "has 100 lines" in text
    ok, text = run(ctx, "read_file", path="n.txt", start_line=1, max_bytes=100)
    assert ok and "read on with start_line=" in text


def test_read_file_without_a_range_is_unchanged(ctx: ToolContext) -> None:
    (ctx.root / "p.txt").write_bytes(b"plain\n")
    assert run(ctx, "read_file", path="p.txt") == (True, "plain\n")


# ---- through the CLI ----------------------------------------------------------------

EDIT_GOAL = "Set x to 2 in app.py"


def edit_scenario(reply: dict[str, Any]) -> dict[str, Any]:
    return {
        "rules": [
            plan_rule(("Edit", ["Change app.py"])),
            {"match": "applied before|replaced 1|appended|moved", "reply": done()},
            {"match": "ACTIVE SUBTASK: Change app.py", "in": "last", "reply": reply},
            # a small model's plan reads the file before its edit
            {
                "match": "ACTIVE SUBTASK: read_file app.py",
                "in": "last",
                "reply": call("read_file", path="app.py"),
            },
        ]
    }


def test_an_edit_runs_through_the_loop_and_its_facts_reach_the_probe(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("x = 1\n")
    scenario = edit_scenario(call("replace_in_file", path="./app.py", old="x = 1", new="x = 2"))
    with FakeServer(scenario) as server:
        env = cli_env(server.url, LOCALAGENT_VERIFY="0")
        result = run_cli(env, "start", EDIT_GOAL, "-w", str(tmp_path), "--foreground")
        # The facts each round ends with; a round's shows what changed since the last.
        facts = [r["messages"][-1]["content"] for r in server.chat_requests]
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "app.py").read_text() == "x = 2\n"
    finished = [r for r in records(tmp_path) if r["type"] == "action_finished"]
    assert finished[0]["facts"] == {"wrote": ["app.py"]}
    assert any("Files written: app.py" in text for text in facts)


CASES = {
    # tool call, the file before the edit, what the crash left, the file afterwards
    "replace-applied": (
        call("replace_in_file", path="app.py", old="x = 1", new="x = 2"),
        {"app.py": "x = 1\n"},
        {"app.py": "x = 2\n"},
        {"app.py": "x = 2\n"},
    ),
    "replace-not-applied": (
        call("replace_in_file", path="app.py", old="x = 1", new="x = 2"),
        {"app.py": "x = 1\n"},
        {"app.py": "x = 1\n"},
        {"app.py": "x = 2\n"},
    ),
    "append-applied": (
        call("append_file", path="app.py", content="y = 3\n"),
        {"app.py": "x = 1\n"},
        {"app.py": "x = 1\ny = 3\n"},
        {"app.py": "x = 1\ny = 3\n"},
    ),
    "move-applied": (
        call("move_file", src="app.py", dst="src/app.py"),
        {"app.py": "x = 1\n"},
        {"src/app.py": "x = 1\n"},
        {"src/app.py": "x = 1\n"},
    ),
}


def _lay_out(root: Path, files: dict[str, str]) -> None:
    for name in ("app.py", "src/app.py"):
        (root / name).unlink(missing_ok=True)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def _cut_after_the_edit_started(root: Path) -> None:
    """The journal as a crash right after the edit's `action_started` leaves it."""
    context = root / ".agent_context"
    history = (context / "history.jsonl").read_bytes().splitlines(keepends=True)
    started = next(i for i, line in enumerate(history) if b'"action_started"' in line)
    (context / "history.jsonl").write_bytes(b"".join(history[: started + 1]))
    (context / "state.json").unlink()


@pytest.mark.parametrize("case", list(CASES))
def test_an_interrupted_edit_is_checked_not_blindly_redone(tmp_path: Path, case: str) -> None:
    edit, before, left, after = CASES[case]
    _lay_out(tmp_path, before)
    with FakeServer(edit_scenario(edit)) as server:
        env = cli_env(server.url, LOCALAGENT_VERIFY="0")
        first = run_cli(env, "start", EDIT_GOAL, "-w", str(tmp_path), "--foreground")
        assert first.returncode == 0, first.stderr
        started = next(r for r in records(tmp_path) if r["type"] == "action_started")
        assert started["before"], "an edit records the state of its paths when it starts"
        _cut_after_the_edit_started(tmp_path)
        _lay_out(tmp_path, left)
        resumed = run_cli(env, "resume", "-w", str(tmp_path), "--foreground")
    assert resumed.returncode == 0, resumed.stderr
    for name, text in after.items():
        assert (tmp_path / name).read_text() == text
    settled = next(r for r in records(tmp_path) if r["type"] == "action_finished")
    assert settled["ok"], settled["result"]
    if before == left:
        assert settled.get("redone") and not settled.get("applied")
    else:
        assert settled.get("applied") and "had been applied" in settled["result"]


# ---- the tools setting ----------------------------------------------------------------


def test_the_tools_setting_fixes_the_tool_list_for_the_run(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("x = 1\n")
    scenario = edit_scenario(call("replace_in_file", path="app.py", old="x = 1", new="x = 2"))
    with FakeServer(scenario) as server:
        env = cli_env(server.url, LOCALAGENT_VERIFY="0")
        unknown = run_cli(env, "start", EDIT_GOAL, "-w", str(tmp_path), "--tools", "rm_rf")
        chosen = "read_file,replace_in_file"
        result = run_cli(
            env, "start", EDIT_GOAL, "-w", str(tmp_path), "--foreground", "--tools", chosen
        )
        rounds = [r for r in server.chat_requests if r.get("tools")]
        status = run_cli(env, "status", "-w", str(tmp_path))
    assert unknown.returncode == 2 and "unknown tool 'rm_rf'" in unknown.stderr
    assert "known tools: list_dir, read_file" in unknown.stderr
    assert result.returncode == 0, result.stderr
    names = [[t["function"]["name"] for t in r["tools"]] for r in rounds]
    assert names and all(
        n == ["read_file", "replace_in_file", "mark_subtask_complete"] for n in names
    )
    system = rounds[0]["messages"][0]["content"]
    assert "read_file, replace_in_file and mark_subtask_complete" in system
    assert "run_cmd" not in system
    assert "tools      read_file, replace_in_file" in status.stdout


# ---- reading, finding and deleting through the loop --------------------------------------


def test_finding_reading_a_range_and_deleting_through_the_cli(tmp_path: Path) -> None:
    """find_files, read_file with a line range and delete_file, each called by the model
    with hostile company (a path out of the workspace), through the real CLI and journal."""
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "old.log").write_text("stale\n")
    (tmp_path / "notes.txt").write_text("alpha\nbeta\ngamma\ndelta\n")
    outside = tmp_path.parent / f"{tmp_path.name}-outside.log"
    outside.write_text("keep me\n")
    scenario = {
        "rules": [
            plan_rule(("Tidy", ["Remove the stale log"])),
            {
                "match": "ACTIVE SUBTASK: Remove",
                "times": 1,
                "reply": call("find_files", glob="*.log"),
            },
            {
                "match": r"logs/old\.log",
                "times": 1,
                "reply": call("read_file", path="notes.txt", start_line=2, end_line=3),
            },
            {
                "match": r"2\| beta",
                "times": 1,
                "reply": call("delete_file", path=f"../{outside.name}"),
            },
            {
                "match": r"\.\./[^ ]*-outside\.log' is outside the workspace",
                "times": 1,
                "reply": call("delete_file", path="logs/old.log"),
            },
        ],
        "default": done("the stale log is gone"),
    }
    with FakeServer(scenario) as server:
        env = cli_env(server.url, LOCALAGENT_VERIFY="0")
        result = run_cli(env, "start", "Remove the stale log", "-w", str(tmp_path), "--foreground")
    assert result.returncode == 0, result.stderr
    finished = [r for r in records(tmp_path) if r["type"] == "action_finished"]
    by_tool = [(r["tool"], r["ok"]) for r in finished]
    assert by_tool == [
        ("find_files", True),
        ("read_file", True),
        ("delete_file", False),
        ("delete_file", True),
    ]
    assert "logs/old.log" in finished[0]["result"]
    assert finished[1]["result"] == "'notes.txt' lines 2-3 of 4:\n    2| beta\n    3| gamma"
    assert finished[1]["facts"] == {"read": ["notes.txt"]}
    assert finished[3]["facts"] == {"removed": ["logs/old.log"]}
    assert not (tmp_path / "logs" / "old.log").exists()
    assert outside.read_text() == "keep me\n"


def test_a_small_model_gets_the_short_tool_set_for_the_whole_run(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("x = 1\n")
    scenario = {
        **edit_scenario(call("replace_in_file", path="app.py", old="x = 1", new="x = 2")),
        "models": [{"name": "qwen2.5-coder:3b", "parameter_size": "3.1B"}],
    }
    with FakeServer(scenario) as server:
        env = cli_env(server.url, LOCALAGENT_VERIFY="0", OLLAMA_MODEL="qwen2.5-coder:3b")
        result = run_cli(env, "start", EDIT_GOAL, "-w", str(tmp_path), "--foreground")
        rounds = [r for r in server.chat_requests if r.get("tools")]
        status = run_cli(env, "status", "-w", str(tmp_path), "--json")
    assert result.returncode == 0, result.stderr
    short = [*SMALL_MODEL_TOOLS, "mark_subtask_complete"]
    assert [t["function"]["name"] for t in rounds[0]["tools"]] == short
    preflight = next(r for r in records(tmp_path) if r["type"] == "preflight")
    assert preflight["parameters"] == 3.1 and preflight["tools"] == list(SMALL_MODEL_TOOLS)
    assert json.loads(status.stdout)["settings"]["tools"] == list(SMALL_MODEL_TOOLS)
    assert (tmp_path / "app.py").read_text() == "x = 2\n"
    (plan,) = [r for r in records(tmp_path) if r["type"] == "plan"]
    assert plan["tasks"][0]["subtasks"] == ["read_file app.py", "Change app.py"]


def test_a_large_model_or_named_tools_keep_their_set(tmp_path: Path) -> None:
    scenario = {
        **edit_scenario(call("replace_in_file", path="app.py", old="x = 1", new="x = 2")),
        "models": [{"name": "tiny:1b"}, {"name": "big:32b"}],
    }
    with FakeServer(scenario) as server:
        for model, tools in (("big:32b", None), ("tiny:1b", "read_file,replace_in_file")):
            (tmp_path / "app.py").write_text("x = 1\n")
            env = cli_env(server.url, LOCALAGENT_VERIFY="0", OLLAMA_MODEL=model)
            flags = ["--tools", tools] if tools else []
            goal = f"{EDIT_GOAL} ({model})"
            ran = run_cli(env, "start", goal, "-w", str(tmp_path), "--foreground", *flags)
            assert ran.returncode == 0, ran.stderr
            preflight = next(r for r in records(tmp_path) if r["type"] == "preflight")
            assert "tools" not in preflight
        rounds = [r for r in server.chat_requests if r.get("tools")]
    names = {len(r["tools"]) for r in rounds}
    assert names == {len(catalog().select(None).names()), 3}


STATS = (
    "def mean(values):\n    return sum(values) / len(values)\n\n\n"
    "def median(values):\n    ordered = sorted(values)\n    middle = len(ordered) // 2\n"
    "    return ordered[middle]\n"
)
FIX_GOAL = (
    "python -m pytest fails in this folder: fix the bug in stats.py so that the tests pass, "
    "without changing test_stats.py"
)
# Qwen2.5-Coder-1.5B's rounds on an H100, verbatim: it read stats.py, then made
# `def mean(values) + 1:`, and went on with + 2, + 3, ... (each edit a change, so never a
# repeat) until the round limit.
COUNTING = [
    '```json\n{\n  "name": "read_file",\n  "arguments": {\n    "path": "stats.py"\n  }\n}\n```',
    *[
        '```json\n{\n  "name": "replace_in_file",\n  "arguments": {\n    "path": "stats.py",\n'
        f'    "old": "mean(values){old}",\n    "new": "mean(values) + {n}"\n  }}\n}}\n```'
        for old, n in (("", 1), (" + 1", 1), (" + 1", 2), (" + 2", 3))
    ],
]


def test_a_small_model_s_edit_that_would_break_a_compiling_file_is_refused(
    tmp_path: Path,
) -> None:
    (tmp_path / "stats.py").write_text(STATS)
    plan = plan_rule(
        (FIX_GOAL, ["read_file stats.py", "replace_in_file stats.py to fix the bug"]),
        ("Run the tests", ["run python -m pytest"]),
    )
    replies = [{"content": r} for r in COUNTING]
    small_model_goal(tmp_path, FIX_GOAL, plan, replies, LOCALAGENT_MAX_ROUNDS="5")
    edits = [r for r in records_of(tmp_path, "action_finished") if r["tool"] == "replace_in_file"]
    assert edits[0]["ok"] is False
    assert edits[0]["result"].startswith(
        "not changed: 'stats.py' compiles now, and after this edit it would not (syntax error "
        "at line 1: expected ':': `def mean(values) + 1:`)"
    )
    assert "old was not found" in edits[1]["result"]
    assert (tmp_path / "stats.py").read_text() == STATS
    # a larger model's edit is made as it is sent
    ctx = ToolContext(root=tmp_path)
    ok, text = run(
        ctx, "replace_in_file", path="stats.py", old="mean(values)", new="mean(values) + 1"
    )
    assert ok and "syntax error at line 1" in text


# wordcount-2 on the CPU (code of dd932bd), verbatim: its wordcount.py, and the edit it
# sent after "old occurs 3 times (at lines 6, 8, 8)". One of the three was the start of
# `text.splitlines`; made, the file raised AttributeError on `splitlineslines`.
COUNTS_TEXT = (
    "import argparse\nimport sys\n\ndef main(args):\n    if args.lines:\n        print(len(args"
    ".text.split()))\n    else:\n        print(len(args.text.split()), len(args.text.splitlines"
    "()), len(args.text))\n\nif __name__ == '__main__':\n    parser = argparse.ArgumentParser("
    "description='Count lines, words, and characters in a file.')\n    parser.add_argument('t"
    "ext', type=str, help='The file to count.')\n    parser.add_argument('--lines', action='s"
    "tore_true', help='Print only the number of lines.')\n    args = parser.parse_args()\n    "
    "main(args)"
)
SPLIT_ALL = (
    '{{"name": "replace_in_file", "arguments": {"path": "wordcount.py", "old": "text.split", '
    '"new": "text.splitlines", "count": 3}}}}'
)


def test_an_edit_that_would_cut_a_longer_name_is_refused(tmp_path: Path) -> None:
    (tmp_path / "wordcount.py").write_text(COUNTS_TEXT)
    goal = "Make wordcount.py count lines with splitlines"
    step = "replace_in_file wordcount.py so that it counts lines with splitlines"
    small_model_goal(
        tmp_path, goal, plan_rule((goal, [step])), [{"content": SPLIT_ALL}],
        LOCALAGENT_MAX_ROUNDS="1",
    )  # fmt: skip
    (edit,) = records_of(tmp_path, "action_finished")
    assert edit["ok"] is False
    assert edit["result"] == (
        "not changed: in 'wordcount.py', old `text.split` is also part of the longer name "
        "`args.text.splitlines` (line 8), which this edit would make "
        "`args.text.splitlineslines`. Send as old whole names, with enough of the line around "
        "them to be unique."
    ), edit["result"]
    assert (tmp_path / "wordcount.py").read_text() == COUNTS_TEXT
