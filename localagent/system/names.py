"""Text that came from outside and may not be UTF-8: a goal typed in another encoding
(argv bytes reach Python as surrogate escapes on POSIX), a folder named in one.

A path keeps its exact name for every file operation; `display` is only how it is shown
and journaled. A goal is text for the model and the journal, so its undecodable bytes
become U+FFFD once, at the start, and it is the same text on every later `start`.
"""

from __future__ import annotations

import os
from pathlib import Path


def display(path: str | Path) -> str:
    """A path as UTF-8 text for JSON and terminals: bytes that are not UTF-8 are shown
    as `\\xNN`, so two different names never look the same."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def clean_text(text: str) -> str:
    """`text` with undecodable bytes (lone surrogates) replaced by U+FFFD."""
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate that is not an escaped byte
        raw = text.encode("utf-8", "replace")
    return raw.decode("utf-8", "replace")
