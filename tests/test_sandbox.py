"""Commands in the OS sandbox (bubblewrap): only the workspace writable, its journal not,
a private /tmp, the network off unless allowed, and nothing that outlives the command;
where no sandbox works, the run says so once and `sandbox = "require"` refuses to run."""

from __future__ import annotations

import http.server
import json
import os
import socket
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from support import call, cli_env, done, plan_rule, records, run_cli

from localagent.config.userconfig import config_path
from localagent.models.fake import FakeServer
from localagent.system.sandbox import CommandPolicy, support
from localagent.tools import ToolContext, ToolResult, execute

works = support()
needs_sandbox = pytest.mark.skipif(
    works.program is None, reason=f"no sandbox works here: {works.reason}"
)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".agent_context").mkdir(parents=True)
    return root


def run(root: Path, cmd: str, **policy: object) -> ToolResult:
    ctx = ToolContext(root, commands=CommandPolicy(**policy))  # type: ignore[arg-type]
    return execute(ctx, "run_cmd", {"cmd": cmd, "timeout_sec": 20})


def script(root: Path, source: str) -> str:
    (root / "s.py").write_text(source, encoding="utf-8")
    return "python s.py"


@needs_sandbox
def test_a_command_writes_the_workspace_and_nothing_outside_it(ws: Path, tmp_path: Path) -> None:
    home_file = Path.home() / f".localagent-sandbox-{uuid.uuid4().hex}"
    source = f"""
import pathlib
pathlib.Path("inside.txt").write_text("ok")
for target in ({str(tmp_path / "outside.txt")!r}, {str(home_file)!r}):
    try:
        pathlib.Path(target).write_text("escaped")
    except OSError as exc:
        print("refused:", exc.strerror)
"""
    result = run(ws, script(ws, source))
    assert result.ok, result.text
    assert (ws / "inside.txt").read_text() == "ok"
    # Outside the workspace /tmp is the sandbox's own: what lands there stays there.
    assert not (tmp_path / "outside.txt").exists() and not home_file.exists()
    assert "refused: Read-only file system" in result.text, result.text


@needs_sandbox
def test_no_command_can_forge_the_journal(ws: Path) -> None:
    history = ws / ".agent_context" / "history.jsonl"
    history.write_text('{"seq": 1}\n')
    source = """
import pathlib
for name in ("history.jsonl", "forged.json"):
    try:
        with open(pathlib.Path(".agent_context", name), "a") as fh:
            fh.write("forged")
    except OSError as exc:
        print("refused:", exc.strerror)
"""
    result = run(ws, script(ws, source))
    assert result.text.count("refused: Read-only file system") == 2, result.text
    assert history.read_text() == '{"seq": 1}\n'
    assert not (ws / ".agent_context" / "forged.json").exists()


@needs_sandbox
def test_tmp_is_private_and_usable(ws: Path) -> None:
    name = f"localagent-{uuid.uuid4().hex}"
    source = f"""
import os, pathlib, tempfile
pathlib.Path("/tmp/{name}").write_text("x")
print("tempdir", tempfile.gettempdir(), os.listdir("/tmp"))
"""
    result = run(ws, script(ws, source))
    assert result.ok, result.text
    assert "tempdir /tmp" in result.text and name in result.text
    assert not Path("/tmp", name).exists()


@needs_sandbox
def test_localagent_own_folders_are_hidden(ws: Path, isolated_home: Path) -> None:
    key = isolated_home / "data" / "secret.key"
    key.parent.mkdir(parents=True)
    key.write_bytes(b"k" * 32)
    source = f"""
import pathlib
print("seen:", pathlib.Path({str(key)!r}).exists())
"""
    result = run(ws, script(ws, source))
    assert "seen: False" in result.text, result.text


@pytest.fixture
def listener() -> Iterator[tuple[int, list[str]]]:
    """A loopback HTTP server of this machine and the paths it was asked for."""
    asked: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            self.send_error(404)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], asked
    finally:
        server.shutdown()
        server.server_close()


CONNECT = """
import socket, sys
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5).close()
    print("connected")
except OSError as exc:
    print("no connection:", exc)
    sys.exit(1)
"""


@needs_sandbox
@pytest.mark.parametrize(("network", "reached"), [("off", False), ("pip", False), ("on", True)])
def test_the_network_is_off_unless_allowed(
    ws: Path, listener: tuple[int, list[str]], network: str, reached: bool
) -> None:
    port, _ = listener
    script(ws, CONNECT)
    result = run(ws, f"python s.py {port}", network=network)
    assert ("connected" in result.text.splitlines()) == reached, result.text


@needs_sandbox
def test_pip_reaches_the_network_under_network_pip(
    ws: Path, listener: tuple[int, list[str]]
) -> None:
    port, asked = listener
    # A stand-in environment: pip comes with the interpreter that runs the tests.
    (ws / ".venv" / "bin").mkdir(parents=True)
    (ws / ".venv" / "bin" / "python").symlink_to(sys.executable)
    cmd = f"pip download --no-deps --index-url http://127.0.0.1:{port}/simple nothing-here"
    offline = run(ws, cmd, network="off")
    assert not offline.ok and asked == [], offline.text
    online = run(ws, cmd, network="pip")
    assert any("nothing-here" in path for path in asked), online.text


@needs_sandbox
def test_a_failure_for_want_of_the_network_is_said(ws: Path) -> None:
    source = """
import socket
socket.getaddrinfo("pypi.org", 443)
"""
    result = run(ws, script(ws, source), network="pip")
    assert not result.ok
    assert "ran without network access (network = pip: only pip may reach it)" in result.text


# The command's helper leaves its session and drops its environment (the marker with it),
# then outlives its parent, which ends at once.
ESCAPING_HELPER = """
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        code = "import os, time; open('helper.pid', 'w').write(str(os.getpid())); time.sleep(60)"
        os.execve(sys.executable, [sys.executable, "-c", code], {})
    os._exit(0)
os.wait()
while not os.path.exists("helper.pid"):
    time.sleep(0.01)
time.sleep(float(sys.argv[1]))
"""


def helper_pid(ws: Path) -> int:
    """The helper's pid as this machine sees it (inside a PID namespace it differs)."""
    for proc in psutil.process_iter(["cmdline"]):
        with_helper = proc.info["cmdline"] or []
        if any("helper.pid" in part for part in with_helper):
            return proc.pid
    return 0


@pytest.mark.skipif(sys.platform == "win32", reason="fork and setsid are POSIX")
@pytest.mark.parametrize("lives", [0.2, 30.0], ids=["command-ends", "timeout"])
@pytest.mark.parametrize("mode", ["auto", "off"])
def test_a_helper_that_leaves_its_session_and_environment_is_killed(
    ws: Path, lives: float, mode: str
) -> None:
    if mode == "auto" and works.program is None:
        pytest.skip(f"no sandbox works here: {works.reason}")
    script(ws, ESCAPING_HELPER)
    ctx = ToolContext(ws, commands=CommandPolicy(sandbox=mode))  # type: ignore[arg-type]
    result = execute(ctx, "run_cmd", {"cmd": f"python s.py {lives}", "timeout_sec": 2})
    assert (ws / "helper.pid").exists(), result.text
    deadline = time.monotonic() + 3
    while (pid := helper_pid(ws)) and time.monotonic() < deadline:
        time.sleep(0.05)
    if pid:
        psutil.Process(pid).kill()
    assert pid == 0, f"the helper outlived the command: {result.text}"


# ---- where no sandbox works -----------------------------------------------------------


def broken_bwrap(env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """env with a PATH whose first bwrap fails as it does without user namespaces."""
    folder = tmp_path / "bin"
    folder.mkdir()
    fake = folder / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    return {**env, "PATH": os.pathsep.join([str(folder), env["PATH"]])}


def two_commands_scenario() -> dict[str, object]:
    return {
        "rules": [
            plan_rule(("Run", ["Run the script twice"])),
            {"match": "ran second", "reply": done("ran twice")},
            {"match": "ran first", "reply": call("run_cmd", cmd="python s.py second")},
            {
                "match": "ACTIVE SUBTASK",
                "in": "last",
                "reply": call("run_cmd", cmd="python s.py first"),
            },
        ]
    }


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="bwrap is for Linux")
def test_without_a_sandbox_the_run_says_so_once(ws: Path, tmp_path: Path) -> None:
    (ws / "s.py").write_text("import sys\nprint('ran', *sys.argv[1:])\n")
    with FakeServer(two_commands_scenario()) as server:
        env = broken_bwrap(cli_env(server.url), tmp_path)
        result = run_cli(env, "start", "Run", "-w", str(ws), "--foreground")
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("commands are not sandboxed") == 1, result.stderr
    assert "No permissions to create new namespace" in result.stderr
    assert sum(r["type"] == "action_finished" for r in records(ws)) == 2
    preflight = next(r for r in records(ws) if r["type"] == "preflight")
    assert preflight["sandbox"].startswith("not sandboxed")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="bwrap is for Linux")
def test_sandbox_require_refuses_to_run_without_one(ws: Path, tmp_path: Path) -> None:
    env = broken_bwrap(cli_env(closed_url(), LOCALAGENT_SANDBOX="require"), tmp_path)
    result = run_cli(env, "start", "Run", "-w", str(ws), "--foreground")
    assert result.returncode == 2, result.stderr
    assert "commands must run in a sandbox (sandbox = require)" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def closed_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


# ---- doctor and status ----------------------------------------------------------------


def test_doctor_says_whether_commands_are_sandboxed(ws: Path) -> None:
    result = run_cli(cli_env(closed_url()), "doctor", "-w", str(ws))
    line = next(x for x in result.stdout.splitlines() if " sandbox " in x)
    if works.program is not None:
        assert line.startswith("[ ok ]") and "sandboxed with bubblewrap" in line, line
    else:
        assert line.startswith("[warn]") and "not sandboxed" in line, line


@needs_sandbox
def test_status_says_how_commands_run(ws: Path) -> None:
    (ws / "s.py").write_text("import sys\nprint('ran', *sys.argv[1:])\n")
    config_path().parent.mkdir(parents=True, exist_ok=True)
    config_path().write_text('network = "off"\n', encoding="utf-8")
    with FakeServer(two_commands_scenario()) as server:
        env = cli_env(server.url)
        assert run_cli(env, "start", "Run", "-w", str(ws), "--foreground").returncode == 0
        status = run_cli(env, "status", "-w", str(ws))
    line = next(x for x in status.stdout.splitlines() if x.startswith("commands"))
    assert "sandboxed with bubblewrap" in line and "no network" in line, line
    assert json.loads(json.dumps(records(ws)[0]["settings"]))["network"] == "off"
