"""The engine of one data dir: records, checkpoints, knowledge base, analyst and graph, built once
per process and shared by the runner, the review service, the poller and the web app."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from langgraph.graph.state import CompiledStateGraph

from pipeline.store import checkpoints
from pipeline.analyst.offline import OfflineAnalyst
from pipeline.analyst.protocol import Analyst
from pipeline.config import Settings
from pipeline.errors import StorageError, UsageError
from pipeline.knowledge.embeddings import embedder_from_setting
from pipeline.engine.graph import build_graph
from pipeline.knowledge.index import DEFAULT_DOCS_DIR, KnowledgeBase
from pipeline.engine.nodes import Deps
from pipeline.clock import Clock
from pipeline.ingest.opening import OpeningRule
from pipeline.store.records import Records


@dataclass
class Engine:
    settings: Settings
    records: Records
    kb: KnowledgeBase
    analyst: Analyst
    graph: CompiledStateGraph

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


def open_engine(settings: Settings | None = None, *, analyst: Analyst | None = None,
                docs_dir: Path = DEFAULT_DOCS_DIR, sync_knowledge: bool = True,
                clock: Clock | None = None) -> Engine:
    """Open (creating if needed) the stores of a data dir and compile the graph.

    `clock` is the engine's time (`engine.records.clock`; default: the system clock)."""
    settings = settings or Settings.from_env()
    data_dir = Path(settings.data_dir)
    if data_dir.exists() and not data_dir.is_dir():
        raise UsageError(f"INCIDENTIQ_DATA_DIR {data_dir} is not a folder")
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StorageError(f"cannot create the data dir {data_dir}: {exc.strerror}") from None
    records = Records(settings.database_url or data_dir / "app.sqlite3", clock=clock, sla_hours=settings.sla,
                      sla_from=settings.sla_from)
    embedder = embedder_from_setting(settings.embeddings, base_url=settings.base_url)
    kb = KnowledgeBase(index_dir=data_dir / "knowledge-index", embedder=embedder, docs_dir=docs_dir)
    if sync_knowledge:
        kb.sync()
    records.opening = OpeningRule.of(
        floor=settings.open_level,
        signatures=[s for doc in kb.docs for s in doc.signatures] if settings.open_signatures else ())
    if analyst is None:
        analyst = _configured_analyst(settings, kb, records.clock)
    graph = build_graph(checkpoints.saver_for(settings.database_url or data_dir / "checkpoints.sqlite"))
    return Engine(settings=settings, records=records, kb=kb, analyst=analyst, graph=graph)


def _configured_analyst(settings: Settings, kb: KnowledgeBase, clock: Clock) -> Analyst:
    if settings.uses_model:
        from pipeline.analyst.fallback import Breaker, FallbackModelAnalyst

        breaker = Breaker(failures=settings.model_breaker_failures, cooldown=settings.model_breaker_seconds,
                          clock=clock)
        return FallbackModelAnalyst(kb=kb, model=settings.model, base_url=settings.base_url,
                                    timeout=settings.model_timeout, method=settings.model_output, breaker=breaker)
    return OfflineAnalyst(kb)
