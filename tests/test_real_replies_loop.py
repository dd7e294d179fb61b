"""The real replies of tests/corpus/real/real_replies.json through the real loop, case by
case: the fake server sends the case's reply text verbatim, the real model client reads
it, the agent reads its calls (native and written as text), the registry runs them on
tools named after the case's `known` names, and the journal records what ran.

Each case gets a workspace and a journal of its own, the tools its reply was written for
(the built-in ones it names, and for every other name a tool that records the arguments
it gets, built as an MCP server's tool is: from a JSON schema), and the agent is stepped
through its plan, one model round and the calls that round gave, nothing more. One fake
server serves every case: the goal names the case, and one rule per case answers it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support import messages_text, plan_rule

from localagent.agent import Agent
from localagent.journal import Journal
from localagent.mcp import schema
from localagent.models import Model, make_model
from localagent.models.fake import FakeServer
from localagent.promptset import PromptSet
from localagent.settings import Settings
from localagent.state import next_due
from localagent.stopping import StopSignal
from localagent.textcalls import parse_reply
from localagent.tools import ToolContext, ToolResult
from localagent.tools.catalog import catalog
from localagent.tools.registry import Policy, Tool, schema_tool

CORPUS = Path(__file__).parent / "corpus" / "real" / "real_replies.json"
CASES: list[dict[str, Any]] = json.loads(CORPUS.read_text(encoding="utf-8"))["cases"]
MODEL = "gpt-oss:20b"
BUILT_IN = {tool.name for tool in catalog()}
OPENAI_CASES = {  # a handful of shapes, also through the OpenAI-compatible client
    "qwen3coder-parallel",
    "mistral-small-truncated-arguments",
    "harmony-second-call-after-stop",
    "lfm25-more-types",
    "granite3-dense-bash-block",
}
# A rule's reply substitutes `$1` and `${name}`: no reply text may hold one.
_GROUP_REF = re.compile(r"\$(?:\{\w+\}|\d)")


def _marker(index: int) -> str:
    return f"[real reply {index}]"


def _scenario() -> dict[str, Any]:
    rules = [plan_rule(("Answer the request", ["Use the tools offered"]))]
    for index, case in enumerate(CASES):
        assert not _GROUP_REF.search(case["content"]), case["name"]
        rules.append(
            {
                "kind": "chat",
                "match": re.escape(_marker(index)),
                "reply": {"content": case["content"]},
            }
        )
    return {"rules": rules}


@pytest.fixture(scope="module")
def server() -> Iterator[FakeServer]:
    with FakeServer(_scenario()) as fake:
        yield fake


@pytest.fixture(scope="module")
def models(server: FakeServer) -> dict[str, Model]:
    """One model client per backend for every case, as a run keeps one for its rounds."""
    made = {}
    for backend in ("ollama", "openai"):
        model = make_model(_settings(server, backend, ()), StopSignal())
        model.preflight()
        made[backend] = model
    return made


def _settings(server: FakeServer, backend: str, tools: tuple[str, ...]) -> Settings:
    return Settings(
        backend=backend,  # type: ignore[arg-type]
        ollama_host=server.url,
        base_url=server.url + "/v1",
        model=MODEL,
        tools=tools,
        verify=False,
        retry_deadline=5.0,
    )


class Recorder:
    """A tool from a JSON schema that takes any object and records what it got."""

    def __init__(self, name: str, calls: list[tuple[str, dict[str, Any]]]) -> None:
        self.name, self.calls = name, calls

    def __call__(self, ctx: ToolContext, /, **args: Any) -> ToolResult:
        self.calls.append((self.name, args))
        return ToolResult(True, f"{self.name} ran")

    def tool(self) -> Tool:
        spec, signature = schema.for_model(self.name, "", {"type": "object"})
        return schema_tool(self.name, self, spec, signature, Policy(resume="never", changes=True))


@dataclass
class CaseRun:
    records: list[dict[str, Any]]
    ran: list[tuple[str, dict[str, Any]]]  # what the case's recording tools got, in order
    tools: list[str]  # the run's tool names, as the agent offered them
    next_request: str = ""  # after a reply that runs nothing: the next round's messages

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [record for record in self.records if record["type"] == kind]

    @property
    def started(self) -> list[tuple[str, dict[str, Any]]]:
        return [(record["tool"], record["args"]) for record in self.of("action_started")]


_RUNS: dict[tuple[str, int], CaseRun] = {}


def run_case(index: int, backend: str, server: FakeServer, model: Model, root: Path) -> CaseRun:
    """Step the loop through the case's round (plan, one model call, the calls it gave,
    and after a reply that runs nothing one more model call); kept for the share test."""
    if (backend, index) in _RUNS:
        return _RUNS[backend, index]
    case = CASES[index]
    ran: list[tuple[str, dict[str, Any]]] = []
    extra = [Recorder(name, ran).tool() for name in case["known"] if name not in BUILT_IN]
    settings = _settings(server, backend, tuple(n for n in case["known"] if n in BUILT_IN))
    workspace = root / f"{backend}-{index}"
    workspace.mkdir()
    journal = Journal(workspace)
    journal.load()
    goal = f"{_marker(index)} Answer with the tools offered."
    journal.append("goal_started", goal=goal, model=MODEL, settings={})
    ctx = ToolContext(root=workspace, outputs=journal.output_store(1 << 20))
    agent = Agent(journal, model, settings, ctx, StopSignal(), extra_tools=extra)
    next_request = ""
    try:
        assert next_due(agent.state)[0] == "plan"
        agent.step()
        assert next_due(agent.state)[0] == "round"
        agent.step()
        while next_due(agent.state)[0] == "call":
            agent.step()
        if not any(record["type"] == "action_started" for record in journal.records()):
            agent.step()  # the next round: what the model is sent after a reply that ran nothing
            next_request = messages_text(server.chat_requests[-1])
    finally:
        journal.close()
    _RUNS[backend, index] = run = CaseRun(
        list(journal.records()), ran, agent.tools.names(), next_request
    )
    return run


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("real-replies")


def _intended(case: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(call["name"], call["arguments"]) for call in case["calls"]]


def _received(case: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """What the recording tools must get: the intended calls of the tools that are not
    built in, each without the arguments given as null (the registry leaves those out)."""
    return [
        (name, {key: value for key, value in args.items() if value is not None})
        for name, args in _intended(case)
        if name not in BUILT_IN
    ]


def exactly_intended(case: dict[str, Any], run: CaseRun) -> bool:
    return run.started == _intended(case) and run.ran == _received(case)


def check_case(case: dict[str, Any], run: CaseRun) -> None:
    rounds = [r for r in run.of("llm_call") if r["purpose"] == "round"]
    assert run.started == _intended(case), "exactly the intended calls ran, in order"
    assert run.ran == _received(case), "each tool got the intended arguments"
    finished = run.of("action_finished")
    assert [(r["tool"], r["ok"]) for r in finished] == [(n, True) for n, _ in _intended(case)]
    if case["calls"]:
        assert rounds[0]["recogniser"], "the llm_call record says how the calls were written"
        assert [c["name"] for c in rounds[0]["tool_calls"]] == [n for n, _ in _intended(case)]
        assert not run.of("feedback")
        return
    # Nothing ran: the model is told, and the next request carries it.
    assert [c for r in rounds for c in r["tool_calls"]] == []
    feedback = run.of("feedback")[0]
    assert feedback["format_error"] is True
    problem = parse_reply(case["content"], set(run.tools)).problem
    prompts = PromptSet({})
    if problem:
        expected = prompts.render("format_error", problem=problem, tools=", ".join(run.tools))
    else:
        expected = prompts.render("no_tool_call")
    assert feedback["text"] == expected
    assert expected in run.next_request


def _param(index: int) -> Any:
    case = CASES[index]
    miss = case.get("known_miss")
    marks = [pytest.mark.xfail(reason=miss, strict=True)] if miss else []
    return pytest.param(index, id=case["name"], marks=marks)


@pytest.mark.parametrize("index", [_param(index) for index in range(len(CASES))])
def test_a_real_reply_runs_exactly_its_calls_through_the_loop(
    index: int, server: FakeServer, models: dict[str, Model], root: Path
) -> None:
    check_case(CASES[index], run_case(index, "ollama", server, models["ollama"], root))


@pytest.mark.parametrize(
    "index", [_param(i) for i, case in enumerate(CASES) if case["name"] in OPENAI_CASES]
)
def test_a_real_reply_through_the_openai_compatible_client(
    index: int, server: FakeServer, models: dict[str, Model], root: Path
) -> None:
    check_case(CASES[index], run_case(index, "openai", server, models["openai"], root))


def test_the_share_run_exactly_through_the_loop_and_no_unintended_call(
    server: FakeServer, models: dict[str, Model], root: Path
) -> None:
    runs = [run_case(i, "ollama", server, models["ollama"], root) for i in range(len(CASES))]
    right = sum(exactly_intended(case, run) for case, run in zip(CASES, runs, strict=True))
    unintended = [
        (case["name"], call)
        for case, run in zip(CASES, runs, strict=True)
        for call in run.started
        if call not in _intended(case)
    ]
    share = 100 * right / len(CASES)
    print(f"\nreal replies through the loop: {right}/{len(CASES)} = {share:.1f}% ran exactly")
    print(f"calls run that were not intended: {len(unintended)}")
    assert right / len(CASES) >= 0.95
    assert unintended == []
