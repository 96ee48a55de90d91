"""Benchmark: the offline embedding's meaning half (pipeline/knowledge/meaning.py) against the
hashed n-grams alone, in one run, on the OPEN eval splits only (tune, outside; never a sealed one).

Prints, for each embedding: how often the nearest doc by similarity alone (the knowledge page's
"similar docs" search, no signatures) is of the case's category, first and in the top 3; then the
model's load time and the RSS it adds, and the cost of embedding a text as a ratio of the n-grams'
cost measured in the same run.

    .venv/bin/python bench/embedding.py
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline.evaluation import load_cases  # noqa: E402
from pipeline.ingest.events import normalize  # noqa: E402
from pipeline.knowledge.embeddings import HashedNgramEmbedder, embedder_from_setting  # noqa: E402
from pipeline.knowledge.index import KnowledgeBase  # noqa: E402
from pipeline.knowledge.retrieval import query_text  # noqa: E402


def rss_mb() -> float:
    return int(Path("/proc/self/status").read_text().split("VmRSS:")[1].split()[0]) / 1024


def main() -> None:
    hashed = HashedNgramEmbedder()
    KnowledgeBase(index_dir=None, embedder=hashed).search("warm", k=1)
    before = rss_mb()
    started = time.perf_counter()
    from pipeline.knowledge import meaning

    loaded = meaning.load_model() is not None
    print(f"model      : {meaning.MODEL_NAME} loaded={loaded} in {time.perf_counter() - started:.2f} s, "
          f"+{rss_mb() - before:.1f} MB RSS (goal <= 100 MB with the docs' vectors, below)")
    offline = embedder_from_setting("offline")
    cases = [c for c in load_cases(split="tune") + load_cases(split="outside") if c.expected != "unknown"]
    queries = [query_text(sorted((normalize(o, source="bench", position=str(i)) for i, o in enumerate(c.events)),
                                 key=lambda e: e.time)) for c in cases]
    for embedder in (hashed, offline):
        kb = KnowledgeBase(index_dir=None, embedder=embedder)
        first = top3 = 0
        for case, query in zip(cases, queries):
            categories = [kb.by_id[doc_id].category for doc_id, _ in kb.search(query, k=3)]
            first += categories[:1] == [case.expected]
            top3 += case.expected in categories
        print(f"retrieval  : {embedder.name}: nearest doc of the right category {first}/{len(cases)} "
              f"= {first / len(cases):.3f}, in the top 3 {top3 / len(cases):.3f}")
    print(f"             +{rss_mb() - before:.1f} MB RSS with the docs' vectors")
    texts = [f"{q} #{n}" for n in range(3) for q in queries]  # distinct: no cache hit
    costs = {}
    for embedder in (hashed, offline):
        started = time.perf_counter()
        for text in texts:
            embedder.embed_array([text])
        costs[embedder.name] = (time.perf_counter() - started) / len(texts) * 1000
    print(f"cost       : {costs[hashed.name]:.3f} ms a query (n-grams), {costs[offline.name]:.3f} ms (offline), "
          f"ratio {costs[offline.name] / costs[hashed.name]:.2f}")


if __name__ == "__main__":
    main()
