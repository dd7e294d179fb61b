"""git_status, git_diff, git_log, git_commit: the `git` program on the workspace's own
repository, with fixed argument lists and no shell.

Which repository git may act on, and how nothing its configuration names runs (hooks,
file system monitor, pager, external diff, text conversion, editor, signing, filters,
transports), is `localagent.tools.gitrepo`; here the four tools also pass
`--no-ext-diff`, `--no-textconv` and `--ignore-submodules=dirty` (git never runs inside a
submodule, whose own configuration was never looked at).
"""

from __future__ import annotations

import os
import shlex
from typing import Annotated

from localagent.system.process import ProcessResult
from localagent.tools.base import JOURNAL_DIR, WORDS, ToolContext, ToolError, ToolResult
from localagent.tools.gitrepo import FALLBACK_IDENTITY, repository
from localagent.tools.paths import relative, resolve_in_workspace

MAX_LOG = 100
# Every journal folder, this workspace's and nested ones', in any letter case.
NOT_JOURNAL = f":(exclude,glob,icase)**/{JOURNAL_DIR}/**"
LITERAL = ":(literal)"  # a path as it is named, never read as a pattern


def git_status(ctx: ToolContext) -> ToolResult:
    """Show the branch and the changed, staged and untracked files of the workspace's git
    repository (short format: ' M' changed, 'M ' staged, '??' untracked)."""
    with repository(ctx) as git:
        args = ["status", "--porcelain=v1", "--branch", "--ignore-submodules=dirty"]
        result = git.run(*args, "--", ".", NOT_JOURNAL)
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
    with repository(ctx) as git:
        args = ["diff", "--no-ext-diff", "--no-textconv", "--ignore-submodules=dirty", "--no-color"]
        args += cached
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
    with repository(ctx) as git:
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
        WORDS,
    ] = "",
) -> ToolResult:
    """Commit to the workspace's git repository: the files and folders named in paths (new
    and deleted ones included), or with no paths every change to files git tracks. Hooks
    do not run."""
    if not message.strip() or "\x00" in message:
        raise ToolError.of("commit_message_empty")
    specs = [_pathspec(ctx, raw) for raw in _split_paths(paths)]
    with repository(ctx) as git:
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
        raise ToolError.of("git_paths_unreadable", paths=repr(paths), problem=exc) from None


def _pathspec(ctx: ToolContext, raw: str) -> str:
    """A literal pathspec for a workspace path: the link itself for a link inside the
    workspace (git tracks links as links), the resolved path for other spellings."""
    resolved = resolve_in_workspace(ctx.root, raw)
    lexical = os.path.normpath(raw.replace("\\", "/")).replace("\\", "/")
    plain = not os.path.isabs(lexical) and not lexical.startswith("..") and ":" not in lexical
    return LITERAL + (lexical if plain else relative(ctx.root, resolved))
