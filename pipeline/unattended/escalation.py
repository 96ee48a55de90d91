"""What happens when nobody decides: each poll, after ingest, the poller announces new critical
incidents, escalates incidents past their SLA deadline, and expires (through the gate, as
`system`) those past the deadline plus INCIDENTIQ_EXPIRE_AFTER_HOURS (0: never). Every step is
a bounded indexed query and a compare-and-set, so it happens once, with no browser open, across
pollers and restarts; each is audited and notified in the transaction that makes it happen.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from pipeline.clock import parse_iso
from pipeline.engine import Engine
from pipeline.errors import Conflict
from pipeline.review.identity import SYSTEM
from pipeline.review.service import ReviewService
from pipeline.store import escalation

BATCH = 50  # per step and poll; the rest waits for the next poll


@dataclass
class Escalations:
    announced: list[str] = field(default_factory=list)
    escalated: list[str] = field(default_factory=list)
    expired: list[str] = field(default_factory=list)


def run(engine: Engine, *, review: ReviewService | None = None, limit: int = BATCH) -> Escalations:
    """Announce, escalate and expire what is due now (see the module docstring)."""
    review = review or ReviewService(engine)
    records = engine.records
    done = Escalations()
    for row in escalation.to_announce(records, limit=limit):
        # an announcement changes nothing about the incident: stamped and notified, not audited
        if _mark(review, row, "announced_at", None, kind="critical", note="new critical incident"):
            done.announced.append(row["incident_id"])
    now = records.clock.now()
    for row in escalation.to_escalate(records, now=now, limit=limit):
        note = f"SLA deadline {row['sla_deadline']} passed without a decision"
        if _mark(review, row, "escalated_at", "escalate", kind="escalation", note=note):
            done.escalated.append(row["incident_id"])
    grace = engine.settings.expire_after_hours
    if grace > 0:
        for row in escalation.to_expire(records, cutoff=now - timedelta(hours=grace), limit=limit):
            why = f"SLA deadline {row['sla_deadline']} passed {grace:g} h ago without a decision"
            try:
                review.expire(row["incident_id"], expect_interrupt=row["pending_interrupt_id"], why=why)
            except Conflict:
                continue  # a person or the pipeline acts on it right now: the next poll looks again
            done.expired.append(row["incident_id"])
    return done


def _mark(review: ReviewService, row: dict, column: str, action: str | None, *, kind: str, note: str) -> bool:
    records = review.records
    incident_id = row["incident_id"]

    def then(conn, stamp: str) -> None:
        if action is None:
            review.notify(conn, kind, incident_id, event_key=incident_id, facts={"due": _short(row["sla_deadline"])})
            return
        records.add_audit(conn=conn, incident_id=incident_id, reviewer=SYSTEM.id, auth=SYSTEM.auth, action=action,
                          checkpoint_before=row["pending_checkpoint_id"], checkpoint_after=row["pending_checkpoint_id"],
                          before={"status": row["status"], column: None},
                          after={"status": row["status"], column: stamp}, note=note)
        review.notify(conn, kind, incident_id, event_key=incident_id,
                       facts={"due": _short(row["sla_deadline"]), "assignee": row.get("assignee")})

    return escalation.mark_once(records, incident_id, column, then=then)


def _short(stamp: str | None) -> str:
    when = parse_iso(stamp)
    return when.strftime("%Y-%m-%d %H:%M UTC") if when else "?"
