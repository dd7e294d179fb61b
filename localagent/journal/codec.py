"""Records as lines: one checksummed orjson object per line, and what a crash leaves.

A line the journal writes is also sealed: a MAC under this user's key (`userkey`) is its
last field before the checksum, made over the record's bytes as they are written, so it
is checked on those bytes without serialising anything again. Any program can write a
line with a valid checksum; only this user's agent can write one with a valid seal.
"""

from __future__ import annotations

import re
import reprlib
import zlib
from typing import Any

import orjson

from localagent.system import userkey
from localagent.system.clock import now_iso as now_iso

_SEQ_AT_START = re.compile(rb'\{"seq":(\d{1,18}),')
_CRC_PREFIX = b',"crc":"'
_CRC_TAIL = len(_CRC_PREFIX) + 8 + 2
_MAC_PREFIX = b',"mac":"'
_MAC_TAIL = len(_MAC_PREFIX) + userkey.TAG_HEX + 1
PURPOSE = b"history record"
MAX_DEPTH = 200  # orjson refuses more than 255 levels; the record itself adds a few
MAX_TORN = 8 << 20  # a torn write is at most one record; a longer damaged tail is damage
_SHORT_REPR = reprlib.Repr()
_SHORT_REPR.maxlevel, _SHORT_REPR.maxstring, _SHORT_REPR.maxother = 8, 400, 400


def signature(tool: str, args: dict[str, Any]) -> str:
    """Tool name plus canonical JSON of the arguments (sorted keys); values JSON cannot
    hold (integers past 64 bits, deep nesting) are signed as the journal writes them."""
    return tool + " " + orjson.dumps(encodable(args), option=orjson.OPT_SORT_KEYS).decode()


def encodable(value: Any, depth: int = 0) -> Any:
    """`value` as orjson can always write it: integers beyond 64 bits as their digits,
    nesting deeper than MAX_DEPTH as a short repr, lone surrogates escaped, other
    types as their repr. Lossless for everything orjson takes as it is."""
    if value is None or isinstance(value, bool | float):
        return value
    if isinstance(value, int):
        return value if -(2**63) <= value < 2**64 else str(value)
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if depth >= MAX_DEPTH:
        return _SHORT_REPR.repr(value)
    if isinstance(value, dict):
        return {encodable(str(k)): encodable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [encodable(v, depth + 1) for v in value]
    return _SHORT_REPR.repr(value)


def sealer() -> userkey.Sealer:
    """What seals records and checks seals (raises KeyUnavailable)."""
    return userkey.Sealer(PURPOSE)


def _line(record: dict[str, Any], seal: userkey.Sealer | None = None) -> bytes:
    body = orjson.dumps(record)
    if seal is not None:
        body = body[:-1] + _MAC_PREFIX + seal.tag(body).encode() + b'"}'
    return body[:-1] + _CRC_PREFIX + b"%08x" % zlib.crc32(body) + b'"}\n'


def encode(record: dict[str, Any], seal: userkey.Sealer | bool | None = None) -> bytes:
    """One checksummed line, sealed when `seal` is given (True: with this user's key);
    never fails (see `encodable`). The seal is the field `mac`: a record has no other."""
    if seal is True:
        seal = sealer()
    seal = seal or None
    try:
        return _line(record, seal)
    except (TypeError, orjson.JSONEncodeError):
        return _line(encodable(record), seal)


def _body(line: bytes) -> bytes | None:
    """The JSON object of a line whose checksum holds (its seal still in it), or None."""
    line = line.rstrip(b"\r\n")
    if len(line) <= _CRC_TAIL or line[-_CRC_TAIL:-10] != _CRC_PREFIX or line[-2:] != b'"}':
        return None
    body = line[:-_CRC_TAIL] + b"}"
    try:
        return body if zlib.crc32(body) == int(line[-10:-2], 16) else None
    except ValueError:
        return None


def _record(body: bytes) -> dict[str, Any] | None:
    try:
        record = orjson.loads(body)
    except ValueError:
        return None
    ok = isinstance(record, dict) and isinstance(record.get("seq"), int) and "type" in record
    if not ok:
        return None
    record.pop("mac", None)
    return record


def decode(line: bytes) -> dict[str, Any] | None:
    """The record of one line (without its seal), or None if the line is torn, damaged
    or not a journal line at all."""
    body = _body(line)
    return None if body is None else _record(body)


def decode_sealed(line: bytes, seal: userkey.Sealer) -> tuple[dict[str, Any] | None, bool | None]:
    """The record of one line, and whether this user's agent sealed it: True, False
    (sealed with another key, or edited since), or None (no seal at all)."""
    body = _body(line)
    if body is None:
        return None, None
    record = _record(body)
    if record is None:
        return None, None
    mac_at = len(body) - 1 - _MAC_TAIL
    if mac_at <= 0 or body[mac_at : mac_at + len(_MAC_PREFIX)] != _MAC_PREFIX:
        return record, None
    mac = body[mac_at + len(_MAC_PREFIX) : -2].decode("ascii", "replace")
    return record, seal.is_ours(body[:mac_at] + b"}", mac)


def _seq_of(line: bytes) -> int:
    """The seq a line says it holds, read even from a damaged line (0 if none)."""
    found = _SEQ_AT_START.match(line)
    return int(found[1]) if found else 0


def is_torn(tail: bytes) -> bool:
    """Whether the bytes after the last intact record are what a crash during one append
    leaves: a partial last line (no newline yet), a last line whose pages the filesystem
    never wrote (NUL bytes), or nothing but padding. Complete lines are never torn."""
    if b"\n" not in tail or not tail.strip(b"\0\r\n\t "):
        return True
    written = tail.rstrip(b"\0")
    return b"\0" in tail and b"\n" not in written[:-1]


_SNAPSHOT_MAC = b',\n  "mac": "'
_SNAPSHOT_TAIL = len(_SNAPSHOT_MAC) + userkey.TAG_HEX + len(b'"\n}')


def seal_snapshot(body: bytes, seal: userkey.Sealer) -> bytes:
    """`state.json` as orjson wrote it (an indented object), with its seal as the last field."""
    return body[:-2] + _SNAPSHOT_MAC + seal.tag(body).encode() + b'"\n}'


def snapshot_sealed(data: bytes, seal: userkey.Sealer) -> bool | None:
    """Whether this user's agent sealed `state.json`: True, False, or None (no seal)."""
    at = len(data) - _SNAPSHOT_TAIL
    if at <= 0 or data[at : at + len(_SNAPSHOT_MAC)] != _SNAPSHOT_MAC or data[-3:] != b'"\n}':
        return None
    mac = data[at + len(_SNAPSHOT_MAC) : -3].decode("ascii", "replace")
    return seal.is_ours(data[:at] + b"\n}", mac)
