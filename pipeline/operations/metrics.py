"""What the pollers did, persisted in app.sqlite3 for the operations page.

- `pollers`: one row per poller instance (process and thread): its state and heartbeat.
- `source_stats`: per source, cumulative counters and the last poll's facts.
- `poll_metrics`: one row per poll, the time series behind the charts.
Counters live in the records store, not in memory, so they survive restarts and every
process sees the same numbers.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from pipeline.store import lease
from pipeline.store.records import IngestCounts, Records, iso, now, owner_alive, parse_iso

RETENTION = timedelta(days=7)
SERIES_LIMIT = 5_000
RECENT_GONE = 5  # pollers that stopped or died, listed after the live ones
STOPPED_RETENTION = timedelta(days=1)
COUNTERS = ("polls", "errors", "events_read", "dead_letters", "incidents_opened", "incidents_updated",
            "runs_started", "runs_failed", "runs_retried")

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS pollers (
        owner TEXT PRIMARY KEY,
        source TEXT NOT NULL,
        state TEXT NOT NULL,
        started_at TEXT NOT NULL,
        heartbeat_at TEXT NOT NULL,
        stale_after TEXT NOT NULL,
        next_poll_at TEXT,
        last_error TEXT,
        last_error_at TEXT
    )""",
    f"""CREATE TABLE IF NOT EXISTS source_stats (
        source TEXT PRIMARY KEY,
        {", ".join(f"{c} INTEGER NOT NULL DEFAULT 0" for c in COUNTERS)},
        consecutive_errors INTEGER NOT NULL DEFAULT 0,
        last_poll_at TEXT,
        last_ok_at TEXT,
        last_latency_ms REAL,
        lag_seconds REAL,
        last_error TEXT,
        last_error_at TEXT
    )""",
    """CREATE TABLE IF NOT EXISTS poll_metrics (
        id INTEGER PRIMARY KEY,
        at TEXT NOT NULL,
        source TEXT NOT NULL,
        events INTEGER NOT NULL,
        dead_letters INTEGER NOT NULL,
        opened INTEGER NOT NULL,
        updated INTEGER NOT NULL,
        runs_started INTEGER NOT NULL,
        runs_failed INTEGER NOT NULL,
        runs_retried INTEGER NOT NULL,
        latency_ms REAL NOT NULL,
        lag_seconds REAL,
        error TEXT
    )""",
    "CREATE INDEX IF NOT EXISTS poll_metrics_at ON poll_metrics(at)",
)

_ready: "weakref.WeakSet[Records]" = weakref.WeakSet()


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
    latency_ms: float = 0.0
    lag_seconds: float | None = None
    more: bool = False  # the source had more ready than this poll read
    error: str | None = None

    @property
    def busy(self) -> bool:
        """Whether anything happened worth telling a person."""
        c = self.counts
        return bool(c.events or c.rejected or c.incidents_new or c.incidents_updated or self.runs_started
                    or self.runs_resumed or self.runs_merged or self.runs_retried or self.runs_failed)

    def as_json(self) -> dict:
        return {"source": self.source, "standby": self.standby, "holder": self.holder, **self.counts.as_json(),
                "runs_started": self.runs_started, "runs_resumed": self.runs_resumed,
                "runs_merged": self.runs_merged, "runs_retried": self.runs_retried,
                "runs_failed": self.runs_failed, "latency_ms": round(self.latency_ms, 1),
                "lag_seconds": self.lag_seconds, "more": self.more, "error": self.error}


def ensure_schema(records: Records) -> None:
    """Create the operations tables (and the lease) once per records store."""
    if records in _ready:
        return
    lease.ensure_schema(records)
    with records.transaction() as conn:
        for statement in SCHEMA:
            conn.execute(statement)
    _ready.add(records)


def set_poller_state(records: Records, *, owner: str, source: str, state: str, stale_after: float,
                     next_poll_at: datetime | None = None, error: str | None = None) -> None:
    """Upsert one poller's state and heartbeat; it counts as gone `stale_after` seconds later."""
    ensure_schema(records)
    stamp = now()
    with records.transaction() as conn:
        conn.execute(
            "INSERT INTO pollers(owner, source, state, started_at, heartbeat_at, stale_after, next_poll_at,"
            " last_error, last_error_at) VALUES (?,?,?,?,?,?,?,?,?)"
            " ON CONFLICT(owner) DO UPDATE SET source = excluded.source, state = excluded.state,"
            " heartbeat_at = excluded.heartbeat_at, stale_after = excluded.stale_after,"
            " next_poll_at = excluded.next_poll_at,"
            " last_error = coalesce(excluded.last_error, pollers.last_error),"
            " last_error_at = coalesce(excluded.last_error_at, pollers.last_error_at)",
            (owner, source, state, iso(stamp), iso(stamp), iso(stamp + timedelta(seconds=stale_after)),
             iso(next_poll_at) if next_poll_at else None, error, iso(stamp) if error else None),
        )


def record_poll(records: Records, report: PollReport) -> None:
    """Add one working poll (ok or failed) to its source's counters and the time series."""
    ensure_schema(records)
    stamp = iso(now())
    c = report.counts
    increments = {
        "polls": 1, "errors": 1 if report.error else 0, "events_read": c.events, "dead_letters": c.rejected,
        "incidents_opened": len(c.incidents_new), "incidents_updated": len(c.incidents_updated - c.incidents_new),
        "runs_started": report.runs_started, "runs_failed": report.runs_failed, "runs_retried": report.runs_retried,
    }
    with records.transaction() as conn:
        conn.execute("INSERT OR IGNORE INTO source_stats(source) VALUES (?)", (report.source,))
        sets = ", ".join(f"{k} = {k} + ?" for k in increments)
        if report.error:
            sets += (", consecutive_errors = consecutive_errors + 1, last_error = ?, last_error_at = ?")
            extra = [report.error, stamp]
        else:
            sets += ", consecutive_errors = 0, last_ok_at = ?"
            extra = [stamp]
        conn.execute(
            f"UPDATE source_stats SET {sets}, last_poll_at = ?, last_latency_ms = ?,"
            " lag_seconds = coalesce(?, lag_seconds) WHERE source = ?",
            (*increments.values(), *extra, stamp, report.latency_ms, report.lag_seconds, report.source),
        )
        conn.execute(
            "INSERT INTO poll_metrics(at, source, events, dead_letters, opened, updated, runs_started,"
            " runs_failed, runs_retried, latency_ms, lag_seconds, error) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (stamp, report.source, c.events, c.rejected, increments["incidents_opened"],
             increments["incidents_updated"], report.runs_started, report.runs_failed, report.runs_retried,
             report.latency_ms, report.lag_seconds, report.error),
        )


def prune(records: Records, *, older_than: timedelta = RETENTION) -> int:
    """Drop time-series rows and long-gone pollers older than the retention; returns rows dropped."""
    ensure_schema(records)
    cutoff = iso(now() - older_than)
    with records.transaction() as conn:
        dropped = conn.execute("DELETE FROM poll_metrics WHERE at < ?", (cutoff,)).rowcount
        conn.execute("DELETE FROM pollers WHERE heartbeat_at < ? OR (state IN ('stopped', 'crashed')"
                     " AND heartbeat_at < ?)", (cutoff, iso(now() - min(older_than, STOPPED_RETENTION))))
    return dropped


def poller_status(records: Records) -> list[dict]:
    """Per source: state (running / standby / error / stopped), last poll, lag, last error,
    counters and latency, with the pollers behind it. Sources polled most recently first."""
    ensure_schema(records)
    stamp = now()
    holder = lease.holder(records)
    pollers: dict[str, list[dict]] = {}
    for row in records.query("SELECT * FROM pollers ORDER BY heartbeat_at DESC"):
        p = dict(row)
        p["live"] = (p["state"] not in ("stopped", "crashed") and parse_iso(p["stale_after"]) > stamp
                     and owner_alive(p["owner"]))
        p["holds_lease"] = bool(holder and holder["live"] and holder["owner"] == p["owner"])
        pollers.setdefault(p["source"], []).append(p)
    stats = {r["source"]: dict(r) for r in records.query("SELECT * FROM source_stats")}
    result = []
    for source in sorted(set(stats) | set(pollers), key=lambda s: (stats.get(s, {}).get("last_poll_at") or ""),
                         reverse=True):
        row = stats.get(source) or {"source": source, **{c: 0 for c in COUNTERS}, "consecutive_errors": 0,
                                    "last_poll_at": None, "last_ok_at": None, "last_latency_ms": None,
                                    "lag_seconds": None, "last_error": None, "last_error_at": None}
        mine = pollers.get(source, [])
        working = [p for p in mine if p["live"] and p["holds_lease"]]
        if working:
            state = "error" if working[0]["state"] == "error" else "running"
        elif any(p["live"] and p["state"] == "standby" for p in mine):
            state = "standby"
        elif any(p["state"] == "crashed" for p in mine[:1]):
            state = "error"
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
    ensure_schema(records)
    sql, params = "SELECT * FROM poll_metrics", []
    where = []
    if since is not None:
        where.append("at >= ?")
        params.append(iso(since))
    if source is not None:
        where.append("source = ?")
        params.append(source)
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY id DESC LIMIT ?"
    params.append(limit)
    return [dict(r) for r in reversed(records.query(sql, params))]
