"""The workbench's runtime for one data dir: the services the pages go through and the background poller.

Built once per process (the web app caches it with st.cache_resource) and stopped through
`stop_workbench` when that cache entry is released. Should a reload ever build a second
runtime in the same process, the poller lease (pipeline/store/lease.py) keeps the second poller on
standby, so two never work one data dir. Nothing here imports Streamlit: the poller thread
must never call st.*.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pipeline.config import Settings
from pipeline.errors import IncidentIQError
from pipeline.services import (KnowledgeService, OperationsService, Poller, ReviewService, Services, open_services,
                               tune_garbage_collector)

OFF = ("off", "0", "false", "no")


@dataclass
class Workbench:
    services: Services
    poller: Poller | None = None  # None when INCIDENTIQ_POLLER=off or the source could not open
    poller_error: str | None = None  # why the poller is not running, when it should be

    @property
    def settings(self) -> Settings:
        return self.services.settings

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


def poller_enabled(mode: str) -> bool:
    """INCIDENTIQ_POLLER: anything but off/0/false/no runs the poller."""
    return mode.strip().lower() not in OFF


def open_workbench(*, data_dir: str, source: str, poller_mode: str, auth: str | None = None) -> Workbench:
    """Open the data dir's engine and review service and, unless disabled, start the poller.

    `auth` is the web app's sign-in mode (workbench/identity.py), which overrides INCIDENTIQ_AUTH:
    with `[auth]` configured the engine must know names are verified (typed ones refused, a person
    nobody maps a viewer).

    A source that cannot open (a bad INCIDENTIQ_SOURCE, Splunk without a URL) leaves the
    workbench usable on what the data dir holds, with the reason shown in the sidebar.
    """
    tune_garbage_collector()  # the workbench's process: its poller thread and reviewers' runs
    overrides = {"auth": auth} if auth else {}
    services = open_services(Settings.from_env(data_dir=Path(data_dir), source=source, **overrides))
    workbench = Workbench(services=services)
    if poller_enabled(poller_mode):
        try:
            workbench.poller = services.operations.start_poller()
        except IncidentIQError as exc:
            workbench.poller_error = exc.message
    return workbench


def stop_workbench(workbench: Workbench) -> None:
    """Stop the poller and wait for it (it releases its lease), then close the records store; the
    cache's on_release (a new data dir, the menu's "Clear caches", tests). Before, only the poller
    stopped: the released runtime kept its store open (on PostgreSQL a session) until the garbage
    collector found it. A page still running on the released runtime reopens the store on its
    next read (Records opens its connection on first use)."""
    if workbench.poller is not None:
        if not workbench.poller.stop():
            return  # still inside a step after the timeout: it keeps the store it is using
        workbench.poller = None
    workbench.services.close()
