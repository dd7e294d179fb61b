"""The workspace's own git repository, and git run on it so that nothing the repository
configures runs a program or reaches another repository.

A repository's `.git` folder can come from anyone (an unpacked archive, a shared drive), so
its configuration is not trusted: every setting that names a program is overridden on the
command line (`-c`), hooks point at an empty folder made for the call, no transport may
run (`protocol.allow=never`), and the filter drivers it names are switched off, or put back
to the user's own (git-lfs in the user's configuration keeps working). The system and
user configuration files stay trusted: they are the user's choice, like `GIT_CONFIG_GLOBAL`.

The repository must be the workspace's own: its top level is the workspace, and its git
folder and the folder holding its branches (`commondir`) lie inside it, so a `.git` file
or link naming another repository is refused rather than letting a commit move that
repository's branch. Once checked, `GIT_DIR` and `GIT_WORK_TREE` are pinned to it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from localagent.system.process import LaunchError, ProcessResult, run_process
from localagent.tools.base import ToolContext, ToolError

GIT_TIMEOUT = 120.0
MAX_CONFIG_BYTES = 1_000_000
FALLBACK_IDENTITY = {"user.name": "localagent", "user.email": "localagent@localhost"}
SAFE_CONFIG = (
    "core.fsmonitor=false",
    "core.pager=cat",
    "core.editor=:",
    "sequence.editor=:",
    "core.askPass=",
    "core.quotePath=false",
    "commit.gpgSign=false",
    "tag.gpgSign=false",
    "log.showSignature=false",
    "status.submoduleSummary=false",
    "protocol.allow=never",  # no fetch of any kind: ssh, credential helpers, proxies
    "protocol.file.allow=never",
    "protocol.git.allow=never",
    "protocol.ssh.allow=never",
    "protocol.http.allow=never",
    "protocol.https.allow=never",
    "protocol.ext.allow=never",  # ext:: runs any command it names
    "gc.auto=0",
    "maintenance.auto=false",
    "credential.helper=",
    "advice.statusHints=false",  # hints name git commands the model cannot run
)
FILTER_COMMANDS = ("clean", "smudge", "process")
TRUSTED_SCOPES = frozenset({"system", "global", "command"})
SCOPES = TRUSTED_SCOPES | {"local", "worktree", "unknown", "submodule"}
# Identity and which configuration files to read are the user's choice; other GIT_*
# variables (GIT_DIR, GIT_EXTERNAL_DIFF, GIT_CONFIG_PARAMETERS, ...) are dropped.
KEPT_VARIABLES = frozenset(
    {"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"}
    | {"GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM"}
)
FIXED_VARIABLES = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_EDITOR": ":",  # git's own word for "no editor"
    "GIT_PAGER": "cat",
    "GIT_OPTIONAL_LOCKS": "0",  # reading never rewrites the index under the user's feet
    "GIT_NO_LAZY_FETCH": "1",  # a partial clone never reaches the network
}


class Git:
    """git for one tool call, run in the workspace with the safe configuration."""

    def __init__(self, ctx: ToolContext, program: str, hooks: str) -> None:
        self.ctx = ctx
        self.prefix = [program, "--no-pager", "-c", f"core.hooksPath={hooks}"]
        for setting in SAFE_CONFIG:
            self.prefix += ["-c", setting]
        self.env: dict[str, str | None] = {
            name: None
            for name in os.environ
            if name.upper().startswith("GIT_") and name.upper() not in KEPT_VARIABLES
        }
        self.env.update(FIXED_VARIABLES)

    def run(self, *args: str, limit: int = 0) -> ProcessResult:
        """Runs git, its processes carrying the call's marker; `limit`: the output kept,
        when it must be whole rather than as much as the model is shown."""
        ctx = self.ctx
        timeout = min(GIT_TIMEOUT, ctx.max_timeout)
        try:
            result = run_process(
                [*self.prefix, *args],
                ctx.root,
                timeout,
                limit or max(ctx.output_limit, 200),
                ctx.cancelled,
                env=self.env,
                marker=ctx.marker,
            )
        except LaunchError as exc:
            raise ToolError.of("git_unrunnable", problem=exc) from exc
        if result.cancelled:
            raise ToolError.of("git_stopped")
        if result.timed_out:
            raise ToolError.of("git_timed_out", seconds=f"{timeout:g}", output=result.output)
        return result

    def has_commits(self) -> bool:
        return self.run("rev-parse", "-q", "--verify", "HEAD").returncode == 0

    def identity(self) -> dict[str, str]:
        """The fallback identity settings this repository needs (none if it has its own)."""
        found = self.run("config", "--get-regexp", r"^user\.(name|email)$")
        have = {line.split(" ", 1)[0].lower() for line in found.output.splitlines()}
        return {key: value for key, value in FALLBACK_IDENTITY.items() if key not in have}


@contextlib.contextmanager
def repository(ctx: ToolContext) -> Iterator[Git]:
    """git on the workspace's own repository, or ToolError saying why there is none."""
    program = _program()
    with tempfile.TemporaryDirectory(prefix="localagent-nohooks-") as hooks:
        git = Git(ctx, program, hooks)
        _check_top_level(git)
        git_dir = _check_git_dirs(git)
        git.env.update(GIT_DIR=git_dir, GIT_WORK_TREE=str(ctx.root))
        settings = _configuration(git)
        for setting in _filters_off(settings) + _protocols_off(settings):
            git.prefix += ["-c", setting]
        yield git


def _program() -> str:
    program = shutil.which("git")
    if program is None:
        raise ToolError.of("git_missing")
    if sys.platform == "win32" and Path(program).suffix.lower() in (".bat", ".cmd"):
        raise ToolError.of("git_batch_file", program=program)
    return program


def _check_top_level(git: Git) -> None:
    root = git.ctx.root
    found = git.run("rev-parse", "--show-toplevel")
    top = found.output.strip()
    if found.returncode != 0:
        said = top.splitlines()[-1] if top else f"exit code {found.returncode}"
        raise ToolError.of("not_a_repository", said=said)
    if not _same_folder(Path(top), root):
        raise ToolError.of("repository_above", top=top)


def _check_git_dirs(git: Git) -> str:
    """The repository's git folder, once it and its branches' folder are inside the
    workspace (a `.git` file, a `.git` link or a `commondir` may name any folder)."""
    root = os.path.realpath(git.ctx.root)
    found = git.run("rev-parse", "--absolute-git-dir", "--git-common-dir")
    lines = found.output.splitlines()
    if found.returncode != 0 or len(lines) != 2:
        raise ToolError.of("git_dir_unknown", output=found.output.strip())
    folders = [os.path.realpath(os.path.join(git.ctx.root, line)) for line in lines]
    for folder, what in zip(folders, ("git folder", "branches and objects"), strict=True):
        if os.path.commonpath([root, folder]) != root:
            raise ToolError.of("repository_kept_outside", what=what, folder=folder)
    return folders[0]


def _configuration(git: Git) -> list[tuple[str, str, str | None]]:
    """Every setting git reads for this repository: (scope, key, value or None).

    Read as bytes, NUL-separated, outside run_process (whose text drops NULs): a value
    holding a newline or a stray byte could otherwise pass for a setting of its own."""
    env = {**os.environ, **git.env}
    argv = [*git.prefix, "config", "--list", "--show-scope", "--includes", "-z"]
    try:
        done = subprocess.run(
            [*argv],
            cwd=git.ctx.root,
            env={key: value for key, value in env.items() if value is not None},
            capture_output=True,
            timeout=min(GIT_TIMEOUT, git.ctx.max_timeout),
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ToolError.of("git_config_unreadable", problem=exc) from None
    fields = done.stdout.split(b"\0")[:-1]
    scopes = {field.decode("ascii", "replace") for field in fields[::2]}
    bad = len(fields) % 2 or not scopes <= SCOPES or len(done.stdout) > MAX_CONFIG_BYTES
    if done.returncode != 0 or bad:
        said = os.fsdecode(done.stderr).strip().splitlines()[-1:] or ["no reason given"]
        raise ToolError.of("git_config_bad", said=said[0])
    settings = []
    for scope, entry in zip(fields[::2], fields[1::2], strict=True):
        key, newline, value = os.fsdecode(entry).partition("\n")
        settings.append((scope.decode("ascii"), key, value if newline else None))
    return settings


def _filters_off(settings: list[tuple[str, str, str | None]]) -> list[str]:
    """`-c` settings that switch off each filter driver the repository's own configuration
    sets a program for, or put back the program the user's configuration gives it."""
    planted: dict[str, set[str]] = {}
    trusted: dict[tuple[str, str], str] = {}
    for scope, key, value in settings:
        section, _, rest = key.partition(".")
        driver, _, name = rest.rpartition(".")
        name = name.lower()
        if section.lower() != "filter" or name not in FILTER_COMMANDS or not driver:
            continue
        if scope in TRUSTED_SCOPES:
            trusted[driver, name] = value or ""
        else:
            planted.setdefault(driver, set()).add(name)
    overrides = []
    for driver, names in sorted(planted.items()):
        _check_nameable(driver, "filter driver")
        # Only what the repository set: an empty `process` would also hide the user's `clean`.
        programs = {name: trusted.get((driver, name), "") for name in sorted(names)}
        overrides += [f"filter.{driver}.{name}={value}" for name, value in programs.items()]
        kept = any(trusted.get((driver, name)) for name in FILTER_COMMANDS)
        if not kept:  # a required filter with no program fails every add
            overrides.append(f"filter.{driver}.required=false")
    return overrides


def _protocols_off(settings: list[tuple[str, str, str | None]]) -> list[str]:
    """`-c` settings that keep every transport off: `protocol.NAME.allow` outranks
    `protocol.allow`, so each one any configuration sets is turned off by name."""
    names = set()
    for _, key, _ in settings:
        section, _, rest = key.partition(".")
        name, _, variable = rest.rpartition(".")
        if section.lower() == "protocol" and variable.lower() == "allow" and name:
            _check_nameable(name, "protocol")
            names.add(name)
    return [f"protocol.{name}.allow=never" for name in sorted(names)]


def _check_nameable(name: str, what: str) -> None:
    """A subsection `-c` cannot name (its `=` would end the key) cannot be overridden."""
    if "=" in name or "\n" in name:
        raise ToolError.of("git_config_unswitchable", what=what, name=repr(name))


def _same_folder(one: Path, two: Path) -> bool:
    try:
        return os.path.samefile(one, two)
    except OSError:
        return False
