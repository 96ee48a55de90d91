"""The poller lease: one poller works a data dir at a time, across threads and processes.

A row in app.sqlite3 names the owner (`owners.process_owner()`) and when its claim expires.
The owner renews it as it polls; anyone may take it once it expired, was released, or its
owner process is gone (same host), so a crashed poller is replaced at the next poll.

On PostgreSQL the lease is a session-level advisory lock (postgres.SessionLock) held by the
working poller on a connection of its own: a poller on another machine cannot tell whether our
pid lives, but the server knows when our session ends. The row is kept too: it says who works.
"""
from __future__ import annotations

import threading
from datetime import timedelta

from pipeline.clock import iso, parse_iso
from pipeline.store.owners import owner_alive
from pipeline.store.records import Records

SCOPE = "data_dir"

_sessions: dict[tuple[str, str], object] = {}  # (database URL, owner) -> its postgres.SessionLock
_sessions_lock = threading.Lock()


def _session(records: Records, owner: str):
    from pipeline.store import postgres

    with _sessions_lock:
        return _sessions.setdefault((records.path, owner), postgres.SessionLock(records.path))


def acquire(records: Records, owner: str, *, source: str, ttl: float) -> bool:
    """Take or renew the lease for `owner`; False while another live owner holds it."""
    stamp = records.clock.now()
    if records.postgres and not _holds_session_lock(records, owner):
        return False
    with records.transaction() as conn:
        row = conn.execute("SELECT owner, expires_at, acquired_at FROM poller_lease WHERE scope = ?",
                           (SCOPE,)).fetchone()
        if row is not None and row["owner"] != owner and not records.postgres:
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
    with records.transaction() as conn:
        conn.execute("DELETE FROM poller_lease WHERE scope = ? AND owner = ?", (SCOPE, owner))
    if records.postgres:
        with _sessions_lock:
            session = _sessions.pop((records.path, owner), None)
        if session is not None:
            session.drop()


def close_sessions() -> None:
    """End every poller session of this process (tests, shutdown): their locks are freed."""
    with _sessions_lock:
        sessions = list(_sessions.values())
        _sessions.clear()
    for session in sessions:
        session.drop()


def _holds_session_lock(records: Records, owner: str) -> bool:
    from pipeline.errors import StorageError
    from pipeline.store import backend

    try:
        return _session(records, owner).try_hold()
    except backend.database_errors() as exc:
        raise StorageError(f"poller lease: {backend.redacted(exc, records.path)}") from exc


def holder(records: Records) -> dict | None:
    """Who holds the lease, for which source and until when (None when free)."""
    rows = records.query("SELECT owner, source, acquired_at, renewed_at, expires_at FROM poller_lease"
                         " WHERE scope = ?", (SCOPE,))
    if not rows:
        return None
    row = dict(rows[0])
    if records.postgres:
        from pipeline.store import postgres

        row["live"] = postgres.poller_lock_held(records.conn)  # type: ignore[arg-type]
    else:
        row["live"] = parse_iso(row["expires_at"]) > records.clock.now() and owner_alive(row["owner"])
    return row
