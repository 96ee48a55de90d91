"""What the pollers did, persisted in app.sqlite3 for the operations page: each poller's state
and heartbeat, per-source counters, and one row per poll (tables and SQL: store/poller_rows.py).
Counters live in the records store, not in memory, so they survive restarts and every
process sees the same numbers.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from pipeline.store import lease
from pipeline.store import poller_rows as store
from pipeline.store.poller_rows import COUNTERS
from pipeline.store.owners import owner_alive
from pipeline.clock import parse_iso
from pipeline.incidents.batch import IngestCounts
from pipeline.store.records import Records

RETENTION = timedelta(days=7)
SERIES_LIMIT = 5_000
RECENT_GONE = 5  # pollers that stopped or died, listed after the live ones
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
                    or self.runs_resumed or self.runs_merged or self.runs_retried or self.runs_failed
                    or self.announced or self.escalated or self.expired)

    def as_json(self) -> dict:
        return {"source": self.source, "standby": self.standby, "holder": self.holder, **self.counts.as_json(),
                "runs_started": self.runs_started, "runs_resumed": self.runs_resumed,
                "runs_merged": self.runs_merged, "runs_retried": self.runs_retried,
                "runs_failed": self.runs_failed, "announced": self.announced, "escalated": self.escalated,
                "expired": self.expired, "latency_ms": round(self.latency_ms, 1),
                "lag_seconds": None if self.lag_seconds is None else round(self.lag_seconds, 3),
                "lines_behind": self.lines_behind, "bytes_behind": self.bytes_behind,
                "more": self.more, "error": self.error}


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


def poller_status(records: Records) -> list[dict]:
    """Per source: state (running / standby / error / stopped), last poll, lag, last error,
    counters and latency, with the pollers behind it (each `running`, `standby`, `error`,
    `stopped`, `crashed`, or `gone`: not live, its row left as it was). Sources polled most
    recently first."""
    stamp = records.clock.now()
    holder = lease.holder(records)
    pollers: dict[str, list[dict]] = {}
    for p in store.pollers(records):
        p["live"] = (p["state"] not in ("stopped", "crashed") and parse_iso(p["stale_after"]) > stamp
                     and owner_alive(p["owner"]))
        if not p["live"] and p["state"] not in ("stopped", "crashed"):
            # its row says what it was doing when it last wrote; its process is gone (SIGKILL, a
            # lost machine) or its heartbeat is past due: it is not running, whatever the row says
            p["state"] = "gone"
        p["holds_lease"] = bool(holder and holder["live"] and holder["owner"] == p["owner"])
        pollers.setdefault(p["source"], []).append(p)
    stats = store.source_stats(records)
    result = []
    for source in sorted(set(stats) | set(pollers), key=lambda s: (stats.get(s, {}).get("last_poll_at") or ""),
                         reverse=True):
        row = stats.get(source) or {"source": source, **{c: 0 for c in COUNTERS}, "consecutive_errors": 0,
                                    "last_poll_at": None, "last_ok_at": None, "last_latency_ms": None,
                                    "lag_seconds": None, "lines_behind": None, "bytes_behind": None,
                                    "last_error": None, "last_error_at": None}
        mine = pollers.get(source, [])
        working = [p for p in mine if p["live"] and p["holds_lease"]]
        if working:
            state = "error" if working[0]["state"] == "error" else "running"
        elif any(p["live"] and p["state"] == "standby" for p in mine):
            state = "standby"
        elif any(p["state"] == "crashed" for p in mine[:1]):
            state = "error"
            if mine[0]["last_error_at"] and mine[0]["last_error_at"] > (row["last_error_at"] or ""):
                # why it crashed (the crash ended the poll before its report was recorded)
                row = {**row, "last_error": mine[0]["last_error"], "last_error_at": mine[0]["last_error_at"]}
        else:
            state = "stopped"
        newest = working[0] if working else (mine[0] if mine else None)
        result.append({
            **row,
            "state": state,
            "owner": newest["owner"] if newest else None,
            "next_poll_at": newest["next_poll_at"] if newest and newest["live"] else None,
            "latency_ms": row["last_latency_ms"],
            "lease": holder if holder and holder["source"] == source else None,
            "pollers": [{k: p[k] for k in ("owner", "state", "started_at", "heartbeat_at", "live", "holds_lease",
                                           "last_error", "last_error_at")}
                        for p in [p for p in mine if p["live"]] + [p for p in mine if not p["live"]][:RECENT_GONE]],
        })
    return result


def metrics_series(records: Records, since: datetime | None = None, *, source: str | None = None,
                   limit: int = SERIES_LIMIT) -> list[dict]:
    """One row per poll, oldest first (the newest `limit` rows since `since`), for the charts."""
    return store.poll_series(records, since, source=source, limit=limit)
