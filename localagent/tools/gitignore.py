"""Git's name patterns: what a workspace's `.gitignore` files ignore, and the globs of
search_files and find_files.

Patterns are matched as git matches them while it walks a tree: a pattern without a
slash against an entry's name at any depth, one with a slash against the path from the
folder of its `.gitignore` (for a glob: from the folder searched); a trailing '/' matches
folders only; `**` spans folders. Within a file the last matching line wins, and a deeper
`.gitignore` overrides the ones above it. Below every `.gitignore` come, as in git, the
repository's `.git/info/exclude` and then the user's own excludes file (`core.excludesFile`
in the global git configuration, else `$XDG_CONFIG_HOME/git/ignore`), both read from the
workspace root. The walk does not enter an ignored folder, so nothing inside it can be
re-included, as in git.
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
    glob: Glob
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
            if rule.glob.match(local if rule.anchored else name):
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
    return _load_rules(folder / ".gitignore", base)


def excludes(root: Path) -> Chain:
    """The rules git applies below every .gitignore: the user's excludes file, then the
    repository's `.git/info/exclude` (which wins over it). Links on the way to the
    repository's file are not followed: a workspace could point them anywhere."""
    chain = [_load_rules(path, "") for path in (_user_excludes(), root / ".git/info/exclude")]
    return tuple(ignore for ignore in chain if ignore is not None)


def _load_rules(target: Path | None, base: str) -> IgnoreFile | None:
    if target is None:
        return None
    try:
        if not stat.S_ISREG(os.lstat(target).st_mode) or _linked_folder(target):
            return None
        with target.open("rb") as handle:
            data = handle.read(MAX_IGNORE_BYTES)
    except OSError:
        return None
    lines = data.decode("utf-8", errors="replace").splitlines()
    rules = tuple(rule for rule in map(parse_rule, lines) if rule is not None)
    return IgnoreFile(base, rules) if rules else None


def _linked_folder(target: Path) -> bool:
    """Whether `.git` or `.git/info` on the way to target is a link."""
    if target.parent.name != "info" or target.parent.parent.name != ".git":
        return False
    return any(os.path.islink(folder) for folder in (target.parent, target.parent.parent))


def _user_excludes() -> Path | None:
    """The user's excludes file, found as git finds it: `core.excludesFile` in the global
    configuration (`$GIT_CONFIG_GLOBAL`, `~/.gitconfig`, `$XDG_CONFIG_HOME/git/config`),
    else `$XDG_CONFIG_HOME/git/ignore` (`~/.config/git/ignore`)."""
    home = Path.home()
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config") / "git"
    configured = os.environ.get("GIT_CONFIG_GLOBAL")
    for config in [Path(configured)] if configured else [home / ".gitconfig", xdg / "config"]:
        named = _excludes_setting(config)
        if named is not None:
            return Path(os.path.expanduser(named)) if named else None
    return xdg / "ignore"


def _excludes_setting(config: Path) -> str | None:
    """`core.excludesFile` as a simple git configuration file sets it (the last setting
    wins), or None if it does not. Includes and quoting beyond plain quotes are not read."""
    try:
        with config.open("rb") as handle:
            text = handle.read(MAX_IGNORE_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return None
    found, section = None, ""
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("["):
            section = line[1:].split("]", 1)[0].strip().lower()
            line = line.split("]", 1)[-1].strip()
        key, sep, value = line.partition("=")
        if section == "core" and sep and key.strip().lower() == "excludesfile":
            found = value.split(" #", 1)[0].split(" ;", 1)[0].strip().strip('"')
    return found


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
    compiled = compile_glob(text.strip("/") or "*")
    if "/" in text.rstrip("/"):
        return compiled.match
    return lambda path: compiled.match(path.rsplit("/", 1)[-1])


ANY_FOLDERS = "**/"  # a leading or inner `**`: zero or more folders
SOME_FOLDERS = "/**"  # a trailing `**`: everything inside, one level or more
Segment = re.Pattern[str] | str


@dataclass(frozen=True)
class Glob:
    """Git's wildmatch, compiled a path segment at a time.

    Each segment is a regular expression whose stars cannot backtrack into each other
    (all but the last take the leftmost place for what follows them, which is where a
    wildcard match can always take it), and `**` segments are matched by stepping
    through the path's folders, so no pattern costs more than length times length.
    """

    segments: tuple[Segment, ...]
    plain: bool  # no `**`: one segment of the pattern per segment of the path

    def match(self, path: str) -> bool:
        parts = path.split("/")
        if self.plain:
            return len(parts) == len(self.segments) and all(
                segment.fullmatch(part)  # type: ignore[union-attr]
                for segment, part in zip(self.segments, parts, strict=True)
            )
        states = _skip_folders({0}, self.segments)
        for part in parts:
            states = _skip_folders(_step(states, self.segments, part), self.segments)
        return len(self.segments) in states


def _step(states: set[int], segments: tuple[Segment, ...], part: str) -> set[int]:
    """The pattern positions reached from states by matching one path segment."""
    reached: set[int] = set()
    for i in states:
        segment = segments[i] if i < len(segments) else None
        if isinstance(segment, str):  # a `**` takes this folder and may take more
            reached |= {i, i + 1} if segment == SOME_FOLDERS else {i}
        elif segment is not None and segment.fullmatch(part):
            reached.add(i + 1)
    return reached


def _skip_folders(states: set[int], segments: tuple[Segment, ...]) -> set[int]:
    """states, and the positions past a leading or inner `**` matching no folder."""
    found = set(states)
    for i in states:
        while i < len(segments) and segments[i] == ANY_FOLDERS:
            i += 1
            found.add(i)
    return found


def compile_glob(glob: str) -> Glob:
    """Git's wildmatch: `*` and `?` stop at '/', `**` spans folders, `[a-z]` and `[!a-z]`
    are classes, a backslash quotes the next character. re.error for a bad class."""
    parts = glob.split("/")
    segments: list[Segment] = []
    for k, part in enumerate(parts):
        if part == "**" and 0 < k == len(parts) - 1:
            segments.append(SOME_FOLDERS)
        elif part == "**":
            segments += [] if segments[-1:] == [ANY_FOLDERS] else [ANY_FOLDERS]
        else:
            segments.append(_segment(part))
    return Glob(tuple(segments), all(isinstance(s, re.Pattern) for s in segments))


def _segment(part: str) -> re.Pattern[str]:
    """One segment as a regular expression; its stars split it into fixed-width chunks."""
    chunks: list[list[str]] = [[]]
    i = 0
    while i < len(part):
        char = part[i]
        if char == "*":
            if chunks[-1] or len(chunks) == 1:  # a run of stars is one star
                chunks.append([])
            i += 1
        elif char == "[":
            text, i = _char_class(part, i)
            chunks[-1].append(text)
        elif char == "\\" and i + 1 < len(part):
            chunks[-1].append(re.escape(part[i + 1]))
            i += 2
        else:
            chunks[-1].append("[^/]" if char == "?" else re.escape(char))
            i += 1
    if len(chunks) == 1:
        return re.compile("".join(chunks[0]), _FLAGS | re.DOTALL)
    first, *middle, last = ("".join(chunk) for chunk in chunks)
    body = "".join(f"(?>[^/]*?{chunk})" for chunk in middle)
    return re.compile(f"{first}{body}[^/]*{last}", _FLAGS | re.DOTALL)


def _char_class(glob: str, i: int) -> tuple[str, int]:
    """The class `[...]` at i as a regular expression and the index after it; an
    unclosed '[' is a literal one."""
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
        return re.escape("["), i + 1
    escaped = "".join(
        m if m == "-" and 0 < k < len(members) - 1 else re.escape(m) for k, m in enumerate(members)
    )
    return (f"[^/{escaped}]" if negated else f"[{escaped}]"), j + 1
