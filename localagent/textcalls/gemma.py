"""Gemma's call syntax: `call:NAME{key:value,…}` with strings between `<|"|>` (Gemma 4)
or `<escape>` (FunctionGemma) delimiters, or in double quotes; bare numbers, booleans and
null; nested `{…}` and `[…]`. Nothing unterminated is accepted."""

from __future__ import annotations

import json
import re
from typing import Any

from localagent.textcalls.literals import NotLiteral

_DELIMITERS = ('<|"|>', "<escape>")
_BARE = re.compile(r"[^,}\]]*")
_KEY = re.compile(r"\s*([^:{}\[\],<\"]+?)\s*:")
_DECODER = json.JSONDecoder()


class GemmaArguments:
    """A cursor over the text; `value()` reads one value and moves past it."""

    def __init__(self, text: str, pos: int) -> None:
        self.text = text
        self.pos = pos

    def _skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in " \t\r\n":
            self.pos += 1

    def _take(self, token: str) -> bool:
        self._skip()
        if self.text.startswith(token, self.pos):
            self.pos += len(token)
            return True
        return False

    def value(self) -> Any:
        self._skip()
        if self._take("{"):
            return self._items("}", self._pair, {})
        if self._take("["):
            return self._items("]", lambda found: found.append(self.value()), [])
        for delimiter in _DELIMITERS:
            if self._take(delimiter):
                start, end = self.pos, self.text.find(delimiter, self.pos)
                if end < 0:
                    raise NotLiteral("a string that never ends")
                self.pos = end + len(delimiter)
                return self.text[start:end]
        if self.text.startswith('"', self.pos):
            try:
                found, self.pos = _DECODER.raw_decode(self.text, self.pos)
            except json.JSONDecodeError:
                raise NotLiteral("a string that never ends") from None
            return found
        return self._bare()

    def _bare(self) -> Any:
        match = _BARE.match(self.text, self.pos)
        token = match.group(0).strip() if match else ""
        self.pos = match.end() if match else self.pos
        if self.pos >= len(self.text):
            raise NotLiteral("the arguments never end")
        try:
            return json.loads(token)
        except json.JSONDecodeError:
            return token

    def _pair(self, found: dict[str, Any]) -> None:
        self._skip()
        key = None
        for delimiter in _DELIMITERS:
            if self.text.startswith(delimiter, self.pos):
                key = self.value()
                if not self._take(":"):
                    raise NotLiteral("a key without a value")
        if key is None:
            match = _KEY.match(self.text, self.pos)
            if match is None:
                raise NotLiteral("a key without a value")
            key, self.pos = match.group(1).strip().strip('"'), match.end()
        found[str(key)] = self.value()

    def _items(self, closer: str, read: Any, found: Any) -> Any:
        while True:
            if self._take(closer):
                return found
            if self.pos >= len(self.text):
                raise NotLiteral("the arguments never end")
            read(found)
            if not self._take(","):
                if self._take(closer):
                    return found
                raise NotLiteral("a separator is missing")
