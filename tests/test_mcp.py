"""MCP tools: a small MCP server written with the SDK (tests/mcp_server.py), spoken to over
stdio by the real client, end to end through the CLI against the fake model server.

Server processes are few and timeouts short: one run covers listing, calls, a nested
argument validated, a tool error, a crash and restart and a timeout; one killed run and
its resume cover an interrupted call; one doctor run covers a good and a broken server.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
from support import (
    call,
    cli_env,
    done,
    messages_text,
    plan_rule,
    records,
    run_cli,
    start_cli,
    wait_for,
)

from localagent.config.runconfig import RUN_SETTINGS
from localagent.config.userconfig import config_path, load_settings
from localagent.mcp import schema
from localagent.mcp.config import McpServer
from localagent.mcp.results import observation
from localagent.mcp.servers import Server, make_tools, open_servers
from localagent.models.calls import function_tools
from localagent.models.fake import FakeServer
from localagent.system.errors import UsageError

SERVER = Path(__file__).with_name("mcp_server.py")
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="uses POSIX signals")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def write_config(text: str) -> None:
    config_path().parent.mkdir(parents=True, exist_ok=True)
    config_path().write_text(text, encoding="utf-8")


def server_section(name: str = "t", **extra: Any) -> str:
    lines = [f"[mcp.servers.{name}]", f"command = {json.dumps(sys.executable)}"]
    lines.append(f"args = {json.dumps([str(SERVER)])}")
    lines += [f"{key} = {json.dumps(value)}" for key, value in extra.items()]
    return "\n".join(lines) + "\n"


def running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


# ---- schemas, results, settings: no server needed -----------------------------------

PYDANTIC_SCHEMA = {
    "$defs": {
        "Owner": {
            "properties": {
                "name": {"type": "string"},
                "email": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
            },
            "required": ["name"],
            "type": "object",
        },
        "Note": {
            "properties": {
                "title": {"type": "string"},
                "tags": {"items": {"type": "string"}, "type": "array"},
                "owner": {"anyOf": [{"$ref": "#/$defs/Owner"}, {"type": "null"}]},
            },
            "required": ["title"],
            "type": "object",
        },
    },
    "properties": {
        "note": {"$ref": "#/$defs/Note", "description": "The note."},
        "repeat": {"default": 1, "type": "integer"},
        "mode": {"enum": ["a", "b"], "type": "string"},
        "labels": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["note"],
    "type": "object",
}


def test_a_pydantic_schema_is_sent_flat_with_its_shape_described() -> None:
    spec, signature = schema.for_model("t__add", "Add a note.", PYDANTIC_SCHEMA)
    sent = json.dumps(function_tools([spec]))
    for dropped in ("$ref", "$defs", "anyOf", '"default"', '"properties": {"title"'):
        assert dropped not in sent, dropped
    params = spec.flat  # as the backends send it
    assert params["required"] == ["note"]
    note = params["properties"]["note"]
    assert note["type"] == "object"
    assert "The note." in note["description"]
    assert (
        "{title: string, tags?: [string], owner?: {name: string, email?: string}}"
        in (note["description"])
    )
    assert params["properties"]["repeat"] == {"type": "integer", "description": "Default: 1."}
    assert params["properties"]["mode"]["enum"] == ["a", "b"]
    assert params["properties"]["labels"]["items"] == {"type": "string"}
    assert signature.startswith("t__add(note: {title: string")
    # Our own type keeps the whole schema, its references resolved; only the wire is flat.
    kept = spec.parameters["properties"]["note"]
    assert kept["properties"]["owner"]["anyOf"][0]["required"] == ["name"]
    assert "$ref" not in json.dumps(spec.parameters)


def test_arguments_are_checked_against_the_original_schema() -> None:
    bad = {"note": {"tags": "x", "owner": {"email": 3}}}
    found = " ".join(schema.problems(PYDANTIC_SCHEMA, bad))
    assert "'title' is a required property" in found
    assert "note.tags: 'x' is not of type 'array'" in found
    assert "note.owner: 'name' is a required property" in found
    assert schema.problems(PYDANTIC_SCHEMA, {"note": {"title": "a"}}) == []
    # An object sent as JSON text is decoded before it is checked.
    fixed = schema.coerce(PYDANTIC_SCHEMA, {"note": '{"title": "a"}', "mode": "{}"})
    assert fixed == {"note": {"title": "a"}, "mode": "{}"}


def test_a_recursive_schema_is_cut_not_followed_forever() -> None:
    tree = {
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
            }
        },
        "properties": {"root": {"$ref": "#/$defs/Node"}},
        "type": "object",
    }
    spec, _ = schema.for_model("t__tree", "", tree)
    assert "..." in spec.flat["properties"]["root"]["description"]


def chained(levels: int, width: int) -> dict[str, Any]:
    """A schema whose every definition names the next one `width` times: small as sent,
    `width ** levels` places once its references are expanded."""
    defs: dict[str, Any] = {
        f"D{i}": {
            "type": "object",
            "properties": {f"p{j}": {"$ref": f"#/$defs/D{i + 1}"} for j in range(width)},
        }
        for i in range(levels)
    }
    defs[f"D{levels}"] = {"type": "string"}
    return {"type": "object", "$defs": defs, "properties": {"x": {"$ref": "#/$defs/D0"}}}


def nested(levels: int) -> dict[str, Any]:
    inner: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        inner = {"type": "object", "properties": {"a": inner}}
    return {"type": "object", "properties": {"a": inner}}


def test_a_schema_past_the_bound_is_refused_for_its_tool_and_the_others_load(
    tmp_path: Path,
) -> None:
    listing = [
        {"name": "bomb", "inputSchema": chained(levels=7, width=6)},  # 6**7: 280,000 places
        {"name": "deep", "inputSchema": nested(2000)},
        {"name": "shared", "inputSchema": chained(levels=3, width=3)},  # shared, and small
        {"name": "echo", "inputSchema": {"type": "object", "properties": {"t": {}}}},
    ]
    server = Server("s", McpServer(command="x"), tmp_path, None)  # type: ignore[arg-type]
    started = time.perf_counter()
    tools, _, refused = make_tools(server, listing)
    assert time.perf_counter() - started < 2
    assert [tool.name for tool in tools] == ["s__echo", "s__shared"]
    assert "expand past 20,000 values" in refused["s__bomb"]
    assert "nested deeper than 64 levels" in refused["s__deep"]
    shared = next(tool for tool in tools if tool.name == "s__shared")
    assert "{p0?: {p0?: {p0?: string" in json.dumps(shared.spec.flat)


def test_a_server_whose_schema_explodes_starts_with_that_tool_refused(tmp_path: Path) -> None:
    """At every start: refused, said to the user and the model, the others kept."""
    config = McpServer(command=sys.executable, args=(str(SERVER),), tools=("echo", "shared_tree"))
    with open_servers({"t": config}, tmp_path) as servers:
        assert [tool.name for tool in servers.tools] == ["t__echo"]
        (note,) = servers.problems
        assert "the MCP tool t__shared_tree is not available" in note
        assert "its references expand past 20,000 values" in note
        assert "expand past" in servers.records[0]["refused"]["t__shared_tree"]


def test_results_become_observations() -> None:
    image = {"type": "image", "data": "A" * 4096, "mimeType": "image/png"}
    ok, text = observation({"content": [{"type": "text", "text": "one"}, image]})
    assert ok and text == "one\n[image image/png, 3.0 KB; not shown]"
    ok, text = observation({"content": [], "structuredContent": {"b": 1}})
    assert ok and json.loads(text) == {"b": 1}
    same = {"content": [{"type": "text", "text": '{"b": 1}'}], "structuredContent": {"b": 1}}
    assert observation(same) == (True, '{"b": 1}')
    assert observation({"content": [{"type": "text", "text": "no"}], "isError": True}) == (
        False,
        "no",
    )
    assert observation({"content": []}) == (True, "(no output)")


def test_servers_load_from_the_config_file() -> None:
    write_config(
        server_section("t", tools=["echo"], timeout_sec=5, trusted=True)
        + '[mcp.servers.web]\nurl = "https://example.com/mcp"\n'
        + 'headers = {Authorization = "Bearer ${TOKEN}"}\n'
    )
    servers = load_settings().mcp.servers
    assert servers["t"].tools == ("echo",) and servers["t"].trusted
    assert servers["web"].headers == {"Authorization": "Bearer ${TOKEN}"}
    assert "mcp" in RUN_SETTINGS


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[mcp.servers.a]\n", "either command"),
        ('[mcp.servers.a]\ncommand = "x"\nurl = "http://h/mcp"\n', "either command"),
        ('[mcp.servers.a]\nurl = "http://h"\nheaders = {Authorization = "Bearer abc"}\n', "${"),
        ('[mcp.servers.a]\nurl = "ftp://h"\n', "http"),
        ('[mcp.servers.a__b]\ncommand = "x"\n', "NAME__tool"),
        ('[mcp.servers.a]\ncommand = "x"\ntimeout_sec = 0\n', "timeout_sec"),
        ('[mcp.servers.a]\ncommand = "x"\nheaders = {A = "${B}"}\n', "headers"),
    ],
)
def test_bad_servers_are_a_clear_usage_error(text: str, problem: str) -> None:
    write_config(text)
    with pytest.raises(UsageError) as caught:
        load_settings()
    assert "mcp" in caught.value.message and problem in caught.value.message


def test_policies_never_redo_a_call_unless_trusted_and_read_only(tmp_path: Path) -> None:
    listing = [
        {"name": "read", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}},
        {"name": "write.file", "inputSchema": {"type": "object"}},
    ]
    for trusted, expected in ((False, "never"), (True, "redo")):
        config = McpServer(command="x", trusted=trusted, tools=("read", "write.file", "nope"))
        tools, missing, _ = make_tools(Server("s", config, tmp_path, None), listing)  # type: ignore[arg-type]
        policies = {tool.name: tool.policy.resume for tool in tools}
        assert policies == {"s__read": expected, "s__write_file": "never"}
        assert missing == ["nope"]


def test_without_the_sdk_a_server_is_a_note_naming_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)  # as if the extra were not installed
    with open_servers({"t": McpServer(command="x")}, tmp_path) as servers:
        assert servers.tools == []
        assert "pip install 'localagent-coder[mcp]'" in servers.records[0]["error"]
        assert "pip install 'localagent-coder[mcp]'" in servers.problems[0]


# ---- end to end through the CLI ---------------------------------------------------------

SCRIPT = [
    call("t__echo", text="hi"),
    call("t__echo", text="x" * 9000),
    call("t__add_note", note={"title": 5, "priority": "high"}),
    call(
        "t__add_note", note={"title": "milk", "tags": ["home"], "owner": {"name": "Ann"}}, repeat=2
    ),
    call("t__fail", message="boom"),
    call("t__picture"),
    call("t__crash"),
    call("t__echo", text="back"),
    call("t__sleep", seconds=30),
    call("t__echo", text="again"),
    done("used the server"),
]


@posix_only
def test_a_run_lists_and_calls_the_tools_of_a_server(ws: Path) -> None:
    write_config(server_section("t", timeout_sec=2))
    scenario = {"rules": [plan_rule(("Use the server", ["Call the MCP tools"]))], "replies": SCRIPT}
    with FakeServer(scenario) as server:
        result = run_cli(
            cli_env(server.url), "start", "Use the server", "-w", str(ws), "--foreground"
        )
        first = next(r for r in server.chat_requests if not r.get("format"))
    assert result.returncode == 0, result.stderr
    tools = {t["function"]["name"]: t["function"] for t in first["tools"]}
    names = [n for n in tools if n.startswith("t__")]
    assert names == sorted(names) and "t__slow_write" in names
    note = tools["t__add_note"]["parameters"]["properties"]["note"]
    assert note["type"] == "object" and "{title: string" in note["description"]
    assert "anyOf" not in json.dumps(tools["t__add_note"])
    recs = records(ws)
    started = next(r for r in recs if r["type"] == "mcp_servers")["servers"][0]
    assert started["name"] == "t" and "t__echo" in started["tools"]
    assert not running(started["pid"])
    finished = [r for r in recs if r["type"] == "action_finished"]
    assert [r["ok"] for r in finished] == [
        True,
        True,
        False,
        True,
        False,
        True,
        False,
        True,
        False,
        False,
    ]
    echo, long, invalid, note_added, failed, picture, crash, back, slept, again = (
        r["result"] for r in finished
    )
    assert echo == "echo: hi"
    assert "output" in finished[1] and len(long) < 7000  # stored whole, shown cut
    assert (ws / ".agent_context" / "outputs").is_dir()
    assert "invalid arguments for t__add_note" in invalid and "note.title: 5 is not" in invalid
    assert "note.priority: 'high' is not of type 'integer'" in invalid
    assert '"count": 2' in note_added
    assert (ws / "notes.txt").read_text(encoding="utf-8") == "milk home None\n" * 2
    assert "t__fail failed" in failed and "boom" in failed
    assert "[image image/png, 2.0 KB; not shown]" in picture and "AAAA" not in picture
    assert "stopped during the call" in crash and "restarted at its next call" in crash
    assert back == "echo: back"
    assert "timed out after 2s" in slept and "already restarted once" in slept
    assert "not running" in again and "already restarted once" in again
    log = (ws / ".agent_context" / "agent.log").read_text(encoding="utf-8")
    assert "restarting MCP server t" in log and "timed out after 2s" in log


SLOW_SCENARIO = {
    "rules": [
        plan_rule(("Write through the server", ["Write a through the server"])),
        {"match": "was interrupted", "reply": done("the call was interrupted")},
        {"match": "ACTIVE SUBTASK", "in": "last", "reply": call("t__slow_write", text="a")},
    ]
}


@posix_only
def test_an_interrupted_call_is_not_run_again_on_resume(ws: Path) -> None:
    write_config(server_section("t", timeout_sec=120))
    runs = ws / "runs.txt"
    with FakeServer(SLOW_SCENARIO) as server:
        env = cli_env(server.url)
        proc = start_cli(env, "start", "Write through the server", "-w", str(ws), "--foreground")
        try:
            wait_for(lambda: runs.exists() and "action_started" in [r["type"] for r in records(ws)])
        finally:
            proc.kill()
            proc.communicate(timeout=30)
            if runs.exists():  # the server runs in a session of its own and outlives us
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(runs.read_text().split()[0]), signal.SIGKILL)
        asked = len(server.chat_requests)
        result = run_cli(env, "resume", "-w", str(ws), "--foreground")
        after = server.chat_requests[asked:]
    assert result.returncode == 0, result.stderr
    assert len(runs.read_text().splitlines()) == 1, "the call ran again"
    recs = records(ws)
    interrupted = [r for r in recs if r["type"] == "action_interrupted"]
    assert len(interrupted) == 1 and interrupted[0]["tool"] == "t__slow_write"
    assert "t__slow_write(text='a')" in interrupted[0]["text"]
    assert "effect is unknown" in messages_text(next(r for r in after if not r.get("format")))
    assert [r["type"] for r in recs].count("mcp_servers") == 2
    assert recs[-1]["type"] == "goal_completed"


def test_doctor_starts_each_server_and_says_what_fails(ws: Path) -> None:
    broken = [sys.executable, "-c", "import sys; sys.stderr.write('no settings'); sys.exit(3)"]
    write_config(
        server_section("good", tools=["echo", "nope"])
        + f"[mcp.servers.broken]\ncommand = {json.dumps(broken[0])}\n"
        + f"args = {json.dumps(broken[1:])}\n"
        + '[mcp.servers.gone]\ncommand = "no-such-mcp-server-4711"\n'
    )
    with FakeServer({}) as server:
        result = run_cli(cli_env(server.url), "doctor", "-w", str(ws))
    out = result.stdout
    assert result.returncode == 1, out
    assert "[warn] mcp good" in out and "1 tools: good__echo; it offers no nope" in out
    assert "[fail] mcp broken" in out and "no settings" in out and "by hand" in out
    assert "[fail] mcp gone" in out and "'no-such-mcp-server-4711' was not found" in out
    assert "install 'no-such-mcp-server-4711'" in out


def test_doctor_without_the_sdk_names_the_extra(ws: Path) -> None:
    write_config(server_section("t"))
    code = "import sys; sys.modules['mcp'] = None; from localagent.cli import main; main()"
    with FakeServer({}) as server:
        result = subprocess.run(
            [sys.executable, "-c", code, "doctor", "-w", str(ws)],
            env=cli_env(server.url),
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert "Traceback" not in result.stderr, result.stderr
    assert (
        "[fail] mcp t" in result.stdout and "pip install 'localagent-coder[mcp]'" in result.stdout
    )
