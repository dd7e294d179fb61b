"""The real engine's start (`scripts/realengine.py`) with a stand-in llama-server: an
engine built with AMX kernels the machine does not grant dies of a signal in its warm-up,
and is started again without repacking; any other failure is reported as it was."""

from __future__ import annotations

import importlib
import socket
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"

# Dies of SIGSEGV as that engine did unless started with --no-repack (or always, with
# "always" in its model's name); then answers /health on its port.
STAND_IN = """\
#!{python}
import os, signal, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
args = sys.argv[1:]
with open(os.environ["STAND_IN_LOG"], "a") as log:
    log.write(" ".join(args) + "\\n")
if "--no-repack" not in args or "always" in args[args.index("-m") + 1]:
    os.kill(os.getpid(), signal.SIGSEGV)
class Health(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"{{}}")
    def log_message(self, *a):
        pass
HTTPServer(("127.0.0.1", int(args[args.index("--port") + 1])), Health).serve_forever()
"""

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="a POSIX signal's death")


@pytest.fixture
def realengine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> ModuleType:
    monkeypatch.syspath_prepend(str(SCRIPTS))
    server = tmp_path / "llama-server"
    server.write_text(STAND_IN.format(python=sys.executable), encoding="utf-8")
    server.chmod(0o755)
    for name in ("model.gguf", "always.gguf"):
        (tmp_path / name).write_bytes(b"")
    env = f"SERVER={server}\nMODEL_0_5B={tmp_path / 'model.gguf'}\n"
    env += f"MODEL_1_5B={tmp_path / 'always.gguf'}\n"
    (tmp_path / "env").write_text(env, encoding="utf-8")
    monkeypatch.setenv("REALMODEL_HOME", str(tmp_path))
    monkeypatch.setenv("STAND_IN_LOG", str(tmp_path / "starts.txt"))
    return importlib.import_module("realengine")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_an_engine_dying_of_a_signal_is_started_again_without_repacking(
    realengine: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    proc = realengine.start_server("0.5b", free_port(), 1, 4096, tmp_path)
    try:
        assert proc.poll() is None
    finally:
        realengine.stop(proc)
    starts = (tmp_path / "starts.txt").read_text(encoding="utf-8").splitlines()
    assert len(starts) == 2
    assert "--no-repack" not in starts[0].split()
    assert starts[1].split()[-1] == "--no-repack"
    assert "died of signal 11; started again with --no-repack" in capsys.readouterr().err


def test_an_engine_that_dies_again_is_reported_once(realengine: ModuleType, tmp_path: Path) -> None:
    with pytest.raises(realengine.EngineError, match="llama-server did not start"):
        realengine.start_server("1.5b", free_port(), 1, 4096, tmp_path)
    assert len((tmp_path / "starts.txt").read_text(encoding="utf-8").splitlines()) == 2
