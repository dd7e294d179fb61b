"""git_status, git_diff, git_log, git_commit: the `git` program on the workspace's own
repository, with fixed argument lists and no shell.

Nothing the repository or the user configured that runs a program or waits for a person
does: no hooks (`core.hooksPath` points at an empty folder made for the call), no file
system monitor, pager, external diff, text conversion, editor, signing, prompt or
automatic housekeeping. The repository's filter drivers (git-lfs) do run: without them
a commit would store the wrong content. `GIT_*` variables are dropped, so the
environment cannot point git at another repository. The repository's top level must be
the workspace itself: a workspace inside a larger repository would let a commit take
files outside it.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

from localagent.process import LaunchError, ProcessResult, run_process
from localagent.tools.base import JOURNAL_DIR, ToolContext, ToolError, ToolResult
from localagent.tools.paths import relative, resolve_in_workspace

GIT_TIMEOUT = 120.0
MAX_LOG = 100
# Every journal folder, this workspace's and nested ones', in any letter case.
NOT_JOURNAL = f":(exclude,glob,icase)**/{JOURNAL_DIR}/**"
LITERAL = ":(literal)"  # a path as it is named, never read as a pattern
FALLBACK_IDENTITY = {"user.name": "localagent", "user.email": "localagent@localhost"}
SAFE_CONFIG = (
    "core.fsmonitor=false",
    "core.pager=cat",
    "core.editor=:",
    "core.quotePath=false",
    "commit.gpgSign=false",
    "gc.auto=0",
    "maintenance.auto=false",
    "credential.helper=",
    "advice.statusHints=false",  # hints name git commands the model cannot run
)
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


def git_status(ctx: ToolContext) -> ToolResult:
    """Show the branch and the changed, staged and untracked files of the workspace's git
    repository (short format: ' M' changed, 'M ' staged, '??' untracked)."""
    with _repository(ctx) as git:
        result = git.run("status", "--porcelain=v1", "--branch", "--", ".", NOT_JOURNAL)
    lines = result.output.strip()
    if result.returncode == 0 and "\n" not in lines:
        lines += "\nnothing to commit: no changes and no untracked files"
    return _outcome("git status", result, lines)


def git_diff(
    ctx: ToolContext,
    path: Annotated[str, "A file or folder to limit it to; empty: the whole workspace."] = "",
    staged: Annotated[bool, "true: what is staged for the next commit instead."] = False,
) -> ToolResult:
    """Show the changes to files git tracks, as a unified diff: unstaged changes, or with
    staged=true what is staged for the next commit."""
    spec = _pathspec(ctx, path) if path.strip() else "."
    cached = ["--cached"] if staged else []
    with _repository(ctx) as git:
        args = ["diff", "--no-ext-diff", "--no-textconv", "--no-color", *cached]
        result = git.run(*args, "--", spec, NOT_JOURNAL)
    text = result.output
    if result.returncode == 0 and not text.strip():
        which = "staged" if staged else "unstaged"
        text = f"no differences: no {which} changes (git_status lists files git does not track)"
    return _outcome("git diff", result, text)


def git_log(
    ctx: ToolContext,
    max_count: Annotated[int, "How many commits to show, newest first."] = 10,
) -> ToolResult:
    """List the latest commits of the workspace's git repository: hash, date, author and
    subject, newest first."""
    count = min(max(max_count, 1), MAX_LOG)
    with _repository(ctx) as git:
        fmt = "--format=%h%d %ad %an: %s"
        result = git.run("log", f"-n{count}", "--no-color", "--date=short", fmt)
        if result.returncode != 0 and not git.has_commits():
            return ToolResult(True, "no commits yet: the repository's branch has no commits")
    return _outcome("git log", result, result.output)


def git_commit(
    ctx: ToolContext,
    message: Annotated[str, "The commit message: what the commit changes and why."],
    paths: Annotated[
        str,
        "Files and folders to commit, separated by spaces or commas (quote names with "
        "spaces); new files must be named. Empty: every change to files git already tracks.",
    ] = "",
) -> ToolResult:
    """Commit to the workspace's git repository: the files and folders named in paths (new
    and deleted ones included), or with no paths every change to files git tracks. Hooks
    do not run."""
    if not message.strip() or "\x00" in message:
        raise ToolError("the commit message is empty or holds a NUL; say what the commit changes")
    specs = [_pathspec(ctx, raw) for raw in _split_paths(paths)]
    with _repository(ctx) as git:
        identity = git.identity()
        added = git.run("add", "-A" if specs else "-u", "--", *(specs or ["."]), NOT_JOURNAL)
        if added.returncode != 0:
            return _outcome("git add", added, added.output)
        only = ["--", *specs, NOT_JOURNAL] if specs else []
        config = [arg for key, value in identity.items() for arg in ("-c", f"{key}={value}")]
        args = ["commit", "--no-verify", "--untracked-files=no", "-m", message, *only]
        result = git.run(*config, *args)
    if result.returncode != 0:
        hint = "" if specs else "\nnew files are committed only when paths names them"
        return _outcome("git commit", result, result.output.rstrip() + hint)
    text = result.output.rstrip()
    if identity:
        shown = f"{FALLBACK_IDENTITY['user.name']} <{FALLBACK_IDENTITY['user.email']}>"
        text += f"\n(committed as {shown}: this repository has no git identity configured)"
    return ToolResult(True, text, changed=True)


def _outcome(what: str, result: ProcessResult, text: str) -> ToolResult:
    text = text.replace(LITERAL, "")  # git repeats pathspecs as given
    if result.returncode == 0:
        return ToolResult(True, text.rstrip() or "(no output)")
    shown = text.strip() or "(no output)"
    return ToolResult(False, f"{what} failed (exit code {result.returncode}):\n{shown}")


def _split_paths(paths: str) -> list[str]:
    lexer = shlex.shlex(paths, posix=True)
    lexer.whitespace += ","
    lexer.whitespace_split = True
    lexer.commenters = ""
    lexer.escape = ""
    try:
        return list(lexer)
    except ValueError as exc:
        raise ToolError(f"cannot read paths {paths!r}: {exc}") from None


def _pathspec(ctx: ToolContext, raw: str) -> str:
    """A literal pathspec for a workspace path: the link itself for a link inside the
    workspace (git tracks links as links), the resolved path for other spellings."""
    resolved = resolve_in_workspace(ctx.root, raw)
    lexical = os.path.normpath(raw.replace("\\", "/")).replace("\\", "/")
    plain = not os.path.isabs(lexical) and not lexical.startswith("..") and ":" not in lexical
    return LITERAL + (lexical if plain else relative(ctx.root, resolved))


class _Git:
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

    def run(self, *args: str, announce: bool = True) -> ProcessResult:
        """Runs git; `announce`: its pid goes to the journal (ctx.on_launch)."""
        ctx = self.ctx
        timeout = min(GIT_TIMEOUT, ctx.max_timeout)
        launched = ctx.on_launch if announce else None
        try:
            result = run_process(
                [*self.prefix, *args],
                ctx.root,
                timeout,
                max(ctx.output_limit, 200),
                ctx.cancelled,
                launched,
                self.env,
            )
        except LaunchError as exc:
            raise ToolError(f"cannot run git: {exc}") from exc
        if result.cancelled:
            raise ToolError("git was stopped: the agent was asked to stop")
        if result.timed_out:
            raise ToolError(f"git took longer than {timeout:g}s and was killed:\n{result.output}")
        return result

    def has_commits(self) -> bool:
        return self.run("rev-parse", "-q", "--verify", "HEAD", announce=False).returncode == 0

    def identity(self) -> dict[str, str]:
        """The fallback identity settings this repository needs (none if it has its own)."""
        found = self.run("config", "--get-regexp", r"^user\.(name|email)$", announce=False)
        have = {line.split(" ", 1)[0].lower() for line in found.output.splitlines()}
        return {key: value for key, value in FALLBACK_IDENTITY.items() if key not in have}


@contextlib.contextmanager
def _repository(ctx: ToolContext) -> Iterator[_Git]:
    """git on the workspace's repository, or ToolError saying why there is none."""
    program = shutil.which("git")
    if program is None:
        raise ToolError("git is not installed or not on PATH; the git tools need the git program")
    if sys.platform == "win32" and Path(program).suffix.lower() in (".bat", ".cmd"):
        raise ToolError(f"git on PATH is a batch file ({program}); the git tools need git.exe")
    with tempfile.TemporaryDirectory(prefix="localagent-nohooks-") as hooks:
        git = _Git(ctx, program, hooks)
        found = git.run("rev-parse", "--show-toplevel", announce=False)
        top = found.output.strip()
        if found.returncode != 0:
            said = top.splitlines()[-1] if top else f"exit code {found.returncode}"
            raise ToolError(
                f"the workspace is not a git repository (git says: {said}); the git tools "
                "work on a repository whose top level is the workspace"
            )
        if not _same_folder(Path(top), ctx.root):
            raise ToolError(
                f"the workspace is inside the git repository whose top level is {top}, "
                "outside the workspace; the git tools work only on a repository whose top "
                "level is the workspace itself, so a commit cannot take files outside it"
            )
        yield git


def _same_folder(one: Path, two: Path) -> bool:
    try:
        return os.path.samefile(one, two)
    except OSError:
        return False
