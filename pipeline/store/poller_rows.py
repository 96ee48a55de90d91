"""The operations tables of app.sqlite3: what the pollers did (see operations/metrics.py).

- `pollers`: one row per poller instance (process and thread): its state and heartbeat.
- `source_stats`: per source, cumulative counters and the last poll's facts.
- `poll_metrics`: one row per poll, the time series behind the charts.
"""
from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from pipeline.clock import iso
from pipeline.errors import UnknownColumn
from pipeline.store.records import Records
from pipeline.store.sql import Params

# the cumulative counters of source_stats; a counter's name reaches the SQL text, so only these
COUNTERS = ("polls", "errors", "events_read", "dead_letters", "incidents_opened", "incidents_updated",
            "runs_started", "runs_failed", "runs_retried", "announced", "escalated", "expired")


def set_poller_state(records: Records, *, owner: str, source: str, state: str, stale_after: float,
                     next_poll_at: datetime | None = None, error: str | None = None) -> None:
    """Upsert one poller's state and heartbeat; it counts as gone `stale_after` seconds later."""
    stamp = records.clock.now()
    with records.transaction() as conn:
        conn.execute(
            "INSERT INTO pollers(owner, source, state, started_at, heartbeat_at, stale_after, next_poll_at,"
            " last_error, last_error_at) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9)"
            " ON CONFLICT(owner) DO UPDATE SET source = excluded.source, state = excluded.state,"
            " heartbeat_at = excluded.heartbeat_at, stale_after = excluded.stale_after,"
            " next_poll_at = excluded.next_poll_at,"
            " last_error = coalesce(excluded.last_error, pollers.last_error),"
            " last_error_at = coalesce(excluded.last_error_at, pollers.last_error_at)",
            (owner, source, state, iso(stamp), iso(stamp), iso(stamp + timedelta(seconds=stale_after)),
             iso(next_poll_at) if next_poll_at else None, error, iso(stamp) if error else None),
        )


def add_poll(records: Records, *, source: str, increments: dict[str, int], latency_ms: float,
             lag_seconds: float | None, error: str | None, lines_behind: int | None = None,
             bytes_behind: int | None = None) -> None:
    """Add one poll to its source's counters (`increments`: counter → amount) and the time series."""
    unknown = sorted(set(increments) - set(COUNTERS))
    if unknown:
        raise UnknownColumn("source_stats", unknown[0])
    amounts = {c: increments.get(c, 0) for c in COUNTERS}
    stamp = iso(records.clock.now())
    p = Params()
    sets = ", ".join(f"{c} = {c} + {p(amounts[c])}" for c in COUNTERS)
    if error:
        sets += f", consecutive_errors = consecutive_errors + 1, last_error = {p(error)}, last_error_at = {p(stamp)}"
    else:
        sets += f", consecutive_errors = 0, last_ok_at = {p(stamp)}"

    def behind(value: int | None, column: str) -> str:
        # a failed poll that did not get as far as reading keeps the last backlog known
        return f"coalesce({p(value)}, {column})" if error else p(value)

    with records.transaction() as conn:
        conn.execute("INSERT INTO source_stats(source) VALUES ($1) ON CONFLICT DO NOTHING", (source,))
        conn.execute(
            f"UPDATE source_stats SET {sets}, last_poll_at = {p(stamp)}, last_latency_ms = {p(latency_ms)},"
            f" lag_seconds = coalesce({p(lag_seconds)}, lag_seconds),"
            # the backlog as this poll left it: unknown (a source that does not say) is shown as unknown
            f" lines_behind = {behind(lines_behind, 'lines_behind')}, bytes_behind = {behind(bytes_behind, 'bytes_behind')}"
            f" WHERE source = {p(source)}", p)
        conn.execute(
            "INSERT INTO poll_metrics(at, source, events, dead_letters, opened, updated, runs_started,"
            " runs_failed, runs_retried, announced, escalated, expired, latency_ms, lag_seconds, error,"
            " lines_behind, bytes_behind)"
            " VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17)",
            (stamp, source, amounts["events_read"], amounts["dead_letters"], amounts["incidents_opened"],
             amounts["incidents_updated"], amounts["runs_started"], amounts["runs_failed"],
             amounts["runs_retried"], amounts["announced"], amounts["escalated"], amounts["expired"],
             latency_ms, lag_seconds, error, lines_behind, bytes_behind),
        )


def prune(records: Records, *, older_than: timedelta, gone_older_than: timedelta) -> int:
    """Drop poll rows older than `older_than`, and pollers silent that long or stopped / crashed
    longer than `gone_older_than`; returns the poll rows dropped."""
    at = records.clock.now()
    with records.transaction() as conn:
        dropped = conn.execute("DELETE FROM poll_metrics WHERE at < $1", (iso(at - older_than),)).rowcount
        conn.execute("DELETE FROM pollers WHERE heartbeat_at < $1 OR (state IN ('stopped', 'crashed')"
                     " AND heartbeat_at < $2)", (iso(at - older_than), iso(at - gone_older_than)))
    return dropped


def pollers(records: Records) -> list[dict[str, Any]]:
    """Every poller row, the most recent heartbeat first."""
    return [dict(r) for r in records.query("SELECT * FROM pollers ORDER BY heartbeat_at DESC")]


def source_stats(records: Records) -> dict[str, dict[str, Any]]:
    """source → its counters and last poll's facts."""
    return {r["source"]: dict(r) for r in records.query("SELECT * FROM source_stats")}


def poll_series(records: Records, since: datetime | None = None, *, source: str | None = None,
                limit: int) -> list[dict[str, Any]]:
    """One row per poll, oldest first (the newest `limit` rows since `since`)."""
    sql, p = "SELECT * FROM poll_metrics", Params()
    where = []
    if since is not None:
        where.append(f"at >= {p(iso(since))}")
    if source is not None:
        where.append(f"source = {p(source)}")
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += f" ORDER BY id DESC LIMIT {p(limit)}"
    return [dict(r) for r in reversed(records.query(sql, p))]
