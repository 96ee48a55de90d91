"""The workbench's runtime for one data dir: the services the pages go through and the background poller.

Built once per process (the web app caches it with st.cache_resource) and stopped through
`stop_workbench` when that cache entry is released. Should a reload ever build a second
runtime in the same process, the poller lease (pipeline/store/lease.py) keeps the second poller on
standby, so two never work one data dir. Nothing here imports Streamlit: the poller thread
must never call st.*.
"""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Callable
from pathlib import Path

from pipeline.config import Settings
from pipeline.errors import IncidentIQError
from pipeline.services import (KnowledgeService, OperationsService, Poller, ReviewService, Services,
                               freeze_long_lived, open_services, release_frozen, tune_garbage_collector)

OFF = ("off", "0", "false", "no")
INDEX_AFTER_POLL_SECONDS = 30.0  # the index build waits for the poller's first poll, at most this long...
INDEX_GRACE_SECONDS = 3.0  # ...and then this long: an inbox's 1 s refresh draws the first poll's incidents

log = logging.getLogger(__name__)


@dataclass
class Workbench:
    services: Services
    poller: Poller | None = None  # None when INCIDENTIQ_POLLER=off or the source could not open
    poller_error: str | None = None  # why the poller is not running, when it should be
    indexing: threading.Thread | None = None  # the warm-up: the knowledge index's build (in the background) and the analyst's
    index_error: str | None = None  # why that build failed (searches do not need it: see open_workbench)
    _closing: threading.Event = field(default_factory=threading.Event)

    @property
    def settings(self) -> Settings:
        return self.services.settings

    @property
    def stopped(self) -> bool:
        """`stop_workbench` has run on it (its cache entry released)."""
        return self._closing.is_set()

    @property
    def review(self) -> ReviewService:
        return self.services.review

    @property
    def operations(self) -> OperationsService:
        return self.services.operations

    @property
    def knowledge(self) -> KnowledgeService:
        return self.services.knowledge

    @property
    def data_dir(self) -> Path:
        return self.services.data_dir

    @property
    def source(self) -> str:
        return self.settings.source

    def await_first_poll(self, timeout: float) -> bool:
        """Wait, at most `timeout` seconds, until the poller's first poll is over; True if it is (or
        there is no poller to wait for)."""
        if self.poller is None or not self.poller.alive:
            return True
        return self.poller.polled.wait(timeout)


def poller_enabled(mode: str) -> bool:
    """INCIDENTIQ_POLLER: anything but off/0/false/no runs the poller."""
    return mode.strip().lower() not in OFF


def open_workbench(*, data_dir: str, source: str, poller_mode: str, auth: str | None = None,
                   warm: Callable[[], None] | None = None) -> Workbench:
    """Open the data dir's engine and review service and, unless disabled, start the poller.

    `auth` is the web app's sign-in mode (workbench/identity.py), which overrides INCIDENTIQ_AUTH:
    with `[auth]` configured the engine must know names are verified (typed ones refused, a person
    nobody maps a viewer).

    A source that cannot open (a bad INCIDENTIQ_SOURCE, Splunk without a URL) leaves the
    workbench usable on what the data dir holds, with the reason shown in the sidebar.

    With the offline embedder the docs' search needs no Chroma index (KnowledgeBase.searches_without_index):
    the index (Chroma's import and, on a fresh data dir, every doc's embedding: seconds) is then built in
    the background once the poller's first poll is over, so a fresh demo's first incident is analysed
    and in the inbox without waiting for it. A remote embedder's index is synced first, as before.

    `warm` (the web app's: what its first runs would otherwise load while a reviewer waits) runs in
    the same background warm-up, after the analyst is built.
    """
    tune_garbage_collector()  # the workbench's process: its poller thread and reviewers' runs
    overrides = {"auth": auth} if auth else {}
    services = open_services(Settings.from_env(data_dir=Path(data_dir), source=source, **overrides),
                             sync_knowledge=False)
    kb = services.knowledge.kb
    background = kb.searches_without_index
    if not background:
        kb.sync()  # a search goes through the index: up to date before the first run
    workbench = Workbench(services=services)
    if poller_enabled(poller_mode):
        try:
            workbench.poller = services.operations.start_poller()
        except IncidentIQError as exc:
            workbench.poller_error = exc.message
    # the index's build (when it runs in the background) and what a first approval would build
    workbench.indexing = threading.Thread(target=_warm_up, args=(workbench, background, warm), daemon=True,
                                          name="incidentiq-warm-up")
    workbench.indexing.start()
    freeze_long_lived()  # the runtime lives as long as the process: out of every collection's pass
    return workbench


def _warm_up(workbench: Workbench, build_index: bool, warm: Callable[[], None] | None = None) -> None:
    """A moment after the poller's first poll: sync the knowledge index (`build_index`: Chroma's
    import and the embedding hold the GIL for seconds, 2.4 s at load 8 on 2 cores, not while the
    first incidents are read, analysed and drawn in the inbox), then build what the first approval
    would otherwise build while its reviewer waits (the analyst: 0.3-0.5 s at load 9-12), and
    freeze it all out of the collector's passes with the rest of the runtime."""
    poller, closing = workbench.poller, workbench._closing
    if poller is not None:
        deadline = time.monotonic() + INDEX_AFTER_POLL_SECONDS
        while not (poller.polled.is_set() or closing.is_set()) and time.monotonic() < deadline:
            closing.wait(0.1)
        closing.wait(INDEX_GRACE_SECONDS)
    if closing.is_set():
        return
    if build_index:
        try:
            workbench.knowledge.kb.sync()
        except IncidentIQError as exc:  # the knowledge page's count shows the index is unusable
            workbench.index_error = exc.message
            log.warning("the knowledge index could not be built: %s", exc.message)
    try:
        workbench.services.warm_up()
    except IncidentIQError as exc:  # the first run that needs it says why, as it did before
        log.warning("the analyst could not be built ahead of its first use: %s", exc.message)
    if warm is not None and not closing.is_set():
        try:
            warm()
        except Exception:  # a warm-up is an optimisation: its failure is the first run's cost, not an error
            log.warning("the web app's warm-up failed", exc_info=True)
    if not closing.is_set():  # a runtime stopping meanwhile releases what is frozen: freeze nothing after it
        freeze_long_lived()  # Chroma's modules, the index's client and the analyst live as long as the process


def stop_workbench(workbench: Workbench) -> None:
    """Stop the poller and wait for it (it releases its lease), and the index build if it runs,
    then close the records store (on PostgreSQL a session, else left to the garbage collector); the
    cache's on_release (a new data dir, the menu's "Clear caches", tests). A page still running on
    the released runtime reopens the store on its next read (Records opens its connection on first
    use)."""
    workbench._closing.set()
    if workbench.poller is not None:
        if not workbench.poller.stop():
            return  # still inside a step after the timeout: it keeps the store it is using
        workbench.poller = None
    if workbench.indexing is not None:
        workbench.indexing.join(60)
        workbench.indexing = None
    workbench.services.close()
    release_frozen()  # what the runtime held may be garbage now: the collector sees it again
