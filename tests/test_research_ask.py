"""`localagent ask` end to end through the fake server: plan, steps with read-only tools,
refinery, synthesis, a bad citation corrected in one turn and one left marked
unverified; then an ask cut off by the server and resumed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from research_support import make_package
from support import call, cli_env, messages_text, read_history, run_cli, wait_for

from localagent.models.fake import FakeServer

QUESTION = "How does a session add basic auth to a request?"
STEP_1 = [
    call("search_code", query="basic auth header"),
    call("read_file", path="shop/auth.py", start_line=6, end_line=9),
    call("finish_step", findings="basic_auth_header builds it at shop/auth.py:6-9"),
]
STEP_2 = [
    call("get_callers", symbol="basic_auth_header"),
    call("finish_step", findings="Session.request calls it at shop/sessions.py:15"),
]
ANSWER = (
    "The header is built by `basic_auth_header` (shop/auth.py:6-9), called from "
    "shop/sessions.py:15; see also shop/cart.py:10 and shop/auth.py:40."
)
FIXED = "Built in shop/auth.py:6-9, called from shop/sessions.py:15 (and shop/auth.py:40)."


def structured(match: str, content: dict[str, Any]) -> dict[str, Any]:
    return {
        "kind": "plan",
        "in": "system",
        "match": match,
        "reply": {"content": json.dumps(content)},
    }


def scenario(
    replies: list[dict[str, Any]], plan: bool = True, more: list[str] | None = None
) -> dict[str, Any]:
    rules = [
        structured("You decide whether", {"decision": "FINISH"}),
        {"kind": "chat", "in": "last", "match": "Fix your citations", "reply": {"content": FIXED}},
        {
            "kind": "chat",
            "in": "system",
            "match": "You answer a question",
            "reply": {"content": ANSWER},
        },
    ]
    if more:  # the refinery asks for more, once
        again = structured("You decide whether", {"decision": "CONTINUE", "sub_questions": more})
        rules.insert(0, again | {"times": 1})
    if plan:
        questions = ["Where is the basic auth header built?", "What calls it?"]
        rules.insert(0, structured("You plan research", {"sub_questions": questions}))
    return {"rules": rules, "replies": replies}


def records(root: Path) -> list[dict[str, Any]]:
    """The questions' journal: beside the goal's, never in its place."""
    return read_history(root / ".agent_context" / "ask" / "history.jsonl")


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and ".agent_context" not in p.parts
    }


def test_ask_plans_researches_and_checks_citations(tmp_path: Path) -> None:
    root = make_package(tmp_path / "ws")
    before = snapshot(root)
    with FakeServer(scenario(STEP_1 + STEP_2)) as fake:
        env = cli_env(fake.url, LOCALAGENT_HOME=str(tmp_path / "home"))
        done = run_cli(env, "ask", QUESTION, "-w", str(root), "--foreground")
        chats = fake.chat_requests
    assert done.returncode == 0, done.stderr
    assert "shop/auth.py:6-9" in done.stdout and "shop/sessions.py:15" in done.stdout
    assert "shop/auth.py:40 (unverified)" in done.stdout and "cart.py" not in done.stdout
    assert snapshot(root) == before  # research never writes to the workspace
    [saved] = (root / ".agent_context/answers").glob("*.md")
    assert saved.read_text().startswith(f"# {QUESTION}\n") and FIXED[:20] in saved.read_text()
    history = records(root)
    types = [r["type"] for r in history]
    assert history[0]["settings"]["mode"] == "ask"
    assert types.count("subtask_completed") == 2 and "refinery" in types
    assert types[-2:] == ["answer", "goal_completed"]
    finished = [r for r in history if r["type"] == "action_finished"]
    assert finished[1]["spans"] == [["shop/auth.py", 6, 9]]
    assert ["shop/sessions.py", 15, 15] in finished[2]["spans"]
    checked = next(r for r in history if r["type"] == "citations_checked")
    assert any("cart.py:10: these lines were never retrieved" in why for why in checked["bad"])
    assert any("shop/auth.py:40: shop/auth.py has 13 lines" in why for why in checked["bad"])
    answer = next(r for r in history if r["type"] == "answer")
    assert answer["unverified"] == ["shop/auth.py:40"]
    assert history[-1]["type"] == "goal_completed" and history[-1]["verification"] == "partial"
    assert "Fix your citations" in messages_text(chats[-1])
    assert "basic_auth_header builds it at shop/auth.py:6-9" in messages_text(chats[-3])


def test_an_interrupted_ask_resumes_where_it_stopped(tmp_path: Path) -> None:
    root = make_package(tmp_path / "ws")
    home = str(tmp_path / "home")
    with FakeServer(scenario(STEP_1)) as fake:  # no replies left for the second step
        env = cli_env(fake.url, LOCALAGENT_HOME=home, LOCALAGENT_RETRY_DEADLINE="0")
        cut = run_cli(env, "ask", QUESTION, "-w", str(root), "--foreground")
    assert cut.returncode == 3, cut.stderr
    assert [r["type"] for r in records(root)].count("subtask_completed") == 1
    with FakeServer(scenario(STEP_2, plan=False)) as fake:
        env = cli_env(fake.url, LOCALAGENT_HOME=home)
        done = run_cli(env, "ask", QUESTION, "-w", str(root), "--foreground")  # the same
        chats = fake.chat_requests
    assert done.returncode == 0, done.stderr
    assert "You plan research" not in messages_text(chats[0])  # the plan was kept
    assert "What calls it?" in messages_text(chats[0])  # the open sub-question, afresh
    synthesis = next(c for c in chats if "You answer a question" in messages_text(c))
    assert "basic_auth_header builds it at shop/auth.py:6-9" in messages_text(synthesis)
    history = records(root)
    assert history[-1]["type"] == "goal_completed"
    answer = next(r for r in history if r["type"] == "answer")
    assert answer["unverified"] == ["shop/auth.py:40"]  # step 1's reading still counts


def test_the_refinery_adds_a_sub_question(tmp_path: Path) -> None:
    root = make_package(tmp_path / "ws")
    step_3 = [call("finish_step", findings="send returns the response at shop/sessions.py:20")]
    more = ["What does send return?"]
    with FakeServer(scenario(STEP_1 + STEP_2 + step_3, more=more)) as fake:
        env = cli_env(fake.url, LOCALAGENT_HOME=str(tmp_path / "home"))
        done = run_cli(env, "ask", QUESTION, "-w", str(root), "--foreground")
    assert done.returncode == 0, done.stderr
    history = records(root)
    assert [r["decision"] for r in history if r["type"] == "refinery"] == ["CONTINUE", "FINISH"]
    assert [r["question"] for r in history if r["type"] == "subtask_completed"][-1] == more[0]
    checked = next(r for r in history if r["type"] == "citations_checked")
    assert not any("sessions.py:20" in why for why in checked["bad"])  # search retrieved it


def test_bad_usage_of_ask(tmp_path: Path) -> None:
    env = cli_env("127.0.0.1:9", LOCALAGENT_HOME=str(tmp_path / "home"))
    empty = run_cli(env, "ask", " ", "-w", str(tmp_path))
    assert empty.returncode == 2 and "question is empty" in empty.stderr
    missing = run_cli(env, "ask", "why?", "-w", str(tmp_path / "nowhere"), "--foreground")
    assert missing.returncode == 2 and "does not exist" in missing.stderr
    assert not (tmp_path / "nowhere").exists()


def test_ask_runs_in_the_background(tmp_path: Path) -> None:
    root = make_package(tmp_path / "ws")
    with FakeServer(scenario(STEP_1 + STEP_2)) as fake:
        env = cli_env(fake.url, LOCALAGENT_HOME=str(tmp_path / "home"))
        started = run_cli(env, "ask", QUESTION, "-w", str(root))
        assert started.returncode == 0 and "started in the background" in started.stdout
        wait_for(lambda: any(r["type"].startswith("goal_") for r in records(root)[1:]))
    assert records(root)[-2]["type"] == "answer"
    assert len(list((root / ".agent_context/answers").glob("*.md"))) == 1


def test_the_research_prompts_are_replaced_from_the_config(tmp_path: Path) -> None:
    config = tmp_path / "home" / "config" / "config.toml"  # LOCALAGENT_HOME's
    config.parent.mkdir(parents=True)
    config.write_text('[prompts]\nresearch_plan_user = "RESEARCH PLEASE: {question}"\n')
    root = make_package(tmp_path / "ws")
    with FakeServer(scenario(STEP_1 + STEP_2)) as fake:
        env = cli_env(fake.url, LOCALAGENT_HOME=str(tmp_path / "home"))
        done = run_cli(env, "ask", QUESTION, "-w", str(root), "--foreground")
        chats = fake.chat_requests
    assert done.returncode == 0, done.stderr
    assert chats[0]["messages"][1]["content"] == f"RESEARCH PLEASE: {QUESTION}"
    listed = run_cli(env, "prompts", "list").stdout
    assert "research_plan_user" in listed and "research_fix_citations" in listed
