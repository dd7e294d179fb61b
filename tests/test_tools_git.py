"""git_status, git_diff, git_log and git_commit on real repositories made with the real
`git` program: the workspace's own repository only, and nothing it configures runs."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import call, cli_env, done, plan_rule, records, run_cli

from localagent.journal import Journal
from localagent.loop import loopguard
from localagent.models.fake import FakeServer
from localagent.tools import ToolContext, ToolResult, canonical_call, catalog, execute

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

AUTHOR = ["-c", "user.name=Test Author", "-c", "user.email=author@example.com"]
# Leaves a trace in the marker folder if git ever runs it.
MARKER_SCRIPT = '#!/bin/sh\necho ran >> "{marker}"\n'


@pytest.fixture(autouse=True)
def plain_git(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """git as on a machine with no user configuration (no identity, no global hooks)."""
    home = tmp_path_factory.mktemp("git-home")
    for name in ("HOME", "XDG_CONFIG_HOME", "USERPROFILE"):
        monkeypatch.setenv(name, str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for name in (
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
    ):
        monkeypatch.delenv(name, raising=False)


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *AUTHOR, *args], cwd=root, capture_output=True, text=True, check=True
    )
    return done.stdout


def make_repo(root: Path, files: dict[str, str] | None = None) -> Path:
    """A repository at root with one commit of `files`."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "-c", "init.defaultBranch=main", "init", "-q")
    for name, text in (files or {"a.py": "A = 1\n"}).items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "first")
    return root


def commits(root: Path) -> list[str]:
    return git(root, "log", "--format=%s").splitlines()


def committed_files(root: Path, rev: str = "HEAD") -> list[str]:
    return sorted(git(root, "show", "--name-only", "--format=", rev).splitlines())


def run(root: Path, name: str, **args: object) -> ToolResult:
    return execute(ToolContext(root), name, args)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "ws", {"a.py": "A = 1\n", "lib/b.py": "B = 1\n"})
    (root / ".agent_context").mkdir()
    (root / ".agent_context" / "state.json").write_text("{}")
    return root


# ---- reading -------------------------------------------------------------------------


def test_status_shows_the_branch_and_changes_but_never_the_journal(repo: Path) -> None:
    (repo / "a.py").write_text("A = 2\n")
    (repo / "new.py").write_text("N = 1\n")
    result = run(repo, "git_status")
    assert result.ok, result.text
    lines = result.text.splitlines()
    assert lines[0].startswith("## main")
    assert " M a.py" in lines and "?? new.py" in lines
    assert ".agent_context" not in result.text
    assert not result.changed and not result.facts


def test_status_of_a_clean_repository_says_so(repo: Path) -> None:
    result = run(repo, "git_status")
    assert result.ok and "nothing to commit" in result.text


def test_diff_of_the_working_tree_of_a_path_and_of_what_is_staged(repo: Path) -> None:
    (repo / "a.py").write_text("A = 2\n")
    (repo / "lib" / "b.py").write_text("B = 2\n")
    whole = run(repo, "git_diff")
    assert whole.ok and "-A = 1\n+A = 2" in whole.text and "+B = 2" in whole.text
    one = run(repo, "git_diff", path="lib/b.py")
    assert one.ok and "+B = 2" in one.text and "a.py" not in one.text
    assert "no differences" in run(repo, "git_diff", staged=True).text
    git(repo, "add", "a.py")
    staged = run(repo, "git_diff", staged=True)
    assert "+A = 2" in staged.text and "b.py" not in staged.text


def test_diff_of_a_path_outside_the_workspace_is_refused(repo: Path) -> None:
    for path in ("../outside.py", "/etc/passwd", ".agent_context/state.json"):
        result = run(repo, "git_diff", path=path)
        assert not result.ok and (
            "outside the workspace" in result.text or "journal" in result.text
        )


def test_log_lists_commits_newest_first_up_to_max_count(repo: Path) -> None:
    for n in range(3):
        (repo / "a.py").write_text(f"A = {n + 10}\n")
        git(repo, "commit", "-q", "-am", f"change {n}")
    result = run(repo, "git_log", max_count=2)
    assert result.ok, result.text
    lines = result.text.splitlines()
    assert len(lines) == 2 and "change 2" in lines[0] and "change 1" in lines[1]
    assert "Test Author" in lines[0]
    assert len(run(repo, "git_log").text.splitlines()) == 4


def test_log_of_a_repository_without_commits_says_so(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    git(root, "init", "-q")
    result = run(root, "git_log")
    assert result.ok and "no commits yet" in result.text


# ---- committing ----------------------------------------------------------------------


def test_commit_of_named_paths_takes_new_and_deleted_files_and_nothing_else(repo: Path) -> None:
    (repo / "new.py").write_text("N = 1\n")
    (repo / "lib" / "b.py").unlink()
    (repo / "a.py").write_text("A = 2\n")  # changed, not named: stays uncommitted
    result = run(repo, "git_commit", message="Add new.py, drop b.py", paths="new.py, lib/b.py")
    assert result.ok, result.text
    assert result.changed and not result.facts
    assert commits(repo)[0] == "Add new.py, drop b.py"
    assert committed_files(repo) == ["lib/b.py", "new.py"]
    assert " M a.py" in git(repo, "status", "--porcelain")


def test_commit_without_paths_takes_every_change_to_tracked_files(repo: Path) -> None:
    (repo / "a.py").write_text("A = 2\n")
    (repo / "untracked.py").write_text("U = 1\n")
    result = run(repo, "git_commit", message="Change a")
    assert result.ok, result.text
    assert committed_files(repo) == ["a.py"]
    assert "?? untracked.py" in git(repo, "status", "--porcelain")


def test_commit_of_a_folder_never_takes_the_journal(repo: Path) -> None:
    (repo / "lib" / "c.py").write_text("C = 1\n")
    (repo / "lib" / ".agent_context").mkdir()
    (repo / "lib" / ".agent_context" / "state.json").write_text("{}")
    result = run(repo, "git_commit", message="Everything", paths=".")
    assert result.ok, result.text
    assert committed_files(repo) == ["lib/c.py"]
    assert "agent_context" not in git(repo, "ls-files")


def test_paths_may_be_quoted_and_separated_by_spaces_or_commas(repo: Path) -> None:
    for name in ("one.py", "two.py", "with space.py"):
        (repo / name).write_text("X = 1\n")
    result = run(repo, "git_commit", message="Three", paths="one.py,two.py 'with space.py'")
    assert result.ok, result.text
    assert committed_files(repo) == ["one.py", "two.py", "with space.py"]


def test_commit_with_nothing_to_commit_says_why(repo: Path) -> None:
    (repo / "untracked.py").write_text("U = 1\n")
    result = run(repo, "git_commit", message="Nothing")
    assert not result.ok and not result.changed
    assert "paths" in result.text  # new files must be named
    assert commits(repo) == ["first"]


def test_a_bad_message_is_refused_before_git_runs(repo: Path) -> None:
    (repo / "a.py").write_text("A = 2\n")
    for message in ("", "   ", "bad\x00message"):
        result = run(repo, "git_commit", message=message)
        assert not result.ok and "message" in result.text
    assert commits(repo) == ["first"]


def test_commit_of_a_path_outside_the_workspace_is_refused(tmp_path: Path) -> None:
    outer = make_repo(tmp_path / "outer")
    ws = outer / "ws"
    make_repo(ws)
    (outer / "secret.txt").write_text("changed\n")
    (ws / ".agent_context").mkdir()
    (ws / ".agent_context" / "state.json").write_text("{}")
    refused = ["../secret.txt", str(outer / "secret.txt"), ".agent_context", "a.py ../x"]
    for paths in refused:
        result = run(ws, "git_commit", message="Escape", paths=paths)
        assert not result.ok
        assert "outside the workspace" in result.text or "journal" in result.text, result.text
    assert commits(ws) == ["first"] and commits(outer) == ["first"]
    assert git(ws, "diff", "--cached", "--name-only") == ""


def test_hooks_never_run(repo: Path, tmp_path: Path) -> None:
    marker = tmp_path / "hook-ran.txt"
    hooks = repo / ".git" / "hooks"
    for name in ("pre-commit", "commit-msg", "prepare-commit-msg", "post-commit"):
        (hooks / name).write_text(MARKER_SCRIPT.format(marker=marker.as_posix()))
        (hooks / name).chmod(0o755)
    # The hooks work: git run the ordinary way does run them.
    (repo / "a.py").write_text("A = 2\n")
    git(repo, "commit", "-q", "-am", "with hooks")
    assert marker.exists()
    marker.unlink()
    # Also a hooks folder the repository's own configuration names.
    git(repo, "config", "core.hooksPath", ".git/hooks")
    (repo / "a.py").write_text("A = 3\n")
    result = run(repo, "git_commit", message="No hooks", paths="a.py")
    assert result.ok, result.text
    assert commits(repo)[0] == "No hooks"
    assert not marker.exists()


@pytest.mark.skipif(sys.platform == "win32", reason="the programs are shell scripts")
def test_programs_the_repository_configures_never_run(repo: Path, tmp_path: Path) -> None:
    marker = tmp_path / "program-ran.txt"
    script = tmp_path / "program.sh"
    script.write_text(MARKER_SCRIPT.format(marker=marker.as_posix()))
    script.chmod(0o755)
    for key in ("core.fsmonitor", "diff.external", "core.pager", "pager.log", "core.editor"):
        git(repo, "config", key, str(script))
    (repo / "a.py").write_text("A = 2\n")
    subprocess.run(["git", "diff"], cwd=repo, capture_output=True)  # the setup works
    assert marker.exists()
    marker.unlink()
    for name, args in [
        ("git_status", {}),
        ("git_diff", {}),
        ("git_log", {}),
        ("git_commit", {"message": "Configured", "paths": "a.py"}),
    ]:
        result = execute(ToolContext(repo), name, args)
        assert result.ok, (name, result.text)
    assert not marker.exists()


def test_the_environment_cannot_point_git_at_another_repository(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = make_repo(tmp_path / "other")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    (repo / "a.py").write_text("A = 2\n")
    result = run(repo, "git_commit", message="Here", paths="a.py")
    monkeypatch.delenv("GIT_DIR")
    monkeypatch.delenv("GIT_WORK_TREE")
    assert result.ok, result.text
    assert commits(repo)[0] == "Here" and commits(other) == ["first"]


# ---- identity --------------------------------------------------------------------------


def author(root: Path) -> str:
    return git(root, "log", "-1", "--format=%an <%ae>|%cn <%ce>")


def test_a_commit_without_a_configured_identity_uses_the_fallback(repo: Path) -> None:
    (repo / "a.py").write_text("A = 2\n")
    result = run(repo, "git_commit", message="Fallback", paths="a.py")
    assert result.ok, result.text
    assert author(repo).strip() == "localagent <localagent@localhost>|" + (
        "localagent <localagent@localhost>"
    )
    assert "localagent@localhost" in result.text


def test_a_configured_identity_is_kept(repo: Path) -> None:
    git(repo, "config", "user.name", "Ada Lovelace")
    git(repo, "config", "user.email", "ada@example.com")
    (repo / "a.py").write_text("A = 2\n")
    result = run(repo, "git_commit", message="Mine", paths="a.py")
    assert result.ok, result.text
    assert author(repo).startswith("Ada Lovelace <ada@example.com>")
    assert "localagent@localhost" not in result.text


# ---- where git may act -------------------------------------------------------------


@pytest.mark.parametrize("name", ["git_status", "git_diff", "git_log", "git_commit"])
def test_a_workspace_that_is_not_a_repository_says_so(tmp_path: Path, name: str) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.py").write_text("A = 1\n")
    args = {"message": "x"} if name == "git_commit" else {}
    result = execute(ToolContext(ws), name, args)
    assert not result.ok
    assert "not a git repository" in result.text
    assert not (ws / ".git").exists()


@pytest.mark.parametrize("name", ["git_status", "git_commit"])
def test_a_workspace_inside_a_repository_is_refused(tmp_path: Path, name: str) -> None:
    outer = make_repo(tmp_path / "outer")
    ws = outer / "ws"
    ws.mkdir()
    (ws / "a.py").write_text("A = 1\n")
    (outer / "a.py").write_text("changed outside\n")
    args = {"message": "x", "paths": "a.py"} if name == "git_commit" else {}
    result = execute(ToolContext(ws), name, args)
    assert not result.ok
    assert "top level" in result.text and "outside the workspace" in result.text
    assert commits(outer) == ["first"]
    assert git(outer, "diff", "--cached", "--name-only") == ""


def test_git_missing_from_path_is_a_clear_observation(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    result = run(repo, "git_status")
    assert not result.ok and "git" in result.text and "PATH" in result.text


def test_policies() -> None:
    tools = {tool.name: tool.policy for tool in catalog()}
    for name in ("git_status", "git_diff", "git_log"):
        assert (tools[name].resume, tools[name].spawns, tools[name].changes) == (
            "redo",
            True,
            False,
        )
    commit = tools["git_commit"]
    assert (commit.resume, commit.spawns, commit.changes) == ("never", True, True)


# ---- through the CLI -----------------------------------------------------------------

COMMIT_GOAL = "Commit the change to a.py"
COMMIT_ARGS = {"message": "Update a.py", "paths": "a.py"}


def commit_scenario() -> dict[str, object]:
    """A model that looks (status, diff), commits, checks the log, and is done; told that
    its commit was interrupted, it leaves it as it is, and says so again after the one
    "not accepted yet" a subtask in which nothing ran gets."""
    subtask = "ACTIVE SUBTASK: Commit"
    return {
        "rules": [
            plan_rule(("Commit", ["Commit the change to a.py with git"])),
            {"match": "was interrupted", "reply": done("left as it is")},
            {"match": r"localagent: Update a\.py", "reply": done("committed a.py")},
            {"match": r"\[main [0-9a-f]+\] Update a\.py", "reply": call("git_log", max_count=1)},
            {"match": r"\+A = 2", "reply": call("git_commit", **COMMIT_ARGS)},
            {"match": "## main", "reply": call("git_diff", path="a.py")},
            {"match": subtask, "in": "last", "reply": call("git_status")},
        ]
    }


def test_the_model_looks_commits_and_reads_the_log_through_the_cli(repo: Path) -> None:
    (repo / "a.py").write_text("A = 2\n")
    with FakeServer(commit_scenario()) as server:
        env = cli_env(server.url)
        result = run_cli(env, "start", COMMIT_GOAL, "-w", str(repo), "--foreground")
        first_round = next(r for r in server.chat_requests if not r.get("format"))
    assert result.returncode == 0, result.stderr
    assert commits(repo) == ["Update a.py", "first"]
    assert author(repo).startswith("localagent <localagent@localhost>")
    names = [tool["function"]["name"] for tool in first_round["tools"]]
    assert "git_commit" in names and "delegate" not in names
    recs = records(repo)
    started = [r for r in recs if r["type"] == "action_started"]
    assert [r["tool"] for r in started] == ["git_status", "git_diff", "git_commit", "git_log"]
    assert all(r["marker"] for r in started)  # journaled before each git process starts
    finished = [r for r in recs if r["type"] == "action_finished"]
    assert all(r["ok"] and "facts" not in r for r in finished)
    assert "Update a.py" in finished[2]["result"]
    assert ".agent_context" not in git(repo, "ls-files")


def test_an_interrupted_commit_is_not_run_again_on_resume(repo: Path) -> None:
    (repo / "a.py").write_text("A = 2\n")
    journal = Journal(repo)
    journal.load()
    journal.append("goal_started", goal=COMMIT_GOAL, model="gpt-oss:20b", settings={})
    journal.append("plan", tasks=[{"description": "Commit", "subtasks": [COMMIT_GOAL]}])
    journal.append(
        "llm_call",
        purpose="round",
        prompt_tokens=100,
        completion_tokens=10,
        duration_ms=5.0,
        content="",
        probe={},
        tool_calls=[{"id": "1.1", "name": "git_commit", "arguments": COMMIT_ARGS}],
    )
    sig = loopguard.signature(*canonical_call("git_commit", COMMIT_ARGS))
    journal.append(
        "action_started", tool="git_commit", args=COMMIT_ARGS, signature=sig, round=1, call="1.1"
    )
    journal.finish()
    with FakeServer(commit_scenario()) as server:
        result = run_cli(cli_env(server.url), "resume", "-w", str(repo), "--foreground")
    assert result.returncode == 0, result.stderr
    recs = records(repo)
    interrupted = [r for r in recs if r["type"] == "action_interrupted"]
    assert len(interrupted) == 1 and interrupted[0]["tool"] == "git_commit"
    text = interrupted[0]["text"]
    assert "the call `git_commit(message='Update a.py', paths='a.py')` was interrupted" in text
    assert not [r for r in recs if r["type"] == "action_finished"]
    nudged = [r for r in recs if r["type"] == "feedback" and r.get("nudged")]
    assert len(nudged) == 1  # nothing ran in the subtask: its "done" is not taken at once
    assert commits(repo) == ["first"]
    assert " M a.py" in git(repo, "status", "--porcelain")


# ---- a planted repository configuration ---------------------------------------------

GIT_TOOL_CALLS = [
    ("git_status", {}),
    ("git_diff", {}),
    ("git_diff", {"staged": True}),
    ("git_log", {}),
    ("git_commit", {"message": "Configured", "paths": "a.py lib"}),
]
# Every setting with which a repository's own configuration names a program to run.
PROGRAM_SETTINGS = [
    "core.fsmonitor",
    "core.pager",
    "pager.log",
    "pager.status",
    "pager.diff",
    "core.editor",
    "sequence.editor",
    "core.sshCommand",
    "core.askPass",
    "core.gitProxy",
    "credential.helper",
    "diff.external",
    "diff.planted.command",
    "diff.planted.textconv",
    "merge.planted.driver",
    "filter.planted.clean",
    "filter.planted.smudge",
    "filter.planted.process",
    "gpg.program",
    "gpg.openpgp.program",
    "gpg.ssh.program",
    "gpg.x509.program",
    "gpg.ssh.defaultKeyCommand",
    "core.alternateRefsCommand",
    "uploadpack.packObjectsHook",
    "remote.origin.uploadpack",
    "remote.origin.receivepack",
]
PROGRAM_SWITCHES = {
    "log.showSignature": "true",
    "commit.gpgSign": "true",
    "core.hooksPath": ".git/hooks",
    "filter.planted.required": "true",
    "status.submoduleSummary": "true",
    "remote.origin.url": "ssh://example.invalid/repo.git",
    "protocol.ext.allow": "always",
    "protocol.ssh.allow": "always",
    "protocol.planted.allow": "always",
}


def plant_programs(repo: Path, script: Path, *, via_include: bool = False) -> None:
    """The repository's configuration names the marker script for every program setting;
    the attributes send every file through the planted drivers, and every hook runs it."""
    config = repo / ".git" / ("planted.cfg" if via_include else "config")
    for key in PROGRAM_SETTINGS:
        git(repo, "config", "--file", str(config), key, str(script))
    for key, value in PROGRAM_SWITCHES.items():
        git(repo, "config", "--file", str(config), key, value)
    if via_include:
        git(repo, "config", "include.path", "planted.cfg")
    attributes = "* diff=planted merge=planted filter=planted\n"
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "attributes").write_text(attributes)
    for name in ("pre-commit", "commit-msg", "post-commit", "reference-transaction"):
        (repo / ".git" / "hooks" / name).write_text(script.read_text())
        (repo / ".git" / "hooks" / name).chmod(0o755)


@pytest.mark.skipif(sys.platform == "win32", reason="the programs are shell scripts")
@pytest.mark.parametrize("via_include", [False, True])
def test_a_planted_configuration_runs_no_program_in_any_git_tool(
    repo: Path, tmp_path: Path, via_include: bool
) -> None:
    marker = tmp_path / "program-ran.txt"
    script = tmp_path / "program.sh"
    script.write_text(MARKER_SCRIPT.format(marker=marker.as_posix()))
    script.chmod(0o755)
    git(repo, "commit", "-q", "--allow-empty", "-m", "second")
    plant_programs(repo, script, via_include=via_include)
    # The setup works: git run the ordinary way runs the planted programs.
    (repo / "a.py").write_text("A = 2\n")
    subprocess.run(["git", "log", "-1"], cwd=repo, capture_output=True)
    subprocess.run(["git", "diff"], cwd=repo, capture_output=True)
    assert marker.exists()
    marker.unlink()
    for name, args in GIT_TOOL_CALLS:
        (repo / "lib" / "b.py").write_text(f"B = {name!r}\n")
        result = execute(ToolContext(repo), name, args)
        assert result.ok, (name, result.text)
        assert not marker.exists(), (name, marker.read_text())
    assert commits(repo)[0] == "Configured"
    # The commit stored the files as they are: no filter changed them on the way in.
    assert git(repo, "show", "HEAD:a.py") == "A = 2\n"


@pytest.mark.skipif(sys.platform == "win32", reason="the programs are shell scripts")
def test_a_filter_the_user_configured_still_runs(repo: Path, tmp_path: Path) -> None:
    """git-lfs and the like live in the user's own configuration: they are trusted and a
    commit stores what they make of a file, even when the repository names the driver."""
    user_config = tmp_path / "user.gitconfig"
    upper = tmp_path / "upper.sh"
    upper.write_text("#!/bin/sh\ntr a-z A-Z\n")
    upper.chmod(0o755)
    git(repo, "config", "--file", str(user_config), "filter.shout.clean", str(upper))
    git(repo, "config", "filter.shout.clean", "false")  # the repository's own is ignored
    git(repo, "config", "filter.shout.required", "true")
    (repo / ".gitattributes").write_text("*.txt filter=shout\n")
    (repo / "note.txt").write_text("quiet\n")
    env = {"GIT_CONFIG_GLOBAL": str(user_config)}
    with pytest.MonkeyPatch.context() as patch:
        for key, value in env.items():
            patch.setenv(key, value)
        result = run(repo, "git_commit", message="Shout", paths="note.txt .gitattributes")
    assert result.ok, result.text
    assert git(repo, "show", "HEAD:note.txt") == "QUIET\n"


def outside_repository(tmp_path: Path) -> Path:
    other = make_repo(tmp_path / "other", {"o.py": "O = 1\n"})
    return other


def assert_refused_as_outside(ws: Path, other: Path) -> None:
    for name, args in GIT_TOOL_CALLS:
        result = execute(ToolContext(ws), name, args)
        assert not result.ok, (name, result.text)
        assert "outside the workspace" in result.text, (name, result.text)
    assert commits(other) == ["first"]
    assert git(other, "status", "--porcelain") == ""


def test_a_git_file_naming_another_repository_is_refused(tmp_path: Path) -> None:
    other = outside_repository(tmp_path)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").write_text(f"gitdir: {other / '.git'}\n")
    (ws / "a.py").write_text("A = 1\n")
    (ws / "lib").mkdir()
    assert_refused_as_outside(ws, other)


@pytest.mark.skipif(sys.platform == "win32", reason="symbolic links need a privilege")
def test_a_git_link_to_another_repository_is_refused(tmp_path: Path) -> None:
    other = outside_repository(tmp_path)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").symlink_to(other / ".git", target_is_directory=True)
    (ws / "a.py").write_text("A = 1\n")
    (ws / "lib").mkdir()
    assert_refused_as_outside(ws, other)


def test_a_repository_sharing_another_ones_branches_is_refused(repo: Path, tmp_path: Path) -> None:
    """`.git/commondir` (as a linked worktree has) puts branches in another repository."""
    other = outside_repository(tmp_path)
    (repo / ".git" / "commondir").write_text(f"{other / '.git'}\n")
    (repo / "a.py").write_text("A = 2\n")
    for name, args in GIT_TOOL_CALLS:
        result = execute(ToolContext(repo), name, args)
        assert not result.ok, (name, result.text)
        assert "outside the workspace" in result.text, (name, result.text)
    assert commits(other) == ["first"]


def test_a_git_file_naming_a_folder_inside_the_workspace_works(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws")
    (ws / ".git").rename(ws / "repo.git")
    (ws / ".git").write_text("gitdir: repo.git\n")
    (ws / "a.py").write_text("A = 2\n")
    result = run(ws, "git_commit", message="Inside", paths="a.py")
    assert result.ok, result.text
    assert commits(ws)[0] == "Inside"
