"""The real engine for bench_real.py: llama.cpp's llama-server with a Qwen2.5-Coder model
(built by ../shared/realmodel/setup.sh), optionally behind the Ollama shim, or a server
that already runs (`--base-url`, as on the GPU machine).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# ../shared beside the checkout (or beside the folder of worktrees it is in)
SHIM = next(
    (
        found
        for found in (p / "shared" / "realmodel" / "ollama_shim.py" for p in REPO.parents)
        if found.is_file()
    ),
    REPO.parent / "shared" / "realmodel" / "ollama_shim.py",
)
SETUP = "bash ../shared/realmodel/setup.sh"
START_TIMEOUT = 300.0  # loading a model on a busy 2-core machine


class EngineError(Exception):
    """The engine cannot be used; the message is one line, `code` the exit code."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code
        self.died: int | None = None  # the engine's exit status, when it had started and died


def realmodel_home() -> Path:
    found = os.environ.get("REALMODEL_HOME")
    return Path(found) if found else Path.home() / ".cache" / "localagent-realmodel"


def installed(size: str) -> tuple[str, str]:
    """llama-server and the model file for size ("0.5b" or "1.5b"), from setup.sh's env."""
    env_file = realmodel_home() / "env"
    if not env_file.is_file():
        raise EngineError(f"no engine at {env_file.parent}: run `{SETUP} {size}` first", 2)
    values = {}
    for line in env_file.read_text(encoding="utf-8").splitlines():
        name, _, value = line.partition("=")
        values[name.strip()] = value.strip()
    server = values.get("SERVER", "")
    model = values.get("MODEL_" + size.upper().replace(".", "_"), "")
    if not server or not Path(server).is_file():
        raise EngineError(f"llama-server is not built: run `{SETUP} {size}`", 2)
    if not model or not Path(model).is_file():
        raise EngineError(f"the {size} model is not installed: run `{SETUP} {size}`", 2)
    return server, model


def get(url: str, timeout: float = 5.0) -> str | None:
    """The body of a GET that answers 200, else None."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.read().decode("utf-8", "replace")
    except (urllib.error.URLError, OSError, ValueError):
        return None


@dataclass
class Engine:
    """Where the agents find the model, and what to read the engine's counters from."""

    root_url: str  # llama-server's root (no /v1)
    api: str
    ollama_url: str = ""
    shim_log: Path | None = None
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def agent_env(self) -> dict[str, str]:
        if self.api == "ollama":
            return {"LOCALAGENT_BACKEND": "ollama", "OLLAMA_HOST": self.ollama_url}
        return {"LOCALAGENT_BACKEND": "openai", "LOCALAGENT_BASE_URL": self.root_url + "/v1"}

    def metrics(self) -> str | None:
        return get(self.root_url + "/metrics")

    def describe(self) -> str:
        where = f"llama-server at {self.root_url}"
        return where + (f" through the Ollama shim at {self.ollama_url}" if self.ollama_url else "")


def _wait(proc: subprocess.Popen[bytes], ready: Callable[[], bool], what: str, log: Path) -> None:
    end = time.monotonic() + START_TIMEOUT
    while time.monotonic() < end:
        if ready():
            return
        if proc.poll() is not None:
            break
        time.sleep(0.5)
    tail = log.read_text("utf-8", "replace").strip().splitlines()[-1:] if log.is_file() else []
    raise EngineError(f"{what} did not start: {tail[0][:200] if tail else 'no log'}", 3)


def _spawn(args: list[str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(
            args, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )


def start_server(size: str, port: int, slots: int, ctx: int, root: Path) -> subprocess.Popen[bytes]:
    """llama-server on `port`, up and healthy. An engine built for a CPU whose AMX tiles
    the machine does not grant dies of a signal (SIGILL, SIGSEGV) in its warm-up's first
    matrix product, which its repacked weights send down the AMX path: it is started
    again without repacking."""
    server, model = installed(size)
    log = root / "llama-server.log"
    args = [server, "-m", model, "--host", "127.0.0.1", "--port", str(port), "--jinja"]
    args += ["-c", str(ctx * slots), "-np", str(slots), "--metrics", "--alias", "qwen2.5-coder"]
    try:
        return _serve(args, port, log)
    except EngineError as exc:
        if exc.died is None or exc.died >= 0:
            raise
        died = -exc.died
    print(f"llama-server died of signal {died}; started again with --no-repack", file=sys.stderr)
    return _serve([*args, "--no-repack"], port, log)


def _serve(args: list[str], port: int, log: Path) -> subprocess.Popen[bytes]:
    proc = _spawn(args, log)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait(proc, lambda: get(url + "/health") is not None, "llama-server", log)
    except EngineError as exc:
        exc.died = proc.poll()  # None: it was still loading
        stop(proc)
        raise
    return proc


def start_shim(upstream: str, root: Path) -> tuple[subprocess.Popen[bytes], str, Path]:
    if not SHIM.is_file():
        raise EngineError(f"no Ollama shim at {SHIM}", 2)
    port_file, log = root / "shim.port", root / "shim.jsonl"
    args = [sys.executable, str(SHIM), "--upstream", upstream, "--port", "0"]
    args += ["--port-file", str(port_file), "--log", str(log), "--max-tokens", "2048"]
    proc = _spawn(args, root / "shim.out")
    try:
        _wait(proc, port_file.is_file, "the Ollama shim", root / "shim.out")
    except EngineError:
        stop(proc)
        raise
    return proc, f"http://127.0.0.1:{port_file.read_text().strip()}", log


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextmanager
def engine(
    api: str, size: str, base_url: str, port: int, slots: int, ctx: int, root: Path
) -> Iterator[Engine]:
    """The engine for the whole benchmark: started here unless base_url names one."""
    found = Engine(base_url.rstrip("/").removesuffix("/v1"), api)
    try:
        if not base_url:
            found.processes.append(start_server(size, port, slots, ctx, root))
            found.root_url = f"http://127.0.0.1:{port}"
        elif get(found.root_url + "/v1/models") is None:
            raise EngineError(f"no OpenAI-compatible server answers at {base_url}", 3)
        if api == "ollama":
            proc, found.ollama_url, found.shim_log = start_shim(found.root_url, root)
            found.processes.append(proc)
        yield found
    finally:
        for proc in reversed(found.processes):
            stop(proc)
