"""What a Python file's own text shows is wrong, without running it: a file object read to
its end twice (`rereads`), names nothing binds (`undefined`), a test file with no test
(`notests`), calls that can never work (`badcalls`). A write says each in its result; a
completion claim for a subtask that wrote such a file is refused with it
(`verify.evidence.gate`): Qwen2.5-Coder-1.5B's wordcount.py read its file to its end
three times, its `--lines` run printed the right count, and its `mark_subtask_complete`
for "write_file wordcount.py with its code" was accepted as verified (the CPU); without
`--lines` it printed "9 0 0"."""

from __future__ import annotations

from localagent.tools import badcalls, notests, rereads, undefined


def found(source: str | bytes, name: str) -> list[str]:
    """Each defect of the Python file `name` with this `source`, as its write's note says
    it, without the note's leading "; but "."""
    notes = (
        rereads.note(source, name),
        undefined.note(source, name),
        notests.write_note(source, name),
        badcalls.note(source, name),
    )
    return [n.removeprefix("; but ") for n in notes if n]
