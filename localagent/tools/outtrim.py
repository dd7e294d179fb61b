"""A command's output as the model reads it: what no run of a workspace's code can tell it
left out. The stored output (`read_output`) keeps every line.

A local model's round is mostly the engine reading the prompt, and each round's new text
is read anew (see "The prompt cache" in the README). Qwen2.5-Coder-1.5B's mathx runs
spent 8 of 15 rounds on pytest, whose output held, besides the error: pytest's session
header (148 tokens: the platform, plugins and benchmark settings), a frame in Python's
importlib with its source line and caret marks (63), and a hint about module names (13),
of 488 in all. What goes:

- pytest's session header (the same lines in every run);
- frames of files outside the workspace, or in a hidden folder or `site-packages` in it
  (Python's library, installed packages): their location and source lines; a frame of
  pytest's long form keeps its location and `E` lines (the error);
- the lines of `^` and `~` that mark a traceback line's expression (Python 3.11+);
- of a traceback's frame in a workspace file, the workspace's own path: Python names a
  script it ran by its absolute path, `File "/home/me/game/rps_game.py"` (7-15 tokens a
  frame), and the model names it `rps_game.py`; so do pytest's report of a test module
  that does not import, its `E` line of a SyntaxError's file and its report of a
  fixture that is not there;
- of that report, the list of every fixture pytest's plugins give (about 100 tokens of
  this machine's plugins);
- pytest's frames in Python's frozen importlib (`<frozen importlib._bootstrap>:1204: in
  _gcd_import` and its `???`, four of them before a module's SyntaxError);
- pytest's "Hint: make sure your test modules/packages have valid Python names.";
- of failed tests whose `E` lines are the same, all but the first's report, and all but
  the first's line in the short summary: a line names the others;
- of the reports after the first, all but the test's name, the line that failed (`>`),
  the error (`E`) and where it was raised; past `MAX_REPORTS` of them, a line that says
  the others are left out, and past `MAX_SUMMARY` lines of the short summary, how many
  more.

The 1.5B's parametrized tests without `import mathx` failed twelve times with the same
NameError, 5,146 characters (1,665 tokens the engine read) where one report says it.

Of ruff's report, each problem it fixes itself (marked `[*]`) is one line, as ruff's
concise format writes it: its excerpt of the code and its fix as a diff go, since
`ruff check --fix` makes the change (the 1.5B's mathx test file's two unsorted and unused
imports: 1,012 characters, about 300 tokens read, for two lines). A problem left to the
model keeps its excerpt of the code.
"""

from __future__ import annotations

import re
from pathlib import Path

from localagent.tools.loaderror import own_file

__all__ = ["for_model"]

_BANNER = re.compile(
    r"^(?:platform \S+ -- Python |cachedir: |benchmark: |rootdir: |configfile: |testpaths: |"
    r"plugins: |hypothesis profile |using: |asyncio: |timeout: ).*\n?",
    re.M,
)
MAX_NAMED = 6  # tests named in a line of the same failure
# Reports, and short-summary lines, kept of tests that each fail their own way: the 1.5B's
# mathx tests expected wrong values in 33 of 44 cases, 3,689 characters (1,276 tokens the
# engine read anew) three times in one run; read_output has every line.
MAX_REPORTS = 5
MAX_SUMMARY = 8
LEFT_OUT = "(the reports of the other failed tests are left out: each fails its own way)"
_HINT = "Hint: make sure your test modules/packages have valid Python names."
_MARKS = re.compile(r"^\s*[~^]*\^[~^]*\s*$")
_PATH = r"((?:[A-Za-z]:[\\/])?[^\s:]+\.pyw?)"
# `/usr/lib/python3.11/json/__init__.py:346: in loads` (pytest's short form), and
# `<frozen importlib._bootstrap>:1204: in _gcd_import` (its source line `???`)
_SHORT = re.compile(rf"^(<frozen [^>]+>|{_PATH}):\d+: in \S+$")
# `/usr/lib/python3.11/json/decoder.py:353: JSONDecodeError` (the end of a long-form frame)
_LONG_END = re.compile(rf"^{_PATH}:\d+: \w+$")
# `  File "/usr/lib/python3.11/json/__init__.py", line 346, in loads` (Python's own; a
# SyntaxError's has no `, in`)
_FILE = re.compile(r'^(\s*)File "([^"]+)", line \d+(?:, in |$)')
# pytest's `E     File "/home/me/mathx/__init__.py", line 1` (a module's SyntaxError),
# `ImportError while importing test module '/home/me/tests/test_mathx.py'.`, and a fixture
# error's `file /home/me/tests/test_mathx.py, line 4` and `/home/me/tests/test_mathx.py:4`
_NAMED = re.compile(
    r'^E\s+File "([^"]+)", line \d+$|^ImportError while importing test module \'(.+)\'\.$'
    r"|^file (.+\.py), line \d+$|^(\S+\.py):\d+$"
)
# a fixture error's list of every fixture the plugins give, and where to see them
_FIXTURES = re.compile(r"^>\s+(?:available fixtures: |use 'pytest --fixtures )")
_SEPARATOR = re.compile(r"^(?:_ )+_?$|^_{3,} .* _{3,}$")


def for_model(root: Path, output: str) -> str:
    """The output without what only describes the machine or code not the workspace's."""
    if "[*]" in output:
        output = _ruff_fixable(output)
    if "test session starts" in output:
        head, sep, rest = output.partition("collected ")  # the header ends there
        output = _BANNER.sub("", head) + sep + rest
    if "Traceback" not in output and "Error" not in output and "fixture '" not in output:
        return _same_failures(output)
    lines = output.split("\n")
    kept: list[str] = []
    block = 0  # where the lines of pytest's current long-form frame start in `kept`
    skip_deeper = -1  # skipping the source lines of a dropped frame indented past this
    for line in lines:
        if skip_deeper >= 0:
            if line.strip() and len(line) - len(line.lstrip()) > skip_deeper:
                continue
            skip_deeper = -1
        if _MARKS.match(line) or line.strip() == _HINT or _FIXTURES.match(line):
            continue
        if found := _FILE.match(line):
            if (own := _own(root, found[2])) is None:
                skip_deeper = len(found[1])
                continue
            if own:
                line = line.replace(f'"{found[2]}"', f'"{own}"', 1)  # as the model names it
        if (found := _NAMED.match(line)) and (own := _own(root, name := _first(found))):
            line = line.replace(name, own, 1)
        if (found := _SHORT.match(line)) and _foreign(root, found[1]):
            skip_deeper = 0
            continue
        if (found := _LONG_END.match(line)) and _foreign(root, found[1]):
            kept[block:] = [k for k in kept[block:] if k.startswith("E ")]
        if _SEPARATOR.match(line) or _LONG_END.match(line):
            block = len(kept) + 1
        kept.append(line)
    return _same_failures("\n".join(kept))


# `F401 [*] `os` imported but unused` then ` --> t.py:2:8` (ruff 0.12 on), or
# `t.py:2:8: F401 [*] `os` imported but unused` (before); its excerpt follows.
_RUFF_FIXABLE = re.compile(r"^([A-Z]+[0-9]+ \[\*\] .+)$")
_RUFF_WHERE = re.compile(r"^ *--> (\S+:\d+:\d+)$")
_RUFF_OLD = re.compile(r"^\S+:\d+:\d+: [A-Z]+[0-9]+ \[\*\] .+$")
_RUFF_EXCERPT = re.compile(r"^ *(?:\d+ *)?[|+-](?: |$)|^ *= help: |^(?:help|note): ")


def _ruff_fixable(output: str) -> str:
    """ruff's report with each problem it fixes itself as one line: `where: code [*] what`."""
    lines = output.split("\n")
    kept: list[str] = []
    at = 0
    while at < len(lines):
        line, at = lines[at], at + 1
        where = _RUFF_WHERE.match(lines[at]) if at < len(lines) else None
        if (found := _RUFF_FIXABLE.match(line)) and where:
            line, at = f"{where[1]}: {found[1]}", at + 1
        elif not _RUFF_OLD.match(line):
            kept.append(line)
            continue
        kept.append(line)
        while at < len(lines) and _RUFF_EXCERPT.match(lines[at]):
            at += 1
        if at < len(lines) and not lines[at].strip():
            at += 1  # the blank line after the excerpt
    return "\n".join(kept)


_SECTION = re.compile(r"^={3,} (FAILURES|ERRORS) ={3,}$")
_BANNER_LINE = re.compile(r"^={3,} .* ={3,}$")
_TEST = re.compile(r"^_{3,} (.+?) _{3,}$")
_SUMMARY_LINE = re.compile(r"^(FAILED|ERROR) (\S+) - (.*)$")


def _same_failures(output: str) -> str:
    """pytest's reports of failed tests, each error once (see the module's docstring)."""
    if "FAILED" not in output and "ERROR" not in output:
        return output
    lines = output.split("\n")
    out: list[str] = []
    at = 0
    while at < len(lines):
        if _SECTION.match(lines[at]):
            end = next(
                (n for n in range(at + 1, len(lines)) if _BANNER_LINE.match(lines[n])), len(lines)
            )
            out += [lines[at], *_reports(lines[at + 1 : end])]
            at = end
        elif _SUMMARY_LINE.match(lines[at]):
            end = next(
                (n for n in range(at, len(lines)) if not _SUMMARY_LINE.match(lines[n])), len(lines)
            )
            out += _summary(lines[at:end])
            at = end
        else:
            out.append(lines[at])
            at += 1
    return "\n".join(out)


def _reports(lines: list[str]) -> list[str]:
    """The reports of a FAILURES or ERRORS section, one for each set of `E` lines, each
    followed by the names of the tests that failed the same way."""
    reports: list[tuple[str, list[str]]] = []
    for line in lines:
        if (test := _TEST.match(line)) or not reports:
            reports.append((test[1] if test else "", [line]))
        else:
            reports[-1][1].append(line)
    first: dict[tuple[str, ...], list[str]] = {}
    others: dict[tuple[str, ...], list[str]] = {}
    for name, body in reports:
        errors = tuple(line for line in body if line.startswith("E "))
        if not name or not errors or errors not in first:
            first.setdefault(errors or (name,), body)
            others.setdefault(errors or (name,), [])
        else:
            others[errors].append(name)
    kept: list[str] = []
    shown = 0  # reports of a test (not the lines before the first)
    for n, (key, body) in enumerate(first.items()):
        if shown == MAX_REPORTS and _TEST.match(body[0]):
            kept.append(LEFT_OUT)  # not counted: the output may have been cut in its middle
            break
        shown += 1 if _TEST.match(body[0]) else 0
        kept += body if n == 0 else _brief(body)
        if names := others[key]:
            kept.append(f"(the same in {len(names)} more: {', '.join(names[:MAX_NAMED])}"
                        f"{', …' if len(names) > MAX_NAMED else ''})")  # fmt: skip
    return kept


_WHERE = re.compile(rf"^{_PATH}:\d+: \w+$")  # `tests/test_mathx.py:9: NameError`


def _brief(body: list[str]) -> list[str]:
    """A report after the first, as its test's name, the line that failed (`>`), the
    error (`E`) and where: the source around it and the arguments' values go (the 1.5B's
    four tests failing on four NameErrors, 2,800 characters, 901 tokens read)."""
    kept = [line for line in body[1:] if line.startswith((">", "E ")) or _WHERE.match(line)]
    return [body[0], *kept] if any(line.startswith("E ") for line in kept) else body


def _summary(lines: list[str]) -> list[str]:
    """The short summary's lines, one for each message, with the count of the others
    (pytest cuts a message to the terminal's width with "...": such a message is the same
    as one it starts, or that starts it)."""
    firsts: dict[tuple[str, bool], str] = {}
    counts: dict[tuple[str, bool], int] = {}
    for line in lines:  # each one matches _SUMMARY_LINE
        kind, message = line.partition(" ")[0], line.split(" - ", 1)[-1]
        said = (f"{kind} {message.removesuffix('...')}", message.endswith("..."))
        key = next((k for k in firsts if _alike(k, said)), said)
        firsts.setdefault(key, line)
        counts[key] = counts.get(key, 0) + 1
    kept = [
        line + (f" (and {counts[key] - 1} more)" if counts[key] > 1 else "")
        for key, line in firsts.items()
    ]
    if len(kept) > MAX_SUMMARY:
        left = sum(counts[key] for key in list(firsts)[MAX_SUMMARY:])
        kept = [*kept[:MAX_SUMMARY], f"(and {left} more)"]
    return kept


def _alike(a: tuple[str, bool], b: tuple[str, bool]) -> bool:
    return a[0] == b[0] or (b[1] and a[0].startswith(b[0])) or (a[1] and b[0].startswith(a[0]))


def _first(found: re.Match[str]) -> str:
    return next(group for group in found.groups() if group)


def _foreign(root: Path, name: str) -> bool:
    """A traceback's file that is not the workspace's own code (Windows' embeddable
    Python names its library relatively, `json\\decoder.py`: not a file the workspace holds)."""
    return _own(root, name) is None


def _own(root: Path, name: str) -> str | None:
    """A traceback's file as the workspace names it; "" for code of no file that is still
    the workspace's (`<string>`, `python -c`'s); None for code not the workspace's."""
    if name.startswith("<"):  # <frozen importlib._bootstrap>
        return None if name.startswith("<frozen ") else ""
    return own_file(root, name) or None
