import json
from pathlib import Path
from typing import Any

from support import cli_env, plan_rule, records_of, round_calls, run_cli, small_model_goal

from localagent.config.settings import Settings
from localagent.journal import Journal
from localagent.loop.agent import Agent
from localagent.loop.loopguard import check, check_claim, claim_signature, explain, signature
from localagent.mcp import schema
from localagent.models import make_model
from localagent.models.config import ModelConfig
from localagent.models.fake import FakeServer
from localagent.state import Attempt, Claim, GuardState
from localagent.system.stopping import StopSignal
from localagent.tools import ToolContext, ToolResult
from localagent.tools.registry import schema_tool
from localagent.tools.tool import Policy


def run(guard: GuardState, sig: str, changed: bool = False, obs: str = "") -> None:
    guard.window.append(Attempt(sig=sig, epoch=guard.epoch, obs=obs))
    if changed:
        guard.epoch += 1


def test_signature_is_canonical() -> None:
    assert signature("t", {"b": 1, "a": [2]}) == signature("t", {"a": [2], "b": 1})
    assert signature("t", {"a": 1}) != signature("u", {"a": 1})


def test_third_identical_attempt_is_blocked() -> None:
    guard = GuardState()
    sig = signature("run_cmd", {"cmd": "pytest"})
    assert check(guard, sig) is None
    run(guard, sig)
    assert check(guard, sig) is None
    run(guard, sig)
    block = check(guard, sig)
    assert block is not None and block.pattern == "repeat" and block.count == 3
    assert "run_cmd" in explain(block) and "BLOCKED" in explain(block)


def test_repeat_after_a_workspace_change_is_progress() -> None:
    guard = GuardState()
    test, edit = signature("run_cmd", {"cmd": "pytest"}), signature("write_file", {"path": "a"})
    for _ in range(5):
        assert check(guard, test) is None
        run(guard, test)
        assert check(guard, edit) is None
        run(guard, edit, changed=True)


def test_alternating_pattern_is_blocked() -> None:
    guard = GuardState()
    a, b = signature("read_file", {"path": "a"}), signature("list_dir", {"path": "."})
    run(guard, a)
    run(guard, b)
    run(guard, a)
    block = check(guard, b)
    assert block is not None and block.pattern == "alternating"
    assert "alternating" in explain(block)


def test_only_the_last_ten_actions_count() -> None:
    guard = GuardState()
    sig = signature("list_dir", {"path": "."})
    run(guard, sig)
    run(guard, sig)
    for i in range(10):
        run(guard, signature("read_file", {"path": str(i)}))
    guard.window = guard.window[-10:]
    assert check(guard, sig) is None


def test_same_action_and_observation_four_times_is_blocked_even_across_changes() -> None:
    guard = GuardState()
    sig = signature("run_cmd", {"cmd": "python gen.py"})
    for _ in range(3):
        assert check(guard, sig) is None
        run(guard, sig, changed=True, obs="same")  # it touches a file every time
    block = check(guard, sig)
    assert block is not None and block.pattern == "repeat" and block.count == 4


def test_a_changing_observation_is_progress() -> None:
    guard = GuardState()
    sig = signature("run_cmd", {"cmd": "python gen.py"})
    for i in range(6):
        assert check(guard, sig) is None
        run(guard, sig, changed=True, obs=f"out{i}")


def test_three_abab_cycles_with_identical_observations_are_blocked() -> None:
    guard = GuardState()
    a = signature("run_cmd", {"cmd": "python gen.py"})
    b = signature("run_cmd", {"cmd": "python check.py"})
    for _ in range(2):
        run(guard, a, changed=True, obs="gen")
        run(guard, b, changed=True, obs="check")
    run(guard, a, changed=True, obs="gen")
    block = check(guard, b)
    assert block is not None and block.pattern == "alternating"


def test_abab_that_changes_the_workspace_with_new_output_is_progress() -> None:
    guard = GuardState()
    a = signature("run_cmd", {"cmd": "python gen.py"})
    b = signature("run_cmd", {"cmd": "python check.py"})
    for i in range(4):
        assert check(guard, a) is None
        run(guard, a, changed=True, obs=f"gen{i}")
        assert check(guard, b) is None
        run(guard, b, changed=True, obs="check")


# Nested deeper than Python's JSON reader goes but not past the tools' own: the model
# client keeps such arguments as unparsed text, and the tool still runs what they say.
DEEP = "[" * 1005 + "]" * 1005
SPELLINGS = [
    f'{{"text":"x","pad":{DEEP}}}',
    f'{{ "text": "x", "pad": {DEEP} }}',
    f'{{"pad": {DEEP}, "text": "x"}}',
]


def test_the_same_action_in_other_spellings_is_blocked_as_a_repeat(tmp_path: Path) -> None:
    """The guard signs the call the tool runs, not the text the model wrote it in."""
    ran: list[dict[str, Any]] = []

    def note(ctx: ToolContext, /, **args: Any) -> ToolResult:
        ran.append(args)
        return ToolResult(True, "noted")

    spec, described = schema.for_model("note", "Take a note.", {"type": "object"})
    tool = schema_tool("note", note, spec, described, Policy(resume="never"))
    replies = [{"tool_calls": [{"name": "note", "arguments": text}]} for text in SPELLINGS]
    with FakeServer({"replies": replies}) as server:
        settings = Settings(ollama_host=server.url, tools=(), verify=False, retry_deadline=5.0)
        model = make_model(ModelConfig.of(settings), StopSignal())
        model.preflight()
        journal = Journal(tmp_path)
        journal.load()
        journal.append("goal_started", goal="take notes", model=settings.model, settings={})
        journal.append("plan", tasks=[{"description": "Notes", "subtasks": ["take notes"]}])
        ctx = ToolContext(root=tmp_path)
        agent = Agent(journal, model, settings, ctx, StopSignal(), extra_tools=[tool])
        try:
            for _ in SPELLINGS:
                agent.step()  # the model's reply
                agent.step()  # its call
        finally:
            journal.close()
    records = list(Journal(tmp_path).records())
    asked = [r for r in records if r["type"] == "llm_call" and r["purpose"] == "round"]
    assert [c["arguments"] for r in asked for c in r["tool_calls"]] == [
        {"__unparsed__": text} for text in SPELLINGS
    ]
    assert len(ran) == 2 and [sorted(args) for args in ran] == [["pad", "text"]] * 2
    blocked = [r for r in records if r["type"] == "action_blocked"]
    assert len(blocked) == 1 and blocked[0]["pattern"] == "repeat"
    started = {r["signature"] for r in records if r["type"] == "action_started"}
    assert started == {blocked[0]["signature"]}


def test_a_failure_claim_is_a_loop_once_it_follows_the_model_across_subtasks() -> None:
    guard = GuardState()
    sig = claim_signature("unknown tool 'create_dir'; available tools: ...")
    assert sig == claim_signature("Unknown tool  'create_dir' -- available tools...")
    guard.claims[sig] = Claim(count=2, first=1)
    # Repeats within the subtask it was first made in are the completion gate's business.
    assert check_claim(guard, sig, subtask=1) is None
    block = check_claim(guard, sig, subtask=2)
    assert block is not None and block.count == 3
    guard.claims[sig] = Claim(count=1, first=1)
    assert check_claim(guard, sig, subtask=2) is None


# Qwen2.5-Coder-1.5B's rock-paper-scissors on the CPU, verbatim: its first write was this
# stub, and at temperature 0.2 it sent it again five times, until the subtask failed.
STUB = (
    '{{"name": "write_file", "arguments": {"path": "rps_game.py", "content": '
    '"def rps_game():\\n    # Game logic goes here\\n"}}}'
)
GAME = (
    '{{"name": "write_file", "arguments": {"path": "rps_game.py", "content": "import random'
    "\\n\\nprint(random.choice(['rock', 'paper', 'scissors']))\\n\"}}}"
)


def test_a_reply_that_repeats_the_one_before_is_sampled_hotter(tmp_path: Path) -> None:
    plan = plan_rule(("Write the game", ["write_file rps_game.py with the game logic"]))
    replies = [{"content": STUB}, {"content": STUB}, {"content": STUB}, {"content": GAME}]
    _, sent = small_model_goal(
        tmp_path, "Create a rock-paper-scissors game", plan, replies, LOCALAGENT_MAX_ROUNDS="5"
    )
    rounds = round_calls(tmp_path)
    assert [r.get("temperature") for r in rounds][:5] == [None, None, 0.8, 0.8, None]
    asked = [r for r in sent if r.get("tools")]
    assert [r["temperature"] for r in asked][:5] == [0.2, 0.2, 0.8, 0.8, 0.2]
    traced = run_cli(cli_env("http://127.0.0.1:9"), "trace", "-w", str(tmp_path))
    assert traced.stdout.count(", at temperature 0.8") == 2, traced.stdout
    # The setting, and none where it is not above the run's own temperature.
    again = tmp_path / "cool"
    small_model_goal(
        again,
        "Create a rock-paper-scissors game",
        plan,
        replies,
        LOCALAGENT_MAX_ROUNDS="4",
        LOCALAGENT_REPEAT_TEMPERATURE="0.2",
    )
    assert all("temperature" not in r for r in round_calls(again))


def test_one_file_s_edit_refused_alike_four_times_is_blocked_whatever_its_text() -> None:
    """The 1.5B sent pytest's "Failed: DID NOT RAISE ValueError" as the text to replace in
    mathx/__init__.py, then that text with ": 0" added, again and again: each call new,
    each refused with the same result, nothing changed, 14 rounds to the round limit (the
    CPU). The same tool on the same file, refused alike with nothing changed between, is
    a loop."""
    guard = GuardState()
    old = "Failed: DID NOT RAISE ValueError: division by zero"
    for n in range(3):
        sig = signature("replace_in_file", {"path": "m.py", "old": old + ": 0" * n, "new": "x"})
        assert check(guard, sig) is None
        run(guard, sig, obs="not found")
    other_file = signature("replace_in_file", {"path": "t.py", "old": old, "new": "x"})
    assert check(guard, other_file) is None
    sig = signature("replace_in_file", {"path": "m.py", "old": old + ": 0" * 3, "new": "x"})
    block = check(guard, sig)
    assert block is not None and block.pattern == "repeat" and block.count == 4


def test_one_file_s_edits_with_a_change_between_are_progress() -> None:
    guard = GuardState()
    for n in range(6):
        sig = signature("replace_in_file", {"path": "m.py", "old": f"v{n}", "new": "x"})
        assert check(guard, sig) is None
        run(guard, sig, changed=n % 3 == 2, obs="not found")


def test_an_edit_whose_text_grows_each_round_fails_its_subtask_in_six(tmp_path: Path) -> None:
    """The 1.5B's calls, verbatim but for the file: pytest's words as the text to replace,
    one ": 0" longer each round, until the round limit. Now three are refused, three
    blocked, and the subtask fails."""
    (tmp_path / "m.py").write_text("def divide(a, b):\n    return a / b\n")
    old = "Failed: DID NOT RAISE ValueError"
    replies = []
    for n in range(10):
        args = {"path": "m.py", "old": old + ": 0" * n, "new": old + ": 0" * (n + 1)}
        call = {"name": "replace_in_file", "arguments": args}
        replies.append({"content": json.dumps(call)})
    plan = plan_rule(("Fix", ["replace_in_file m.py to fix the failing test"]))
    small_model_goal(tmp_path, "Fix m.py", plan, replies, LOCALAGENT_MAX_ROUNDS="10")
    failed = records_of(tmp_path, "subtask_failed")
    assert failed and "blocked" in failed[0]["reason"], failed
    finished = [r for r in records_of(tmp_path, "action_finished") if r["seq"] < failed[0]["seq"]]
    blocked = [r for r in records_of(tmp_path, "action_blocked") if r["seq"] < failed[0]["seq"]]
    assert (len(finished), len(blocked)) == (3, 3), (finished, blocked)
