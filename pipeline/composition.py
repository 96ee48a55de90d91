"""The composition root: what a data dir's settings build, and how the parts are wired.

Every process (the CLI, the poller, the workbench, the benches) opens its engine here. The
policies are passed in where the parts are made: the incident step gets its opening rule (with
the knowledge base's signatures), reopen window and SLA; the engine gets the incident step, the
records, the graph over the configured checkpoint store, the knowledge base and how its analyst
is built (`build_analyst`, the one place an analyst is chosen from settings; a test passes
another `analyst_for`). A file source's parsing keeps each file's layout in the data dir's
records store (`parsing_for`). Nothing is patched onto a part after it is built.

`open_records` imports only the store: the commands that read records alone (`list`, `show`,
`deadletters`) start without LangGraph, LangChain or Chroma (about a second of imports a process).
The engine's parts are imported where `open_engine` builds them.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.clock import Clock
from pipeline.config import Settings
from pipeline.errors import StorageError, UsageError
from pipeline.incidents.batch import Incidents
from pipeline.incidents.opening import OpeningRule
from pipeline.incidents.sla import SlaPolicy
from pipeline.store.records import Records

if TYPE_CHECKING:
    from pipeline.analyst.protocol import Analyst
    from pipeline.engine import AnalystFor, Engine
    from pipeline.ingest.reading import Parsing
    from pipeline.knowledge.index import KnowledgeBase
    from pipeline.sources import Source


def open_records(settings: Settings, *, clock: Clock | None = None) -> Records:
    """The records store of a data dir (or of its database_url), creating the folder; a data dir
    that is a file is a UsageError, one that cannot be created a StorageError."""
    data_dir = Path(settings.data_dir)
    if data_dir.exists() and not data_dir.is_dir():
        raise UsageError(f"INCIDENTIQ_DATA_DIR {data_dir} is not a folder")
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StorageError(f"cannot create the data dir {data_dir}: {exc.strerror}") from None
    return Records(settings.database_url or data_dir / "app.sqlite3", clock=clock)


def parsing_for(settings: Settings) -> Parsing:
    """How file sources read under INCIDENTIQ_LOG_FORMAT, _LOG_PATTERN and _SOURCE_TZ; each file's
    layout is kept in the data dir's records store (the Operations page shows it), its sample line
    with secrets masked."""
    from pipeline.ingest.reading import Parsing
    from pipeline.ingest.source_layout import remember_in
    from pipeline.redaction import redact

    return Parsing(format=settings.log_format, pattern=settings.log_pattern, timezone=settings.source_tz,
                   on_learn=remember_in(lambda: open_records(settings), scrub=redact))


def open_sources(spec: str, settings: Settings) -> list[Source]:
    """The sources INCIDENTIQ_SOURCE lists: specs separated by `;` (a path holding `;` is one source:
    the text is split only where every part is a spec), each named once."""
    parts = [part.strip() for part in (spec or "").split(";")]
    if len(parts) < 2 or not all(part in ("demo", "splunk") or part.startswith("file:") for part in parts if part):
        return [open_source(spec, settings)]
    sources: dict[str, Source] = {}
    for part in parts:
        if part:
            source = open_source(part, settings)
            sources.setdefault(source.name, source)
    return list(sources.values())


def open_source(spec: str, settings: Settings) -> Source:
    """The source for a spec: `demo`, `file:PATH` or `splunk`."""
    spec = (spec or "").strip()
    if spec == "demo":
        from pipeline.sources.demo import DemoSource

        return DemoSource(speed=settings.demo_speed, max_bytes=settings.max_event_bytes)
    if spec.startswith("file:") and spec[5:].strip():
        from pipeline.sources.file import FileSource

        return FileSource(Path(spec[5:].strip()), max_bytes=settings.max_event_bytes, parsing=parsing_for(settings),
                          batch_lines=settings.poll_batch_lines)
    if spec == "splunk":
        from pipeline.sources.splunk import SplunkSource

        return SplunkSource.from_settings(settings)
    raise UsageError(f"INCIDENTIQ_SOURCE must be demo, file:PATH or splunk, not {spec!r}")


def sla_policy(settings: Settings) -> SlaPolicy:
    return SlaPolicy(hours=settings.sla, sla_from=settings.sla_from)


def open_incidents(settings: Settings, records: Records, *, signatures: tuple[str, ...] = ()) -> Incidents:
    """The incident step under the configured policies; `signatures` are the knowledge base's
    docs' (used when INCIDENTIQ_OPEN_SIGNATURES is on)."""
    opening = OpeningRule.of(floor=settings.open_level, signatures=signatures if settings.open_signatures else ())
    return Incidents(records, opening=opening, reopen_minutes=settings.reopen_minutes, sla=sla_policy(settings),
                     burst_minutes=settings.burst_minutes)


def build_analyst(settings: Settings, kb: KnowledgeBase, *, clock: Clock) -> Analyst:
    """The analyst the settings ask for: the chat model behind a breaker that falls back to the
    offline analyst, or the offline analyst alone when no model is configured."""
    if settings.uses_model:
        from pipeline.analyst.fallback import Breaker, FallbackModelAnalyst

        breaker = Breaker(failures=settings.model_breaker_failures, cooldown=settings.model_breaker_seconds,
                          clock=clock)
        return FallbackModelAnalyst(kb=kb, model=settings.model, base_url=settings.base_url,
                                    timeout=settings.model_timeout, method=settings.model_output, breaker=breaker)
    from pipeline.analyst.offline import OfflineAnalyst

    return OfflineAnalyst(kb)


def open_engine(settings: Settings | None = None, *, analyst_for: AnalystFor | None = None,
                docs_dir: Path | None = None, sync_knowledge: bool = True,
                clock: Clock | None = None, kb: KnowledgeBase | None = None) -> Engine:
    """Open (creating if needed) the stores of a data dir and compile the graph.

    `analyst_for(settings, kb)` builds the engine's analyst (default: `build_analyst` on the
    engine's clock). `clock` is the engine's time (`engine.records.clock`; default: the system clock). With
    `sync_knowledge` the knowledge index is opened and brought up to date now; without, it opens
    (unsynced) when first used. `docs_dir`: the knowledge docs (default: the shipped knowledge/docs). `kb`: a
    knowledge base already open to use instead (the outage bed's many data dirs share one)."""
    from pipeline.engine import Engine
    from pipeline.engine.graph import build_graph
    from pipeline.knowledge.embeddings import embedder_from_setting
    from pipeline.knowledge.index import DEFAULT_DOCS_DIR, KnowledgeBase
    from pipeline.store import checkpoints

    settings = settings or Settings.from_env()
    docs = docs_dir or DEFAULT_DOCS_DIR
    data_dir = Path(settings.data_dir)
    records = open_records(settings, clock=clock)

    def open_kb() -> KnowledgeBase:
        embedder = embedder_from_setting(settings.embeddings, base_url=settings.base_url)
        return KnowledgeBase(index_dir=data_dir / "knowledge-index", embedder=embedder, docs_dir=docs)

    # the docs' signatures are parsed from the docs; Chroma stays closed until a search needs it
    if kb is None and (settings.open_signatures or sync_knowledge):
        kb = open_kb()
    signatures = tuple(s for doc in kb.docs for s in doc.signatures) if settings.open_signatures and kb else ()
    graph = build_graph(checkpoints.saver_for(settings.database_url or data_dir / "checkpoints.sqlite"))
    if analyst_for is None:
        def analyst_for(settings: Settings, kb: KnowledgeBase) -> Analyst:
            return build_analyst(settings, kb, clock=records.clock)

    engine = Engine(settings=settings, records=records, incidents=open_incidents(settings, records,
                                                                                 signatures=signatures),
                    graph=graph, analyst_for=analyst_for, open_kb=open_kb, kb=kb)
    if sync_knowledge:
        engine.kb.sync()
    return engine
