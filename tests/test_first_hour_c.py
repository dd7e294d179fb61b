"""What a new user meets in the first hour, part three, through the real CLI and the fake
server: no server at all is said in seconds (a server that went away mid-run is still
waited for), and a background `start` learns that its run is up from one signal, however
many records the run wrote before it looked."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from support import (
    backend_env,
    call,
    cli_args,
    closed_port,
    done,
    plan_rule,
    record_types,
    run_cli,
    start_cli,
    wait_for,
)

from localagent.config.settings import Settings
from localagent.journal import Journal
from localagent.models.config import ModelConfig
from localagent.models.fake import FakeServer
from localagent.models.ollama import OllamaModel
from localagent.observe import watch
from localagent.system.errors import ModelUnavailable

# ---- no server: said within seconds, with the URL and the fix (item 1) ----------------


@pytest.mark.parametrize(
    ("backend", "fix"), [("ollama", "ollama serve"), ("openai", "LOCALAGENT_BASE_URL")]
)
@pytest.mark.parametrize("where", [["--foreground"], []], ids=["foreground", "background"])
def test_no_server_at_the_start_is_said_within_seconds(
    tmp_path: Path, backend: str, fix: str, where: list[str]
) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    # The default retry deadline is minutes: only a refused first contact ends this fast.
    env = backend_env(backend, url, LOCALAGENT_RETRY_DEADLINE="300")
    started = time.monotonic()
    result = run_cli(env, "start", "Anything", "-w", str(tmp_path), *where)
    assert time.monotonic() - started < 10
    assert result.returncode == 3, result.stderr
    assert "no model server is running at" in result.stderr
    assert url.removeprefix("http://") in result.stderr and fix in result.stderr
    assert record_types(tmp_path)[-1] == "suspended"  # the goal waits for `resume`


def test_a_server_name_that_does_not_resolve_is_said_within_seconds(tmp_path: Path) -> None:
    env = backend_env("ollama", "http://no-such-host.invalid:11434")
    started = time.monotonic()
    result = run_cli(env, "start", "Anything", "-w", str(tmp_path), "--foreground")
    assert time.monotonic() - started < 15
    assert result.returncode == 3, result.stderr
    assert "no-such-host.invalid" in result.stderr and "ollama serve" in result.stderr


def test_a_patient_preflight_waits_for_a_server_that_never_answered() -> None:
    """`resume --all` at logon starts before the server does: it keeps waiting. (The
    recorded waits take no time: only the real clock ends either wait.)"""
    delays: list[float] = []
    host = f"127.0.0.1:{closed_port()}"
    model = OllamaModel(
        ModelConfig.of(Settings(ollama_host=host, retry_deadline=20)), wait=delays.append
    )
    with pytest.raises(ModelUnavailable, match="no model server is running"):
        model.preflight(patient=True)
    assert delays == [1.0, 2.0, 4.0, 8.0, 16.0]
    delays.clear()
    with pytest.raises(ModelUnavailable, match="no model server is running"):
        model.preflight()
    assert delays == [1.0]  # FIRST_CONTACT_WAIT, not the retry deadline


def test_resume_all_at_logon_keeps_waiting_for_a_server_not_up_yet(tmp_path: Path) -> None:
    down = backend_env("ollama", f"http://127.0.0.1:{closed_port()}")
    quick = run_cli(down, "start", "Anything", "-w", str(tmp_path), "--foreground")
    assert quick.returncode == 3, quick.stderr
    patient = {**down, "LOCALAGENT_RETRY_DEADLINE": "4"}
    started = time.monotonic()
    result = run_cli(patient, "resume", "--all")
    assert result.returncode == 3, result.stdout + result.stderr
    # Waits of 1 and 2 s, past FIRST_CONTACT_WAIT, up to the retry deadline.
    assert time.monotonic() - started > 3
    assert "then run again: localagent resume --all" in result.stderr


# ---- the start signal ------------------------------------------------------------------

MANY = [f"f{i:02d}.txt" for i in range(6)]
BUSY = {
    "rules": [plan_rule(("Write", ["Write the files"]))],
    # A burst of quick rounds, then a slow one: the run is still working when `start`
    # looks, with many records written since its preflight.
    "replies": [call("write_file", path=name, content="x\n") for name in MANY]
    + [{**done("written"), "delay": 30}],
    "default": done("written"),
}


def after_preflight(ws: Path) -> int:
    types = record_types(ws)
    return len(types) - types.index("preflight") - 1 if "preflight" in types else 0


@pytest.mark.skipif(sys.platform == "win32", reason="SIGSTOP holds the starter back")
def test_a_background_start_sees_its_run_up_after_a_burst_of_records(tmp_path: Path) -> None:
    """The starter is held back (SIGSTOP) from the moment its run exists until the run
    has written many records past its preflight; then it must still see the run up."""
    with FakeServer(BUSY) as server:
        env = backend_env("ollama", server.url)
        starter = start_cli(env, "start", "Write the files", "-w", str(tmp_path))
        try:
            wait_for(lambda: bool(psutil.Process(starter.pid).children()), timeout=20)
            starter.send_signal(signal.SIGSTOP)
            wait_for(lambda: after_preflight(tmp_path) > 12, timeout=20)
            starter.send_signal(signal.SIGCONT)
            out, err = starter.communicate(timeout=15)
        finally:
            starter.kill()
            run_cli(env, "stop", "-w", str(tmp_path))
    assert starter.returncode == 0, err
    assert "started in the background" in out, out


# ---- status --watch says what the server does, and what was refused (item 7) -------------


def test_watch_says_the_server_answered_500_and_shows_refused_completions(tmp_path: Path) -> None:
    busy = {"status": 500, "error": "out of memory"}
    scenario = {
        "rules": [
            plan_rule(("Files", ["Write b.txt"])),
            {"kind": "chat", "times": 3, "reply": busy},
        ],
        # A "done" before the file exists is refused; then the work is done.
        "replies": [
            done("b.txt written"),
            call("write_file", path="b.txt", content="b\n"),
            done("b.txt written"),
        ],
        "default": done("b.txt written"),
    }
    with FakeServer(scenario) as server:
        env = backend_env("ollama", server.url)
        started = run_cli(env, "start", "Write b.txt", "-w", str(tmp_path), "--no-verify")
        assert started.returncode == 0, started.stderr
        wait_for(lambda: "waiting" in record_types(tmp_path))
        during = watch.snapshot(Journal(tmp_path))
        wait_for(lambda: "goal_completed" in record_types(tmp_path), 60)
    assert "the model server answered 500: out of memory (retrying" in during.doing
    assert "waiting for the model" not in during.doing
    recent = "\n".join(watch.snapshot(Journal(tmp_path)).recent)
    assert "REFUSED mark_subtask_complete" in recent, recent


# ---- the foreground line shows the step, the tool and the seconds (item 7) ---------------

SLOW = {
    "rules": [plan_rule(("Files", ["Write b.txt"]))],
    "replies": [
        # A reply that takes 2.5 s to stream, as a model on a CPU does.
        {
            **call("write_file", path="b.txt", content="b\n"),
            "thinking": "hmm " * 100,
            "chunks": 25,
            "chunk_delay": 0.1,
        },
        done("b.txt written"),
    ],
    "default": done("b.txt written"),
}


@pytest.mark.skipif(sys.platform == "win32", reason="a pseudo-terminal stands for the console")
def test_the_foreground_line_counts_the_seconds_of_a_slow_model_call(tmp_path: Path) -> None:
    import pty

    master, slave = pty.openpty()
    with FakeServer(SLOW) as server:
        args = cli_args("start", "Write b.txt", "-w", str(tmp_path), "--foreground", "--no-verify")
        env = backend_env("ollama", server.url)
        proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=slave)
        os.close(slave)
        seen = b""
        with contextlib.suppress(OSError):  # EIO once the run has closed the terminal
            while chunk := os.read(master, 4096):
                seen += chunk
        proc.communicate(timeout=60)
    os.close(master)
    screen = seen.decode("utf-8", errors="replace")
    assert proc.returncode == 0, screen
    assert "waiting for the model" in screen and "running write_file" in screen
    assert re.search(r"waiting for the model . 2s · [\d,]+ bytes received", screen), screen


# ---- doctor checks another backend without editing the config (item 8) -------------------


@pytest.mark.parametrize("backend", ["ollama", "openai"])
def test_doctor_checks_the_backend_and_url_given(tmp_path: Path, backend: str) -> None:
    home = tmp_path / "home"
    with FakeServer({"default": done()}) as server:
        # The environment names a server that is not there; the flags name the one that is.
        env = backend_env("ollama", f"http://127.0.0.1:{closed_port()}", LOCALAGENT_HOME=str(home))
        url = server.url + ("/v1" if backend == "openai" else "")
        args = ("doctor", "-w", str(tmp_path), "--backend", backend, "--base-url", url)
        result = run_cli(env, *args)
    shown = result.stdout + result.stderr
    assert result.returncode != 2, shown
    assert "[ ok ] model server" in shown and "[ ok ] model " in shown, shown
    assert "[fail]" not in shown and server.url in shown, shown
    assert not (home / "config.toml").exists()
