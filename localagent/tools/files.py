"""The file tools: list, read, write and edit files of the workspace, each write atomic."""

from __future__ import annotations

import os
import re
import secrets
import stat
import time
from pathlib import Path
from typing import Annotated

from localagent.fingerprint import is_skipped
from localagent.tools.base import BINARY_SNIFF_BYTES, ToolContext, ToolError, ToolResult, describe
from localagent.tools.paths import (
    MAX_NAME_SIZE,
    name_size,
    normalize_path,
    relative,
    resolve_in_workspace,
    touches_journal,
)

MAX_LIST_ENTRIES = 200
READ_BYTES_RANGE = (1, 1_000_000)
REPLACE_RETRY_SECONDS = 2.0
STALE_TEMP_SECONDS = 60.0
TEMP_SCAN_LIMIT = 20_000  # entries looked at by clean_stale_temps
_TEMP_NAME = re.compile(r"\..+\.[0-9a-f]{8}\.tmp", re.DOTALL)


def list_dir(
    ctx: ToolContext,
    path: Annotated[str, "Folder to list, relative to the workspace root."] = ".",
) -> ToolResult:
    """List a folder of the workspace: sub-folders end with '/', files show their size."""
    folder = resolve_in_workspace(ctx.root, path)
    if not folder.exists():
        raise ToolError(f"folder {describe(path)} does not exist; list_dir('.') shows the root")
    if not folder.is_dir():
        raise ToolError(f"{describe(path)} is a file, not a folder; use read_file to read it")
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
    size = target.stat().st_size
    if start_line or end_line:
        return _read_lines(target, path, max(start_line, 1), end_line, limit)
    with target.open("rb") as handle:
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
        raise ToolError(f"file {describe(path)} does not exist; use list_dir to see what exists")
    if target.is_dir():
        raise ToolError(f"{describe(path)} is a folder, not a file; use list_dir to list it")
    if not target.is_file():
        # Reading a FIFO or a device could block forever.
        raise ToolError(f"{describe(path)} is not a regular file")
    return target


def _read_lines(target: Path, path: str, first: int, last: int, limit: int) -> ToolResult:
    if last and last < first:
        raise ToolError(f"end_line {last} is before start_line {first}")
    shown: list[str] = []
    used = total = 0
    with target.open("rb") as handle:
        if b"\x00" in handle.read(BINARY_SNIFF_BYTES):
            raise ToolError(f"{describe(path)} is a binary file; it has no lines to show")
        handle.seek(0)
        for number, raw in enumerate(handle, 1):
            total = number
            if number < first or (last and number > last) or used > limit:
                continue
            line = f"{number:>5}| {raw.decode('utf-8', errors='replace').rstrip(chr(13) + chr(10))}"
            used += len(line) + 1
            if used <= limit:
                shown.append(line)
    if first > total:
        raise ToolError(f"{describe(path)} has {total} lines; start_line {first} is past its end")
    end = first + len(shown) - 1
    text = "\n".join(shown)
    wanted_end = min(last, total) if last else total
    if end < wanted_end:
        text += (
            f"\n[... lines {end + 1}-{wanted_end} not shown (max_bytes); read on with "
            f"start_line={end + 1} ...]"
        )
    header = f"{describe(path)} lines {first}-{end} of {total}:"
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
    target = resolve_in_workspace(ctx.root, path)
    if target == ctx.root or target.is_dir():
        raise ToolError(f"{describe(path)} is a folder; give the path of a file inside it")
    data = content.encode("utf-8", errors="replace")
    if target.is_file() and target.stat().st_size == len(data) and target.read_bytes() == data:
        return ToolResult(True, f"{describe(path)} already has this content ({len(data)} bytes)")
    if not target.parent.is_dir():
        if not create_dirs:
            folder = describe(relative(ctx.root, target.parent))
            raise ToolError(f"folder {folder} does not exist; pass create_dirs=true to create it")
        target.parent.mkdir(parents=True, exist_ok=True)
    existed = target.exists()
    write_atomically(target, data)
    how = "replaced" if existed else "created"
    text = f"wrote {len(data)} bytes to {describe(path)} ({how})"
    if target.suffix.lower() in (".py", ".pyw"):
        problem = syntax_problem(content, relative(ctx.root, target))
        text += f"; but {problem}: fix it before you run it" if problem else ""
    return ToolResult(True, text, changed=True, facts={"wrote": [normalize_path(path)]})


def syntax_problem(source: str | bytes, name: str) -> str | None:
    """Why Python source does not compile ("syntax error at line 3: ..."), or None."""
    try:
        compile(source, name, "exec", dont_inherit=True)
    except SyntaxError as exc:
        where = f"line {exc.lineno}" if exc.lineno else "an unknown line"
        return f"syntax error at {where}: {exc.msg}"
    except ValueError as exc:  # null bytes
        return f"not Python source: {exc}"
    return None


def _temp_name(name: str) -> str:
    """`.NAME.1a2b3c4d.tmp`, with NAME shortened so that the whole stays a legal name."""
    room = MAX_NAME_SIZE - len(".." + "12345678" + ".tmp")
    while name_size(name) > room:
        name = name[:-1]
    return f".{name}.{secrets.token_hex(4)}.tmp"


def write_atomically(target: Path, data: bytes) -> None:
    temp = target.with_name(_temp_name(target.name))
    # 0o666 lets the umask decide, as for any new file; a replaced file keeps its mode.
    mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else 0o666
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        _replace_with_retry(temp, target)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def clean_stale_temps(root: Path, older_than: float = STALE_TEMP_SECONDS) -> int:
    """Removes write_file temp files (`.NAME.1a2b3c4d.tmp`) that a kill left behind.

    Only regular files older than `older_than` seconds, so a write in progress is never
    touched; links are not followed and the walk is bounded and skips caches, virtual
    environments and journals. Returns how many were removed; never raises.
    """
    deadline = time.time() - older_than
    removed = 0
    seen = 0
    pending = [root]
    while pending and seen < TEMP_SCAN_LIMIT:
        try:
            with os.scandir(pending.pop()) as scan:
                entries = list(scan)
        except OSError:
            continue
        seen += len(entries)
        for entry in entries:
            removed += _remove_if_stale(entry, deadline, pending)
    return removed


def _remove_if_stale(entry: os.DirEntry[str], deadline: float, pending: list[Path]) -> int:
    try:
        if entry.is_dir(follow_symlinks=False):
            if not is_skipped(entry.name, is_dir=True):
                pending.append(Path(entry.path))
            return 0
        if not _TEMP_NAME.fullmatch(entry.name) or not entry.is_file(follow_symlinks=False):
            return 0
        if entry.stat(follow_symlinks=False).st_mtime >= deadline:
            return 0
        os.unlink(entry.path)
    except OSError:
        return 0
    return 1


def _replace_with_retry(source: Path, target: Path) -> None:
    # Windows refuses to replace a file that an editor or a virus scanner holds open, briefly.
    deadline = time.monotonic() + REPLACE_RETRY_SECONDS
    while True:
        try:
            os.replace(source, target)
            return
        except PermissionError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.05)
