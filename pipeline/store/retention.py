"""What retention removes from the records store (see pipeline/unattended/retention.py for the
policy): the bodies of a decided incident's events beyond the sample its state keeps, and
context events (no incident) too old for any log window. SQLite's VACUUM lives here too."""
from __future__ import annotations

import sqlite3
from datetime import datetime

from pipeline.clock import iso
from pipeline.errors import StorageError
from pipeline.state import CLOSED_STATUSES
from pipeline.store import context_blocks
from pipeline.store.records import Records
from pipeline.store.sql import Params


def decided_before(records: Records, cutoff: datetime, *, limit: int | None = None) -> list[str]:
    """Decided incidents closed before `cutoff` and not yet compacted, oldest first."""
    p = Params()
    sql = (f"SELECT incident_id FROM incidents WHERE closed_at IS NOT NULL AND closed_at < {p(iso(cutoff))}"
           f" AND status IN ({p.each(CLOSED_STATUSES)}) AND pruned_at IS NULL ORDER BY closed_at, incident_id")
    if limit is not None:
        sql += f" LIMIT {p(int(limit))}"
    return [r["incident_id"] for r in records.query(sql, p)]


def compact_events(records: Records, incident_id: str, *, head: int, tail: int) -> int:
    """Delete the incident's events except its first `head` and latest `tail` (by time), and
    mark it compacted; returns how many events went. The record keeps its event count."""
    with records.transaction() as conn:
        cur = conn.execute(
            "DELETE FROM events WHERE incident_id = $1 AND event_id NOT IN"
            " (SELECT event_id FROM events WHERE incident_id = $2 ORDER BY time, event_id LIMIT $3)"
            " AND event_id NOT IN"
            " (SELECT event_id FROM events WHERE incident_id = $4 ORDER BY time DESC, event_id DESC LIMIT $5)",
            (incident_id, incident_id, head, incident_id, tail))
        conn.execute("UPDATE incidents SET pruned_at = $1 WHERE incident_id = $2", (iso(records.clock.now()), incident_id))
        return cur.rowcount


def drop_context_events(records: Records, before: datetime) -> int:
    """Delete events that belong to no incident and were stored before `before`: they only ever
    serve log windows of incidents opening near their time."""
    with records.transaction() as conn:
        rows = conn.execute("DELETE FROM events WHERE incident_id IS NULL AND stored_at < $1", (iso(before),)).rowcount
        return rows + context_blocks.drop_before(conn, iso(before))


def drop_pattern_days(records: Records, before_day: str) -> int:
    """Delete the daily pattern counts of days before `before_day` (an ISO date)."""
    with records.transaction() as conn:
        return conn.execute("DELETE FROM pattern_days WHERE day < $1", (before_day,)).rowcount


def pruned_at(records: Records, incident_id: str) -> str | None:
    rows = records.query("SELECT pruned_at FROM incidents WHERE incident_id = $1", (incident_id,))
    return rows[0]["pruned_at"] if rows else None


def shrink_file(records: Records, *, full: bool = True) -> None:
    """Give freed pages back to the file system (incremental vacuum). The first time, with
    `full`, one VACUUM switches the file to incremental mode (it rewrites the whole file)."""
    if records.postgres:
        return  # PostgreSQL's autovacuum reuses the space deleted rows leave
    try:
        with records.connection() as conn:
            if conn.execute("PRAGMA auto_vacuum").fetchall()[0][0] != 2:
                if not full:
                    return
                conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
                conn.execute("VACUUM")
            else:
                conn.execute("PRAGMA incremental_vacuum")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    except sqlite3.Error as exc:
        raise StorageError(f"records store: cannot shrink the file: {exc}") from exc
