"""Custom prompts: every way a template can be wrong is found before a run, all at once,
with file and line; values go in verbatim; a custom prompt reaches the model."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from support import call, cli_env, closed_port, done, messages_text, plan_rule, records, run_cli

from localagent.config.runconfig import RunRequest, base_settings, for_run
from localagent.config.userconfig import config_path, load_settings
from localagent.daemon.spawn import request_bytes
from localagent.models.fake import FakeServer
from localagent.prompts import promptset, templates
from localagent.prompts import texts as prompts
from localagent.prompts.templates import Spec, check, render
from localagent.state import State
from localagent.system.errors import UsageError
from localagent.tools import catalog

TASK_SPEC = Spec(required=frozenset({"task", "tool_instructions"}))


def messages(text: str, spec: Spec = TASK_SPEC) -> list[str]:
    return [str(p) for p in check(text, spec, "t.txt")]


def errors(text: str, spec: Spec = TASK_SPEC) -> list[str]:
    return [str(p) for p in check(text, spec, "t.txt") if not p.warning]


# ---- the holes of the source system, closed -------------------------------------------


def test_doubled_braces_around_a_required_placeholder_are_an_error() -> None:
    found = errors("Do {{task}} then {tool_instructions}")
    assert found == [
        "t.txt:1: {{task}} is a literal (doubled braces) and shows the text {task}, not the "
        "value; the required placeholder {task} is missing: write {task}"
    ]


def test_doubled_braces_around_a_placeholder_that_is_also_used_are_a_warning() -> None:
    found = check("{task} and {{task}}\n{tool_instructions}", TASK_SPEC, "t.txt")
    assert [(p.line, p.warning) for p in found] == [(1, True)]


def test_literal_json_is_reported_when_the_prompt_loads(tmp_path: Path) -> None:
    (tmp_path / "plan_user.txt").write_text('Goal: {goal}\nAnswer like {"ok": true}\n')
    with pytest.raises(UsageError) as raised:
        promptset.load_folder(tmp_path)
    message = raised.value.message
    assert f'{tmp_path / "plan_user.txt"}:2: {{"ok": true}} is not a placeholder' in message
    assert 'double its braces: {{"ok": true}}' in message
    # Doubled, it is literal text, and renders as JSON.
    assert errors('Answer {{"ok": true}} {task} {tool_instructions}') == []
    assert render('Answer {{"ok": true}} for {task}', {"task": "t"}) == 'Answer {"ok": true} for t'


def test_a_conversion_is_named_as_such_not_as_a_missing_placeholder() -> None:
    assert errors("{task!r} {tool_instructions}") == [
        "t.txt:1: {task!r} uses a conversion (!r), which is not supported: values are "
        "inserted as they are; write {task}"
    ]


def test_a_typo_is_found_before_the_run_with_a_suggestion() -> None:
    found = errors("Do {taks} with {tool_instructions}")
    assert found[0] == "t.txt: the required placeholder {task} is missing"
    assert found[1].startswith("t.txt:1: unknown placeholder {taks}: did you mean {task}?")


def test_format_specs_attributes_and_indexes_are_reported() -> None:
    found = errors("{task:>10}\n{tool_instructions.name}\n{task[0]}")
    assert [f.split(" uses ")[1].split(" (")[0] for f in found] == [
        "a format spec",
        "attribute access",
        "index access",
    ]
    assert [f.split(":")[1] for f in found] == ["1", "2", "3"]


def test_unbalanced_braces_are_reported_with_their_lines() -> None:
    found = errors("{task}\n{tool_instructions\nclosed }\n{}\n{ task }")
    assert found[0] == "t.txt: the required placeholder {tool_instructions} is missing"
    assert found[1].startswith("t.txt:2: a '{' that opens no placeholder")
    assert found[2].startswith("t.txt:3: a '}' that closes no placeholder")
    assert found[3].startswith("t.txt:4: {} is not a placeholder")
    assert found[4] == "t.txt:5: { task }: write {task}, without spaces"
    assert len(found) == 5


def test_every_problem_of_a_folder_is_reported_at_once_with_file_and_line(
    tmp_path: Path,
) -> None:
    (tmp_path / "plan_user.md").write_text("Plan {goal!r}\n")
    (tmp_path / "replan_user.txt").write_text("Goal {goal}\nWhy {reasn}\n{subtask:>4}\n")
    (tmp_path / "sytem.txt").write_text("x")
    (tmp_path / "probe.txt").write_text("{subtask} {notice}")  # a good one
    (tmp_path / "notes.rst").write_text("{not a prompt}")  # other endings are ignored
    (tmp_path / "README.md").write_text("My prompts {")  # and so is a README
    with pytest.raises(UsageError) as raised:
        promptset.load_folder(tmp_path)
    lines = raised.value.message.splitlines()
    assert lines[0] == f"the prompts in {tmp_path} have 5 problems; nothing was run:"
    where = [line.split(": ", 1)[0].strip() for line in lines[1:]]
    assert where == [
        f"{tmp_path / 'plan_user.md'}:1",
        f"{tmp_path / 'replan_user.txt'}",
        f"{tmp_path / 'replan_user.txt'}:2",
        f"{tmp_path / 'replan_user.txt'}:3",
        f"{tmp_path / 'sytem.txt'}",
    ]
    assert "uses a conversion" in lines[1]
    assert "{reason} is missing" in lines[2] and "did you mean {reason}?" in lines[3]
    assert "uses a format spec" in lines[4] and "did you mean system?" in lines[5]


def test_folder_files_are_read_strictly(tmp_path: Path) -> None:
    (tmp_path / "plan_user.txt").write_bytes(b"\xef\xbb\xbfGoal: {goal}\r\nThen plan.\r\n")
    assert promptset.load_folder(tmp_path) == {"plan_user": "Goal: {goal}\nThen plan."}
    (tmp_path / "plan_user.md").write_text("{goal}")
    (tmp_path / "unmet_user.txt").write_bytes(b"{goal} {unmet} \xff")
    (tmp_path / "no_tool_call.txt").write_text("\n")
    (tmp_path / "verify_turn.txt").write_text("x" * (promptset.MAX_BYTES + 1))
    if sys.platform != "win32":
        os.mkfifo(tmp_path / "cut_off.txt")  # must not hang the check
    _, found = promptset.read_folder(tmp_path)
    said = "\n".join(map(str, found))
    assert "plan_user.md and plan_user.txt are both the plan_user prompt" in said
    assert "unmet_user.txt: is not UTF-8 text (byte 15)" in said
    assert "no_tool_call.txt: the prompt is empty" in said
    assert "verify_turn.txt: over 64 KiB" in said
    if sys.platform != "win32":
        assert "cut_off.txt: not a regular file" in said
    empty, missing = tmp_path / "empty", tmp_path / "missing"
    empty.mkdir()
    assert "no prompt files" in str(promptset.read_folder(empty)[1][0])
    assert "cannot read the prompts folder" in str(promptset.read_folder(missing)[1][0])


# ---- rendering ---------------------------------------------------------------------------


def test_a_value_with_braces_is_inserted_verbatim() -> None:
    value = "use {task} and {{x}} and {0} and $goal and {"
    assert render("A {goal} B {goal}", {"goal": value}) == f"A {value} B {value}"
    assert promptset.DEFAULT.render("plan_user", goal=value) == f"Goal: {value}"


def test_a_placeholder_without_a_value_raises() -> None:
    with pytest.raises(KeyError, match=r"no value for the placeholder \{goal\}"):
        render("Goal: {goal}", {"other": 1})


def test_the_defaults_pass_their_own_check() -> None:
    for name, prompt in prompts.PROMPTS.items():
        assert check(prompt.text, prompt.spec, name) == [], name
        assert templates.placeholders(prompt.text) >= prompt.spec.required, name


# ---- the KV cache --------------------------------------------------------------------------


def test_a_volatile_value_before_the_history_gets_a_warning() -> None:
    summary = "GOAL: {goal}\nRound {round}\nPLAN:\n{plan}"
    assert promptset.warnings({"summary": summary}) == [
        "prompt summary:2: warning: {round} changes between rounds and this prompt comes "
        "before the history: the model server cannot reuse its cache past it, so every "
        "round is slower; the probe prompt (sent last) is the place for it"
    ]
    assert promptset.warnings({"probe": "Round {round}: {subtask}\n{notice}"}) == []


def test_a_value_of_another_prompt_is_named_as_such() -> None:
    found = promptset.problems({"system": "{protocol} round {round}"}, lambda n: n)
    assert str(found[0]).startswith("system:1: {round} is a value of the probe prompt")


# ---- sources: the config file, the journal, the child process ----------------------------


def test_the_config_table_is_checked_when_settings_load() -> None:
    config_path().parent.mkdir(parents=True, exist_ok=True)
    config_path().write_text(
        '[prompts]\nplan_user = """\nPlan this:\n{gaol}"""\nsytem = "x"\nprobe = 3\n'
    )
    with pytest.raises(UsageError) as raised:
        load_settings()
    message = raised.value.message
    assert f"{config_path()} [prompts] plan_user:2: unknown placeholder {{gaol}}" in message
    assert f"{config_path()} [prompts] plan_user: the required placeholder {{goal}}" in message
    assert "no prompt is named 'sytem'; did you mean system?" in message
    assert "probe: a prompt is a string of text" in message
    config_path().write_text('[prompts]\nplan_user = "Plan: {goal}"\n')
    assert load_settings().prompts == {"plan_user": "Plan: {goal}"}


def test_a_resume_keeps_the_journaled_prompts_and_a_flag_replaces_them() -> None:
    base = load_settings(prompts={"plan_user": "From the config: {goal}"})
    state = State(settings={"prompts": {"plan_user": "Journaled: {goal}"}})
    settings, changed = for_run(base, state.settings, {"prompts": None})
    assert settings.prompts == {"plan_user": "Journaled: {goal}"} and changed == {}
    given = {"plan_user": "Given: {goal}"}
    settings, changed = for_run(base, state.settings, {"prompts": given})
    assert settings.prompts == given and changed == {"prompts": given}
    with pytest.raises(UsageError, match="unknown placeholder"):
        load_settings(prompts={"plan_user": "{goal} {x}"})


def test_the_background_run_gets_the_prompts_read_from_the_folder(tmp_path: Path) -> None:
    texts = {"plan_user": "Mine: {goal}"}
    sent = RunRequest(workspace=tmp_path, goal="g", given={"prompts": texts})
    given = RunRequest.model_validate_json(request_bytes(sent)).given
    assert base_settings(given).prompts == texts


# ---- the command line ----------------------------------------------------------------------


def test_prompts_check_exit_codes_and_the_defaults_round_trip(tmp_path: Path) -> None:
    env = cli_env(f"127.0.0.1:{closed_port()}")
    folder = tmp_path / "mine"
    folder.mkdir()
    shown = run_cli(env, "prompts", "show", "system")
    assert shown.returncode == 0 and shown.stdout == prompts.SYSTEM + "\n"
    for name in prompts.PROMPTS:  # as `prompts show NAME > NAME.txt` writes them
        (folder / f"{name}.txt").write_text(promptset.show(name) + "\n", encoding="utf-8")
    good = run_cli(env, "prompts", "check", str(folder))
    assert good.returncode == 0, good.stdout
    assert good.stdout.strip().endswith(f"{len(prompts.PROMPTS)} prompts in {folder}: usable")
    (folder / "summary.txt").write_text("{goal} {plan} {round}")
    warned = run_cli(env, "prompts", "check", str(folder))
    assert warned.returncode == 0 and "summary.txt:1: warning: {round} changes" in warned.stdout
    (folder / "plan_user.txt").write_text("{goal!s} {")
    bad = run_cli(env, "prompts", "check", str(folder))
    assert bad.returncode == 2
    assert bad.stdout.strip().endswith(f"2 problems in {folder}")
    assert run_cli(env, "prompts", "check").stdout.startswith("no [prompts] table")
    unknown = run_cli(env, "prompts", "show", "planner")
    assert unknown.returncode == 2 and "no prompt is named 'planner'" in unknown.stderr
    listed = run_cli(env, "prompts", "list").stdout
    assert all(name in listed for name in prompts.PROMPTS)


def test_a_bad_prompts_folder_stops_start_before_anything_runs(tmp_path: Path) -> None:
    folder, ws = tmp_path / "p", tmp_path / "ws"
    folder.mkdir()
    (folder / "system.txt").write_text("Rules {guides}\nTools {tools}\n")
    env = cli_env(f"127.0.0.1:{closed_port()}")
    result = run_cli(env, "start", "Do it", "-w", str(ws), "--prompts", str(folder))
    assert result.returncode == 2
    assert f"{folder / 'system.txt'}:2: {{tools}} is a value of the" in result.stderr
    assert "the required placeholder {protocol} is missing" in result.stderr
    assert not ws.exists()


def test_custom_prompts_reach_the_model_and_are_journaled(tmp_path: Path) -> None:
    folder, ws = tmp_path / "p", tmp_path / "ws"
    folder.mkdir()
    custom = {
        "system": "You are PIRATE-AGENT.\nTools: {names}\n{guides}\n{protocol}",
        "plan_user": 'PLAN THIS >> {goal} << as {{"tasks": [...]}}',
        "no_tool_call": "CUSTOM NUDGE: reply with a tool call.",
        "verify_turn": "CHECK THE GOAL ABOVE, {progress}:\n{ledger}",
    }
    for name, text in custom.items():
        (folder / f"{name}.md").write_text(text + "\n")
    goal = "Write notes.txt {task} {{x}}"
    scenario = {
        "rules": [plan_rule(("Notes", ["Write notes.txt"]))],
        "replies": [
            call("write_file", path="notes.txt", content="first\n"),
            {"content": "I think the work is finished."},
            call("read_file", path="notes.txt"),
            done("notes.txt is written"),
        ],
    }
    with FakeServer(scenario) as server:
        env = cli_env(server.url)
        args = ["start", goal, "-w", str(ws), "--foreground", "--prompts", str(folder)]
        result = run_cli(env, *args)
    assert result.returncode == 0, result.stderr
    sent = server.chat_requests
    plan = next(r for r in sent if r.get("format") and "tasks" in str(r["format"]))
    steps = ", ".join(t.name for t in catalog() if t.policy.default and not t.policy.control)
    instructions = promptset.DEFAULT.render("plan_system", tools=steps)
    request = f'PLAN THIS >> {goal} << as {{"tasks": [...]}}'
    assert plan["messages"][1]["content"] == f"{instructions}\n\n{request}"
    rounds = [r for r in sent if not r.get("format")]
    # the plan opens as every round does: the server's prompt cache keeps that front
    assert plan["messages"][0] == rounds[0]["messages"][0] and plan["tools"] == rounds[0]["tools"]
    systems = {r["messages"][0]["content"] for r in rounds}
    assert len(rounds) == 4 and len(systems) == 1  # rendered once: the same bytes every round
    assert systems.pop().startswith("You are PIRATE-AGENT.\nTools: list_dir, read_file, ")
    assert "CUSTOM NUDGE" not in messages_text(rounds[1])
    assert "CUSTOM NUDGE: reply with a tool call." in messages_text(rounds[2])
    verify = [r for r in sent if r.get("format") and "verdict" in str(r["format"])]
    turn = verify[0]["messages"][-1]["content"]
    assert turn.startswith("CHECK THE GOAL ABOVE, completed 1.1:\nseq ")
    assert verify[0]["messages"][:-3] == rounds[-1]["messages"]
    recs = records(ws)
    assert recs[0]["settings"]["prompts"] == custom
    assert [r["text"] for r in recs if r["type"] == "feedback"] == [custom["no_tool_call"]]


def test_start_warns_of_a_volatile_value_before_the_history(tmp_path: Path) -> None:
    folder = tmp_path / "p"
    folder.mkdir()
    (folder / "summary.txt").write_text("Round {round}\n{goal}\n{plan}\n")
    env = cli_env(f"127.0.0.1:{closed_port()}", LOCALAGENT_RETRY_DEADLINE="0")
    ws = tmp_path / "ws"
    result = run_cli(env, "start", "Do it", "-w", str(ws), "--foreground", "--prompts", str(folder))
    assert result.returncode == 3  # it ran: the server is down
    assert "localagent: prompt summary:1: warning: {round} changes between rounds" in result.stderr


def test_the_small_profile_sends_the_small_variants_unless_only_the_full_one_is_replaced() -> None:
    small = promptset.PromptSet({}, small=True)
    assert small.texts["system"] == prompts.SYSTEM_SMALL
    assert small.texts["plan_system"] == prompts.PLAN_SYSTEM_SMALL
    assert small.texts["summary"] == prompts.SUMMARY  # no variant: the same text
    assert promptset.PromptSet({}).texts["system"] == prompts.SYSTEM
    mine = "MINE {names}\n{guides}\n{protocol}"
    assert promptset.PromptSet({"system": mine}, small=True).texts["system"] == mine
    both = {"system": mine, "system_small": "SMALL {protocol}"}
    assert promptset.PromptSet(both, small=True).texts["system"] == "SMALL {protocol}"
    assert promptset.PromptSet(both).texts["system"] == mine


def test_the_small_prompts_are_listed_shown_and_replaceable(tmp_path: Path) -> None:
    env = cli_env(f"127.0.0.1:{closed_port()}")
    listed = run_cli(env, "prompts", "list").stdout
    for name in ("system_small", "plan_system_small", "plan_repair"):
        assert name in listed
    shown = run_cli(env, "prompts", "show", "plan_system_small").stdout
    assert "Good subtasks: {good}." in shown
    assert '"Open a text editor"' in shown and '"Choose a language"' in shown
    folder = tmp_path / "p"
    folder.mkdir()
    (folder / "plan_repair.txt").write_text("Mend it: {problems} {tools} {goal}\n")
    bad = run_cli(env, "prompts", "check", str(folder))
    assert bad.returncode == 2 and "(it takes {problems}, {tools})" in bad.stdout


def test_the_loop_s_own_texts_are_prompts_a_folder_can_replace(tmp_path: Path) -> None:
    folder, ws = tmp_path / "p", tmp_path / "ws"
    folder.mkdir()
    mine = "GAVE UP AFTER {count} BAD REPLIES"
    (folder / "too_many_format_errors.txt").write_text(mine + "\n")
    scenario = {
        "rules": [
            {"kind": "plan", "match": "GAVE UP", "reply": {"content": "no plan"}},
            plan_rule(("Notes", ["Write notes.txt"])),
        ],
        "replies": [{"content": "Let me think."}] * 3,
    }
    with FakeServer(scenario) as server:
        env = cli_env(server.url)
        args = ["start", "Write notes.txt", "-w", str(ws), "--foreground", "--prompts", str(folder)]
        result = run_cli(env, *args)
    assert result.returncode == 1, result.stderr
    failed = [r for r in records(ws) if r["type"] == "subtask_failed"]
    assert [r["reason"] for r in failed] == ["GAVE UP AFTER 3 BAD REPLIES"]
    replan = [r for r in server.chat_requests if "GAVE UP AFTER 3" in messages_text(r)]
    assert replan  # the replan request carries the replaced text to the model
    listed = run_cli(env, "prompts", "list").stdout
    for name in ("too_many_format_errors", "insisted", "call_skipped", "output_stored"):
        assert name in listed
    found = promptset.problems({"insisted": "kept at it {times}"}, lambda n: n)
    assert "unknown placeholder {times}" in str(found[0])


def test_the_tools_own_texts_are_prompts_a_folder_can_replace(tmp_path: Path) -> None:
    folder, ws = tmp_path / "p", tmp_path / "ws"
    folder.mkdir()
    (folder / "guide_run_cmd.txt").write_text("- RUN ONLY {allowed}\n")
    (folder / "unknown_tool.txt").write_text("NO TOOL {tool}, TRY {nearest}\n")
    (folder / "same_content.txt").write_text("UNCHANGED {path}\n")
    # A tool's refusals are prompts too.
    (folder / "no_such_file.txt").write_text("NO FILE {path} HERE\n")
    (folder / "outside_workspace.txt").write_text("KEEP INSIDE, NOT {path}\n")
    (folder / "shell_operator.txt").write_text("NO SHELL: {operator}\n")
    scenario = {
        # No file named: an unchanged rewrite of a write subtask's own file would end it.
        "rules": [plan_rule(("Notes", ["Put a greeting into the notes"]))],
        "replies": [
            call("write_fiel", path="notes.txt", content="hi\n"),
            call("read_file", path="missing.txt"),
            call("read_file", path="../secret.txt"),
            call("run_cmd", cmd="python a.py | grep x"),
            call("write_file", path="notes.txt", content="hi\n"),
            call("write_file", path="notes.txt", content="hi\n"),
        ],
        "default": done("notes.txt is written"),
    }
    with FakeServer(scenario) as server:
        env = cli_env(server.url, LOCALAGENT_VERIFY="0")
        args = ["start", "Write notes.txt", "-w", str(ws), "--foreground", "--prompts", str(folder)]
        result = run_cli(env, *args)
        sent = [messages_text(r) for r in server.chat_requests if not r.get("format")]
    assert result.returncode == 0, result.stderr
    assert "- RUN ONLY python" in sent[0]
    assert "NO TOOL 'write_fiel', TRY write_file" in sent[1]
    assert "NO FILE 'missing.txt' HERE" in sent[2]
    assert "KEEP INSIDE, NOT '../secret.txt'" in sent[3]
    assert "NO SHELL: '|'" in sent[4]
    assert not any("does not exist; use list_dir" in text for text in sent)
    assert any("UNCHANGED 'notes.txt'" in text for text in sent[5:])
    listed = run_cli(env, "prompts", "list").stdout
    tools_texts = ("guide_run_cmd", "guide_complete", "unknown_tool", "ran_as", "applied_before")
    refusals = ("no_such_file", "outside_workspace", "shell_operator", "mcp_timed_out")
    for name in tools_texts + refusals:
        assert name in listed
