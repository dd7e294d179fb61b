"""This user's secret key: what marks files that this user's own agent wrote.

A cloned repository can ship any `.agent_context/`; a MAC made with a key that never leaves
the per-user data folder tells this user's journals, indexes and caches from planted ones.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
from functools import cache
from pathlib import Path

from localagent.system.errors import AgentError

KEY_NAME = "secret.key"
KEY_BYTES = 32
TAG_HEX = 32  # 128 bits of HMAC-SHA256: forging one is out of reach, and lines stay short


class KeyUnavailable(AgentError):
    """The per-user key can be neither read nor created (exit 2: fix the folder)."""

    exit_code = 2

    def __init__(self, problem: str) -> None:
        super().__init__(
            f"{problem}. localagent seals the journals it writes with this key: make its "
            f"folder readable and writable (a damaged key can be moved away; journals sealed "
            f"with it then count as another agent's, to adopt with --adopt)"
        )


def key_path() -> Path:
    from localagent.system.userdirs import user_data_dir

    return user_data_dir() / KEY_NAME


@cache
def _key_at(path: Path) -> bytes:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return _create(path)
    except OSError as exc:
        raise KeyUnavailable(f"cannot read the key {path}: {exc.strerror or exc}") from None
    if len(data) != KEY_BYTES:
        raise KeyUnavailable(f"the key {path} is damaged ({len(data)} bytes, not {KEY_BYTES})")
    return data


def _create(path: Path) -> bytes:
    """A new key, written whole under a temporary name then linked into place, so two
    processes that race here end up with the same key (the loser reads the winner's)."""
    key = secrets.token_bytes(KEY_BYTES)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_name(f".{KEY_NAME}.{os.getpid()}.{secrets.token_hex(4)}")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600)
        try:
            os.write(fd, key)
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(temp, path)
        except FileExistsError:
            key = path.read_bytes()
        except OSError:  # file systems without hard links: a rename that may replace a racer's
            os.replace(temp, path)
        finally:
            with contextlib.suppress(OSError):
                os.unlink(temp)
    except OSError as exc:
        raise KeyUnavailable(f"cannot create the key {path}: {exc.strerror or exc}") from None
    if len(key) != KEY_BYTES:
        raise KeyUnavailable(f"the key {path} is damaged ({len(key)} bytes, not {KEY_BYTES})")
    return key


def user_key() -> bytes:
    """This user's key, created on first use (mode 0600)."""
    return _key_at(key_path())


def tag(data: bytes, purpose: bytes = b"") -> str:
    """The MAC of `data` under this user's key, as hex; `purpose` keeps tags made for one
    kind of file from being valid for another."""
    mac = hmac.new(user_key(), purpose + b"\0" + data, hashlib.sha256)
    return mac.hexdigest()[:TAG_HEX]


def is_ours(data: bytes, given: object, purpose: bytes = b"") -> bool:
    """Whether `given` is this user's tag of `data` (compared in constant time)."""
    return isinstance(given, str) and hmac.compare_digest(tag(data, purpose), given)


class Sealer:
    """`tag` and `is_ours` for one purpose, with the key read once: the journal seals
    every record it appends, and a lookup of the key per record would cost more than
    the MAC itself."""

    def __init__(self, purpose: bytes) -> None:
        self._start = hmac.new(user_key(), purpose + b"\0", hashlib.sha256)

    def tag(self, data: bytes) -> str:
        mac = self._start.copy()
        mac.update(data)
        return mac.hexdigest()[:TAG_HEX]

    def is_ours(self, data: bytes, given: object) -> bool:
        return isinstance(given, str) and hmac.compare_digest(self.tag(data), given)
