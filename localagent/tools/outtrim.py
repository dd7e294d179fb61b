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
- pytest's "Hint: make sure your test modules/packages have valid Python names.".
"""

from __future__ import annotations

import re
from pathlib import Path

from localagent.tools.pkgimports import inside

__all__ = ["for_model"]

_BANNER = re.compile(
    r"^(?:platform \S+ -- Python |cachedir: |benchmark: |rootdir: |configfile: |testpaths: |"
    r"plugins: |hypothesis profile |using: |asyncio: |timeout: ).*\n?",
    re.M,
)
_HINT = "Hint: make sure your test modules/packages have valid Python names."
_MARKS = re.compile(r"^\s*[~^]*\^[~^]*\s*$")
_PATH = r"((?:[A-Za-z]:[\\/])?[^\s:]+\.pyw?)"
# `/usr/lib/python3.11/json/__init__.py:346: in loads` (pytest's short form)
_SHORT = re.compile(rf"^{_PATH}:\d+: in \S+$")
# `/usr/lib/python3.11/json/decoder.py:353: JSONDecodeError` (the end of a long-form frame)
_LONG_END = re.compile(rf"^{_PATH}:\d+: \w+$")
# `  File "/usr/lib/python3.11/json/__init__.py", line 346, in loads` (Python's own)
_FILE = re.compile(r'^(\s*)File "([^"]+)", line \d+, in ')
_SEPARATOR = re.compile(r"^(?:_ )+_?$|^_{3,} .* _{3,}$")


def for_model(root: Path, output: str) -> str:
    """The output without what only describes the machine or code not the workspace's."""
    if "test session starts" in output:
        head, sep, rest = output.partition("collected ")  # the header ends there
        output = _BANNER.sub("", head) + sep + rest
    if "Traceback" not in output and "Error" not in output:
        return output
    lines = output.split("\n")
    kept: list[str] = []
    block = 0  # where the lines of pytest's current long-form frame start in `kept`
    skip_deeper = -1  # skipping the source lines of a dropped frame indented past this
    for line in lines:
        if skip_deeper >= 0:
            if line.strip() and len(line) - len(line.lstrip()) > skip_deeper:
                continue
            skip_deeper = -1
        if _MARKS.match(line) or line.strip() == _HINT:
            continue
        if (found := _FILE.match(line)) and _foreign(root, found[2]):
            skip_deeper = len(found[1])
            continue
        if (found := _SHORT.match(line)) and _foreign(root, found[1]):
            skip_deeper = 0
            continue
        if (found := _LONG_END.match(line)) and _foreign(root, found[1]):
            kept[block:] = [k for k in kept[block:] if k.startswith("E ")]
        if _SEPARATOR.match(line) or _LONG_END.match(line):
            block = len(kept) + 1
        kept.append(line)
    return "\n".join(kept)


def _foreign(root: Path, name: str) -> bool:
    """A traceback's file that is not the workspace's own code."""
    if name.startswith("<"):  # <frozen importlib._bootstrap>; not <string>, `python -c`'s
        return name.startswith("<frozen ")
    path = inside(root, name)  # Windows' embeddable Python names its library `json\decoder.py`
    hidden = any(p.startswith(".") or p == "site-packages" for p in path.split("/"))
    return not path or hidden or not (root / path).is_file()
