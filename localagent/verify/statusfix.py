"""The change that makes a script end with the exit status its goal states for a run
without arguments, where its code shows it: the line after its usage message.

"Write greet.py: ... run without arguments it prints a usage message and exits with
status 2": Qwen2.5-Coder-1.5B's greet.py printed its usage and exited 0 in four of six
runs (the H200); each rewrite it was asked for made the program worse (a hard-coded
name, the function alone), not the one line it lacked. The hand-back names that line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_USAGE = re.compile(r"^(\s*)print\(.*\busage\b", re.I)
_EXIT = re.compile(r"^(\s*)(sys\.exit|exit|quit|raise SystemExit)\s*\(\s*(-?\d*)\s*\)\s*$")


@dataclass(frozen=True)
class StatusFix:
    """What to change: `after` the usage line, the line `line` becomes `new` (or, with
    no `line`, `new` is added after it)."""

    usage: str
    line: str
    new: str

    def step(self, path: str, wanted: int) -> str:
        """The edit subtask that makes it, in words a small model follows."""
        head = f"replace_in_file {path} so that, without arguments, it exits with status {wanted}:"
        if self.line:
            return f"{head} change `{self.line}` right after `{self.usage}` to `{self.new}`"
        return f"{head} after the line `{self.usage}` add the line `{self.new}`"


def status_fix(source: str, wanted: int) -> StatusFix | None:
    """The one change after the script's one usage message that ends it with `wanted`;
    None when there is no such message, or it already ends so."""
    lines = source.splitlines()
    usage = [i for i, line in enumerate(lines) if _USAGE.match(line)]
    if len(usage) != 1:
        return None
    at = usage[0]
    indent = _USAGE.match(lines[at])[1]  # type: ignore[index]
    after = next((line for line in lines[at + 1 :] if line.strip()), "")
    found = _EXIT.match(after)
    if found is not None and found[1] == indent:
        if found[3] == str(wanted):
            return None
        return StatusFix(lines[at].strip(), after.strip(), f"{found[2]}({wanted})")
    return StatusFix(lines[at].strip(), "", f"raise SystemExit({wanted})")
