"""What the operations page and the health light read, and the background poller they run."""
from __future__ import annotations

from datetime import datetime
from pathlib import Path

from pipeline.engine import Engine
from pipeline.operations import metrics
from pipeline.unattended.poller import Poller
from pipeline.composition import open_sources
from pipeline.store import inbox, regrouping


class OperationsService:
    """Poller status and the poll series, arrivals, decisions, dead letters and storage sizes."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self.records = engine.records

    @property
    def data_dir(self) -> Path:
        return Path(self.engine.settings.data_dir)

    def start_poller(self) -> Poller:
        """Open the configured sources and start their poller in a background thread."""
        settings = self.engine.settings
        poller = Poller(self.engine, open_sources(settings.source, settings), settings.poll_interval)
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

    def source_layouts(self) -> list[dict]:
        """Per file source, the layout its lines are read with (format, columns, a line split)."""
        from pipeline.store.layouts import source_layouts

        return source_layouts(self.records)

    def arrivals(self, since: datetime, *, bucket: str = "hour") -> list[dict]:
        return inbox.arrivals(self.records, since, bucket=bucket)

    def funnel(self, since: datetime) -> dict[str, object]:
        """What grouping made of what was read from the start of `since`'s day (UTC, the store's
        clock; patterns are counted per day): lines → events → patterns → incidents, and the dedup
        ratio (the share of incident events that opened no incident of their own)."""
        day = since.replace(hour=0, minute=0, second=0, microsecond=0)
        counts = regrouping.funnel(self.records, day)
        events = counts["events"]
        return {**counts, "since": day.isoformat(),
                "dedup_ratio": (1 - counts["incidents"] / events) if events else None}

    def decisions(self, since: datetime | None = None) -> list[dict]:
        return inbox.decisions(self.records, since)

    def storage_sizes(self) -> dict[str, int]:
        """Bytes per store: the SQLite files (with WAL) or, on PostgreSQL, the schema's tables of
        the records and of the checkpoints; and the knowledge index (files in the data dir)."""
        files = inbox.storage_sizes(self.data_dir)
        if not self.records.postgres:
            return files
        tables = inbox.table_sizes(self.records)
        return {"records (PostgreSQL)": tables["records"], "checkpoints (PostgreSQL)": tables["checkpoints"],
                "knowledge-index": files["knowledge-index"]}

    def storage_location(self) -> str:
        """Where the stores are, as the page names it (a database URL's password masked)."""
        if not self.records.postgres:
            return f"the data dir {self.data_dir}"
        return (f"PostgreSQL {self.records.where.split('?')[0]}, schema {inbox.schema_of(self.records)}"
                f" (tables with their indexes); the knowledge index in {self.data_dir}")
