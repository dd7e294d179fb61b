"""File-level retrieval quality of `localagent search` on real questions about a repository.

Each question's gold set is the `.py` paths its answer names that exist in the tree (the
SWE-QA convention). The search ranks files by their chunks (see `Searcher.files`), and
this script reports hit@k (a gold file among the first k) and recall@k (the share of
gold files among the first k), on the questions as written and with identifiers masked
out (backticked spans, snake_case, CamelCase and dotted names removed: the honest test of
retrieval from plain words). Also the index build time and the median query time.

    python scripts/bench_research.py [--repo DIR] [--questions FILE.jsonl] [--embed-model M]

Defaults: the `requests` 2.32.5 sdist unpacked under /tmp/reqsdist (fetch it with
`pip download requests==2.32.5 --no-deps --no-binary :all: -d /tmp/reqsdist` and untar
it) and /work/shared/benchmarks/sweqa/requests.jsonl. Any JSONL of {"question", "answer"}
works, or {"question", "gold": [paths]}. The index is built in memory: the repository is
not written to.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from pathlib import Path

from localagent.config.userconfig import load_settings
from localagent.models import make_model
from localagent.models.config import ModelConfig
from localagent.research.index import Index, update
from localagent.research.retrieval import PLAIN, Searcher
from localagent.research.vectors import Vectors

REPO = Path("/tmp/reqsdist/requests-2.32.5")
QUESTIONS = Path("/work/shared/benchmarks/sweqa/requests.jsonl")
KS = (1, 3, 5, 10)
_PY_PATH = re.compile(r"[\w./-]+\.py\b")
_MASKED = [
    re.compile(r"`[^`]*`"),  # backticked spans
    re.compile(r"\b\w*_\w*\b"),  # snake_case (any word with an underscore)
    re.compile(r"\b[A-Za-z]*[a-z][A-Z]\w*\b"),  # camelCase, CamelCase
    re.compile(r"\b[A-Z]{2,}[a-z]\w*\b"),  # HTTPAdapter
    re.compile(r"\b\w+(?:\.\w+)+\b"),  # dotted names and file names
    re.compile(r"\b\w+\(\)"),  # called names
]


def mask(question: str) -> str:
    for pattern in _MASKED:
        question = pattern.sub(" ", question)
    return re.sub(r"\s+", " ", question).strip()


def gold_of(item: dict, root: Path) -> set[str]:
    if "gold" in item:
        return set(item["gold"])
    named = {p.removeprefix("./") for p in _PY_PATH.findall(item["answer"])}
    return {p for p in named if (root / p).is_file()}


def score(ranked: list[str], gold: set[str]) -> dict[str, float]:
    out = {}
    for k in KS:
        found = len(gold & set(ranked[:k]))
        out[f"hit@{k}"] = float(found > 0)
        out[f"recall@{k}"] = found / len(gold)
    return out


def run(searcher: Searcher, items: list[tuple[str, set[str]]]) -> tuple[dict[str, float], float]:
    totals: dict[str, list[float]] = {}
    times = []
    for question, gold in items:
        started = time.perf_counter()
        ranked = [path for path, _ in searcher.files(question, max(KS))]
        times.append(time.perf_counter() - started)
        for name, value in score(ranked, gold).items():
            totals.setdefault(name, []).append(value)
    return {name: sum(v) / len(v) for name, v in totals.items()}, statistics.median(times)


def vectors_for(model_name: str, index: Index) -> Vectors:
    settings = load_settings(embed_model=model_name)
    return Vectors.build(make_model(ModelConfig.of(settings)), settings.embed_model, index, None)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, default=REPO)
    parser.add_argument("--questions", type=Path, default=QUESTIONS)
    parser.add_argument("--embed-model", default="", help="an embedding model on the server")
    parser.add_argument("--show-misses", action="store_true")
    args = parser.parse_args()
    if not args.repo.is_dir():
        sys.exit(f"{args.repo} is not a folder; see the docstring for how to fetch it")
    root = args.repo.resolve()
    started = time.perf_counter()
    index = update(root, None)
    build = time.perf_counter() - started
    vectors = vectors_for(args.embed_model, index) if args.embed_model else None
    searcher = Searcher(index, vectors)
    plain = Searcher(index, None, PLAIN)
    lines = args.questions.read_text(encoding="utf-8").splitlines()
    raw = [json.loads(line) for line in lines if line.strip()]
    items = [(item["question"], gold_of(item, root)) for item in raw]
    items = [(q, g) for q, g in items if g]
    chunks = len(searcher.rows)
    print(f"{root.name}: {len(index.files)} files, {chunks} chunks, indexed in {build:.2f} s; ")
    print(f"{len(items)} of {len(raw)} questions have gold files; search: {searcher.mode}\n")
    columns = [f"hit@{k}" for k in KS[:3]] + [f"recall@{k}" for k in KS]
    print("| questions | " + " | ".join(columns) + " | median query |")
    print("|---" * (len(columns) + 2) + "|")
    masked = [(mask(q), g) for q, g in items]
    rows = [
        ("as written", searcher, items),
        ("identifiers masked", searcher, masked),
        ("as written, plain BM25", plain, items),
        ("identifiers masked, plain BM25", plain, masked),
    ]
    for label, ranker, qs in rows:
        metrics, median = run(ranker, qs)
        cells = " | ".join(f"{metrics[c]:.3f}" for c in columns)
        print(f"| {label} | {cells} | {median * 1000:.1f} ms |")
    if args.show_misses:
        for question, gold in items:
            ranked = [p for p, _ in searcher.files(question, 5)]
            if not gold <= set(ranked):
                print(f"\nMISS {sorted(gold - set(ranked))}\n  {question[:150]}\n  got {ranked}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
