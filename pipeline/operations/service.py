"""What the operations page and the health light read, and the background poller they run."""
from __future__ import annotations

from datetime import datetime
from pathlib import Path

from pipeline.engine import Engine
from pipeline.operations import metrics
from pipeline.operations.poller import Poller
from pipeline.sources import open_source
from pipeline.store import inbox


class OperationsService:
    """Poller status and the poll series, arrivals, decisions, dead letters and storage sizes."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self.records = engine.records

    @property
    def data_dir(self) -> Path:
        return Path(self.engine.settings.data_dir)

    def start_poller(self) -> Poller:
        """Open the configured source and start its poller in a background thread."""
        settings = self.engine.settings
        poller = Poller(self.engine, open_source(settings.source, settings), settings.poll_interval)
        poller.start()
        return poller

    def poller_status(self) -> list[dict]:
        return metrics.poller_status(self.records)

    def poll_series(self, since: datetime | None = None) -> list[dict]:
        return metrics.metrics_series(self.records, since)

    def overdue_count(self, at: datetime | None = None) -> int:
        return inbox.overdue_count(self.records, at)

    def dead_letter_count(self) -> int:
        return inbox.dead_letter_count(self.records)

    def dead_letters(self, *, limit: int | None = None) -> list[dict]:
        return self.records.dead_letters(limit=limit)

    def arrivals(self, since: datetime, *, bucket: str = "hour") -> list[dict]:
        return inbox.arrivals(self.records, since, bucket=bucket)

    def decisions(self, since: datetime | None = None) -> list[dict]:
        return inbox.decisions(self.records, since)

    def storage_sizes(self) -> dict[str, int]:
        return inbox.storage_sizes(self.data_dir)
