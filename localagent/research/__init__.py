"""Code research: retrieval over a workspace (AST chunks, BM25, optional embeddings fused
by reciprocal rank), an `ast` call graph with confidence labels, and the `ask` pipeline.

Nothing heavy is imported here; the index lives in `.agent_context/index/` (owned by the
journal) and is brought up to date incrementally on each use.
"""
