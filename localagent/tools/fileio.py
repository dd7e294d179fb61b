"""Opening workspace files without following links, writing them in one step, and
removing what a killed write left.

A file is opened relative to its folder's descriptor, that folder reached from the
workspace root one name at a time without following links (`O_NOFOLLOW`): a folder on
the way that is swapped for a link after the path was checked cannot send a read or a
write elsewhere. Reads also refuse anything but a regular file, checked on the opened
descriptor, and never block opening a FIFO. A write goes to a temp file beside the
target, `.NAME.localagent-1a2b3c4d.tmp`, which is then renamed over it, both relative to
the folder's descriptor (`O_EXCL` for the temp file). Windows has no `dir_fd`: there the
names are used as `resolve_in_workspace` checked them a moment before (and `safefs`
refuses a link as the last name), a short race that POSIX closes.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat
import time
from pathlib import Path
from typing import BinaryIO

from localagent.system import safefs
from localagent.tools.base import JOURNAL_DIR, ToolError, describe
from localagent.tools.fingerprint import is_skipped
from localagent.tools.paths import MAX_NAME_SIZE, name_size, relative

REPLACE_RETRY_SECONDS = 2.0
STALE_TEMP_SECONDS = 60.0
TEMP_SCAN_LIMIT = 20_000  # entries looked at by clean_stale_temps
TEMP_MARK = "localagent-"
_TEMP_NAME = re.compile(rf"\..+\.{TEMP_MARK}[0-9a-f]{{8}}\.tmp", re.DOTALL)
# Versions before the mark: such a file may be anyone's, so only an old one is removed.
_UNMARKED_TEMP_NAME = re.compile(r"\..+\.[0-9a-f]{8}\.tmp", re.DOTALL)
DIR_FD = os.rename in os.supports_dir_fd and hasattr(os, "O_DIRECTORY")
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_FOLDER = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW
_READ = os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0)


def temp_name(name: str) -> str:
    """`.NAME.localagent-1a2b3c4d.tmp`, NAME shortened so the whole stays a legal name."""
    room = MAX_NAME_SIZE - len(f"..{TEMP_MARK}12345678.tmp")
    while name_size(name) > room:
        name = name[:-1]
    return f".{name}.{TEMP_MARK}{secrets.token_hex(4)}.tmp"


def write_atomically(root: Path, target: Path, data: bytes) -> None:
    """Replace (or create) `target`, a resolved path inside `root`, with `data`; missing
    folders on the way are created."""
    *folders, name = target.relative_to(root).parts
    shown = relative(root, target)
    for depth in range(1, len(folders) + 1):
        on_way = root.joinpath(*folders[:depth])
        if on_way.is_file() and not on_way.is_symlink():
            # Qwen2.5-Coder-1.5B wrote "mathx/" as a file, then every file of the package
            # was refused as "changed after the path was checked".
            folder_shown = describe(relative(root, on_way))
            raise ToolError.of("file_on_the_way", folder=folder_shown, path=describe(shown))
    if not DIR_FD:
        target.parent.mkdir(parents=True, exist_ok=True)
        _write_by_name(target, data)
        return
    folder = _open_folder(root, folders, shown, create=True)
    try:
        _write_in(folder, name, data)
    finally:
        os.close(folder)


def open_regular(root: Path, target: Path) -> BinaryIO:
    """`target`, a resolved path inside `root`, opened for reading if it is a regular
    file; ToolError if it is anything else or has become a link since it was checked."""
    shown = relative(root, target)
    if not DIR_FD:
        try:
            return safefs.open_file(target, "rb")  # type: ignore[return-value]
        except safefs.UnsafeFile:
            raise ToolError.of("not_regular_unread", path=describe(shown)) from None
    *folders, name = target.relative_to(root).parts
    folder = _open_folder(root, folders, shown, create=False)
    try:
        fd = os.open(name, _READ, dir_fd=folder)
    except OSError as exc:
        raise _changed(exc, shown) from None
    finally:
        os.close(folder)
    handle = os.fdopen(fd, "rb")
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        handle.close()
        raise ToolError.of("not_regular_unread", path=describe(shown))
    os.set_blocking(fd, True)
    return handle


def _open_folder(root: Path, names: list[str], shown: str, create: bool) -> int:
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for name in names:
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, dir_fd=fd)
            inner = os.open(name, _FOLDER, dir_fd=fd)
            os.close(fd)
            fd = inner
    except OSError as exc:
        os.close(fd)
        raise _changed(exc, shown) from None
    return fd


def _changed(exc: OSError, shown: str) -> OSError | ToolError:
    """What to raise for a failed open on the way to `shown`."""
    if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.ENXIO):
        return ToolError.of("changed_after_check", path=describe(shown))
    return exc


def _write_in(folder: int, name: str, data: bytes) -> None:
    try:
        st = os.stat(name, dir_fd=folder, follow_symlinks=False)
        # A replaced file keeps its mode; 0o666 lets the umask decide, as for any new file.
        mode = stat.S_IMODE(st.st_mode) if stat.S_ISREG(st.st_mode) else 0o666
    except FileNotFoundError:
        mode = 0o666
    temp = temp_name(name)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW
    fd = os.open(temp, flags, mode, dir_fd=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.rename(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=folder)
        raise


def _write_by_name(target: Path, data: bytes) -> None:
    temp = target.with_name(temp_name(target.name))
    mode = stat.S_IMODE(target.stat().st_mode) if target.is_file() else 0o666
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    fd = os.open(temp, flags, mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        _replace_with_retry(temp, target)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


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


def clean_stale_temps(root: Path, older_than: float = STALE_TEMP_SECONDS) -> int:
    """Removes the temp files of writes that a kill cut short; run while this workspace's
    lock is held, so no write of its own is in progress.

    A marked temp file (`.NAME.localagent-1a2b3c4d.tmp`) goes whatever its age, except
    in a nested workspace (a folder with its own journal), whose own run may be writing
    it; there, and for unmarked names of earlier versions, only files older than
    `older_than` seconds. Only regular files; links are not followed, and the walk is
    bounded and skips caches, virtual environments and journals. Returns how many were
    removed; never raises.
    """
    deadline = time.time() - older_than
    removed = seen = 0
    pending: list[tuple[Path, bool]] = [(root, True)]
    while pending and seen < TEMP_SCAN_LIMIT:
        folder, own = pending.pop()
        try:
            with os.scandir(folder) as scan:
                entries = list(scan)
        except OSError:
            continue
        seen += len(entries)
        own = own and (folder == root or not any(e.name.casefold() == JOURNAL_DIR for e in entries))
        for entry in entries:
            removed += _remove_if_stale(entry, own, deadline, pending)
    return removed


def _remove_if_stale(
    entry: os.DirEntry[str], own: bool, deadline: float, pending: list[tuple[Path, bool]]
) -> int:
    try:
        if entry.is_dir(follow_symlinks=False):
            if not is_skipped(entry.name, is_dir=True):
                pending.append((Path(entry.path), own))
            return 0
        marked = _TEMP_NAME.fullmatch(entry.name) is not None
        if not marked and not _UNMARKED_TEMP_NAME.fullmatch(entry.name):
            return 0
        if not entry.is_file(follow_symlinks=False):
            return 0
        if not (marked and own) and entry.stat(follow_symlinks=False).st_mtime >= deadline:
            return 0
        os.unlink(entry.path)
    except OSError:
        return 0
    return 1
