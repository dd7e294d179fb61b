"""Git's name patterns: what a workspace's `.gitignore` files ignore, and the globs of
search_files and find_files.

Patterns are matched as git matches them while it walks a tree: a pattern without a
slash against an entry's name at any depth, one with a slash against the path from the
folder of its `.gitignore` (for a glob: from the folder searched); a trailing '/' matches
folders only; `**` spans folders. Within a file the last matching line wins, and a deeper
`.gitignore` overrides the ones above it. The walk does not enter an ignored folder, so
nothing inside it can be re-included, as in git.
"""

from __future__ import annotations

import os
import re
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

MAX_IGNORE_BYTES = 256 * 1024  # a larger .gitignore is read this far
# Git folds case where the file system does (core.ignorecase on Windows and macOS).
_FLAGS = re.IGNORECASE if sys.platform in ("win32", "darwin") else 0


@dataclass(frozen=True)
class Rule:
    regex: re.Pattern[str]
    negated: bool
    dir_only: bool
    anchored: bool  # matched against the path from the .gitignore's folder, not the name


@dataclass(frozen=True)
class IgnoreFile:
    base: str  # folder of the .gitignore, relative to the workspace ('' for its root)
    rules: tuple[Rule, ...]

    def verdict(self, path: str, name: str, is_dir: bool) -> bool | None:
        """True if its last matching line ignores path, False if it re-includes it, None
        if no line matches."""
        local = path[len(self.base) + 1 :] if self.base else path
        for rule in reversed(self.rules):
            if rule.dir_only and not is_dir:
                continue
            if rule.regex.fullmatch(local if rule.anchored else name):
                return not rule.negated
        return None


Chain = tuple[IgnoreFile, ...]  # the .gitignore files above a folder, outermost first


def ignored(chain: Chain, path: str, is_dir: bool) -> bool:
    """Whether the .gitignore files of chain ignore path (relative to the workspace)."""
    name = path.rsplit("/", 1)[-1]
    for ignore in reversed(chain):
        verdict = ignore.verdict(path, name, is_dir)
        if verdict is not None:
            return verdict
    return False


def load(folder: Path, base: str) -> IgnoreFile | None:
    """The rules of folder's .gitignore; None if it has none (or it is a link or not a
    regular file: its content could come from outside the workspace)."""
    target = folder / ".gitignore"
    try:
        if not stat.S_ISREG(os.lstat(target).st_mode):
            return None
        with target.open("rb") as handle:
            data = handle.read(MAX_IGNORE_BYTES)
    except OSError:
        return None
    lines = data.decode("utf-8", errors="replace").splitlines()
    rules = tuple(rule for rule in map(parse_rule, lines) if rule is not None)
    return IgnoreFile(base, rules) if rules else None


def parse_rule(line: str) -> Rule | None:
    """One line of a .gitignore as a rule; None for blank lines and comments."""
    stripped = line.rstrip(" ")
    if stripped.endswith("\\") and len(stripped) < len(line):
        stripped += " "  # "\ " keeps one trailing space
    if not stripped or stripped.startswith("#"):
        return None
    negated = stripped.startswith("!")
    body = stripped[1:] if negated else stripped
    dir_only = body.endswith("/")
    body = body.removesuffix("/")
    anchored = "/" in body
    body = body.removeprefix("/")
    if not body:
        return None
    try:
        return Rule(compile_glob(body), negated, dir_only, anchored)
    except re.error:
        return None  # git skips a line it cannot use, such as a class `[z-a]`


def glob_matcher(glob: str) -> Callable[[str], bool]:
    """A test of paths (relative to the folder searched) against a glob: `*.py` matches
    the name at any depth, `src/**/*.js` the path; backslashes count as '/'."""
    text = glob.strip().replace("\\", "/")
    while text.startswith("./"):
        text = text[2:]
    anchored = "/" in text.rstrip("/")
    regex = compile_glob(text.strip("/") or "*")
    if anchored:
        return lambda path: regex.fullmatch(path) is not None
    return lambda path: regex.fullmatch(path.rsplit("/", 1)[-1]) is not None


def compile_glob(glob: str) -> re.Pattern[str]:
    """Git's wildmatch as a regular expression: `*` and `?` stop at '/', `**` spans
    folders, `[a-z]` and `[!a-z]` are classes, a backslash quotes the next character."""
    out: list[str] = []
    i = 0
    while i < len(glob):
        char = glob[i]
        if char == "*":
            i = _stars(glob, i, out)
            continue
        if char == "[":
            i = _char_class(glob, i, out)
            continue
        if char == "\\" and i + 1 < len(glob):
            out.append(re.escape(glob[i + 1]))
            i += 2
            continue
        out.append("[^/]" if char == "?" else re.escape(char))
        i += 1
    return re.compile("".join(out), _FLAGS | re.DOTALL)


def _stars(glob: str, i: int, out: list[str]) -> int:
    """Translates the run of '*' at i; returns the index after it."""
    end = i
    while end < len(glob) and glob[end] == "*":
        end += 1
    whole_segment = (i == 0 or glob[i - 1] == "/") and (end == len(glob) or glob[end] == "/")
    if end - i < 2 or not whole_segment:
        out.append("[^/]*")  # other runs of asterisks are plain ones
        return end
    if end == len(glob):
        out.append(".*")  # `dir/**`: everything inside
        return end
    out.append("(?:.*/)?")  # `**/`: zero or more folders
    return end + 1


def _char_class(glob: str, i: int, out: list[str]) -> int:
    """Translates the class `[...]` at i; an unclosed '[' is a literal one."""
    j = i + 1
    negated = j < len(glob) and glob[j] in "!^"
    j += negated
    members: list[str] = []
    while j < len(glob) and (glob[j] != "]" or not members):
        if glob[j] == "\\" and j + 1 < len(glob):
            j += 1
        members.append(glob[j])
        j += 1
    if j >= len(glob):
        out.append(re.escape("["))
        return i + 1
    escaped = "".join(
        m if m == "-" and 0 < k < len(members) - 1 else re.escape(m) for k, m in enumerate(members)
    )
    out.append(f"[^/{escaped}]" if negated else f"[{escaped}]")
    return j + 1
