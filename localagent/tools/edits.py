"""Precise edits: replace exact text, append, delete and move, each one atomic step so that
resume can tell an applied edit from one never made (policy "check")."""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import Annotated

from localagent.tools import pyedits, pyscript, pywrite
from localagent.tools.base import BINARY_SNIFF_BYTES, ToolContext, ToolError, ToolResult, describe
from localagent.tools.fileio import open_regular, write_atomically
from localagent.tools.files import existing_file, syntax_note
from localagent.tools.mends import imports
from localagent.tools.paths import normalize_path, relative, resolve_in_workspace
from localagent.tools.pkgimports import lost_users

# An edit holds the whole file twice (as it is and as it becomes).
MAX_EDIT_BYTES = 4_000_000
CONTEXT_LINES = 2
SHOWN_LINES = 24
NEAREST = 3
SHOWN_PLACES = 10
WHOLE_LINES = SHOWN_LINES  # a file this short is shown whole when old is not in it
MADE_CHARS = 6  # a new text this long found in the file is taken for an edit made already
MADE_ALIKE = 0.6  # ... where a line's code starts, or in a line this much like old


def replace_in_file(
    ctx: ToolContext,
    path: Annotated[str, "File to edit, relative to the workspace root."],
    old: Annotated[str, "The exact text to replace, with enough lines to be unique."],
    new: Annotated[str, "The text to put in its place."],
    count: Annotated[int, "How many times old occurs and is replaced."] = 1,
) -> ToolResult:
    """Replace exact text in a file: old must occur exactly count times. Shows the changed
    lines with their numbers."""
    target, data = _current(ctx, path)
    text = _text_of(data, path)
    if not old:
        raise ToolError.of("old_empty")
    if count < 1:
        raise ToolError.of("count_below_one", count=count)
    if "\r\n" in text and "\r\n" not in old:  # the model writes '\n'; the file has CRLF
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
    found = text.count(old)
    nl = "\r\n" if "\r\n" in text else "\n"
    if not found and "\\n" in old and text.count(escaped := old.replace("\\n", nl)) == count:
        # Lines apart written as a step shows them, `\n` (the hand-back's edit of a row on a
        # line written twice): the file's line breaks, where that is the one reading (CRLF
        # in a file that has them: a test file written on Windows).
        old, new, found = escaped, new.replace("\\n", nl), count
    name = relative(ctx.root, target)
    meant = pyedits.meant_fix(text, name, old, new) if found == 0 else None
    if meant is not None:
        # Shown the fix of a line's syntax error, Qwen2.5-Coder-1.5B sent its new line as
        # both old and new, five times: the edit it means is the one it was shown.
        old, new, found = meant[0], meant[1], 1
    elif found != count:
        raise _count_problem(text, old, new, name, found, count)
    if old == new:
        # The file has it already: like a write of a file's own content (`unchanged`), which
        # ends an edit subtask whose file this run changed before (`loop.writedone`).
        said = ToolError.of("old_is_new").text(ctx.prompts)
        return ToolResult(False, said, facts={"unchanged": [normalize_path(path)]})
    if old in new and (line := _made_at(text, old, new)):
        # Qwen2.5-Coder-1.5B added the same `if __name__ == "__main__":` block after the
        # same line three times; the game then asked for its move three times.
        raise ToolError.of("new_made_already", path=describe(path), line=line)
    if cut := pyedits.cut_name(text, old, new, name):
        raise ToolError.of(
            "edit_cuts_name", path=describe(path), old=old, line=cut[0], name=cut[1], made=cut[2]
        )
    first_line = text[: text.index(old)].count("\n") + 1
    edited = text.replace(old, new)
    if ctx.mend_syntax and (problem := pyedits.breaks(text, edited, name)):
        # Qwen2.5-Coder-1.5B, asked to fix median in stats.py, sent `"old": "mean(values)",
        # "new": "mean(values) + 1"`, which made `def mean(values) + 1:`; then + 2, + 3, ...
        # each edit a change, so no repeat, until the round limit (2 of 6 runs on an H100).
        raise ToolError.of("edit_breaks_syntax", path=describe(path), problem=problem)
    module = None
    if ctx.mend_syntax and (lost := pywrite.not_code(edited, new, first_line, name)):
        module = pywrite.as_module(text, old, new)
        if module is None:
            raise ToolError.of("edit_in_string", path=describe(path), lost=lost)
        if pywrite.same_code(module[0], text):
            # Its refactor written whole, the 1.5B's edit step sent the docstring's text as
            # old and that text and the same code as new (the CPU).
            said = ToolError.of("code_unchanged", path=describe(path)).text(ctx.prompts)
            return ToolResult(False, said, facts={"unchanged": [normalize_path(path)]})
        edited, new = module[0], new.strip()
        first_line = edited[: edited.index(new)].count("\n") + 1 if new in edited else 1
    had = pyscript.defines(ctx.root, name)
    kept = ""
    if had and (users := lost_users(ctx.root, name, had, pywrite.defined(edited))):
        # Asked to move shapes.py's area formulas into one function, Qwen2.5-Coder-1.5B
        # renamed total_area, largest and report, which test_shapes.py imports; or it put
        # its new `def area` in place of total_area (6 runs of 6 on the H200).
        edited, kept = pyedits.kept(text, old, new, name, had)
        if not kept:
            raise ToolError.of("edit_drops_imports", path=describe(path), users=users)
        new = f"{new.rstrip()}\n\n\n{old}"
    if twice := pyedits.defined_twice(text, edited, name):
        raise ToolError.of("edit_defines_twice", path=describe(path), twice=twice)
    if ctx.mend_syntax and (gone := pyedits.unbinds(text, edited, name)):
        raise ToolError.of("edit_unbinds", path=describe(path), names=", ".join(gone))
    imported = ""
    if ctx.mend_syntax and (added := imports.mended(ctx.root, name, edited)) is not None:
        # Given `with pytest.raises(ValueError):` to put in a test of divide(6, 0), the 1.5B's
        # tests/test_mathx.py had no `import pytest` (the CPU).
        edited, imported = added
        first_line = edited[: edited.index(new)].count("\n") + 1 if new in edited else first_line
    write_atomically(ctx.root, target, edited.encode("utf-8"))
    changed_lines = new.count("\n") + 1
    summary = f"replaced {found} occurrence{'s' if found > 1 else ''} in {describe(path)}"
    if meant is not None:
        summary = ctx.prompts.render("edit_as_fix", path=describe(path), old=old, new=new)
    if kept:
        summary = ctx.prompts.render("edit_kept", path=describe(path), **pyedits.kept_fields(kept))
    if module is not None:
        summary = ctx.prompts.render("edit_as_module", path=describe(path), done=module[1])
    snippet = _numbered(edited, first_line - CONTEXT_LINES, first_line + changed_lines + 1)
    return ToolResult(
        True,
        f"{summary}{imported}{syntax_note(edited, relative(ctx.root, target))}; now:\n{snippet}",
        changed=True,
        facts={"wrote": [normalize_path(path)]},
    )


def append_file(
    ctx: ToolContext,
    path: Annotated[str, "File to append to (created if missing), relative to the root."],
    content: Annotated[str, "Text to add at the end of the file."],
) -> ToolResult:
    """Add text at the end of a file, creating it (and its folders) if it does not exist."""
    target = resolve_in_workspace(ctx.root, path)
    if target == ctx.root or target.is_dir():
        raise ToolError.of("folder_not_file", path=describe(path))
    before = b""
    if target.exists():
        before = _current(ctx, path)[1]
        _text_of(before, path)
    if not content:
        raise ToolError.of("content_empty")
    data = before + content.encode("utf-8", errors="replace")
    write_atomically(ctx.root, target, data)
    note = syntax_note(data.decode("utf-8", errors="replace"), relative(ctx.root, target))
    return ToolResult(
        True,
        f"appended {len(data) - len(before)} bytes to {describe(path)} (now {len(data)} bytes)"
        f"{note}",
        changed=True,
        facts={"wrote": [normalize_path(path)]},
    )


def delete_file(
    ctx: ToolContext,
    path: Annotated[str, "File to delete, relative to the workspace root."],
) -> ToolResult:
    """Delete one file of the workspace (not a folder)."""
    target = resolve_in_workspace(ctx.root, path)
    if target.is_dir():
        raise ToolError.of("delete_folder", path=describe(path))
    if not target.exists():
        raise ToolError.of("delete_missing", path=describe(path))
    size = target.stat().st_size
    target.unlink()
    return ToolResult(
        True,
        f"deleted {describe(path)} ({size} bytes)",
        changed=True,
        facts={"removed": [normalize_path(path)]},
    )


def move_file(
    ctx: ToolContext,
    src: Annotated[str, "File or folder to move, relative to the workspace root."],
    dst: Annotated[str, "Its new path (must not exist yet), relative to the root."],
) -> ToolResult:
    """Move or rename a file or folder inside the workspace."""
    source = resolve_in_workspace(ctx.root, src)
    target = resolve_in_workspace(ctx.root, dst)
    if source == ctx.root:
        raise ToolError.of("move_workspace")
    if not source.exists() and not source.is_symlink():
        raise ToolError.of("no_such_path", path=describe(src))
    if target.exists() or target.is_symlink():
        raise ToolError.of("move_target_exists", path=describe(dst))
    if target.is_relative_to(source):
        raise ToolError.of("move_into_itself", target=describe(dst), source=describe(src))
    target.parent.mkdir(parents=True, exist_ok=True)
    os.rename(source, target)
    return ToolResult(
        True,
        f"moved {describe(src)} to {describe(relative(ctx.root, target))}",
        changed=True,
        facts={"removed": [normalize_path(src)], "wrote": [normalize_path(dst)]},
    )


def _current(ctx: ToolContext, path: str) -> tuple[Path, bytes]:
    """The file path names and its content, if it is small enough to edit in memory."""
    target = existing_file(ctx, path)
    with open_regular(ctx.root, target) as handle:
        size = os.fstat(handle.fileno()).st_size
        data = handle.read(MAX_EDIT_BYTES + 1) if size <= MAX_EDIT_BYTES else b""
    if size > MAX_EDIT_BYTES or len(data) > MAX_EDIT_BYTES:
        raise ToolError.of(
            "edit_too_large",
            path=describe(path),
            size=f"{max(size, len(data)):,}",
            limit=f"{MAX_EDIT_BYTES:,}",
        )
    return target, data


def _text_of(data: bytes, path: str) -> str:
    if b"\x00" in data[:BINARY_SNIFF_BYTES]:
        raise ToolError.of("binary_not_editable", path=describe(path))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError.of("not_utf8", path=describe(path), byte=exc.start) from None


def _count_problem(text: str, old: str, new: str, path: str, found: int, count: int) -> ToolError:
    if found:
        lines, line, seen = [], 1, 0
        for at in _positions(text, old, SHOWN_PLACES):  # counted on from the last: linear
            line += text.count("\n", seen, at)
            seen = at
            lines.append(line)
        where = ", ".join(map(str, lines)) + (" ..." if found > SHOWN_PLACES else "")
        return ToolError.of(
            "old_found_often", found=found, path=describe(path), lines=where, count=count
        )
    now = pyedits.python_now(text, path)
    if line := _made_at(text, old, new):
        # Qwen2.5-Coder-1.5B, resumed, sent the fix it had made already five times over.
        return ToolError.of("old_made_already", path=describe(path), line=line, now=now)
    if text.count("\n") < WHOLE_LINES:
        # Qwen2.5-Coder-1.5B sent `"old": "old_text"` 45 times in 9 runs: it edited a file
        # whose text was no longer in its prompt. A short file is shown whole.
        whole = _numbered(text, 1, WHOLE_LINES)
        hint = ToolError.of("old_file_text", lines=whole)
        return ToolError.of("old_not_found", path=describe(path), nearest=hint, now=now)
    wanted = next((line for line in old.splitlines() if line.strip()), old).strip()
    numbered = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    close = difflib.get_close_matches(wanted, [line.strip() for _, line in numbered], NEAREST, 0.5)
    nearest = [f"{n:>5}| {line}" for n, line in numbered if line.strip() in close][:NEAREST]
    hint = ToolError.of("old_nearest_lines", lines="\n".join(nearest)) if nearest else ""
    return ToolError.of("old_not_found", path=describe(path), nearest=hint, now=now)


def _made_at(text: str, old: str, new: str) -> int:
    """The line where the edit from `old` to `new` looks made already (0: nowhere): `new`
    is in the file where a line's code starts, or in a line like `old`. Not a mere
    substring: `{"old": "total_area", "new": "area(kind, size)"}` on a file whose line 1
    is `def area(kind, size):` is no edit made (Qwen2.5-Coder-1.5B, told it was, six
    rounds running)."""
    if len(new.strip()) < MADE_CHARS:
        return 0
    at = text.find(new)
    while at >= 0:
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at + len(new))
        line = text[start : len(text) if end < 0 else end].strip()
        before = text[start:at]
        alike = difflib.SequenceMatcher(None, line, old.strip()).ratio() >= MADE_ALIKE
        if not before.strip() or alike:
            return text.count("\n", 0, at) + 1
        at = text.find(new, at + 1)
    return 0


def _positions(text: str, old: str, limit: int) -> list[int]:
    found, at = [], text.find(old)
    while at >= 0 and len(found) < limit:
        found.append(at)
        at = text.find(old, at + len(old))
    return found


def _numbered(text: str, first: int, last: int) -> str:
    lines = text.splitlines()
    first, last = max(first, 1), min(last, len(lines), max(first, 1) + SHOWN_LINES - 1)
    return "\n".join(f"{n:>5}| {lines[n - 1]}" for n in range(first, last + 1))
