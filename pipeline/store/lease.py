"""The poller lease: one poller works a data dir at a time, across threads and processes.

A row in app.sqlite3 names the owner (`owners.process_owner()`) and when its claim expires.
The owner renews it as it polls; anyone may take it once it expired, was released, or its
owner process is gone (same host), so a crashed poller is replaced at the next poll.

On PostgreSQL the lease is a session-level advisory lock (postgres.SessionLock) held by the
working poller on a connection of its own: a poller on another machine cannot tell whether our
pid lives, but the server knows when our session ends. The row is kept too: it says who works.
A free lock is not enough to take over from another owner whose row has not expired: the server
may have dropped its sessions (a restart) while it is in the middle of a step. It is taken over
once that owner's process is gone (on this host: its pid), or has had no session on the server for
TAKEOVER_GRACE_SECONDS (on another host: it died; a live one reconnects at its next statement and
takes its lock back; counted from when a standby first finds it so since the lock was last
held: a drop seen before it took its lock again is over), and the holder checks its session before every step (`held`), so it stops
as soon as it lost the lock to someone else.
"""
from __future__ import annotations

import threading
import time
from datetime import timedelta
from typing import TYPE_CHECKING, Any, cast

from pipeline.clock import iso, parse_iso
from pipeline.store.owners import owner_alive
from pipeline.store.records import Records

if TYPE_CHECKING:
    from pipeline.store import postgres  # imported when a store is on PostgreSQL (psycopg)

SCOPE = "data_dir"
TAKEOVER_GRACE_SECONDS = 3.0

_gone_since: dict[tuple[str, str], float] = {}  # (database URL, owner) -> when we saw it sessionless

_sessions: dict[tuple[str, str], postgres.SessionLock] = {}  # (database URL, owner) -> its lock
_sessions_lock = threading.Lock()


def _session(records: Records, owner: str) -> postgres.SessionLock:
    from pipeline.store import postgres

    with _sessions_lock:
        return _sessions.setdefault((records.path, owner), postgres.SessionLock(records.path))


def acquire(records: Records, owner: str, *, source: str, ttl: float) -> bool:
    """Take or renew the lease for `owner`; False while another live owner holds it."""
    stamp = records.clock.now()
    if records.postgres and not _holds_session_lock(records, owner):
        # someone holds the lock (its owner came back, or another took it): a drop seen before
        # now is over, and the grace of the next one starts when that one is seen
        _forget_gone(records)
        return False
    with records.transaction() as conn:
        row = conn.execute("SELECT owner, expires_at, acquired_at FROM poller_lease WHERE scope = $1",
                           (SCOPE,)).fetchone()
        if row is not None and row["owner"] != owner:
            expires_at = parse_iso(row["expires_at"])
            assert expires_at is not None  # NOT NULL
            expired = expires_at <= stamp
            if not expired and (_may_still_work(cast("postgres.Connection", conn), records, row["owner"]) if records.postgres
                                else owner_alive(row["owner"])):
                if records.postgres:
                    _session(records, owner).drop()  # the lock is the previous owner's to take back
                return False
        acquired_at = row["acquired_at"] if row is not None and row["owner"] == owner else iso(stamp)
        conn.execute(
            "INSERT INTO poller_lease(scope, owner, source, acquired_at, renewed_at, expires_at)"
            " VALUES ($1,$2,$3,$4,$5,$6) ON CONFLICT(scope) DO UPDATE SET owner = excluded.owner,"
            " source = excluded.source, acquired_at = excluded.acquired_at,"
            " renewed_at = excluded.renewed_at, expires_at = excluded.expires_at",
            (SCOPE, owner, source, acquired_at, iso(stamp), iso(stamp + timedelta(seconds=ttl))),
        )
        return True


def held(records: Records, owner: str) -> bool:
    """Between a poller's steps: whether it still holds the lease it took (on PostgreSQL, its
    session is alive: one round trip); on SQLite the renewal in `acquire` is the check."""
    if not records.postgres:
        return True
    with _sessions_lock:
        session = _sessions.get((records.path, owner))
    return session is not None and session.held()


def _may_still_work(conn: postgres.Connection, records: Records, previous: str) -> bool:
    """Whether an owner whose lock is free may still be in the middle of a step: its process runs
    (as far as this host can tell: one of ours that is gone is gone) and has sessions on the
    server, or lost them less than TAKEOVER_GRACE_SECONDS ago."""
    from pipeline.store import postgres

    key = (records.path, previous)
    if not owner_alive(previous):
        return False
    if postgres.sessions_of(conn, previous):
        _gone_since.pop(key, None)
        return True
    first = _gone_since.setdefault(key, time.monotonic())
    if time.monotonic() - first < TAKEOVER_GRACE_SECONDS:
        return True
    _gone_since.pop(key, None)  # taken over: a later drop of it has a grace of its own
    return False


def _forget_gone(records: Records) -> None:
    """The lock is held: every owner seen gone on this database was seen so before it was taken
    again, so its grace no longer runs (kept, a drop long after would end at once: the standby
    took over from a poller in the middle of a step, its first drop a minute old)."""
    for key in [k for k in _gone_since if k[0] == records.path]:
        _gone_since.pop(key, None)


def release(records: Records, owner: str) -> None:
    """Give the lease up (a no-op unless `owner` holds it)."""
    with records.transaction() as conn:
        conn.execute("DELETE FROM poller_lease WHERE scope = $1 AND owner = $2", (SCOPE, owner))
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


def holder(records: Records) -> dict[str, Any] | None:
    """Who holds the lease, for which source and until when (None when free)."""
    rows = records.query("SELECT owner, source, acquired_at, renewed_at, expires_at FROM poller_lease"
                         " WHERE scope = $1", (SCOPE,))
    if not rows:
        return None
    row = dict(rows[0])
    if records.postgres:
        from pipeline.store import postgres

        row["live"] = postgres.poller_lock_held(records.conn)  # type: ignore[arg-type]
    else:
        expires_at = parse_iso(row["expires_at"])
        assert expires_at is not None  # NOT NULL
        row["live"] = expires_at > records.clock.now() and owner_alive(row["owner"])
    return row
