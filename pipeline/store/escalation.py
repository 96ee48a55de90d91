"""The bounded queries and compare-and-sets behind escalation, expiry and critical announcements.

Each query reads at most `limit` rows through an index (partial indexes `incidents_to_escalate`
and `incidents_to_announce`, the inbox's `incidents_inbox` for expiry), so the poller can run
them every poll. Marking is a compare-and-set on a NULL column in one transaction with the
audit entry and the notifications it causes: exactly once across pollers and restarts.
"""
from __future__ import annotations

from datetime import datetime
from typing import Any, Callable

from pipeline.clock import iso
from pipeline.store.records import Records
from pipeline.store.sql import Connection

MARKS = ("escalated_at", "announced_at")


def to_announce(records: Records, *, limit: int) -> list[dict[str, Any]]:
    """Critical incidents awaiting approval that nobody was told of yet, oldest first."""
    rows = records.query("SELECT * FROM incidents WHERE severity = 'critical' AND announced_at IS NULL"
                         " AND status = 'awaiting_approval' ORDER BY created_at LIMIT $1", (limit,))
    return [dict(r) for r in rows]


def to_escalate(records: Records, *, now: datetime, limit: int) -> list[dict[str, Any]]:
    """Incidents awaiting approval past their SLA deadline and not escalated yet, most overdue first."""
    rows = records.query("SELECT * FROM incidents WHERE status = 'awaiting_approval' AND escalated_at IS NULL"
                         " AND sla_deadline <= $1 ORDER BY sla_deadline LIMIT $2", (iso(now), limit))
    return [dict(r) for r in rows]


def to_expire(records: Records, *, cutoff: datetime, limit: int) -> list[dict[str, Any]]:
    """Incidents awaiting approval whose deadline is at or before `cutoff` (deadline + grace <= now)."""
    rows = records.query("SELECT * FROM incidents WHERE status = 'awaiting_approval' AND sla_deadline <= $1"
                         " ORDER BY sla_deadline LIMIT $2", (iso(cutoff), limit))
    return [dict(r) for r in rows]


def mark_once(records: Records, incident_id: str, column: str, *, then: Callable[[Connection, str], object]) -> bool:
    """Stamp `column` (escalated_at / announced_at) if still NULL and the incident still awaits
    approval, and call `then(conn, stamp)` in the same transaction; False when someone was first."""
    if column not in MARKS:
        raise ValueError(f"not a mark column: {column}")
    stamp = iso(records.clock.now())
    with records.transaction() as conn:
        cur = conn.execute(f"UPDATE incidents SET {column} = $1 WHERE incident_id = $2 AND {column} IS NULL"
                           " AND status = 'awaiting_approval'", (stamp, incident_id))
        if cur.rowcount != 1:
            return False
        then(conn, stamp)
        return True
