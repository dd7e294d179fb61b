"""The real replies of tests/corpus/real/real_replies.json through the real loop, case by
case: the fake server sends the case's reply text verbatim, the real model client reads
it, the agent reads its calls (native and written as text), the registry runs them on
tools named after the case's `known` names, and the journal records what ran.

Each case gets a workspace and a journal of its own, the tools its reply was written for
(the built-in ones it names, and for every other name a tool that records the arguments
it gets, built as an MCP server's tool is: from a JSON schema), a goal already planned,
and the agent is stepped through one model round and the calls that round gave, nothing
more. One fake server serves every case: the goal names the case, one rule answers it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support import messages_text

from localagent.config.settings import Settings
from localagent.journal import Journal
from localagent.loop.agent import MAX_CALLS_PER_REPLY, Agent
from localagent.mcp import schema
from localagent.models import Model, make_model
from localagent.models.config import ModelConfig
from localagent.models.fake import FakeServer
from localagent.prompts.promptset import PromptSet
from localagent.state import DueCall, DueRound, next_due
from localagent.system.stopping import StopSignal
from localagent.textcalls import parse_reply
from localagent.tools import ToolContext, ToolResult
from localagent.tools.catalog import catalog
from localagent.tools.examples import Example, example_call
from localagent.tools.registry import schema_tool
from localagent.tools.tool import Policy, Tool

CORPUS = Path(__file__).parent / "corpus" / "real" / "real_replies.json"
CASES: list[dict[str, Any]] = json.loads(CORPUS.read_text(encoding="utf-8"))["cases"]
BUILT_IN = {tool.name for tool in catalog()}
# How a case is run: every case through Ollama's API to a model with native tool calling
# (the reply text is read for calls all the same); a handful also through the
# OpenAI-compatible API, and through Ollama's to a model without it (the text protocol).
CLIENTS = {
    "ollama": ("ollama", "gpt-oss:20b"),
    "openai": ("openai", "gpt-oss:20b"),
    "text": ("ollama", "no-tools:20b"),
}
SERVED = [
    {"name": "gpt-oss:20b", "capabilities": ["completion", "tools", "thinking"]},
    {"name": "no-tools:20b", "capabilities": ["completion"]},
]
HANDFUL = {  # shapes run through every client
    "qwen3coder-parallel",
    "mistral-small-truncated-arguments",
    "harmony-second-call-after-stop",
    "lfm25-more-types",
    "granite3-dense-bash-block",
}
PLAN = [{"description": "Answer the request", "subtasks": ["Use the tools offered"]}]
SHM = "/dev/shm"  # a tmpfs on Linux
# A rule's reply substitutes `$1` and `${name}`: no reply text may hold one.
_GROUP_REF = re.compile(r"\$(?:\{\w+\}|\d)")


def _marker(index: int) -> str:
    return f"[real reply {index}]"


def _scenario() -> dict[str, Any]:
    for case in CASES:
        assert not _GROUP_REF.search(case["content"]), case["name"]
    rules = [
        {"kind": "chat", "match": re.escape(_marker(i)), "reply": {"content": case["content"]}}
        for i, case in enumerate(CASES)
    ]
    return {"models": SERVED, "rules": rules}


@pytest.fixture(scope="module")
def server() -> Iterator[FakeServer]:
    with FakeServer(_scenario()) as fake:
        yield fake


@pytest.fixture(scope="module")
def models(server: FakeServer) -> dict[str, Model]:
    """One model client of each kind for every case, as a run keeps one for its rounds."""
    made = {}
    for client in CLIENTS:
        model = make_model(ModelConfig.of(_settings(server, client, ())), StopSignal())
        model.preflight()
        made[client] = model
    assert made["ollama"].native_tools and not made["text"].native_tools
    return made


def _settings(server: FakeServer, client: str, tools: tuple[str, ...]) -> Settings:
    backend, model = CLIENTS[client]
    return Settings(
        backend=backend,  # type: ignore[arg-type]
        ollama_host=server.url,
        base_url=server.url + "/v1",
        model=model,
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
    example: Example | None = None  # the call the format feedback shows for this reply

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [record for record in self.records if record["type"] == kind]

    @property
    def started(self) -> list[tuple[str, dict[str, Any]]]:
        return [(record["tool"], record["args"]) for record in self.of("action_started")]


class CaseLoop:
    """The loop of one case in a workspace of its own, with the case's tools."""

    def __init__(
        self, index: int, client: str, server: FakeServer, model: Model, root: Path
    ) -> None:
        known = CASES[index]["known"]
        self.index, self.server, self.model = index, server, model
        self.ran: list[tuple[str, dict[str, Any]]] = []
        self.extra = [Recorder(name, self.ran).tool() for name in known if name not in BUILT_IN]
        self.settings = _settings(server, client, tuple(n for n in known if n in BUILT_IN))
        self.workspace = root / f"{client}-{index}"
        self.workspace.mkdir()

    def agent(self) -> Agent:
        """An agent on the workspace's journal: a new goal, or the one under way."""
        journal = Journal(self.workspace)
        journal.load()
        if journal.state.goal is None:
            goal = f"{_marker(self.index)} Answer with the tools offered."
            journal.append("goal_started", goal=goal, model=self.settings.model, settings={})
            journal.append("plan", tasks=PLAN)  # as planned: no model call needed for it
        ctx = ToolContext(root=self.workspace, outputs=journal.output_store(1 << 20))
        return Agent(journal, self.model, self.settings, ctx, StopSignal(), extra_tools=self.extra)

    def steps(self, agent: Agent, calls: int = MAX_CALLS_PER_REPLY) -> None:
        """Ask the model when no call is due, then run the reply's calls (at most `calls`
        of them)."""
        if isinstance(next_due(agent.state), DueRound):
            agent.step()
        for _ in range(calls):
            if not isinstance(next_due(agent.state), DueCall):
                break
            agent.step()

    def result(self, agent: Agent, next_request: str = "") -> CaseRun:
        records = list(agent.journal.records())
        subtask = PLAN[0]["subtasks"][0]
        example = example_call(agent.tools, subtask, CASES[self.index]["content"])
        return CaseRun(records, self.ran, agent.tools.names(), next_request, example)


_RUNS: dict[tuple[str, int], CaseRun] = {}


def run_case(index: int, client: str, server: FakeServer, model: Model, root: Path) -> CaseRun:
    """Step the loop through the case's round (one model call and the calls it gave, and
    after a reply that runs nothing the next model call); kept for the share test."""
    if (client, index) in _RUNS:
        return _RUNS[client, index]
    loop = CaseLoop(index, client, server, model, root)
    agent = loop.agent()
    next_request = ""
    try:
        loop.steps(agent)
        assert isinstance(next_due(agent.state), DueRound), "every call of the reply is settled"
        if not any(record["type"] == "action_started" for record in agent.journal.records()):
            agent.step()  # the next round: what the model is sent after a reply that ran nothing
            next_request = messages_text(server.chat_requests[-1])
    finally:
        agent.journal.close()
    _RUNS[client, index] = run = loop.result(agent, next_request)
    return run


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Where the cases' workspaces go: in memory where there is a tmpfs, since the journal
    syncs every record to disk and this is not a test of the disk (about 1,500 syncs)."""
    if not Path(SHM).is_dir() or not os.access(SHM, os.W_OK):
        yield tmp_path_factory.mktemp("real-replies")
        return
    folder = Path(tempfile.mkdtemp(prefix="real-replies-", dir=SHM))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


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
        # The llm_call record says how the calls were written.
        assert rounds[0]["recogniser"] == parse_reply(case["content"], set(run.tools)).recogniser
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
        assert run.example is not None
        expected = prompts.render(
            "format_error",
            problem=run.example.fill(problem),
            tools=", ".join(run.tools),
            example=run.example.text,
        )
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


@pytest.mark.parametrize("client", ["openai", "text"])
@pytest.mark.parametrize(
    "index", [_param(i) for i, case in enumerate(CASES) if case["name"] in HANDFUL]
)
def test_a_real_reply_through_the_other_clients(
    index: int, client: str, server: FakeServer, models: dict[str, Model], root: Path
) -> None:
    check_case(CASES[index], run_case(index, client, server, models[client], root))


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


@pytest.mark.parametrize(
    "index", [_param(i) for i, case in enumerate(CASES) if len(case["calls"]) > 1]
)
def test_a_run_ended_between_the_calls_of_a_reply_resumes_with_the_rest(
    index: int, server: FakeServer, models: dict[str, Model], root: Path
) -> None:
    """The calls read from a reply are journaled with it: a run that ends after the first
    (a crash, a stop) runs exactly the others when resumed, from the journal alone."""
    folder = root / "resumed"
    folder.mkdir(exist_ok=True)
    loop = CaseLoop(index, "ollama", server, models["ollama"], folder)
    first = loop.agent()
    loop.steps(first, calls=1)
    first.journal.close()
    asked = len(server.chat_requests)
    second = loop.agent()
    try:
        loop.steps(second)
        assert isinstance(next_due(second.state), DueRound)
    finally:
        second.journal.close()
    assert len(server.chat_requests) == asked, "the model was not asked again"
    check_case(CASES[index], loop.result(second))


def test_a_known_miss_runs_nothing_through_the_loop_and_is_told_the_format(
    server: FakeServer, models: dict[str, Model], root: Path
) -> None:
    misses = [i for i, case in enumerate(CASES) if case.get("known_miss")]
    assert misses
    for index in misses:
        run = run_case(index, "ollama", server, models["ollama"], root)
        assert run.started == [] and run.ran == []
        feedback = run.of("feedback")[0]["text"]
        assert "That format is exactly" in feedback and feedback in run.next_request
