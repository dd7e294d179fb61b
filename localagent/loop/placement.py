"""Where the agent may work, and keeping its journal out of the way there.

A goal may read, write and run commands anywhere in its workspace: in the home folder or
at the root of a drive that is everything the user has, so those are refused unless the
user says so. In a git repository `.agent_context/` would show up in `git status` and
end up in a commit; `.git/info/exclude` (never committed, unlike `.gitignore`) keeps it
out of git's view.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from localagent.system import safefs
from localagent.system.errors import UsageError
from localagent.system.names import display

log = logging.getLogger("localagent")
ALLOW_FLAG = "--allow-home"
EXCLUDE_LINE = ".agent_context/"
# Lines that already keep the journal out of git's view, wherever the workspace lies.
_EXCLUDED = frozenset(
    {".agent_context", ".agent_context/", "**/.agent_context", "**/.agent_context/"}
)


def _same(a: Path, b: Path) -> bool:
    return os.path.normcase(str(a)) == os.path.normcase(str(b))


def too_wide(workspace: Path) -> str | None:
    """What the (resolved) workspace is when it is the home folder or a drive root."""
    if workspace.parent == workspace:
        return "the root of a drive"
    try:
        home = Path.home().resolve()
    except (RuntimeError, OSError):  # no home folder can be found: nothing to compare
        return None
    return "your home folder" if _same(workspace, home) else None


def refuse_wide(workspace: Path) -> None:
    """A UsageError, with both ways forward, for a goal in the home folder or a root."""
    if (what := too_wide(workspace)) is None:
        return
    raise UsageError(
        f"the workspace {display(workspace)} is {what}: a goal there may read and change "
        f"all of it; give a project folder with -w DIR, or add {ALLOW_FLAG} to work there "
        f"anyway"
    )


def repository(workspace: Path) -> Path | None:
    """The top of the git repository the workspace is in (or is), or None."""
    for folder in (workspace, *workspace.parents):
        if os.path.lexists(folder / ".git"):
            return folder
    return None


def _exclude_file(top: Path) -> Path | None:
    """`info/exclude` of the repository at `top`: in `.git/`, or where a `.git` file
    (a worktree, a submodule) points, in its common folder."""
    dot_git = top / ".git"
    if dot_git.is_dir():
        return dot_git / "info" / "exclude"
    try:
        text = safefs.read_bytes(dot_git, 4096).decode("utf-8", errors="replace")
    except (OSError, safefs.UnsafeFile):
        return None
    if not text.startswith("gitdir:"):
        return None
    git_dir = (top / text.removeprefix("gitdir:").strip()).resolve()
    try:
        common = safefs.read_bytes(git_dir / "commondir", 4096).decode("utf-8", errors="replace")
        git_dir = (git_dir / common.strip()).resolve()
    except (OSError, safefs.UnsafeFile):
        pass  # a submodule's folder is its own common folder
    return git_dir / "info" / "exclude"


def keep_out_of_git(workspace: Path) -> Path | None:
    """Add `.agent_context/` to the repository's `info/exclude` once; the file when it
    was added. Outside a repository nothing happens; a file that cannot be read or
    written is logged and left as it is."""
    top = repository(workspace)
    path = _exclude_file(top) if top is not None else None
    if path is None:
        return None
    try:
        safefs.check_dir(path.parent)
        text = safefs.read_bytes(path).decode("utf-8", errors="replace")
    except FileNotFoundError:
        text = ""
    except (OSError, safefs.UnsafeFile) as exc:
        log.warning("cannot read %s (%s); .agent_context/ may show in git status", path, exc)
        return None
    if any(line.strip().lstrip("/") in _EXCLUDED for line in text.splitlines()):
        return None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with safefs.open_file(path, "ab") as fh:
            fh.write(("\n" if text and not text.endswith("\n") else "").encode())
            fh.write(f"# localagent's journal\n{EXCLUDE_LINE}\n".encode())
    except (OSError, safefs.UnsafeFile) as exc:
        log.warning("cannot write %s (%s); .agent_context/ may show in git status", path, exc)
        return None
    return path
