"""Ranked chunks for a query: BM25 over the chunks' words, their file path and symbol;
with an embedding model, cosine similarity too, fused with BM25 by reciprocal rank."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from localagent.research.bm25 import Bm25
from localagent.research.index import Index
from localagent.research.tokens import tokens

if TYPE_CHECKING:
    from localagent.research.vectors import Vectors

RRF_K = 60
PROSE_SUFFIXES = (".md", ".rst", ".txt", ".in", ".cfg", ".toml", ".ini", ".html")


@dataclass(frozen=True)
class Weights:
    """What the ranking adds to plain BM25 (measured by scripts/bench_research.py)."""

    path: float = 2.0  # a path's words count as this many mentions in each of its chunks
    symbol: float = 3.0  # and a chunk's symbol's words as this many
    # Questions are about code: prose (changelogs, READMEs, licences) mentions every
    # name there is, so its chunks' scores are multiplied by this.
    prose: float = 0.5
    spread: float = 0.3  # a file's score: its best chunk, plus this share of its next two


PLAIN = Weights(path=0.0, symbol=0.0, prose=1.0, spread=0.0)  # BM25, files by best chunk


@dataclass(frozen=True)
class Hit:
    path: str
    start: int
    end: int
    symbol: str
    kind: str
    head: str
    score: float
    key: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "start": self.start,
            "end": self.end,
            "symbol": self.symbol,
            "kind": self.kind,
            "score": round(self.score, 4),
            "head": self.head,
        }


def path_terms(path: str) -> list[str]:
    words = path.rsplit(".", 1)[0].replace("\\", "/").split("/")
    return [t for word in words for t in tokens(word)]


def _document(row: list[Any], path_words: list[str], weights: Weights) -> dict[str, float]:
    doc: dict[str, float] = dict(row[6])
    for term in path_words:
        doc[term] = doc.get(term, 0) + weights.path
    for term in set(tokens(row[2])):
        doc[term] = doc.get(term, 0) + weights.symbol
    return {term: count for term, count in doc.items() if count}


def query_terms(query: str) -> dict[str, float]:
    """Each distinct term of the query once (a question repeats its subject)."""
    return dict.fromkeys(tokens(query), 1.0)


class Searcher:
    def __init__(
        self, index: Index, vectors: Vectors | None = None, weights: Weights = Weights()
    ) -> None:
        self.index = index
        self.rows = index.chunk_rows()
        self.weights = weights
        words = {path: path_terms(path) for path in index.files}
        self.bm25 = Bm25([_document(row, words[path], weights) for path, row in self.rows])
        self.priors = [_prior(path, weights.prose) for path, _ in self.rows]
        self.vectors = vectors
        self.mode = "hybrid" if vectors else "lexical"

    def _hit(self, i: int, score: float) -> Hit:
        path, row = self.rows[i]
        return Hit(path, row[0], row[1], row[2], row[3], row[5], score, row[4])

    def ranked(self, query: str) -> list[tuple[int, float]]:
        scores = self.bm25.scores(query_terms(query))
        for i in scores:
            scores[i] *= self.priors[i]
        lexical = sorted(scores.items(), key=lambda item: -item[1])
        if not self.vectors:
            return lexical
        keys = [row[4] for _, row in self.rows]
        semantic = self.vectors.ranked(query, keys)
        return fuse([lexical, semantic])

    def search(self, query: str, k: int = 10) -> list[Hit]:
        return [self._hit(i, score) for i, score in self.ranked(query)[:k]]

    def files(self, query: str, k: int = 10) -> list[tuple[str, float]]:
        """Files ranked by their best chunk, with a share of their next two."""
        per_file: dict[str, list[float]] = defaultdict(list)
        for i, score in self.ranked(query):
            per_file[self.rows[i][0]].append(score)
        spread = self.weights.spread
        totals = {path: s[0] + spread * sum(s[1:3]) for path, s in per_file.items()}
        return sorted(totals.items(), key=lambda item: -item[1])[:k]


def _prior(path: str, prose: float) -> float:
    name = path.rsplit("/", 1)[-1]
    return prose if name.lower().endswith(PROSE_SUFFIXES) or "." not in name else 1.0


def fuse(rankings: list[list[tuple[int, float]]]) -> list[tuple[int, float]]:
    """Reciprocal rank fusion: each list adds 1 / (RRF_K + rank) to a document's score."""
    fused: dict[int, float] = defaultdict(float)
    for ranking in rankings:
        for rank, (doc, _) in enumerate(ranking, start=1):
            fused[doc] += 1.0 / (RRF_K + rank)
    return sorted(fused.items(), key=lambda item: -item[1])
