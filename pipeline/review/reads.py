"""What a reviewer reads: the inbox and its pages, the incident with its state and evidence, the
approvals it needs (review/policy.py), the revisions and the audit. Read from the records store,
and from the checkpoint only where the state itself is shown."""
from __future__ import annotations

from datetime import datetime
from typing import Any

from langchain_core.runnables.graph import Graph as DrawableGraph
from pydantic import BaseModel

from pipeline.engine import Engine
from pipeline.errors import StorageError
from pipeline.engine.graph import thread_config
from pipeline.engine.nodes import not_eligible_reason
from pipeline.incidents import recurrence
from pipeline.incidents.correlation import title as title_of
from pipeline.review import history
from pipeline.review.audit import export_audit
from pipeline.review.documents import show_document
from pipeline.review.history import checkpoint_id_of
from pipeline.review.policy import TWO, approvals_needed
from pipeline.state import EDITABLE_FIELDS, MAX_REVISIONS, STATUSES, TEMPLATE_PLACEHOLDER, IncidentState, LogEvent
from pipeline.store import approvals as approvals_store
from pipeline.store import incident_rows, inbox, members, views
from pipeline.store.records import Records


EVIDENCE_LIMIT = 500


def to_json(value: BaseModel | None) -> Any:
    """A state object (or None) as JSON data."""
    return value.model_dump(mode="json") if value is not None else None


def evidence_row(event: LogEvent) -> dict[str, Any]:
    """An event as the incident page lists it."""
    return {"time": event.time.isoformat(), "service": event.service, "host": event.host, "level": event.level,
            "message": event.message, "exception": event.exception, "stack": event.stack,
            "trace_id": event.trace_id, "event_id": event.event_id}


def in_the_logs_words(records: Records, rows: list[dict[str, Any]]) -> None:
    """Titles stored before titles were in the log's words (a template with the miner's `<NUM>`,
    `<TS>`, ... that reads as `…`) read as one stored today would: built again from the incident's
    opening event (incidents/correlation.py title) and written back, so each is rebuilt once (only
    while the stored title is still the old one; a store busy elsewhere leaves it for the next read)."""
    titles = []
    for row in rows:
        stored = str(row.get("title") or "")
        if TEMPLATE_PLACEHOLDER.search(stored):
            first = records.events_of(row["incident_id"], limit=1)
            if first:
                row["title"] = title_of(first[0])
                titles.append((row["incident_id"], stored, row["title"]))
    if titles:
        try:
            with records.transaction() as conn:
                incident_rows.retitle(conn, titles)
        except StorageError:
            pass  # shown in the log's words all the same; written back by a later read


class Reads:
    """What the reviewer's pages, the CLI's `list`/`show`/`audit` and the tests read; nothing here
    changes an incident (but a title an earlier release stored as a template: in_the_logs_words)."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self.records = engine.records
        self.graph = engine.graph

    def inbox(self, *, status: str | list[str] | None = None, search: str | None = None,
              limit: int = 200, offset: int = 0, assignee: str | None = None) -> list[dict[str, Any]]:
        """Incidents for the inbox, by SLA deadline then severity (records store only), each with its
        `approvals` (of the pending analysis), `approvals_needed`, `assignee` and `escalated_at`."""
        rows = self.records.incidents(status=status, search=search, order="inbox", limit=limit, offset=offset,
                                      assignee=assignee)
        return self._with_approvals_and_recurrence(rows)

    def _with_approvals_and_recurrence(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The rows, each with its approvals so far and needed, and on how many recent days its
        patterns were seen (`days_seen`) and so `seen`: new, rare or frequent (incidents/recurrence.py)."""
        in_the_logs_words(self.records, rows)
        given = approvals_store.approvals_of(self.records, rows)
        held = approvals_store.approved_in_part(self.records, [r["incident_id"] for r in rows])
        seen = members.days_seen(self.records, [r["incident_id"] for r in rows],
                                 since=recurrence.window_start(self.records.clock.now()))
        for row in rows:
            row["approvals"] = given.get(row["incident_id"], [])
            row["approvals_needed"] = self.approvals_needed(row, held=row["incident_id"] in held)
            row["days_seen"] = seen.get(row["incident_id"], 0)
            row["seen"] = recurrence.label(row["days_seen"])
            row["link"] = recurrence.link_text(row)  # "recurred after INC-… was approved", or None
        return rows

    def approvals_needed(self, incident: dict[str, Any] | str, *, held: bool | None = None) -> int:
        """1 or 2: the approvals the incident (a record row or an id) needs (review/policy.py).

        Two once a partial approval was given (`held`, read when not told): the rule is decided on
        the analysis as it was at the first approval, and no later edit or re-analysis lowers it."""
        row = self.records.incident(incident) if isinstance(incident, str) else incident
        if held is None:
            held = bool(approvals_store.approved_in_part(self.records, [row["incident_id"]]))
        if held:
            return TWO
        kb = self.engine.kb
        return approvals_needed(row, self.engine.settings,
                                doc_hints=lambda d: kb.by_id[d].fix_hints if d in kb.by_id else [])

    def document(self, incident_id: str) -> dict[str, Any]:
        """The `show` document with who is on it, the approvals so far and needed, and the comments."""
        kb = self.engine.kb
        doc = show_document(self.records, self.engine.settings, incident_id,
                            doc_hints=lambda d: kb.by_id[d].fix_hints if d in kb.by_id else [])
        in_the_logs_words(self.records, [doc])
        return doc

    def inbox_page(self, *, status: str | list[str] | tuple[str, ...] | None = None, service: str | None = None,
                   search: str | None = None, after: str | None = None, limit: int = 50,
                   assignee: str | None = None, severities: list[str] | tuple[str, ...] = (),
                   opened_from: str | None = None, opened_to: str | None = None, sort: str | None = None) -> dict[str, Any]:
        """One keyset page of an inbox view: `rows` (as `inbox` gives them), and `next_cursor` to
        pass as `after` (None at the end). Every view is one index range read, as fast on page
        1,000 as on page 1. `severities`, `opened_from`/`opened_to` (ISO dates) narrow it; `sort`
        (store.views.SORTS: sla, newest, oldest, severity, confidence, events) orders it."""
        statuses = [status] if isinstance(status, str) else list(status or ())
        page = views.inbox_page(self.records, statuses=statuses, service=service, search=search, after=after,
                                limit=limit, assignee=assignee, severities=tuple(severities or ()),
                                opened_from=opened_from, opened_to=opened_to, sort=sort)
        rows = self._with_approvals_and_recurrence(views.page_rows(page))
        return {"rows": rows, "next_cursor": page.next_cursor}

    @property
    def code_fix_min_confidence(self) -> float:
        """The confidence below which an approval proposes no code fix."""
        return self.engine.settings.code_fix_min_confidence

    def flow(self) -> DrawableGraph:
        """The incident graph's drawable nodes and edges (for the page's offline drawing)."""
        return self.graph.get_graph()

    def services(self) -> list[str]:
        """The services incidents were opened for, in name order."""
        return inbox.services(self.records)

    def assignees(self) -> list[str]:
        """The people on open incidents, in name order (the inbox's assignee filter)."""
        return inbox.assignees(self.records)

    def overdue_count(self, at: datetime | None = None) -> int:
        """Open incidents past their SLA deadline."""
        return inbox.overdue_count(self.records, at)

    def counts(self) -> dict[str, int]:
        """Incidents per status, every status present."""
        counts = {s: 0 for s in STATUSES}
        counts.update(self.records.status_counts())
        return counts

    def incident(self, incident_id: str) -> dict[str, Any]:
        """The `show` document plus the state, evidence, log window, similar docs and what may be edited."""
        doc = self.document(incident_id)
        snap = self.graph.get_state(thread_config(incident_id))
        state = IncidentState.model_validate(snap.values) if snap.values else None
        doc["state"] = state.model_dump(mode="json") if state else None
        doc["evidence"] = [evidence_row(e) for e in self.records.events_of(incident_id, limit=EVIDENCE_LIMIT)]
        doc["log_window"] = [evidence_row(e) for e in state.log_window] if state else []
        doc["similar_docs"] = [d.model_dump(mode="json") for d in state.similar_docs] if state else []
        doc["revisions_left"] = MAX_REVISIONS - (state.revisions if state else 0)
        doc["editable_fields"] = dict(EDITABLE_FIELDS)
        doc["head_checkpoint_id"] = checkpoint_id_of(snap) if snap.values else None
        doc["head_created_at"] = snap.created_at if snap.values else None  # when the analysis paused
        doc["fix_ineligible_reason"] = (not_eligible_reason(state, self.code_fix_min_confidence, self.engine.kb)
                                        or None) if state else None
        return doc

    def revisions(self, incident_id: str) -> list[dict[str, Any]]:
        """Each request for changes with the analysis before and after it: `rca`, `recommendation` and
        `proposal` as they were when the reviewer asked, and as the re-analysis answered (the next
        revision's before, or the incident as it is now), with their field-level changes."""
        self.records.incident(incident_id)
        snap = self.graph.get_state(thread_config(incident_id))
        if not snap.values:
            return []
        state = IncidentState.model_validate(snap.values)
        parts = ("rca", "recommendation", "proposal")
        current = {k: to_json(getattr(state, k)) for k in parts}
        out = []
        for n, entry in enumerate(state.revision_log):
            later = state.revision_log[n + 1] if n + 1 < len(state.revision_log) else None
            before = {k: to_json(getattr(entry, k)) for k in parts}
            after = {k: to_json(getattr(later, k)) for k in parts} if later else current
            out.append({"revision": entry.revision, "feedback": entry.feedback, "reviewer": entry.reviewer,
                        "requests": state.feedback[:entry.revision], "before": before, "after": after,
                        "changes": history.diff(before, after)})
        return out

    def audit_mark(self, incident_id: str) -> tuple[int, int | None]:
        """(entries, newest entry's id) of the incident's audit, from its index: the log is
        append-only, so this changes exactly when an entry (a refusal too) is added."""
        return self.records.audit_mark(incident_id)

    def audit(self, incident_id: str | None = None) -> list[dict[str, Any]]:
        """Every human action, oldest first."""
        if incident_id:
            self.records.incident(incident_id)
        return self.records.audit(incident_id)

    def export_audit(self, incident_id: str | None = None, *, fmt: str = "json") -> str:
        """The audit log as JSON or CSV text."""
        return export_audit(self.audit(incident_id), fmt=fmt)
