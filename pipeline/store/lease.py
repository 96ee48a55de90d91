"""The poller lease: one poller works a data dir at a time, across threads and processes.

A row in app.sqlite3 names the owner (`records.process_owner()`) and when its claim expires.
The owner renews it as it polls; anyone may take it once it expired, was released, or its
owner process is gone (same host), so a crashed poller is replaced at the next poll.
"""
from __future__ import annotations

import weakref
from datetime import timedelta

from pipeline.store.records import Records, iso, now, owner_alive, parse_iso

SCOPE = "data_dir"

SCHEMA = (
    """CREATE TABLE IF NOT EXISTS poller_lease (
        scope TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        source TEXT NOT NULL,
        acquired_at TEXT NOT NULL,
        renewed_at TEXT NOT NULL,
        expires_at TEXT NOT NULL
    )""",
)


_ready: "weakref.WeakSet[Records]" = weakref.WeakSet()


def ensure_schema(records: Records) -> None:
    """Create the lease table once per records store."""
    if records in _ready:
        return
    with records.transaction() as conn:
        for statement in SCHEMA:
            conn.execute(statement)
    _ready.add(records)


def acquire(records: Records, owner: str, *, source: str, ttl: float) -> bool:
    """Take or renew the lease for `owner`; False while another live owner holds it."""
    ensure_schema(records)
    stamp = now()
    with records.transaction() as conn:
        row = conn.execute("SELECT owner, expires_at, acquired_at FROM poller_lease WHERE scope = ?",
                           (SCOPE,)).fetchone()
        if row is not None and row["owner"] != owner:
            expired = parse_iso(row["expires_at"]) <= stamp
            if not expired and owner_alive(row["owner"]):
                return False
        acquired_at = row["acquired_at"] if row is not None and row["owner"] == owner else iso(stamp)
        conn.execute(
            "INSERT INTO poller_lease(scope, owner, source, acquired_at, renewed_at, expires_at)"
            " VALUES (?,?,?,?,?,?) ON CONFLICT(scope) DO UPDATE SET owner = excluded.owner,"
            " source = excluded.source, acquired_at = excluded.acquired_at,"
            " renewed_at = excluded.renewed_at, expires_at = excluded.expires_at",
            (SCOPE, owner, source, acquired_at, iso(stamp), iso(stamp + timedelta(seconds=ttl))),
        )
        return True


def release(records: Records, owner: str) -> None:
    """Give the lease up (a no-op unless `owner` holds it)."""
    ensure_schema(records)
    with records.transaction() as conn:
        conn.execute("DELETE FROM poller_lease WHERE scope = ? AND owner = ?", (SCOPE, owner))


def holder(records: Records) -> dict | None:
    """Who holds the lease, for which source and until when (None when free)."""
    ensure_schema(records)
    rows = records.query("SELECT owner, source, acquired_at, renewed_at, expires_at FROM poller_lease"
                         " WHERE scope = ?", (SCOPE,))
    if not rows:
        return None
    row = dict(rows[0])
    row["live"] = parse_iso(row["expires_at"]) > now() and owner_alive(row["owner"])
    return row
