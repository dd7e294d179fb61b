"""The small-model profile: chosen from the size the server says (either backend) or set,
the short tool set with only the arguments a call needs, the short prompts, one task for a
one-file goal, and a first round's prompt under 1,500 tokens."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from support import (
    backend_env,
    call,
    cli_env,
    done,
    plan_rule,
    records,
    records_of,
    run_cli,
    small_model_goal,
)
from test_planner import CODE_FILES, CODE_PLAN, CODE_STEPS, CODE_TESTS, LEAD, MATHX

from localagent.config.runconfig import RunRequest, base_settings, for_run
from localagent.config.settings import Settings
from localagent.daemon.spawn import request_bytes
from localagent.models import make_model
from localagent.models.config import ModelConfig
from localagent.models.fake import FakeServer
from localagent.prompts.texts import PLAN_SYSTEM_SMALL, SYSTEM_SMALL
from localagent.state import State, apply
from localagent.tools.catalog import SMALL_MODEL_TOOLS, run_tools

GAME = "Create a rock-paper-scissors game"
GAME_PLAN = plan_rule(("Write the game", ["write_file rps_game.py with the game logic"]))
WRITE = call("write_file", path="rps_game.py", content="print('rock')\n")
TOKEN_TARGET = 1500


def first_round(requests: list[dict[str, Any]]) -> dict[str, Any]:
    return next(r for r in requests if not r.get("format") and not r.get("response_format"))


def prompt_tokens(request: dict[str, Any]) -> int:
    """The prompt's size as sent, tool schemas included, at 4 characters a token."""
    chars = sum(len(str(m.get("content") or "")) for m in request["messages"])
    return (chars + len(json.dumps(request.get("tools") or []))) // 4


def run_game(ws: Path, scenario: dict[str, Any], *flags: str, **env: str) -> Any:
    """The game goal for one round: its run, its status and what the server received."""
    script = {"rules": [GAME_PLAN], "replies": [WRITE], "default": done("written")}
    with FakeServer({**script, **scenario}) as server:
        environ = cli_env(server.url, LOCALAGENT_VERIFY="0", LOCALAGENT_MAX_ROUNDS="6", **env)
        ran = run_cli(environ, "start", GAME, "-w", str(ws), "--foreground", *flags)
        status = run_cli(environ, "status", "-w", str(ws))
    return ran, status.stdout, server.chat_requests


def test_llama_server_says_the_size_and_a_small_model_gets_the_small_profile(
    tmp_path: Path,
) -> None:
    """The issue: a 1.5B model behind llama-server got all 17 tools and a 2,700-token
    first prompt, because the OpenAI-compatible backend never learned its size."""
    model = {"name": "model.gguf", "parameter_size": "1.5B"}  # nothing in the name
    scenario = {"models": [model], "llama_cpp": True, "rules": [GAME_PLAN]}
    scenario |= {"replies": [WRITE], "default": done()}
    with FakeServer(scenario) as server:
        env = backend_env("openai", server.url, OLLAMA_MODEL="model.gguf", LOCALAGENT_VERIFY="0")
        ran = run_cli(env, "start", GAME, "-w", str(tmp_path), "--foreground")
        status = run_cli(env, "status", "-w", str(tmp_path))
        sent = server.chat_requests
    assert ran.returncode == 0, ran.stderr
    preflight = next(r for r in records(tmp_path) if r["type"] == "preflight")
    assert preflight["parameters"] == 1.5 and preflight["profile"] == "small"
    assert preflight["tools"] == list(SMALL_MODEL_TOOLS)
    assert re.search(r"^profile +small$", status.stdout, re.M)
    first = first_round(sent)
    names = [t["function"]["name"] for t in first["tools"]]
    assert names == [*SMALL_MODEL_TOOLS, "mark_subtask_complete"]
    shown = {t["function"]["name"]: t["function"]["parameters"] for t in first["tools"]}
    assert set(shown["read_file"]["properties"]) == {"path"}  # no max_bytes, start_line
    assert set(shown["write_file"]["properties"]) == {"path", "content"}
    assert first["messages"][0]["content"].startswith(SYSTEM_SMALL.split("\n")[0])
    plan = next(r for r in sent if r.get("response_format"))
    # its own front: it shares no cache slot with the rounds (see test_prompt_cache)
    assert plan["messages"][0]["content"].startswith(PLAN_SYSTEM_SMALL.split("{")[0])
    assert plan["messages"][0]["role"] == "system" and not plan.get("tools")
    assert prompt_tokens(first) <= TOKEN_TARGET


def test_the_first_rounds_prompt_small_against_full(tmp_path: Path) -> None:
    """Measured as the fake server received it: the small profile's first round, tool
    schemas included, stays under 1,500 tokens; the full one is about twice as long."""
    sizes = {}
    for name in ("qwen2.5-coder:1.5b", "qwen2.5-coder:32b"):
        ws = tmp_path / name.replace(":", "-")
        ran, _, sent = run_game(ws, {"models": [{"name": name}]}, OLLAMA_MODEL=name)
        assert ran.returncode == 0, ran.stderr
        sizes[name] = prompt_tokens(first_round(sent))
    small, full = sizes["qwen2.5-coder:1.5b"], sizes["qwen2.5-coder:32b"]
    assert small <= TOKEN_TARGET < full, sizes
    assert small < full * 0.6, sizes


def test_a_small_model_without_tool_calls_gets_a_short_prompt_too(tmp_path: Path) -> None:
    """Without native tool calls the tools are described in the system prompt instead."""
    model = {"name": "tiny:1b", "capabilities": ["completion"]}
    ran, _, sent = run_game(tmp_path, {"models": [model]}, OLLAMA_MODEL="tiny:1b")
    assert ran.returncode == 0, ran.stderr
    first = first_round(sent)
    assert "tools" not in first and "no native tool calling" in first["messages"][0]["content"]
    assert "- read_file(path: string):" in first["messages"][0]["content"]
    assert prompt_tokens(first) <= TOKEN_TARGET


@pytest.mark.parametrize(
    ("scenario", "model", "billions"),
    [
        ({"lm_studio": True, "models": [{"name": "my-coder", "parameter_size": "3B"}]}, "", 3.0),
        ({"models": [{"name": "Qwen/Qwen2.5-Coder-1.5B-Instruct"}]}, "", 1.5),  # vLLM: a name
        ({"models": [{"name": "SmolLM2-360M-Instruct"}]}, "", 0.36),
        ({"models": [{"name": "mixtral-8x7b"}]}, "", None),  # 8 experts of 7B: not 7B
        ({"models": [{"name": "my-coder"}]}, "", None),
        ({"llama_cpp": True, "models": [{"name": "m", "parameter_size": "999999999T"}]}, "x", None),
    ],
)
def test_openai_compatible_servers_say_the_size_their_own_way(
    scenario: dict[str, Any], model: str, billions: float | None
) -> None:
    with FakeServer(scenario) as server:
        name = model or server.scenario["models"][0]["name"]
        settings = Settings(backend="openai", base_url=server.url + "/v1", model=name)
        found = make_model(ModelConfig.of(settings)).preflight().parameters
    assert found == pytest.approx(billions) if billions else found is None


def test_the_profile_is_a_setting_and_a_flag(tmp_path: Path) -> None:
    small_model = {"models": [{"name": "qwen2.5-coder:1.5b"}]}
    ran, status, sent = run_game(
        tmp_path / "a", small_model, "--profile", "full", OLLAMA_MODEL="qwen2.5-coder:1.5b"
    )
    assert ran.returncode == 0, ran.stderr
    assert len(first_round(sent)["tools"]) > len(SMALL_MODEL_TOOLS) + 1
    assert re.search(r"^profile +full$", status, re.M)
    big = {"models": [{"name": "gpt-oss:20b"}]}
    ran, status, sent = run_game(tmp_path / "b", big, LOCALAGENT_PROFILE="small")
    assert ran.returncode == 0, ran.stderr
    assert len(first_round(sent)["tools"]) == len(SMALL_MODEL_TOOLS) + 1
    assert re.search(r"^profile +small$", status, re.M)
    env = cli_env("127.0.0.1:1")
    bad = run_cli(env, "start", GAME, "-w", str(tmp_path / "c"), "--profile", "tiny")
    assert bad.returncode == 2 and "setting profile" in bad.stderr and "'small'" in bad.stderr


def test_a_profile_chosen_by_size_is_the_runs_from_then_on() -> None:
    """Chosen at the first preflight and journaled: a resume keeps it even where the
    server says no size; a flag given on resume still wins."""
    state = State()
    for rec in (
        {"type": "goal_started", "goal": GAME, "settings": {"profile": "auto"}},
        {"type": "preflight", "parameters": 1.5, "profile": "small", "tools": ["read_file"]},
    ):
        apply(state, {"seq": state.seq + 1, **rec})
    assert state.settings["profile"] == "small"
    kept, _ = for_run(Settings(), state.settings, {})
    assert kept.profile == "small"
    given, changed = for_run(Settings(), state.settings, {"profile": "full"})
    assert given.profile == "full" and changed == {"profile": "full"}


def test_a_one_file_goal_is_one_task_in_the_small_profile(tmp_path: Path) -> None:
    goal = "Write hello.py that prints Hello, world!"
    two = plan_rule(("Write", ["write_file hello.py with the print"]), ("Run", ["Run hello.py"]))
    planned = {}
    for profile in ("small", "full"):
        ws = tmp_path / profile
        with FakeServer({"rules": [two], "default": done("written")}) as server:
            env = cli_env(server.url, LOCALAGENT_VERIFY="0", LOCALAGENT_MAX_ROUNDS="1")
            ran = run_cli(env, "start", goal, "-w", str(ws), "--foreground", "--profile", profile)
        assert ran.returncode in (0, 1), ran.stderr
        planned[profile] = next(r for r in records(ws) if r["type"] == "plan")["tasks"]
    assert planned["small"] == [
        {"description": goal, "subtasks": ["write_file hello.py with the print", "Run hello.py"]}
    ]
    assert [task["description"] for task in planned["full"]] == ["Write", "Run"]


def test_the_background_run_gets_the_profile(tmp_path: Path) -> None:
    sent = RunRequest(workspace=tmp_path, goal="g", given={"profile": "small"})
    given = RunRequest.model_validate_json(request_bytes(sent)).given
    assert base_settings(given).profile == "small"


def test_a_plan_that_holds_each_file_s_code_keeps_the_first_prompt_short(
    tmp_path: Path,
) -> None:
    """The 1.5B's mathx plan on the CPU, verbatim (`test_planner.CODE_PLAN`): each step
    held its file's code, and the first round's prompt came to 1,694 tokens. The plan
    shows each step's first line up to 100 characters; the facts name the active step
    whole. The test file's five pieces, one write now, end their step when written."""
    writes = [call("write_file", path=path, content=text) for path, text in CODE_FILES]
    writes.append(call("write_file", path="tests/test_mathx.py", content="\n".join(CODE_TESTS)))
    ran, sent = small_model_goal(
        tmp_path, MATHX, plan_rule(*CODE_PLAN), writes, LOCALAGENT_MAX_ROUNDS="6"
    )
    assert ran.returncode == 1, ran.stderr  # six rounds: the tests were not run yet
    first = first_round(sent)
    plan = first["messages"][1]["content"]
    steps = [line for line in plan.split("\n") if re.match(r" +\d+\.\d+\. ", line)]
    assert len(steps) == 8 and max(len(line.split(". ", 1)[1]) for line in steps) <= 100
    assert steps[4].endswith("if b == 0: raise ValueErro…")
    assert steps[5].endswith(f"{LEAD} import mathx …")
    assert first["messages"][-1]["content"].endswith(f"ACTIVE SUBTASK: {CODE_STEPS[0]}")
    # llama-server's own count of this prompt: 1,444 tokens (1,693 before), 1.12 for
    # each of this estimate's
    assert prompt_tokens(first) * 1.12 <= TOKEN_TARGET - 40, prompt_tokens(first)
    done_steps = [r["reason"] for r in records_of(tmp_path, "subtask_completed")]
    assert done_steps[-1] == "tests/test_mathx.py is written, which is all the subtask asks"
    assert len(done_steps) == 6


def test_a_small_model_s_tools_name_no_argument_they_do_not_show() -> None:
    """The small profile shows only the arguments a call needs; read_file's description
    still spoke of max_bytes and replace_in_file's of count, which it was not shown. Each
    description is short too: the schemas are most of the first round's prompt."""
    full = {tool.name: tool for tool in run_tools(SMALL_MODEL_TOOLS, ())}
    for tool in run_tools(SMALL_MODEL_TOOLS, (), essential=True):
        shown = set(tool.spec.parameters["properties"])
        hidden = set(full[tool.name].spec.parameters["properties"]) - shown
        words = set(re.findall(r"\w+", tool.spec.description))
        assert not hidden & words, (tool.name, hidden & words)
        assert len(tool.spec.description) <= 100, tool.name
