"""Rewind through the real CLI: a goal scripted on the fake server writes, edits, deletes
and moves files and runs a command that creates and changes files; `diff` shows each
step's changes and `rewind` undoes them one step at a time, each workspace in between
equal byte for byte to the one recorded before that step. A user's edit is detected and
kept, a git repository's `.git` is never touched, and a rewind killed at random moments
ends at its target once run again."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import importlib
import io
import os
import random
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from support import call, cli_env, done, plan_rule, records, run_cli

from localagent.cli import main
from localagent.models.fake import FakeServer

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"
POSIX_KILLS = pytest.mark.skipif(sys.platform == "win32", reason="kills with SIGKILL")

GOAL = "Make the files"
GEN = (  # bytes, not text: the same on Windows
    "from pathlib import Path\n"
    "Path('gen').mkdir(exist_ok=True)\n"
    "Path('gen/c.txt').write_bytes(b'made by a command\\n')\n"
    "Path('keep.txt').write_bytes(Path('keep.txt').read_bytes() + b'changed by a command\\n')\n"
)
# The workspace before each step of the script, and the step (tool, arguments).
STEPS: list[tuple[str, dict[str, Any]]] = [
    ("write_file", {"path": "a.txt", "content": "one\n"}),
    ("replace_in_file", {"path": "a.txt", "old": "one", "new": "uno"}),
    ("append_file", {"path": "a.txt", "content": "two\n"}),
    ("write_file", {"path": "src/b.py", "content": "print('bee')\n"}),
    ("run_cmd", {"cmd": "python gen.py"}),
    ("delete_file", {"path": "src/b.py"}),
    ("move_file", {"src": "gen/c.txt", "dst": "moved/d.txt"}),
    ("write_file", {"path": "keep.txt", "content": "rewritten by the agent\n"}),
]


def initial(ws: Path) -> None:
    (ws / "gen.py").write_bytes(GEN.encode())
    (ws / "keep.txt").write_bytes(b"the user's own file\n")
    (ws / "bin.dat").write_bytes(bytes(range(256)))


def expected_states() -> list[dict[str, bytes]]:
    """The files before each step (and after the last), computed independently."""
    files = {
        "gen.py": GEN.encode(),
        "keep.txt": b"the user's own file\n",
        "bin.dat": bytes(range(256)),
    }
    states = [dict(files)]
    files["a.txt"] = b"one\n"
    states.append(dict(files))
    files["a.txt"] = b"uno\n"
    states.append(dict(files))
    files["a.txt"] = b"uno\ntwo\n"
    states.append(dict(files))
    files["src/b.py"] = b"print('bee')\n"
    states.append(dict(files))
    files["gen/c.txt"] = b"made by a command\n"
    files["keep.txt"] += b"changed by a command\n"
    states.append(dict(files))
    del files["src/b.py"]
    states.append(dict(files))
    files["moved/d.txt"] = files.pop("gen/c.txt")
    states.append(dict(files))
    files["keep.txt"] = b"rewritten by the agent\n"
    states.append(dict(files))
    return states


def scenario() -> dict[str, Any]:
    return {
        "rules": [plan_rule(("Files", [GOAL]))],
        "replies": [call(name, **args) for name, args in STEPS] + [done("all made")],
        "default": done("all made"),
    }


def files_of(ws: Path) -> dict[str, bytes]:
    found = {}
    for path in ws.rglob("*"):
        rel = path.relative_to(ws).as_posix()
        if rel.split("/")[0] in (".agent_context", ".git") or not path.is_file():
            continue
        found[rel] = path.read_bytes()
    return found


def tree_hash(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        digest.update(path.relative_to(folder).as_posix().encode())
        if path.is_file():
            digest.update(path.read_bytes())
            digest.update(str(path.stat().st_mtime_ns).encode())
    return digest.hexdigest()


@dataclasses.dataclass
class Ran:
    returncode: int
    stdout: str
    stderr: str


def cli(*argv: str) -> Ran:
    """The real command line, in this process (a rewind or a diff needs no server)."""
    out, err = io.StringIO(), io.StringIO()
    code: Any = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(argv))
        except SystemExit as exc:
            code = exc.code
    assert "Traceback" not in err.getvalue(), err.getvalue()
    return Ran(code or 0, out.getvalue(), err.getvalue())


def git(ws: Path, *args: str) -> None:
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t")
    env["GIT_COMMITTER_EMAIL"] = "t@t"
    subprocess.run(["git", *args], cwd=ws, env=env, check=True, capture_output=True)


def run_goal(ws: Path, env: dict[str, str]) -> None:
    result = run_cli(env, "start", GOAL, "-w", str(ws), "--foreground", "--no-verify")
    assert result.returncode in (0, 1), result.stderr
    steps = [r["tool"] for r in records(ws) if r["type"] == "action_started"]
    assert steps[: len(STEPS)] == [name for name, _ in STEPS], result.stderr


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    initial(path)
    return path


@pytest.fixture
def server() -> Any:
    with FakeServer(scenario()) as fake:
        yield fake


def changed_steps(ws: Path) -> list[dict[str, Any]]:
    return [r for r in records(ws) if r["type"] == "changes" and r["files"]]


@pytest.mark.parametrize(
    "repo",
    [False, pytest.param(True, marks=pytest.mark.skipif(not shutil.which("git"), reason="no git"))],
    ids=["plain", "git"],
)
def test_each_step_is_rewound_to_the_workspace_before_it(ws: Path, server: Any, repo: bool) -> None:
    if repo:
        git(ws, "init", "-q")
        git(ws, "add", "-A")
        git(ws, "commit", "-q", "-m", "start")
    env = cli_env(server.url)
    run_goal(ws, env)
    # (the run itself keeps .agent_context out of git: .git/info/exclude)
    git_before = tree_hash(ws / ".git") if repo else ""
    states = expected_states()
    assert files_of(ws) == states[-1]
    # Every step that changed files has its changes journaled, the command's included.
    made = changed_steps(ws)
    assert [r["tool"] for r in made] == [name for name, _ in STEPS]
    by_command = {path for path, _, _ in made[4]["files"]}
    assert by_command == {"gen/c.txt", "keep.txt"}
    shown = cli("diff", "-w", str(ws))
    assert shown.returncode == 0, shown.stderr
    assert "run_cmd `python gen.py`" in shown.stdout
    assert "+changed by a command" in shown.stdout and "-one\n+uno" in shown.stdout
    assert "Binary" not in shown.stdout
    for back in range(len(STEPS) - 1, -1, -1):
        result = cli("rewind", "-w", str(ws), "--last")
        assert result.returncode == 0, result.stderr
        assert files_of(ws) == states[back], f"after undoing step {back + 1}"
    assert not (ws / "moved").exists() and not (ws / "gen").exists()
    again = cli("rewind", "-w", str(ws), "--last")
    assert again.returncode == 2 and "nothing to rewind" in again.stderr
    if repo:
        assert tree_hash(ws / ".git") == git_before
    assert all(".git/" not in str(r.get("files")) for r in records(ws))


def test_rewind_to_a_round_and_forward_again(ws: Path, server: Any) -> None:
    env = cli_env(server.url)
    run_goal(ws, env)
    states = expected_states()
    made = changed_steps(ws)
    result = cli("rewind", "-w", str(ws), "--to", f"{made[3]['round']}")
    assert result.returncode == 0, result.stderr
    assert files_of(ws) == states[3]
    # Back to just before the move: steps undone are put back in place as well.
    result = cli("rewind", "-w", str(ws), "--to", f"s{made[6]['action']}")
    assert result.returncode == 0, result.stderr
    assert files_of(ws) == states[6]
    shown = cli("diff", "-w", str(ws), "--round", str(made[4]["round"]))
    assert "run_cmd `python gen.py`" in shown.stdout and "undone by the rewind" in shown.stdout


def test_a_users_edit_after_the_agents_is_detected_and_kept(ws: Path, server: Any) -> None:
    env = cli_env(server.url)
    run_goal(ws, env)
    (ws / "a.txt").write_bytes(b"the user's edit\n")
    result = cli("rewind", "-w", str(ws), "--to", "1")
    assert result.returncode == 2
    assert "a.txt" in result.stderr and "--force" in result.stderr
    assert (ws / "a.txt").read_bytes() == b"the user's edit\n"
    assert files_of(ws)["moved/d.txt"] == b"made by a command\n"  # nothing else moved
    # A file the agent never touched is the user's: rewound around, never overwritten.
    (ws / "a.txt").write_bytes(b"uno\ntwo\n")
    (ws / "notes.txt").write_bytes(b"mine\n")
    result = cli("rewind", "-w", str(ws), "--to", "1")
    assert result.returncode == 0, result.stderr
    assert files_of(ws) == {**expected_states()[0], "notes.txt": b"mine\n"}
    forced = cli("diff", "-w", str(ws))
    assert "changed outside the agent" in forced.stdout


def test_a_rewind_is_refused_while_an_agent_runs(ws: Path, server: Any) -> None:
    from localagent.system.lock import WorkspaceLock

    env = cli_env(server.url)
    run_goal(ws, env)
    with WorkspaceLock(ws / ".agent_context"):
        result = run_cli(env, "rewind", "-w", str(ws), "--last")
    assert result.returncode == 4, result.stderr


def test_resume_after_a_rewind_tells_the_model_and_goes_on(ws: Path) -> None:
    replies = [call(n, **a) for n, a in STEPS[:2]] + [done("made")]
    script = {"rules": [plan_rule(("Files", [GOAL]))], "replies": replies, "default": done("ok")}
    with FakeServer(script) as fake:
        env = cli_env(fake.url)
        first = run_cli(env, "start", GOAL, "-w", str(ws), "--foreground", "--no-verify")
        assert first.returncode == 0, first.stderr
        assert cli("rewind", "-w", str(ws), "--to", "1").returncode == 0
        assert not (ws / "a.txt").exists()
        resumed = run_cli(env, "resume", "-w", str(ws), "--foreground")
        assert resumed.returncode == 0, resumed.stderr
        told = [r for r in fake.chat_requests if "rewound the workspace" in str(r)]
    assert told, "the model was not told of the rewind"
    assert [r["type"] for r in records(ws)].count("rewound") == 1


@pytest.fixture(scope="module")
def torture() -> Iterator[ModuleType]:
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(SCRIPTS))
        yield importlib.import_module("torture_rewind")


@POSIX_KILLS
def test_a_rewind_killed_at_random_moments_ends_at_its_target(
    tmp_path: Path, torture: ModuleType
) -> None:
    """The torture's short sample (scripts/torture_rewind.py runs it long): each rewind,
    killed, leaves every file whole; run again, it ends at its target."""
    files = 120
    with FakeServer(torture.scenario(files)) as server:
        ws, env, states = torture.setup(tmp_path, files, server.url)
        assert states["after"] != states["before"]
        rng = random.Random(30)
        torture.killed_and_finished(ws, env, "1", rng, states["after"], states["before"])
    assert torture.snapshot_of(ws) == states["before"]
    assert not [p for p in ws.rglob("*.tmp") if ".agent_context" not in p.parts]


def test_the_python_api_shows_and_rewinds(ws: Path, server: Any) -> None:
    from localagent.api import diff, rewind

    run_goal(ws, cli_env(server.url))
    steps = diff(ws)
    command = next(s for s in steps if s["tool"] == "run_cmd")
    assert command["what"] == "python gen.py"
    assert {f["path"] for f in command["files"]} == {"gen/c.txt", "keep.txt"}
    assert "+made by a command" in next(
        f["text"] for f in command["files"] if f["path"] == "gen/c.txt"
    )
    done_ = rewind(ws, last=True)
    assert done_.restored == ["keep.txt"] and not done_.left
    assert files_of(ws) == expected_states()[-2]


SLOW = (
    "import time\nfrom pathlib import Path\n"
    "Path('out.txt').write_text('written before the kill\\n')\n"
    "time.sleep(60)\n"
)


@POSIX_KILLS
def test_a_step_cut_short_by_a_kill_has_its_changes_journaled_once(ws: Path) -> None:
    """SIGKILL while a command runs (it changed a file already): the resumed run journals
    that step's changes once, and `rewind --last` undoes them."""
    from support import start_cli, wait_for

    (ws / "slow.py").write_text(SLOW)
    replies = [call("run_cmd", cmd="python slow.py", timeout_sec=120), done("ran")]
    script = {"rules": [plan_rule(("Run", [GOAL]))], "replies": replies, "default": done("ok")}
    with FakeServer(script) as fake:
        env = cli_env(fake.url)
        proc = start_cli(env, "start", GOAL, "-w", str(ws), "--foreground", "--no-verify")
        try:
            wait_for(lambda: (ws / "out.txt").exists(), timeout=60)
        finally:
            proc.kill()
            proc.communicate()
        resumed = run_cli(env, "resume", "-w", str(ws), "--foreground")
    assert resumed.returncode == 0, resumed.stderr
    history = records(ws)
    started = next(r for r in history if r["type"] == "action_started")
    made = [r for r in history if r["type"] == "changes" and r["action"] == started["seq"]]
    assert len(made) == 1 and made[0]["files"][0][0] == "out.txt"
    assert sum(r["type"] == "snapshot" for r in history) == 1
    assert cli("rewind", "-w", str(ws), "--last").returncode == 0
    assert not (ws / "out.txt").exists() and (ws / "slow.py").read_text() == SLOW


def test_resume_refuses_a_workspace_a_killed_rewind_left_half_done(ws: Path, server: Any) -> None:
    from localagent.journal import Journal

    env = cli_env(server.url)
    run_goal(ws, env)
    assert cli("rewind", "-w", str(ws), "--last").returncode == 0  # the goal goes on from there
    journal = Journal(ws)
    journal.load()
    journal.append("rewinding", to=1, files=[["a.txt", None, None]])  # as a kill leaves it
    journal.finish()
    resumed = run_cli(env, "resume", "-w", str(ws), "--foreground")
    assert resumed.returncode == 2 and "localagent rewind -w" in resumed.stderr
    assert cli("rewind", "-w", str(ws)).returncode == 0
    assert [r["type"] for r in records(ws)][-1] == "rewound"


def test_a_step_that_changed_many_files_is_journaled_in_parts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each record stays small (a torn write is told from damage by its size); only the
    last part settles the step."""
    from localagent.journal import Journal
    from localagent.rewind import snapshots
    from localagent.rewind.steps import timeline

    monkeypatch.setattr(snapshots, "PER_RECORD", 3)
    journal = Journal(tmp_path)
    journal.load()
    journal.append("goal_started", goal="many", settings={})
    snaps = snapshots.Snapshots(journal, tmp_path, 1 << 20)
    snaps.before("run_cmd", 1)
    journal.append("action_started", tool="run_cmd", args={"cmd": "x"}, signature="x")
    for i in range(7):
        (tmp_path / f"f{i}.txt").write_text(str(i))
    snaps.settle()
    parts = [r for r in records(tmp_path) if r["type"] == "changes"]
    assert [len(r["files"]) for r in parts] == [3, 3, 1]
    assert [r.get("more", False) for r in parts] == [True, True, False]
    assert journal.state.unsettled is None
    line = timeline(records(tmp_path))
    assert sorted(p for s in line.steps for p, _, _ in s.files) == [f"f{i}.txt" for i in range(7)]
