"""The incident documents that `list`, `show` and the pages share (CONTRACT §5), read from the
records store alone: no checkpoint is opened for them."""
from __future__ import annotations

from typing import Any, Callable, Sequence

from pipeline.config import Settings
from pipeline.incidents import recurrence
from pipeline.store import regrouping
from pipeline.store.records import Records

LIST_FIELDS = ("incident_id", "status", "service", "severity", "category", "confidence", "event_count",
               "created_at", "updated_at", "sla_deadline", "title", "assignee", "escalated_at")
RCA_FIELDS = ("category", "root_cause", "confidence", "evidence", "doc_ids", "analyst", "supported", "warning",
              "findings", "quotes", "notes", "dropped_findings")


def list_row(row: dict[str, Any]) -> dict[str, Any]:
    """One incident as `list --json` prints it."""
    return {**{k: row[k] for k in LIST_FIELDS}, "backfilled": bool(row["backfilled"])}


def incident_document(records: Records, incident_id: str) -> dict[str, Any]:
    """The `show` document: record fields, RCA, recommendation, pending interrupt, decision, fix."""
    row = records.incident(incident_id)
    summary = row["summary"]
    rca = summary.get("rca")
    pending = None
    if row["status"] == "awaiting_approval" and row["pending_interrupt_id"]:
        pending = {"interrupt_id": row["pending_interrupt_id"], "checkpoint_id": row["pending_checkpoint_id"]}
    fixes = records.fixes(incident_id)
    return {
        **list_row(row),
        "first_seen": row["first_seen"], "last_seen": row["last_seen"], "closed_at": row["closed_at"],
        "revisions": row["revisions"], "last_error": row["last_error"],
        # the earliest cause-side error of the outage and why it leads (incidents/leading.py)
        "leader": row.get("leader"),
        # stored since the analysis ran: repeats of what it holds are counted, not re-analysed
        "events_since_analysis": (max(0, row["event_count"] - row["analysed_events"])
                                  if row.get("analysed_events") is not None else None),
        "rca": {k: rca.get(k) for k in RCA_FIELDS} if rca else None,
        "recommendation": summary.get("recommendation"),
        "pending": pending,
        "decision": summary.get("decision"),
        # before approval: what an approval would record (plan, diff, hash); None when no code fix
        # is eligible. After approval `fix` is the recorded proposal, with the same hash.
        "proposal": summary.get("proposal"),
        "requests": summary.get("requests", []),
        # after a replay the newest fix record belongs to another branch: show it only once proposed
        "fix": fixes[-1]["proposal"] if fixes and row["status"] == "fix_proposed" else summary.get("fix"),
        "similar_docs": summary.get("similar_docs", []),
        # the incident it came from (recurred after its decision, split out of it, merged into it),
        # and those that came from it (off the incidents_linked index)
        "pattern_count": row.get("pattern_count"), "service_count": row.get("service_count"),
        "link": link_of(row),
        "linked_from": regrouping.linked_from(records, incident_id),
    }


def link_of(row: dict[str, Any]) -> dict[str, Any] | None:
    """An incident's link as `show --json` gives it: {incident_id, kind, status, text} or None."""
    text = recurrence.link_text(row)
    if text is None:
        return None
    return {"incident_id": row["linked_to"], "kind": row["link_kind"], "status": row.get("link_status"), "text": text}


def show_document(records: Records, settings: Settings, incident_id: str, *,
                  doc_hints: Callable[[str], Sequence[dict[str, Any]]]) -> dict[str, Any]:
    """The `show` document with who is on it, the approvals so far and needed, and the comments.
    `doc_hints(doc_id)` gives a knowledge-base doc's fix hints (asked only when a policy needs them)."""
    from pipeline.review.policy import approvals_needed
    from pipeline.store import approvals as approvals_store
    from pipeline.store import assignments

    doc = incident_document(records, incident_id)
    row = records.incident(incident_id)
    pending = doc["pending"]["interrupt_id"] if doc["pending"] else None
    doc.update(assignee=row["assignee"], assigned_at=row["assigned_at"], escalated_at=row["escalated_at"],
               approvals=approvals_store.approvals_for(records, incident_id, pending),
               approvals_needed=(2 if approvals_store.approved_in_part(records, [incident_id])
                                 else approvals_needed(row, settings, doc_hints=doc_hints)),
               comments=assignments.comments(records, incident_id))
    if doc["approvals_needed"] > 1 and any(a.get("auth") == "demo" for a in doc["approvals"]):
        from pipeline.review.identity import UNVERIFIED_LIMIT

        doc["approvals_limit"] = UNVERIFIED_LIMIT  # stated wherever the approvals are shown
    return doc
