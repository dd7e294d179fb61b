"""Identifier-aware tokens: `getProxyBypass` and `get_proxy_bypass` both give the whole
identifier and its parts (`get`, `proxy`, `bypass`), so a question in plain words finds
code and a pasted identifier finds exactly its definition."""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterator

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+")
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
# Words too common in questions and code to tell anything apart.
STOPWORDS = frozenset(
    """a an and are as at be been being but by can could do does did for from had has have
    how if in into is it its of on or so such than that the their them then there these
    they this those to was were what when where which while who whom why will with would
    you your self cls none true false def return import pass not no""".split()  # noqa: SIM905
)


def stem(word: str) -> str:
    """A light suffix fold, so that `resolved`, `resolves` and `resolve` meet, as do
    `proxies` and `proxy`, `encoding` and `encode` (not a full stemmer: code words
    are short and mostly exact)."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word[:-1] if len(word) > 3 and word.endswith("e") else word


def identifier_parts(word: str) -> list[str]:
    """`HTTPAdapter` -> [http, adapter]; `get_environ_proxies` -> [get, environ, proxies]."""
    return [p.lower() for piece in word.split("_") for p in _PART.findall(piece)]


@functools.lru_cache(maxsize=200_000)
def word_terms(word: str) -> tuple[str, ...]:
    """The terms of one word: the whole identifier, then its parts if it has several."""
    whole = word.strip("_").lower()
    if len(whole) < 2 or whole in STOPWORDS:
        return ()
    parts = identifier_parts(word)
    if len(parts) < 2:
        return (stem(whole),)
    return (stem(whole), *(stem(p) for p in parts if len(p) > 1 and p not in STOPWORDS))


def tokens(text: str) -> Iterator[str]:
    for word in _WORD.findall(text):
        yield from word_terms(word)


def term_counts(text: str) -> dict[str, int]:
    """Counts of the text's terms; words are counted first, so each distinct word is
    split and stemmed once."""
    counts: Counter[str] = Counter()
    for word, n in Counter(_WORD.findall(text)).items():
        for term in word_terms(word):
            counts[term] += n
    return dict(counts)
