"""The engine of one data dir: records, the incident step, checkpoints, knowledge base, analyst and
graph, built once per process (pipeline/composition.py) and shared by the runner, the review
service, the poller and the web app."""
from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from pipeline.analyst.protocol import Analyst
from pipeline.config import Settings
from pipeline.engine.nodes import Deps
from pipeline.incidents.batch import Incidents
from pipeline.knowledge.index import KnowledgeBase
from pipeline.store.records import Records

if TYPE_CHECKING:
    from pipeline.engine.graph import IncidentGraph


# the analyst a configuration builds over a knowledge base (pipeline/composition.py builds it)
AnalystFor = Callable[[Settings, KnowledgeBase], Analyst]


class Engine:
    """The engine of one data dir. The knowledge base (Chroma) and the analyst are opened on first
    use: commands that only read records (list, show) never import Chroma.

    `analyst_for(settings, kb)` builds the analyst (the engine's own, from its settings and
    knowledge base; a backtest's candidate, from others)."""

    def __init__(self, *, settings: Settings, records: Records, incidents: Incidents, graph: IncidentGraph,
                 analyst_for: AnalystFor, open_kb: Callable[[], KnowledgeBase] | None = None,
                 kb: KnowledgeBase | None = None):
        if kb is None and open_kb is None:
            raise ValueError("an engine needs a knowledge base or a way to open one")
        self.settings = settings
        self.records = records
        self.incidents = incidents
        self.graph = graph
        self.analyst_for = analyst_for
        self._open_kb = open_kb
        self._kb = kb
        self._analyst: Analyst | None = None
        self._deps: Deps | None = None
        self._deps_settings: Settings | None = None
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
                    self._analyst = self.analyst_for(self.settings, kb)
        return self._analyst

    @property
    def deps(self) -> Deps:
        """The nodes' context, built once and kept while the parts it is made of stay the same
        (a test or a reload may swap the settings or the records store)."""
        kb, analyst, settings = self.kb, self.analyst, self.settings
        deps = self._deps
        if (deps is None or deps.records is not self.records or deps.kb is not kb or deps.analyst is not analyst
                or self._deps_settings is not settings):
            deps = Deps(records=self.records, kb=kb, analyst=analyst,
                        code_fix_min_confidence=settings.code_fix_min_confidence,
                        critical_services=settings.critical_services, repo_dir=settings.repo_dir)
            self._deps, self._deps_settings = deps, settings
        return deps

    @property
    def checkpoint_path(self) -> Path:
        return self.settings.data_dir / "checkpoints.sqlite"

    @property
    def records_path(self) -> Path:
        return self.settings.data_dir / "app.sqlite3"

