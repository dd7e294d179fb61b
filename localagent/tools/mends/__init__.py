"""The small profile's mends of a write: what a small model's content says, where its
intent is certain, written so that it does what it says (`ToolContext.mend_syntax`).
Each returns the content mended and what the write's result says of it."""

from __future__ import annotations

from pathlib import Path

from localagent.tools import notests, pywrite
from localagent.tools.mends import (
    foreign,
    imports,
    indent,
    inits,
    mainblock,
    margin,
    nearmodule,
    nested,
    params,
    reads,
)


def mend(root: Path, name: str, content: str) -> tuple[str, list[str]]:
    """The content with every mend made, in turn, and what the write says of each: a file
    indented as a whole written at the margin (`indent`), lines that do not compile
    fixed (`pywrite.mended`), code in quotes unquoted, functions written indented inside
    the one above them put back at the top level (`nested`), a function's last lines
    written at the margin put back inside it (`margin`), an import from Python's own
    module of names it lacks and the file defines left out (`foreign`), and a package's
    import from itself of names it defines (`inits.self_imported`), a package's
    imports of its modules made imports of their functions (`inits`), names it never
    imports imported from the one module that has them, or whole when they are modules
    here (`imports`), second reads of a file made one (`reads`), a test file's asserts
    put in a test (`notests`), a test function given the arguments its parametrize
    passes it (`params`), and one whose arguments nothing gives a parametrize of them
    (`params.unbound`, where no conftest.py may give them), a program's `__main__` block
    it left out kept (`mainblock`)."""
    said: list[str] = []
    if (flush := indent.dedented(content, name)) is not None:
        said.append(indent.dedented_note(content))
        content = flush
    if fixed := pywrite.mended(content, name):
        content = fixed[-1][2]
        said += [mend_note(line, new) for line, new, _ in fixed]
    if (quoted := pywrite.unquoted(content, name)) is not None:
        content = quoted
        said.append("; its content was code in quotes, so it was written without them")
    if (lifted := nested.lifted(root, name, content)) is not None:
        content = lifted[0]
        said.append(nested.lifted_note(lifted[1], lifted[2]))
    if (inside := margin.indented(name, content)) is not None:
        content = inside[0]
        said.append(margin.indented_note(inside[1], inside[2]))
    if (alien := foreign.mended(content, name)) is not None:
        content = alien[0]
        said.append(foreign.mended_note(*alien[1:]))
    if (itself := inits.self_imported(name, content)) is not None:
        content = itself[0]
        said.append(inits.self_imported_note(name, *itself[1:]))
    if (own := inits.mend(root, name, content)) is not None:
        content = own[2]
        said.append(_imports_mended(root, name, own[0], own[1]))
    if (near := nearmodule.mended(root, name, content)) is not None:
        content = near[0]
        said.append(nearmodule.mended_note(*near[1:]))
    if (imported := imports.mended(root, name, content)) is not None:
        content, note = imported
        said.append(note)
    if (once := reads.mended(content, name)) is not None:
        content = once[0]
        said.append(reads.mended_note(once[1]))
    if (tested := notests.wrapped(content, name)) is not None:
        content = tested[0]
        said.append(notests.wrapped_note(tested[1]))
    if (taken := params.mended(content, name)) is not None:
        content = taken[0]
        said.append(params.mended_note(taken[1]))
    if not _conftest(root, name) and (given := params.unbound(content, name)) is not None:
        content = given[0]
        said.append(params.unbound_note(given[1]))
    if (main := mainblock.kept(root, name, content)) is not None:
        content = main[0]
        said.append(mainblock.kept_note(main[1]))
    return content, said


def mend_note(line: str, fixed: str) -> str:
    """What the write says of a line it wrote fixed (see `pywrite.mended`)."""
    if line.count("\n") == fixed.count("\n") > 0:  # lines named by those before them
        line, fixed = line.rsplit("\n", 1)[1], fixed.rsplit("\n", 1)[1]
    if "\n" in line and "\n" not in fixed:
        first = line.split("\n", 1)[0]
        shown = first if len(first) <= 80 else first[:77] + "..."
        said = f"; a line break in `{shown}` ended its string, so it was written as `\\n`"
        if (opened := fixed[len("\\n".join(line.split("\n"))) :].strip()) in (")", "]", "}"):
            said += f", and `{opened}` added at its end to close the bracket it left open"
        return said
    if "\n" not in fixed:
        return f"; `{line}` did not compile, so it was written as `{fixed}`"
    count = fixed.count("\n") + 1
    shown = line if len(line) <= 80 else line[:77] + "..."
    return (
        f"; `{shown}` did not compile as one line, so it was written as the {count} lines "
        "it stands for"
    )


def _imports_mended(root: Path, name: str, old: str, new: str) -> str:
    """What the write says of an `__init__.py` import it mended (see `inits`)."""
    package = name.split("/")[-2]
    text = (
        f"; `{old.strip()}` would import {package}'s modules, not their functions, so it "
        f"was written as `{'; '.join(new.splitlines())}`"
    )
    if todo := inits.unwritten(root, name, new):
        shown = ", ".join(todo[:6])
        text += f"; {package} loads once {shown} {'is' if len(todo) == 1 else 'are'} written"
        first = todo[0].rsplit("/", 1)[-1][:-3]
        text += f", each with its function ({todo[0]}: def {first}(...): ...)"
    return text


def _conftest(root: Path, name: str) -> bool:
    """Whether a conftest.py in the workspace, at its top or on the file's way down, may
    give a test its fixtures."""
    folder = root
    for part in ["", *name.replace("\\", "/").split("/")[:-1]]:
        folder = folder / part if part else folder
        try:
            if (folder / "conftest.py").exists():
                return True
        except OSError:
            return True
    return False
