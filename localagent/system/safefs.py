"""Files in folders a stranger may have filled: a cloned repository can ship anything in
`.agent_context/` (a symlink to a file outside, a FIFO, a device).

Every open here refuses to follow a symlink (`O_NOFOLLOW`; an `lstat` check on Windows,
which has no such flag), never blocks on open (`O_NONBLOCK`, cleared once `fstat` has
shown a regular file), and anything but a regular file is refused with `UnsafeFile`.
Replacing and deleting retry on Windows, where another process holding the file open
(a reader, an antivirus scan) makes them fail for a moment.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from localagent.system.errors import JournalCorrupt

WINDOWS = sys.platform == "win32"
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_BINARY = getattr(os, "O_BINARY", 0)
# Windows name surrogates: a symlink and a junction (other reparse points, such as
# cloud placeholder files, are ordinary files to us).
_LINK_TAGS = (
    getattr(stat, "IO_REPARSE_TAG_SYMLINK", 0xA000000C),
    getattr(stat, "IO_REPARSE_TAG_MOUNT_POINT", 0xA0000003),
)
RETRY_SECONDS = 2.0


class UnsafeFile(JournalCorrupt):
    """A path that is a symlink, a FIFO, a socket, a device or a folder where a regular
    file belongs (exit 2); nothing is read or written through it."""


def _kind(mode: int, reparse_tag: int = 0) -> str | None:
    """What a file is, when it is not a regular file; None for a regular file."""
    if stat.S_ISLNK(mode) or reparse_tag in _LINK_TAGS:
        return "a symbolic link"
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def unsafe(path: Path | str, kind: str) -> UnsafeFile:
    return UnsafeFile(
        f"{path} is {kind}, not a regular file; localagent never reads or writes through "
        f"one (a cloned repository may have planted it). Remove it, then run the command again"
    )


def lstat_kind(path: Path | str) -> str | None:
    """What is at `path` when it is not a regular file ("missing" when nothing is)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return "missing"
    return _kind(st.st_mode, getattr(st, "st_reparse_tag", 0))


def check_dir(path: Path | str) -> None:
    """Refuse a folder that is a symlink (or a Windows junction) or not a folder at all."""
    kind = lstat_kind(path)
    if kind not in ("missing", "a folder"):
        what = "a file" if kind is None else kind
        raise UnsafeFile(
            f"{path} is {what}, not a folder; localagent never follows a link there (a "
            f"cloned repository may have planted it). Remove it, then run the command again"
        )


def _opener(path: str, flags: int) -> int:
    if WINDOWS:
        kind = lstat_kind(path)
        if kind not in (None, "missing"):
            raise unsafe(path, kind)
    try:
        if WINDOWS:
            fd = _open_shared(path, flags)
        else:
            fd = os.open(path, flags | _NOFOLLOW | _NONBLOCK | _BINARY, 0o644)
    except OSError as exc:
        kind = lstat_kind(path)
        # ELOOP: a symlink under O_NOFOLLOW; ENXIO: a FIFO with no reader or a socket.
        if kind not in (None, "missing") or exc.errno in (errno.ELOOP, errno.ENXIO):
            raise unsafe(path, kind or "not a regular file") from None
        raise
    try:
        st = os.fstat(fd)
        kind = _kind(st.st_mode)
        if kind is not None:
            raise unsafe(path, kind)
        if _NONBLOCK:
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_shared(path: str, flags: int) -> int:
    """`os.open` on Windows, but sharing delete as well as read and write: a reader (`logs
    -f`, `status`) never stops the agent from rotating its log or replacing its state, as
    on POSIX. (The C runtime's open shares read and write only.)"""
    import ctypes
    import msvcrt
    from ctypes import wintypes

    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined]
    create = kernel32.CreateFileW
    create.restype = wintypes.HANDLE
    create.argtypes = [wintypes.LPCWSTR, wintypes.DWORD, wintypes.DWORD, ctypes.c_void_p]
    create.argtypes += [wintypes.DWORD, wintypes.DWORD, wintypes.HANDLE]
    access = {os.O_RDONLY: 0x80000000, os.O_WRONLY: 0x40000000}.get(
        flags & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR), 0xC0000000
    )
    share = 0x1 | 0x2 | 0x4  # FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE
    handle = create(path, access, share, None, _disposition(flags), 0x80, None)
    if handle in (None, wintypes.HANDLE(-1).value):
        code = ctypes.get_last_error()
        # The Windows error picks the subclass (FileNotFoundError, FileExistsError, ...).
        raise OSError(0, ctypes.FormatError(code), path, code)  # type: ignore[attr-defined]
    try:
        return msvcrt.open_osfhandle(handle, flags & (os.O_APPEND | os.O_RDONLY))  # type: ignore[attr-defined]
    except OSError:
        kernel32.CloseHandle(wintypes.HANDLE(handle))
        raise


def _disposition(flags: int) -> int:
    """CreateFileW's creation disposition for os.open flags."""
    if flags & os.O_CREAT and flags & os.O_EXCL:
        return 1  # CREATE_NEW
    if flags & os.O_CREAT and flags & os.O_TRUNC:
        return 2  # CREATE_ALWAYS
    if flags & os.O_CREAT:
        return 4  # OPEN_ALWAYS
    if flags & os.O_TRUNC:
        return 5  # TRUNCATE_EXISTING
    return 3  # OPEN_EXISTING


def open_file(path: Path, mode: str, buffering: int = -1) -> IO[Any]:
    """`open(path, mode)` for a regular file only, never through a symlink, never blocking."""
    encoding = None if "b" in mode else "utf-8"
    return open(path, mode, buffering=buffering, encoding=encoding, opener=_opener)


def read_bytes(path: Path, limit: int | None = None) -> bytes:
    """The content of a regular file (at most `limit` bytes); FileNotFoundError if absent."""
    with open_file(path, "rb") as fh:
        return fh.read() if limit is None else fh.read(limit)


def read_inside(folder: Path, path: Path, limit: int) -> bytes:
    """At most `limit` bytes of the regular file at `path`, which must still lie inside
    `folder` once every link is resolved (UnsafeFile otherwise): a link planted in a
    folder a stranger filled (a workspace, a prompts folder) never reads a file elsewhere."""
    home = os.path.realpath(folder)
    real = os.path.realpath(path)
    if os.path.commonpath([home, real]) != home:
        raise UnsafeFile(
            f"{path} leads to {real}, outside {folder}; localagent never reads a file "
            "elsewhere through a link (one may have been planted). Copy the file in instead"
        )
    # Every link is resolved now: a link in its place since is refused, not followed.
    with open_file(Path(real), "rb") as fh:
        return fh.read(limit)


def create_new(path: Path) -> IO[bytes]:
    """A new empty file at `path`, opened for writing; whatever was planted there (a
    symlink, a FIFO, a stale temp file) is removed first, never written through."""
    if lstat_kind(path) == "a folder":
        raise unsafe(path, "a folder")
    unlink(path)
    return open_file(path, "xb")


def write_new(path: Path, data: bytes, fsync: bool = False) -> None:
    with create_new(path) as fh:
        fh.write(data)
        if fsync:
            fh.flush()
            os.fsync(fh.fileno())


def _retry(action: Callable[[], None]) -> None:
    deadline = time.monotonic() + RETRY_SECONDS
    while True:
        try:
            action()
            return
        except PermissionError:
            if not WINDOWS or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def replace(src: Path, dst: Path) -> None:
    """`os.replace`, retried for a moment on Windows while another process holds `dst`."""
    _retry(lambda: os.replace(src, dst))


def unlink(path: Path) -> None:
    """Delete a file (or the link itself, never its target); a missing file is fine."""

    def remove() -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)

    _retry(remove)


def write_atomic(path: Path, data: bytes) -> None:
    """Write a temp file beside `path` (created fresh, never through a planted link),
    fsync it, and replace `path` with it."""
    tmp = path.with_name(path.name + ".tmp")
    write_new(tmp, data, fsync=True)
    replace(tmp, path)
