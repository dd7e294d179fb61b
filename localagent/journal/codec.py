"""Records as lines: one checksummed orjson object per line, and what a crash leaves."""

from __future__ import annotations

import re
import reprlib
import zlib
from datetime import UTC, datetime
from typing import Any

import orjson

_SEQ_AT_START = re.compile(rb'\{"seq":(\d{1,18}),')
_CRC_PREFIX = b',"crc":"'
_CRC_TAIL = len(_CRC_PREFIX) + 8 + 2
MAX_DEPTH = 200  # orjson refuses more than 255 levels; the record itself adds a few
MAX_TORN = 8 << 20  # a torn write is at most one record; a longer damaged tail is damage
_SHORT_REPR = reprlib.Repr()
_SHORT_REPR.maxlevel, _SHORT_REPR.maxstring, _SHORT_REPR.maxother = 8, 400, 400


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


def _line(record: dict[str, Any]) -> bytes:
    body = orjson.dumps(record)
    return body[:-1] + _CRC_PREFIX + b"%08x" % zlib.crc32(body) + b'"}\n'


def encode(record: dict[str, Any]) -> bytes:
    """One checksummed line; never fails (see `encodable`)."""
    try:
        return _line(record)
    except (TypeError, orjson.JSONEncodeError):
        return _line(encodable(record))


def decode(line: bytes) -> dict[str, Any] | None:
    """The record of one line, or None if the line is torn, damaged or not ours."""
    line = line.rstrip(b"\r\n")
    if len(line) <= _CRC_TAIL or line[-_CRC_TAIL:-10] != _CRC_PREFIX or line[-2:] != b'"}':
        return None
    body = line[:-_CRC_TAIL] + b"}"
    try:
        if zlib.crc32(body) != int(line[-10:-2], 16):
            return None
        record = orjson.loads(body)
    except ValueError:
        return None
    ok = isinstance(record, dict) and isinstance(record.get("seq"), int) and "type" in record
    return record if ok else None


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


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
