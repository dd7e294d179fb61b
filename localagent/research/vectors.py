"""Semantic search: chunk vectors from the configured embedding model (through the model
seam), cached in `.agent_context/index/vectors-<model>.json` by chunk content, and the
chunks ranked by cosine similarity to the query's vector. The cache is sealed as the
index is (`index.sealed`): vectors a repository ships are never used, only embedded anew.

Plain Python, not numpy: a query is one dot product per chunk (about 20 us for 768
dimensions, so 0.1 s for 6,000 chunks), small beside the model call that embeds the
query, and not worth a 20 MB dependency for every user of the agent.
"""

from __future__ import annotations

import operator
import os
import re
from collections.abc import Iterator
from pathlib import Path

import orjson

from localagent.models.protocol import Model
from localagent.research.chunks import chunk_file, parse
from localagent.research.index import Index, digest, sealed, unsealed
from localagent.system import safefs
from localagent.tools.walk import Walk

BATCH = 32
PURPOSE = b"research vectors"
MAX_EMBED_CHARS = 2000
# Models trained with instructions embed documents and queries with these prefixes
# (matched on the start of the model's name, tag and namespace left out).
PREFIXES: dict[str, tuple[str, str]] = {
    "nomic-embed": ("search_document: ", "search_query: "),
    "e5": ("passage: ", "query: "),
    "multilingual-e5": ("passage: ", "query: "),
    "bge": ("", "Represent this sentence for searching relevant passages: "),
    "mxbai-embed": ("", "Represent this sentence for searching relevant passages: "),
    "snowflake-arctic-embed": ("", "Represent this sentence for searching relevant passages: "),
}


def prefixes(model_name: str) -> tuple[str, str]:
    """The (document, query) prefixes for a model name like `nomic-embed-text:latest`."""
    base = model_name.rsplit("/", 1)[-1].split(":")[0].lower()
    for family in sorted(PREFIXES, key=len, reverse=True):
        if base.startswith(family):
            return PREFIXES[family]
    return "", ""


def _normalised(vector: list[float]) -> list[float]:
    norm = sum(x * x for x in vector) ** 0.5 or 1.0
    return [x / norm for x in vector]


class Vectors:
    def __init__(self, model: Model, name: str, table: dict[str, list[float]]) -> None:
        self.model = model
        self.document_prefix, self.query_prefix = prefixes(name)
        self.table = table

    @classmethod
    def build(cls, model: Model, name: str, index: Index, folder: Path | None) -> Vectors:
        """The vectors of every chunk of `index`, embedding only those not cached."""
        path = folder / f"vectors-{re.sub(r'[^A-Za-z0-9_.-]', '_', name)}.json" if folder else None
        cached = _load(path)
        wanted = {row[4]: (p, row) for p, row in index.chunk_rows()}
        vectors = cls(model, name, {k: v for k, v in cached.items() if k in wanted})
        missing = [key for key in wanted if key not in vectors.table]
        if missing:
            texts = _texts(index, {wanted[key][0] for key in missing})
            for batch in _batches(missing):
                docs = [
                    vectors._document(wanted[k][0], wanted[k][1], texts.get(k, "")) for k in batch
                ]
                for key, vector in zip(batch, model.embed(docs), strict=True):
                    vectors.table[key] = _normalised(vector)
        if path is not None and (missing or len(cached) != len(vectors.table)):
            _save(path, vectors.table)
        return vectors

    def _document(self, path: str, row: list, text: str) -> str:
        return f"{self.document_prefix}{path} {row[2]}\n{text}"[:MAX_EMBED_CHARS]

    def ranked(self, query: str, keys: list[str]) -> list[tuple[int, float]]:
        """Chunk positions by cosine similarity of their vector to the query's."""
        [query_vector] = self.model.embed([self.query_prefix + query])
        q = _normalised(query_vector)
        scores = [
            (i, sum(map(operator.mul, q, self.table[key])))
            for i, key in enumerate(keys)
            if key in self.table
        ]
        return sorted(scores, key=lambda item: -item[1])


def _batches(keys: list[str]) -> Iterator[list[str]]:
    for i in range(0, len(keys), BATCH):
        yield keys[i : i + BATCH]


def _texts(index: Index, paths: set[str]) -> dict[str, str]:
    """Chunk texts by key: this run's, and those of the files named, chunked again."""
    texts = dict(index.texts)
    walk = Walk(index.root, float("inf"), lambda: False)
    for path in paths:
        text = walk.read_text(path)
        if text is not None:
            for chunk in chunk_file(path, text, parse(path, text)):
                texts.setdefault(digest(chunk.text), chunk.text)
    return texts


def _load(path: Path | None) -> dict[str, list[float]]:
    if path is None:
        return {}
    try:
        body = unsealed(path.parent, safefs.read_bytes(path), PURPOSE + path.name.encode())
        data = orjson.loads(body) if body is not None else {}
    except (FileNotFoundError, orjson.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def _save(path: Path, table: dict[str, list[float]]) -> None:
    temp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        safefs.write_new(
            temp, sealed(path.parent, orjson.dumps(table), PURPOSE + path.name.encode())
        )
        safefs.replace(temp, path)
    except OSError:
        pass  # a cache: the next search embeds again
