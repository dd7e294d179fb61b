"""The file tools: list, read, write and edit files of the workspace, each write atomic."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, BinaryIO

from localagent.tools import (
    badcalls,
    mends,
    notests,
    pyfiles,
    pyscript,
    pywrite,
    rereads,
    undefined,
)
from localagent.tools.aliases import make_folder
from localagent.tools.base import BINARY_SNIFF_BYTES, ToolContext, ToolError, ToolResult, describe
from localagent.tools.fileio import open_regular, write_atomically
from localagent.tools.paths import normalize_path, relative, resolve_in_workspace, touches_journal
from localagent.tools.pkgimports import (
    lost_users,
    missing_from_itself,
    self_import_note,
    text_of,
    written_note,
)
from localagent.tools.syntaxfix import compile_problem

MAX_LIST_ENTRIES = 200
READ_BYTES_RANGE = (1, 1_000_000)
# Counting a range's lines to the end of the file stops here ("of at least N lines").
COUNT_BYTES = 64 << 20
CHUNK = 1 << 16
# A content that is only a placeholder of a call's example (`<content>`, `<code>`).
_PLACEHOLDER = re.compile(r"<(?:content|contents|code|text|file content|new_text|new)>", re.I)


def list_dir(
    ctx: ToolContext,
    path: Annotated[str, "Folder to list, relative to the workspace root."] = ".",
) -> ToolResult:
    """List a folder of the workspace: sub-folders end with '/', files show their size."""
    folder = resolve_in_workspace(ctx.root, path)
    if not folder.exists():
        raise ToolError.of("folder_missing", path=describe(path))
    if not folder.is_dir():
        raise ToolError.of("file_not_folder", path=describe(path))
    with os.scandir(folder) as scan:
        entries = sorted(
            (e for e in scan if not touches_journal((e.name,))),
            key=lambda e: (e.name.casefold(), e.name),
        )
    count = f"{len(entries)} entr{'y' if len(entries) == 1 else 'ies'}"
    lines = [f"{relative(ctx.root, folder)}/ ({count})"]
    lines += [_entry_line(entry) for entry in entries[:MAX_LIST_ENTRIES]]
    if len(entries) > MAX_LIST_ENTRIES:
        lines.append(f"... {len(entries) - MAX_LIST_ENTRIES} more")
    if not entries:
        lines.append("(empty)")
    return ToolResult(True, "\n".join(lines))


def _entry_line(entry: os.DirEntry[str]) -> str:
    try:
        if entry.is_dir():
            return f"{entry.name}/"
        return f"{entry.name}  ({entry.stat().st_size} bytes)"
    except OSError:
        return f"{entry.name}  (unreadable or broken link)"


def read_file(
    ctx: ToolContext,
    path: Annotated[str, "File to read, relative to the workspace root."],
    max_bytes: Annotated[int, "Read at most this many bytes of the file."] = 20000,
    start_line: Annotated[int, "First line to show (1-based); 0 reads from the start."] = 0,
    end_line: Annotated[int, "Last line to show; 0 reads to the end (or max_bytes)."] = 0,
) -> ToolResult:
    """Read a text file of the workspace (UTF-8), whole or a range of lines shown with
    their numbers; long files are cut at max_bytes."""
    target = existing_file(ctx, path)
    limit = min(max(max_bytes, READ_BYTES_RANGE[0]), READ_BYTES_RANGE[1])
    if end_line and start_line and end_line < start_line:
        raise ToolError.of("end_before_start", end_line=end_line, start_line=start_line)
    with open_regular(ctx.root, target) as handle:
        if start_line or end_line:
            return _read_lines(handle, path, max(start_line, 1), end_line, limit)
        size = os.fstat(handle.fileno()).st_size
        data = handle.read(limit)
    if b"\x00" in data[:BINARY_SNIFF_BYTES]:
        return ToolResult(True, f"{describe(path)} is a binary file ({size} bytes); not shown")
    text = data.decode("utf-8", errors="replace")
    if not data:
        text = f"({describe(path)} is empty)"
    elif size > len(data):
        lines = text.count("\n")
        text += (
            f"\n[... file is {size} bytes; only the first {len(data)} were read; read on with "
            f"start_line={lines + 1} ...]"
        )
    return ToolResult(True, text, facts={"read": [normalize_path(path)]})


def existing_file(ctx: ToolContext, path: str) -> Path:
    """The regular file path names, or ToolError saying what it is instead."""
    target = resolve_in_workspace(ctx.root, path)
    if not target.exists():
        # Qwen2.5-Coder-1.5B's refactor sent `replace_in_file largest.py` three times,
        # told each time that it does not exist: largest was a function of shapes.py
        # (another run: `shapes/largest`, no .py, three times).
        stem = target.name[:-3] if target.name.endswith(".py") else target.name
        if stem.isidentifier() and (owner := pyfiles.owner(ctx.root, stem)):
            raise ToolError.of(
                "function_not_file", path=describe(path), name=stem, owner=describe(owner)
            )
        raise ToolError.of("no_such_file", path=describe(path))
    if target.is_dir():
        raise ToolError.of("folder_not_readable", path=describe(path))
    if not target.is_file():
        # Reading a FIFO or a device could block forever.
        raise ToolError.of("not_regular", path=describe(path))
    return target


def _lines(handle: BinaryIO, keep: int) -> Iterator[bytes]:
    """Each line of the file, cut to its first `keep` bytes: a line of any length is read
    in chunks and only its start is held."""
    while line := handle.readline(keep):
        if not line.endswith(b"\n"):
            while (rest := handle.readline(CHUNK)) and not rest.endswith(b"\n"):
                pass
        yield line


def _count_rest(handle: BinaryIO) -> tuple[int, bool]:
    """The lines left in the file, and whether the count reached its end (else a lower
    bound: counting stops after COUNT_BYTES)."""
    count = read = 0
    chunk = b""
    while read < COUNT_BYTES and (data := handle.read(CHUNK)):
        chunk = data
        count += chunk.count(b"\n")
        read += len(chunk)
    whole = read < COUNT_BYTES or not handle.read(1)
    return count + (whole and chunk != b"" and not chunk.endswith(b"\n")), whole


def _read_lines(handle: BinaryIO, path: str, first: int, last: int, limit: int) -> ToolResult:
    if b"\x00" in handle.read(BINARY_SNIFF_BYTES):
        raise ToolError.of("binary_no_lines", path=describe(path))
    handle.seek(0)
    shown: list[str] = []
    used = total = 0
    for number, raw in enumerate(_lines(handle, limit + 1), 1):
        total = number
        if number < first:
            continue
        line = f"{number:>5}| {raw.decode('utf-8', errors='replace').rstrip(chr(13) + chr(10))}"
        used += len(line) + 1
        if used > limit:
            if not shown:  # a line longer than max_bytes: its start, rather than nothing
                shown.append(f"{line[:limit]} [... line cut at max_bytes]")
            break
        shown.append(line)
        if last and number >= last:
            break
    more, whole = _count_rest(handle)
    total += more
    if first > total:
        raise ToolError.of("file_past_end", path=describe(path), total=total, start_line=first)
    end = first + len(shown) - 1
    text = "\n".join(shown)
    wanted_end = min(last, total) if last else total
    if end < wanted_end:
        text += (
            f"\n[... lines {end + 1}-{wanted_end} not shown (max_bytes); read on with "
            f"start_line={end + 1} ...]"
        )
    of = f"{total}" if whole else f"at least {total}"
    header = f"{describe(path)} lines {first}-{end} of {of}:"
    return ToolResult(True, f"{header}\n{text}", facts={"read": [normalize_path(path)]})


def write_file(
    ctx: ToolContext,
    path: Annotated[str, "File to write, relative to the workspace root."],
    content: Annotated[str, "The complete new content of the file (UTF-8 text)."],
    create_dirs: Annotated[bool, "Create missing parent folders."] = True,
) -> ToolResult:
    """Create or overwrite a file of the workspace with the given content.

    Writing the content a file already has succeeds with `changed=False`: the
    workspace did not change, so a repeat of it is not progress.
    """
    if path.endswith(("/", "\\")) and path.strip("/\\ ."):
        # Qwen2.5-Coder-1.5B's plan said "write_file mathx/", and it sent that path with
        # "This is the initial content of the directory.": written, mathx was a file, and
        # no file of the package could be written. A folder's path makes the folder.
        return make_folder(ctx, path)
    target = resolve_in_workspace(ctx.root, path)
    if target == ctx.root or target.is_dir():
        raise ToolError.of("folder_not_file", path=describe(path))
    if _PLACEHOLDER.fullmatch(content.strip()):
        # Qwen2.5-Coder-0.5B copied the format example's `"content": "<content>"` into
        # hello_world.py and wrote it until blocked (the CPU).
        raise ToolError.of("placeholder_content", text=content.strip(), path=describe(path))
    name = relative(ctx.root, target)
    content, mended = mends.mend(ctx.root, name, content) if ctx.mend_syntax else (content, [])
    data = content.encode("utf-8", errors="replace")
    if _holds(ctx, target, data):
        said = ctx.prompts.render("same_content", path=describe(path), size=len(data))
        # The same stub or syntax error written again is told again: the 1.5B sent
        # `def rps_game(player1, player2):\n    # Game logic goes here\n    pass` three
        # times, the note on it no longer the latest thing it read.
        said += syntax_note(content, relative(ctx.root, target)).replace("; but", "; and still", 1)
        return ToolResult(True, said, facts={"unchanged": [normalize_path(path)]})
    if not target.parent.is_dir() and not create_dirs:
        folder = describe(relative(ctx.root, target.parent))
        raise ToolError.of("write_folder_missing", folder=folder)
    existed = target.exists()
    had = pyscript.defines(ctx.root, name) if existed else []
    if had and (users := lost_users(ctx.root, name, had, pywrite.defined(content))):
        # Asked to fix stats.py, Qwen2.5-Coder-1.5B wrote `def stats(): return 'Hello,
        # World!'` over it without reading it (8 of 12 runs on an H100); the mean and
        # median test_stats.py imports were gone, and it never saw them again.
        shown = pywrite.numbered(ctx.root, target)
        source = text_of(ctx.root, name) or ""
        named, aliased = pywrite.aliases(content, had, source)
        if named:
            raise ToolError.of(
                "write_aliases_imports",
                path=describe(path),
                users=users,
                aliases=", ".join(named),
                target=aliased,
                file=name,
                header=pywrite.header(source, named[0]),
                text=shown,
            )
        raise ToolError.of("write_drops_imports", path=describe(path), users=users, text=shown)
    size = _size(target) if had else 0
    acted = bool(had) and (before := pyscript.read(ctx.root, name)) is not None and before.acts
    write_atomically(ctx.root, target, data)
    how = "replaced" if existed else "created"
    text = f"wrote {len(data)} bytes to {describe(path)} ({how})" + "".join(mended)
    text += syntax_note(content, name) + undefined.note(content, name)
    text += rereads.note(content, name) + badcalls.note(content, name)
    facts = {"wrote": [normalize_path(path)]}
    now = pyscript.parse(content) if had else None
    if now is not None and not now.defines and len(data) * 2 < size:
        # Qwen2.5-Coder-1.5B, asked to make its game call its code, wrote a file holding
        # only `if __name__ == "__main__": print('This is the end of the game.')`. A
        # rewrite as long as the code it had is a program written without functions (its
        # greet.py: the `__main__` block read sys.argv and printed the greeting itself).
        text += f"; but it no longer defines {', '.join(had[:5])}: the code it had is gone"
        facts["emptied"] = [normalize_path(path)]
    if acted and (after := pyscript.parse(content)) is not None and not after.acts:
        # Qwen2.5-Coder-1.5B's greet.py did what the goal asks; replanned by a small
        # verifier's doubt, it was written again as the function alone (the CPU).
        text += "; but it no longer calls its code when run (its `__main__` block is gone)"
    if missing := missing_from_itself(ctx.root, name, content):
        text += "; but " + self_import_note(name, content, missing)
    if not existed and ctx.mend_syntax and (owner := pyfiles.function_note(ctx.root, name)):
        text += "; but " + owner
    if package_note := written_note(ctx.root, name):
        text += "\n" + package_note
    return ToolResult(True, text, changed=True, facts=facts)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _holds(ctx: ToolContext, target: Path, data: bytes) -> bool:
    """Whether the regular file at target already holds exactly data."""
    if not target.is_file() or target.stat().st_size != len(data):
        return False
    with open_regular(ctx.root, target) as handle:
        return handle.read(len(data) + 1) == data


def syntax_problem(source: str | bytes, name: str) -> str | None:
    """Why Python source does not compile ("syntax error at line 3: ..."), or None; also
    None for source nested too deeply for the compiler to check (see syntax_note)."""
    return compile_problem(source, name)[0]


def syntax_note(source: str | bytes, name: str) -> str:
    """What a write of a Python file adds to its result: '' when it compiles, else why
    it does not, or that it could not be checked."""
    if not name.lower().endswith((".py", ".pyw")):
        return ""
    problem, checked = compile_problem(source, name)
    if not checked:
        return (
            "; it could not be syntax-checked (nested too deeply for Python's compiler): "
            "run it to see whether it works"
        )
    if problem:
        return f"; but {problem}: fix it before you run it"
    if said := notests.write_note(source, name):
        return said
    script = pyscript.parse(source)
    if script is not None and script.stubs:
        names = ", ".join(script.stubs[:5])
        if len(script.stubs) == 1:
            return f"; but {names} is only `pass`: write its code"
        return f"; but {names} are only `pass`: write their code"
    return ""
