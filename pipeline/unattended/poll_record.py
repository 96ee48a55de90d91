"""What each poll did, written by the poller for the Operations page (operations/metrics.py reads
it): the poll's report, its poller's state and heartbeat, per-source counters and one row per
poll, kept for RETENTION (tables and SQL: store/poller_rows.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from pipeline.store import poller_rows as store
from pipeline.incidents.batch import IngestCounts
from pipeline.store.records import Records

RETENTION = timedelta(days=7)
STOPPED_RETENTION = timedelta(days=1)


@dataclass
class PollReport:
    """What one poll did."""

    source: str
    standby: bool = False
    holder: str | None = None  # who holds the lease when this poller stands by
    counts: IngestCounts = field(default_factory=IngestCounts)
    runs_started: int = 0  # first runs of new incidents
    runs_resumed: int = 0  # runs a crash or a stop cut off, continued
    runs_merged: int = 0  # paused runs re-analysed with new evidence
    repeats_counted: int = 0  # paused runs whose new evidence repeated their analysis: counted, not re-run
    runs_retried: int = 0  # failed runs tried again
    runs_failed: int = 0  # runs that ended this poll failed
    announced: int = 0  # new critical incidents announced
    escalated: int = 0  # incidents escalated past their SLA deadline
    expired: int = 0  # incidents expired (deadline plus grace) through the gate as `system`
    latency_ms: float = 0.0
    lag_seconds: float | None = None  # the age of the oldest line the source has not handed over yet
    lines_behind: int | None = None  # lines (results) not read yet, where the source knows
    bytes_behind: int | None = None  # bytes not read yet (file sources)
    more: bool = False  # the source had more ready than this poll read
    error: str | None = None

    @property
    def busy(self) -> bool:
        """Whether anything happened worth telling a person."""
        c = self.counts
        return bool(c.events or c.rejected or c.incidents_new or c.incidents_updated or self.runs_started
                    or self.runs_resumed or self.runs_merged or self.repeats_counted or self.runs_retried
                    or self.runs_failed
                    or self.announced or self.escalated or self.expired)

    def as_json(self) -> dict:
        return {"source": self.source, "standby": self.standby, "holder": self.holder, **self.counts.as_json(),
                "runs_started": self.runs_started, "runs_resumed": self.runs_resumed,
                "runs_merged": self.runs_merged, "repeats_counted": self.repeats_counted,
                "runs_retried": self.runs_retried,
                "runs_failed": self.runs_failed, "announced": self.announced, "escalated": self.escalated,
                "expired": self.expired, "latency_ms": round(self.latency_ms, 1),
                "lag_seconds": None if self.lag_seconds is None else round(self.lag_seconds, 3),
                "lines_behind": self.lines_behind, "bytes_behind": self.bytes_behind,
                "more": self.more, "error": self.error}


def combined(label: str, reports: list[PollReport]) -> PollReport:
    """One poll's report over several sources: their counts summed, the backlog of all of them."""
    total = PollReport(source=label)
    for r in reports:
        total.counts.add(r.counts)
        for name in ("runs_started", "runs_resumed", "runs_merged", "repeats_counted", "runs_retried", "runs_failed",
                     "announced", "escalated", "expired"):
            setattr(total, name, getattr(total, name) + getattr(r, name))
        for name in ("lines_behind", "bytes_behind"):
            if getattr(r, name) is not None:
                setattr(total, name, (getattr(total, name) or 0) + getattr(r, name))
        if r.lag_seconds is not None:
            total.lag_seconds = max(total.lag_seconds or 0.0, r.lag_seconds)
        total.more = total.more or r.more
        total.error = total.error or r.error
    return total


def set_poller_state(records: Records, *, owner: str, source: str, state: str, stale_after: float,
                     next_poll_at: datetime | None = None, error: str | None = None) -> None:
    """Upsert one poller's state and heartbeat; it counts as gone `stale_after` seconds later."""
    store.set_poller_state(records, owner=owner, source=source, state=state, stale_after=stale_after,
                           next_poll_at=next_poll_at, error=error)


def record_poll(records: Records, report: PollReport) -> None:
    """Add one working poll (ok or failed) to its source's counters and the time series."""
    c = report.counts
    increments = {
        "polls": 1, "errors": 1 if report.error else 0, "events_read": c.events, "dead_letters": c.rejected,
        "incidents_opened": len(c.incidents_new), "incidents_updated": len(c.incidents_updated - c.incidents_new),
        "runs_started": report.runs_started, "runs_failed": report.runs_failed, "runs_retried": report.runs_retried,
        "announced": report.announced, "escalated": report.escalated, "expired": report.expired,
    }
    store.add_poll(records, source=report.source, increments=increments, latency_ms=report.latency_ms,
                   lag_seconds=report.lag_seconds, lines_behind=report.lines_behind,
                   bytes_behind=report.bytes_behind, error=report.error)


def prune(records: Records, *, older_than: timedelta = RETENTION) -> int:
    """Drop time-series rows and long-gone pollers older than the retention; returns rows dropped."""
    return store.prune(records, older_than=older_than, gone_older_than=min(older_than, STOPPED_RETENTION))
