"""`localagent search`: the workspace's index brought up to date, then ranked chunks,
lexical or hybrid (with an embedding model), for people (text) and scripts (JSON)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localagent.config.settings import Settings
from localagent.journal import Journal
from localagent.models.protocol import Model
from localagent.research.index import Index, update
from localagent.research.retrieval import Hit, Searcher


def _never() -> bool:
    return False


@dataclass
class Found:
    query: str
    mode: str  # "lexical" or "hybrid"
    hits: list[Hit]
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "mode": self.mode,
            "results": [hit.as_dict() for hit in self.hits],
            "notes": self.notes,
        }

    def text(self) -> str:
        lines = [f"{self.mode} search for {self.query!r}: {len(self.hits)} results"]
        for hit in self.hits:
            symbol = f" {hit.symbol}" if hit.symbol else ""
            lines.append(f"{hit.path}:{hit.start}-{hit.end}{symbol}  ({hit.score:.3f})")
            lines.append(f"    {hit.head}")
        return "\n".join(lines + self.notes)


def index_folder(root: Path) -> Path | None:
    """`.agent_context/index/`, or None when the workspace cannot be written (the index
    is then built in memory). A planted link there is refused (UnsafeFile)."""
    try:
        return Journal(root).research_folder("index")
    except PermissionError:
        return None
    except OSError as exc:
        if exc.errno in (13, 30):  # EACCES, EROFS
            return None
        raise


def open_index(root: Path, cancelled: Callable[[], bool] = _never) -> Index:
    folder = index_folder(root)
    index = update(root, folder, cancelled)
    if folder is None:
        index.notes.append("the workspace cannot be written: the index was built in memory")
    return index


def make_searcher(
    root: Path,
    settings: Settings,
    cancelled: Callable[[], bool] = _never,
    model: Model | None = None,
) -> tuple[Searcher, list[str]]:
    """A searcher over the workspace; hybrid when an embedding model is configured
    (`model` embeds, or one made from the settings)."""
    index = open_index(root, cancelled)
    notes = list(index.notes)
    vectors = None
    if settings.embed_model:
        from localagent.models import ModelConfig, make_model
        from localagent.research.vectors import Vectors

        folder = index_folder(root)
        embedder = model or make_model(ModelConfig.of(settings))
        vectors = Vectors.build(embedder, settings.embed_model, index, folder)
    else:
        notes.append("lexical search only: set embed_model (LOCALAGENT_EMBED_MODEL) for semantic")
    return Searcher(index, vectors), notes


def search(root: Path, query: str, k: int, settings: Settings) -> Found:
    searcher, notes = make_searcher(root, settings)
    return Found(query, searcher.mode, searcher.search(query, k), notes)
