"""The notification outbox: one row per (notification, target), written in the same transaction as
the event that causes it, and delivered later with retries (pipeline/notifications/sender.py).

A row holds the target's id (a hash of its URL) and host, never the URL: webhook URLs carry
their secret in the path. Delivery is at-least-once: a row is taken (`sending`, with the sender's
owner token) before the POST and marked `sent` after it; a sender killed in between leaves it
`sending` under a dead owner, and the next sender sends it again with the same idempotency key.
Delivered rows are deleted by retention (`prune`) once sent longer ago than its window.
"""
from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

from pipeline.clock import iso
from pipeline.store.owners import owner_alive
from pipeline.store.records import Records
from pipeline.store.sql import Connection, Params, Row

STATUSES = ("pending", "sending", "sent", "failed", "dropped")


def enqueue(conn: Connection, *, rows: list[dict[str, Any]], now: datetime) -> int:
    """Write outbox rows (key, kind, incident_id, target_id, target_host, payload) inside the caller's
    transaction; a key already there is kept as it is. Returns how many were new."""
    added = 0
    for row in rows:
        cur = conn.execute(
            "INSERT INTO outbox(idempotency_key, kind, incident_id, target_id, target_host, payload,"
            " next_attempt_at, created_at) VALUES ($1,$2,$3,$4,$5,$6,$7,$8) ON CONFLICT DO NOTHING",
            (row["key"], row["kind"], row.get("incident_id"), row["target_id"], row["target_host"],
             json.dumps(row["payload"], default=str), iso(now), iso(now)))
        added += cur.rowcount
    return added


def due(records: Records, *, limit: int, stale_after: float) -> list[dict[str, Any]]:
    """Rows to send now: pending and due, or left `sending` by a dead sender or for too long."""
    now = records.clock.now()
    rows = records.query(
        "SELECT * FROM outbox WHERE (status = 'pending' AND next_attempt_at <= $1) OR status = 'sending'"
        " ORDER BY id LIMIT $2", (iso(now), limit * 4))
    out = []
    for r in rows:
        if r["status"] == "sending":
            since = datetime.fromisoformat(r["sending_since"])
            if owner_alive(r["sender"] or "") and since > now - timedelta(seconds=stale_after):
                continue
        out.append(_row(r))
    return out[:limit]


def take(records: Records, row_id: int, *, owner: str, stale_after: float) -> bool:
    """Compare-and-set a row to `sending` for `owner`; False when another live sender has it."""
    now = records.clock.now()
    with records.transaction() as conn:
        r = conn.execute("SELECT status, sender, sending_since FROM outbox WHERE id = $1", (row_id,)).fetchone()
        if r is None or r["status"] not in ("pending", "sending"):
            return False
        if r["status"] == "sending" and r["sender"] != owner and owner_alive(r["sender"] or "") and \
                datetime.fromisoformat(r["sending_since"]) > now - timedelta(seconds=stale_after):
            return False
        conn.execute("UPDATE outbox SET status = 'sending', sender = $1, sending_since = $2 WHERE id = $3",
                     (owner, iso(now), row_id))
        return True


def mark_sent(records: Records, row_id: int, *, owner: str) -> None:
    with records.transaction() as conn:
        conn.execute("UPDATE outbox SET status = 'sent', sent_at = $1, attempts = attempts + 1, last_error = NULL"
                     " WHERE id = $2 AND sender = $3", (iso(records.clock.now()), row_id, owner))


def mark_failed(records: Records, row_id: int, *, owner: str, error: str, retry_at: datetime | None) -> None:
    """A failed attempt: retried at `retry_at`, or given up (`failed`) when it is None."""
    with records.transaction() as conn:
        conn.execute("UPDATE outbox SET status = $1, attempts = attempts + 1, last_error = $2, next_attempt_at = $3,"
                     " sender = NULL, sending_since = NULL WHERE id = $4 AND sender = $5",
                     ("pending" if retry_at else "failed", error[:500],
                      iso(retry_at or records.clock.now()), row_id, owner))


def drop(records: Records, row_id: int, *, reason: str) -> None:
    """A row whose target is no longer configured: kept, never sent."""
    with records.transaction() as conn:
        conn.execute("UPDATE outbox SET status = 'dropped', last_error = $1 WHERE id = $2", (reason[:500], row_id))


def prune_delivered(records: Records, before: datetime) -> int:
    """Delete the rows delivered (`sent`) before `before` (the retention cutoff); returns how many.
    Rows not delivered (pending, failed, dropped) stay: they are what someone may still look into."""
    with records.transaction() as conn:
        return conn.execute("DELETE FROM outbox WHERE status = 'sent' AND sent_at < $1", (iso(before),)).rowcount


def rows(records: Records, *, incident_id: str | None = None, limit: int = 200) -> list[dict[str, Any]]:
    """The newest outbox rows (for `notifications` and the operations page)."""
    sql, p = "SELECT * FROM outbox", Params()
    if incident_id:
        sql += f" WHERE incident_id = {p(incident_id)}"
    sql += f" ORDER BY id DESC LIMIT {p(limit)}"
    return [_row(r) for r in records.query(sql, p)]


def _row(r: Row) -> dict[str, Any]:
    d = dict(r)
    d["payload"] = json.loads(d["payload"])
    return d
