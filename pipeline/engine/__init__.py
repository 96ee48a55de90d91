"""The engine of one data dir: records, the incident step, checkpoints, knowledge base, analyst and
graph, built once per process (pipeline/composition.py) and shared by the runner, the review
service, the poller and the web app."""
from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Callable


from pipeline.analyst.offline import OfflineAnalyst
from pipeline.analyst.protocol import Analyst
from pipeline.clock import Clock
from pipeline.config import Settings
from pipeline.engine.nodes import Deps
from pipeline.incidents.batch import Incidents
from pipeline.knowledge.index import KnowledgeBase
from pipeline.store.records import Records

if TYPE_CHECKING:
    from pipeline.engine.graph import IncidentGraph


class Engine:
    """The engine of one data dir. The knowledge base (Chroma) and the analyst are opened on first
    use: commands that only read records (list, show) never import Chroma."""

    def __init__(self, *, settings: Settings, records: Records, incidents: Incidents, graph: IncidentGraph,
                 open_kb: Callable[[], KnowledgeBase] | None = None, kb: KnowledgeBase | None = None,
                 analyst: Analyst | None = None):
        if kb is None and open_kb is None:
            raise ValueError("an engine needs a knowledge base or a way to open one")
        self.settings = settings
        self.records = records
        self.incidents = incidents
        self.graph = graph
        self._open_kb = open_kb
        self._kb = kb
        self._analyst = analyst
        self._lock = threading.Lock()

    @property
    def kb(self) -> KnowledgeBase:
        with self._lock:
            if self._kb is None:
                assert self._open_kb is not None  # __init__ had one or the other
                self._kb = self._open_kb()
            return self._kb

    @property
    def analyst(self) -> Analyst:
        if self._analyst is None:
            kb = self.kb
            with self._lock:
                if self._analyst is None:
                    self._analyst = _configured_analyst(self.settings, kb, self.records.clock)
        return self._analyst

    @analyst.setter
    def analyst(self, analyst: Analyst) -> None:
        self._analyst = analyst

    @property
    def deps(self) -> Deps:
        return Deps(records=self.records, kb=self.kb, analyst=self.analyst,
                    code_fix_min_confidence=self.settings.code_fix_min_confidence,
                    critical_services=self.settings.critical_services,
                    repo_dir=self.settings.repo_dir)

    @property
    def checkpoint_path(self) -> Path:
        return self.settings.data_dir / "checkpoints.sqlite"

    @property
    def records_path(self) -> Path:
        return self.settings.data_dir / "app.sqlite3"


def _configured_analyst(settings: Settings, kb: KnowledgeBase, clock: Clock) -> Analyst:
    if settings.uses_model:
        from pipeline.analyst.fallback import Breaker, FallbackModelAnalyst

        breaker = Breaker(failures=settings.model_breaker_failures, cooldown=settings.model_breaker_seconds,
                          clock=clock)
        return FallbackModelAnalyst(kb=kb, model=settings.model, base_url=settings.base_url,
                                    timeout=settings.model_timeout, method=settings.model_output, breaker=breaker)
    return OfflineAnalyst(kb)
