"""Meaning, the weakest grounded signal (issue 36.1): an error line whose WordLlama vector
(pipeline/knowledge/meaning.py) is within MEANING_SIMILARITY of one doc's signature or title, and
MEANING_MARGIN nearer to it than to any doc of another category, supports that category the way the
ideas of its cause do (pipeline/analyst/ideas.py), capped below the code-fix threshold, and only when
no signature and no idea names any category (pipeline/analyst/offline.py).
"""
from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

import numpy as np

from pipeline.analyst.ideas import _texts
from pipeline.knowledge.meaning import embed_meaning, masked
from pipeline.state import LogEvent

if TYPE_CHECKING:
    from pipeline.knowledge.index import KnowledgeBase

MEANING_SCORE = 1.0  # below an idea's: meaning alone is the weakest support
# measured on the open eval splits (tune, outside: 108 named cases, 13 unknown): an error line's
# nearest signature by meaning alone at >= 0.80 and 0.10 ahead of other categories was of the
# right category in 27 of 27 cases and no unknown case came that near; at 0.75 / 0.10, 1 wrong
MEANING_SIMILARITY = 0.80
MEANING_MARGIN = 0.10


_REGEX_SYNTAX = re.compile(r"\\[bBdDsSwW]|\(\?[:!=<]*|[\\^$()\[\]{}?*+|.]")


def categories_meant(kb: "KnowledgeBase", events: list[LogEvent]) -> dict[str, tuple[str, int]]:
    """category -> (what the nearest signature says, how many distinct event texts mean it), for
    event texts within MEANING_SIMILARITY of a doc's signature or title and MEANING_MARGIN nearer
    to it than to any other category's; {} without the model."""
    # a burst's lines differ in their ids and counts, which mean nothing: one vector per line shape
    # (shared by the burst's lines and by later incidents of the same shape, embed_meaning's cache)
    texts = tuple(dict.fromkeys(masked(text) for text in _texts(events)))
    return dict(_meant(kb, kb.generation, texts)) if texts else {}


@functools.lru_cache(maxsize=256)
def _meant(kb: "KnowledgeBase", generation: int, texts: tuple[str, ...]) -> tuple[tuple[str, tuple[str, int]], ...]:
    """categories_meant's answer for these line shapes, once per docs generation."""
    table = _signature_meanings(kb, generation)
    rows = embed_meaning(list(texts)) if table is not None else None
    if table is None or rows is None:
        return ()
    matrix, categories, phrases, starts = table
    similarity = rows @ matrix.T  # (texts, phrases), the phrases grouped by category
    # each category's nearest phrase per text, at once: the best and the runner-up category per text
    per_category = np.maximum.reduceat(similarity, starts, axis=1)
    order = np.argsort(-per_category, axis=1)[:, :2]
    out: dict[str, tuple[str, int]] = {}
    for n, row in enumerate(similarity):
        first = int(order[n, 0])
        best_score = float(per_category[n, first])
        runner_up = float(per_category[n, order[n, 1]]) if per_category.shape[1] > 1 else float("-inf")
        if best_score < MEANING_SIMILARITY or best_score - runner_up < MEANING_MARGIN:
            continue
        end = starts[first + 1] if first + 1 < len(starts) else len(phrases)
        best = int(starts[first] + np.argmax(row[starts[first]:end]))
        category = str(categories[first])
        label, count = out.get(category, (f"an error line meaning {phrases[best]!r} (similarity {best_score:.2f})", 0))
        out[category] = (label, count + 1)
    return tuple(out.items())


@functools.lru_cache(maxsize=4)
def _signature_meanings(kb: "KnowledgeBase", generation: int) -> tuple[np.ndarray, list[str], list[str], np.ndarray] | None:
    """Every doc's signatures (a regex's plain words) and title as meaning vectors, grouped by their
    docs' category (the categories in order, the phrases, and where each category's rows start), once
    per docs generation; None without the model."""
    rows: list[tuple[str, str]] = []
    for doc in kb.docs:
        for text in (*doc.signatures, doc.title):
            plain = " ".join(_REGEX_SYNTAX.sub(" ", text[3:]).split()) if text.startswith("re:") else text
            if len(plain) >= 4:
                rows.append((doc.category, plain))
    rows.sort(key=lambda r: r[0])  # stable: each category's phrases keep the docs' order
    matrix = embed_meaning([p for _, p in rows]) if rows else None
    if matrix is None:
        return None
    categories = list(dict.fromkeys(c for c, _ in rows))
    starts = np.array([next(i for i, (c, _) in enumerate(rows) if c == category) for category in categories])
    return matrix, categories, [p for _, p in rows], starts
