"""What the knowledge page reads and does: the error docs, retrieval for any text, re-indexing."""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Callable

from pipeline.knowledge.index import KnowledgeBase, SyncReport
from pipeline.state import ErrorDoc, LogEvent

Retrieve = Callable[..., list[ErrorDoc]]  # (kb, events, *, k) -> docs, best first


class KnowledgeService:
    """The knowledge base as reviewers see it; `retrieve` is what the rag node runs, and
    `latest_evaluation` reads how well the analyst did on the labelled incidents."""

    def __init__(self, *, kb: KnowledgeBase, retrieve: Retrieve, latest_evaluation: Callable[[], dict | None]):
        self.kb = kb
        self._retrieve = retrieve
        self._latest_evaluation = latest_evaluation

    def docs(self) -> list[dict]:
        return self.kb.describe()

    def indexed_count(self) -> int:
        return self.kb.count()

    def nearest(self, text: str, *, k: int = 5) -> list[dict]:
        """Docs nearest to the text by embedding similarity alone."""
        out = []
        for doc_id, score in self.kb.search(text, k=k):
            doc = self.kb.by_id[doc_id]
            out.append({"doc_id": doc_id, "title": doc.title, "category": doc.category, "similarity": score})
        return out

    def retrieve(self, text: str, *, k: int = 5) -> list[ErrorDoc]:
        """What the rag node would retrieve for an incident whose only evidence is this text."""
        probe = LogEvent(event_id="knowledge-search", time=datetime.now(timezone.utc), message=text)
        return self._retrieve(self.kb, [probe], k=k)

    def reindex(self, progress: Callable[[float, str], None] | None = None) -> SyncReport:
        """Re-read the docs folder, embed new and edited docs, drop removed ones."""
        return self.kb.sync(progress=progress, reload=True)

    def latest_evaluation(self) -> dict | None:
        """The data dir's latest `eval` report (figures per split, with each split's title), or None."""
        return self._latest_evaluation()
