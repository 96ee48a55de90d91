"""The services the workbench's pages go through, built once per process for one data dir.

Pages and workbench components import only this module, `pipeline.errors`, `pipeline.state`
and `pipeline.config` (tests/test_layout.py reads their imports): what lies behind the
services (stores, the graph, the knowledge index, the analyst) can change without a page
changing with it.
"""
from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from pipeline.knowledge.index import load_docs, signature_words
from pipeline.knowledge.retrieval import find_similar
from pipeline.backtest.report import step_words
from pipeline.backtest.service import BacktestService
from pipeline.config import Settings
from pipeline.composition import open_engine
from pipeline.evaluation import latest_report
from pipeline.gc_tuning import freeze_long_lived, release_frozen, tune_garbage_collector
from pipeline.ingest.readable import readable_line
from pipeline.incidents import recurrence
from pipeline.knowledge.service import KnowledgeService
from pipeline.unattended.poller import Poller
from pipeline.operations.service import OperationsService
from pipeline.review.identity import ROLES, UNVERIFIED_LIMIT, Actor, actor_from_claims, demo_actor
from pipeline.review.related import RelatedIncidents
from pipeline.review.people import COMMENT_LIMIT
from pipeline.review.service import ReviewService

# pages build their Actor here: from st.user's claims (oidc) or the typed demo name
__all__ = ["Services", "COMMENT_LIMIT", "UNVERIFIED_LIMIT", "open_services", "Poller", "ReviewService", "OperationsService", "KnowledgeService",
           "Actor", "ROLES", "actor_from_claims", "demo_actor", "tune_garbage_collector", "freeze_long_lived", "release_frozen", "BacktestService",
           "backtests_of", "related_of", "RelatedIncidents", "step_words", "readable_line", "signature_words"]


@dataclass
class Services:
    settings: Settings
    review: ReviewService
    operations: OperationsService
    knowledge: KnowledgeService

    @property
    def data_dir(self) -> Path:
        return Path(self.settings.data_dir)

    def warm_up(self) -> None:
        """Build what a reviewer's first action would otherwise build while they wait: the engine's
        analyst (the first approval resumes the graph with it; the first run of the poller too)."""
        self.review.engine.analyst  # noqa: B018 - built on first use, under the engine's lock

    def close(self) -> None:
        """Close the records store `open_services` opened (a PostgreSQL session, or the SQLite file):
        otherwise a released runtime's session stays open until the garbage collector finds it. The
        checkpoint savers are left open: they belong to the process, shared by every engine on the
        same store (pipeline/store/checkpoints.py)."""
        self.review.engine.records.close()


def open_services(settings: Settings | None = None, *, sync_knowledge: bool = True) -> Services:
    """Open (creating if needed) the data dir's stores and index, and the services over them;
    without `sync_knowledge` the knowledge index is brought up to date by the caller."""
    engine = open_engine(settings, sync_knowledge=sync_knowledge)
    return Services(settings=engine.settings, review=ReviewService(engine), operations=OperationsService(engine),
                    knowledge=KnowledgeService(kb=engine.kb, retrieve=find_similar,
                                              latest_evaluation=partial(latest_report, engine.settings.data_dir)))


# weak keys: an entry lives as long as its review service, so a released runtime is not kept
# alive here (an lru_cache held the last 8, each with its engine and records store)
_backtests: weakref.WeakKeyDictionary[ReviewService, BacktestService] = weakref.WeakKeyDictionary()


def backtests_of(review: ReviewService) -> BacktestService:
    """The backtests of the review service's data dir (the Backtests page), one per process: it
    keeps the worker processes the page started."""
    with _related_lock:
        found = _backtests.get(review)
        if found is None:
            found = _backtests[review] = BacktestService(review.engine)
        return found


_related: weakref.WeakKeyDictionary[ReviewService, RelatedIncidents] = weakref.WeakKeyDictionary()
_related_lock = threading.Lock()


def related_of(review: ReviewService) -> RelatedIncidents:
    """Related incidents of the review service's data dir (its evidence index opened once)."""
    with _related_lock:
        found = _related.get(review)
        if found is None:
            engine = review.engine
            found = _related[review] = RelatedIncidents(records=engine.records, settings=engine.settings,
                                                        embedder=engine.kb.embedder)
        return found


# what the inbox's Seen column means (new / rare / frequent): one text, from the thresholds' one home
SEEN_HELP = recurrence.help_text()


def knowledge_doc_titles() -> dict[str, str]:
    """The shipped knowledge docs' titles by id (the pages name a doc by its title: workbench/literal.py)."""
    return {d.doc_id: d.title for d in load_docs()}

