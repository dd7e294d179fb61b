"""Independent checks of what a real model's run left in its workspace.

Each judge looks at the files and runs them itself, with its own inputs and a timeout; it
never reads localagent's journal or verdict. A judge answers `Judgement(works, reason)`,
the reason one line a person can check by hand. The programs judged were written by a
model: they run with a closed or scripted stdin, a timeout, and no settings of ours.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

RUN_TIMEOUT = 10.0  # one run of a model's small program
TOOL_TIMEOUT = 120.0  # pytest or ruff over the workspace
SKIPPED_DIRS = {".agent_context", ".venv", "venv", "__pycache__", ".git", "node_modules"}
MAX_CANDIDATES = 8
_RESULT = re.compile(
    r"\b(win|wins|won|winner|lose|loses|lost|tie|tied|draw)\b"
    # "Result: player2": the outcome by who won
    r"|\bresult\s*:\s*(?:player\s?\d|computer|you|user|human)\b",
    re.IGNORECASE,
)
# "player2" after both prompts: the winner named alone, as the last thing on its line
_BARE = re.compile(r"(?:player\s?\d|computer|user|you|human)\s*[.!]*", re.IGNORECASE)
_SETTINGS_PREFIXES = ("LOCALAGENT_", "OLLAMA_")


@dataclass(frozen=True)
class Judgement:
    works: bool
    reason: str


@dataclass(frozen=True)
class Ran:
    """One run of a program: its exit code (None when it ran past its timeout)."""

    code: int | None
    out: str
    err: str

    def brief(self) -> str:
        if self.code is None:
            return "ran past its timeout"
        shown = (self.out.strip() or self.err.strip()).splitlines()
        first = shown[-1][:80] if shown else "no output"
        return f"exit code {self.code} ({first})"


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(_SETTINGS_PREFIXES)}
    env.update(PYTHONDONTWRITEBYTECODE="1", PYTHONIOENCODING="utf-8")
    return env


def run(workspace: Path, args: list[str], stdin: str = "", timeout: float | None = None) -> Ran:
    """Run `args` in workspace (RUN_TIMEOUT unless told); on timeout the output so far is
    kept."""
    try:
        proc = subprocess.Popen(
            args,
            cwd=workspace,
            env=_env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        return Ran(127, "", str(exc))
    try:
        out, err = proc.communicate(stdin.encode(), timeout=timeout or RUN_TIMEOUT)
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        out, err = proc.communicate()
        code = None
    return Ran(code, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"))


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, 9)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def python(workspace: Path, *args: str, stdin: str = "", timeout: float | None = None) -> Ran:
    return run(workspace, [sys.executable, *args], stdin, timeout)


def sources(workspace: Path) -> list[Path]:
    """The Python files a model wrote, tests and tooling folders left out."""
    found = []
    for path in sorted(workspace.rglob("*.py")):
        parts = path.relative_to(workspace).parts
        if SKIPPED_DIRS.intersection(parts[:-1]) or "tests" in parts[:-1]:
            continue
        name = path.name
        if name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py":
            continue
        found.append(path)
    return found


def candidates(workspace: Path, words: tuple[str, ...]) -> list[Path]:
    """Likely program files, those whose name holds one of words first."""
    files = sources(workspace)
    files.sort(key=lambda p: not any(w in p.name.lower() for w in words))
    return files[:MAX_CANDIDATES]


def named(workspace: Path, name: str) -> Path | None:
    """The file the goal names: the exact path, else the only file of that name."""
    if (workspace / name).is_file():
        return workspace / name
    found = [p for p in sources(workspace) if p.name == name]
    return found[0] if len(found) == 1 else None


def results(text: str) -> int:
    """How many game results (win, lose, tie, ...) a game's output names; a line that
    ends, after its prompts, with only a winner ("player2") names one too."""
    bare = [line for line in text.splitlines() if _BARE.fullmatch(_after_prompts(line))]
    return len(_RESULT.findall(text)) + len(bare)


def _after_prompts(line: str) -> str:
    """What a line holds after the last prompt on it (text ending ': ' or '? ')."""
    cut = max(line.rfind(": "), line.rfind("? "))
    return (line[cut + 2 :] if cut >= 0 else line).strip()


def rel(workspace: Path, path: Path) -> str:
    return path.relative_to(workspace).as_posix()


# ---- judges ------------------------------------------------------------------------


def hello(workspace: Path) -> Judgement:
    """Some script prints a line with "hello" and exits 0."""
    files = candidates(workspace, ("hello",))
    if not files:
        return Judgement(False, "no Python script in the workspace")
    tried = []
    for path in files:
        ran = python(workspace, rel(workspace, path))
        if ran.code == 0 and "hello" in ran.out.lower():
            return Judgement(True, f"{rel(workspace, path)} printed {ran.out.strip()[:60]!r}")
        tried.append(f"{rel(workspace, path)}: {ran.brief()}")
    return Judgement(False, "no script prints hello: " + "; ".join(tried))


_MOVES = ("rock", "Rock", "1", "r")
_AFTER = "n\nno\nq\nquit\nexit\n"  # a "play again?" question, then ways out


def rock_paper_scissors(workspace: Path) -> Judgement:
    """Given a move on stdin (or as its argument), the game names a result it did not name
    with no input at all: it played a round, not only printed its rules."""
    files = candidates(workspace, ("rock", "rps", "game", "paper", "scissors"))
    if not files:
        return Judgement(False, "no Python script in the workspace")
    tried = []
    for path in files:
        name = rel(workspace, path)
        found, last = _play(workspace, name)
        if found:
            return Judgement(True, found)
        tried.append(f"{name}: {last.brief()}")
    return Judgement(False, "no script plays a round: " + "; ".join(tried))


def _play(workspace: Path, name: str) -> tuple[str, Ran]:
    """How the game at name played a round ("" if it did not), and its last run. A game
    that runs past its timeout twice is given up (each try would cost the timeout)."""
    idle = python(workspace, name)
    timeouts = idle.code is None
    tries = [([name], f"{move}\n{_AFTER}", f"with input {move!r}") for move in _MOVES]
    # A game for two at one keyboard reads both players' moves.
    tries.append(([name], f"rock\npaper\n{_AFTER}", "with the two moves 'rock' and 'paper'"))
    tries.append(([name, "rock"], "", "with argument rock"))
    ran = idle
    for args, stdin, how in tries:
        ran = python(workspace, *args, stdin=stdin)
        if results(ran.out) > results(idle.out):
            return f"{name} {how}: {_last_result(ran.out)}", ran
        timeouts += ran.code is None
        if timeouts >= 2:
            break
    return "", ran


def _last_result(out: str) -> str:
    lines = [line for line in out.splitlines() if results(line)]
    return lines[-1].strip()[:80] if lines else ""


def pytest_passes(workspace: Path) -> Judgement:
    ran = python(workspace, "-m", "pytest", "-q", "-p", "no:cacheprovider", timeout=TOOL_TIMEOUT)
    if ran.code == 0:
        summary = ran.out.strip().splitlines()
        return Judgement(True, summary[-1][:80] if summary else "pytest passed")
    if ran.code == 5:
        return Judgement(False, "pytest collected no tests")
    return Judgement(False, f"pytest: {ran.brief()}")


def ruff_clean(workspace: Path) -> Judgement:
    ran = python(workspace, "-m", "ruff", "check", "--no-cache", ".", timeout=TOOL_TIMEOUT)
    if ran.code == 0:
        return Judgement(True, "ruff check is clean")
    if "No module named ruff" in ran.err:
        return Judgement(False, "ruff is not installed for the judge's Python")
    return Judgement(False, f"ruff check: {ran.brief()}")


def probe(workspace: Path, code: str, timeout: float | None = None) -> Judgement:
    """Run Python code in workspace (its folder first on the path); works when it prints
    OK on its last line. The code prints what it found wrong otherwise."""
    ran = python(workspace, "-c", code, timeout=timeout)
    last = ran.out.strip().splitlines()[-1:] or [""]
    if ran.code == 0 and last[0] == "OK":
        return Judgement(True, "behaves as asked")
    if ran.code == 0 and last[0]:
        return Judgement(False, last[0][:160])
    error = (ran.err.strip().splitlines() or [ran.brief()])[-1]
    return Judgement(False, error[:160])


def all_of(*checks: Callable[[], Judgement]) -> Judgement:
    """Works when every check works, checked in order; the reason names the first check
    that does not (the later ones are not run)."""
    passed = []
    for check in checks:
        found = check()
        if not found.works:
            return found
        passed.append(found.reason)
    return Judgement(True, "; ".join(passed))
