"""The review service: what reviewers read and do, shared by the web pages, the CLI and the tests,
so every path through the product has the same guarantees.

Every action that moves a run is guarded twice: first an atomic claim in the records store
(compare-and-set on status and pending interrupt, across threads and processes), then a check
against the checkpoint itself. Only the claim's winner touches the graph; it always answers
through the thread config, never an old checkpoint's config, and it releases the claim in
`finally`. LangGraph has no per-thread lock and, after `update_state` on a paused thread, feeds a
plain resume to a fresh interrupt nobody saw: both are why nothing here runs without the claim.
"""
from __future__ import annotations

import contextlib
from datetime import datetime
from typing import Any, Iterable, Iterator, Literal

from pipeline.clock import iso

from langgraph.types import Command, StateSnapshot
from langchain_core.runnables.graph import Graph as DrawableGraph
from pydantic import BaseModel, ValidationError

from pipeline.engine import changes
from pipeline.engine.changes import values_at
from pipeline.review import history
from pipeline.review.audit import export_audit
from pipeline.review.documents import show_document
from pipeline.store import checkpoints, inbox, views
from pipeline.engine import Engine
from pipeline.review.edits import EDIT_AS_NODES, check_edit_fields, edited_values
from pipeline.errors import (Conflict, IncidentNotFound, InvalidCheckpoint, InvalidEdit, NotAwaitingApproval, Refused,
                             RevisionLimitReached, RuntimeFailure, SameApprover, StaleInterrupt, StaleProposal,
                             UsageError)
from pipeline.notifications import messages
from pipeline.notifications.targets import targets as notify_targets
from pipeline.review.identity import SYSTEM, UNVERIFIED_LIMIT, Actor, demo_actor, verified
from pipeline.review.policy import TWO, approvals_needed
from pipeline.store import approvals as approvals_store
from pipeline.store import assignments, members, outbox
from pipeline.incidents import recurrence
from pipeline.engine.graph import thread_config
from pipeline.review.history import checkpoint_id_of, state_json
from pipeline.store.owners import owner_alive, process_owner
from pipeline.store.records import incident_row
from pipeline.store.sql import Connection
from pipeline.engine.nodes import not_eligible_reason
from pipeline.engine.runner import advance, record_failure, record_from_snapshot
from pipeline.state import (CLOSED_STATUSES, EDITABLE_FIELDS, MAX_REVISIONS, STATUSES, ApprovalDecision,
                            IncidentState, LogEvent)

EVIDENCE_LIMIT = 500


def to_json(value: BaseModel | None) -> Any:
    """A state object (or None) as JSON data."""
    return value.model_dump(mode="json") if value is not None else None
# replay and fork may start while the incident waits, after it ended, or after a failed run,
# never while a run is moving
REPLAYABLE = ("awaiting_approval", "failed", *CLOSED_STATUSES)
COMMENT_LIMIT = 4000
NOTIFIED_DECISIONS = {"approve": "decision", "reject": "decision", "revise": "decision", "expire": "expiry"}


def _required(value: str | None, what: str) -> str:
    if value is None or not str(value).strip():
        raise UsageError(f"{what} is required")
    return str(value).strip()


def evidence_row(event: LogEvent) -> dict[str, Any]:
    """An event as the incident page lists it."""
    return {"time": event.time.isoformat(), "service": event.service, "host": event.host, "level": event.level,
            "message": event.message, "exception": event.exception, "stack": event.stack,
            "trace_id": event.trace_id, "event_id": event.event_id}


class _Claim:
    """The claim on one incident for one action: released in `finally`, records kept in step."""

    def __init__(self, service: "ReviewService", incident_id: str, *, status_before: str):
        self.service = service
        self.incident_id = incident_id
        self.status_before = status_before
        self.owner = process_owner()
        self.expected: str | None = None
        self.approvals: list[dict[str, Any]] = []
        self.finished = False

    def finish(self, *, action: str, reviewer: Actor, before: StateSnapshot, note: str | None = None,
               before_values: dict[str, Any] | None = None, after_values: dict[str, Any] | None = None, notify: bool = True,
               **record_extra: Any) -> dict[str, Any]:
        """Write the record from the new checkpoint and the audit entry of the action (with the
        notification it causes, in the same transaction)."""
        engine = self.service.engine
        after = engine.graph.get_state(thread_config(self.incident_id))
        # a person acting on the run ends any earlier run of failures: retries start afresh
        record_extra = {"attempts": 0, "next_attempt_at": None, "last_error": None, **record_extra}
        values = record_from_snapshot(engine, self.incident_id, after, **record_extra)
        self.finished = True
        changes = history.diff(state_json(before.values), state_json(after.values))
        audit_before = {"status": self.status_before, **{c["field"]: c["before"] for c in changes}}
        audit_after = {"status": values.get("status") or engine.records.incident(self.incident_id)["status"],
                       **{c["field"]: c["after"] for c in changes}}
        audit_before.update(before_values or {})
        audit_after.update(after_values or {})
        records = engine.records
        with records.transaction() as conn:
            records.add_audit(incident_id=self.incident_id, reviewer=reviewer.id, action=action, auth=reviewer.auth,
                              checkpoint_before=checkpoint_id_of(before), checkpoint_after=checkpoint_id_of(after),
                              before=audit_before, after=audit_after, note=note, conn=conn)
            kind = NOTIFIED_DECISIONS.get(action)
            if kind and notify:
                self.service.notify(conn, kind, self.incident_id, event_key=f"{self.incident_id}:{self.expected}",
                                     facts={"action": action, "status": audit_after["status"], "why": note,
                                            "by": [a["by"] for a in self.approvals] or [reviewer.id]})
        return values

    def close(self) -> None:
        records = self.service.engine.records
        try:
            if not self.finished:  # refused or failed midway: the record follows the checkpoint again
                try:
                    record_from_snapshot(self.service.engine, self.incident_id)
                except InvalidCheckpoint:
                    # the head cannot be read (an edited row): the record says what it said before
                    records.update_incident(self.incident_id, status=self.status_before)
        finally:
            records.release(self.incident_id, self.owner)


class ReviewService:
    """Reads for the reviewer's pages and the guarded actions (see notes/review_api.md)."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self.records = engine.records
        self.graph = engine.graph

    # -- reads ---------------------------------------------------------------------------
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
        given = approvals_store.approvals_of(self.records, rows)
        held = approvals_store.approved_in_part(self.records, [r["incident_id"] for r in rows])
        seen = members.days_seen(self.records, [r["incident_id"] for r in rows],
                                 since=recurrence.window_start(self.records.clock.now()))
        for row in rows:
            row["approvals"] = given.get(row["incident_id"], [])
            row["approvals_needed"] = self.approvals_needed(row, held=row["incident_id"] in held)
            row["days_seen"] = seen.get(row["incident_id"], 0)
            row["seen"] = recurrence.label(row["days_seen"])
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
        return show_document(self.records, self.engine.settings, incident_id,
                             doc_hints=lambda d: kb.by_id[d].fix_hints if d in kb.by_id else [])

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
        doc["fix_ineligible_reason"] = (not_eligible_reason(state, self.code_fix_min_confidence) or None) if state else None
        return doc

    def history(self, incident_id: str, *, limit: int = 50, before: str | None = None) -> list[dict[str, Any]]:
        """Checkpoints newest first with field-level changes, lanes and the current branch; paged."""
        self.records.incident(incident_id)
        line = history.lineage(self.engine, incident_id)
        if before is not None and before not in line.parent:
            history.snapshot_at(self.engine, incident_id, before, line)  # raises CheckpointNotFound
        snaps = history.snapshots(self.engine, incident_id, limit=limit, before=before)
        made_by = history.human_actions(self.records.audit(incident_id), line)
        return history.entries(self.engine, incident_id, snaps, line, made_by)

    def checkpoint(self, incident_id: str, checkpoint_id: str, *, with_plan: bool = False) -> dict[str, Any]:
        """One checkpoint: its history entry, the full state there and its changes; `with_plan`
        adds what a replay from it would do (`rerun_plan`), read in the same pass."""
        self.records.incident(incident_id)
        line = history.lineage(self.engine, incident_id)
        snap = history.snapshot_at(self.engine, incident_id, checkpoint_id, line)
        made_by = history.human_actions(self.records.audit_checkpoints(incident_id), line)
        item = history.entries(self.engine, incident_id, [snap], line, made_by)[0]
        parent_id = item["parent_checkpoint_id"]
        parent = history.snapshot_at(self.engine, incident_id, parent_id, line) if parent_id in line.parent else None
        out = {"checkpoint": item, "state": state_json(snap.values), "changes": item["changes"],
               "runs": history.node_runs(snap, parent, item["writes_by"]),
               "input": state_json(parent.values) if parent is not None else None}
        if with_plan:
            out["plan"] = history.rerun_plan(self.engine, incident_id, snap, line)
        return out

    def compare(self, incident_id: str, from_checkpoint: str, to_checkpoint: str) -> dict[str, Any]:
        """The field-level changes from one checkpoint of the incident to another (any two, on any
        branch: what a fork changed against the branch it left, what a replay changed since)."""
        self.records.incident(incident_id)
        line = history.lineage(self.engine, incident_id)
        first = history.snapshot_at(self.engine, incident_id, from_checkpoint, line)
        second = history.snapshot_at(self.engine, incident_id, to_checkpoint, line)
        return {"from": from_checkpoint, "to": to_checkpoint, "changes": history.compare(first, second)}

    def tree(self, incident_id: str, *, limit: int | None = None) -> dict[str, Any]:
        """The checkpoints (the newest `limit`, or all) with their parent edges, the current branch,
        the number of branches and `total`; read from checkpoint metadata, no state deserialised
        (a checkpoint's changes and state: `checkpoint()`)."""
        self.records.incident(incident_id)
        line = history.lineage(self.engine, incident_id)
        shown = checkpoints.checkpoint_rows(history.our_store(self.engine), incident_id, newest=limit)
        made_by = history.human_actions(self.records.audit_checkpoints(incident_id), line)
        nodes = history.tree_entries(self.engine, incident_id, shown, line, made_by)[::-1]  # newest first
        edges = [[n["parent_checkpoint_id"], n["checkpoint_id"]] for n in nodes if n["parent_checkpoint_id"]]
        return {"nodes": nodes, "edges": edges, "current": [c for c in reversed(line.order) if c in line.current],
                "branches": line.branches, "total": len(line.order)}

    def rerun_plan(self, incident_id: str, checkpoint_id: str, *, edits: dict[str, Any] | None = None,
                   with_current_evidence: bool = False) -> dict[str, Any]:
        """What a replay (or, with `edits`, a fork) from the checkpoint would do, before it does it:
        the nodes that run again, whether it may run, whether it continues the current branch
        (`kind` rerun) or starts a new one (`branch`), which evidence the analysis will rest on
        against what the incident has now (`evidence`, `newer_evidence`), and plain `warnings`."""
        self.records.incident(incident_id)
        if edits:
            check_edit_fields(edits)
        line = history.lineage(self.engine, incident_id)
        snap = history.snapshot_at(self.engine, incident_id, checkpoint_id, line)
        return history.rerun_plan(self.engine, incident_id, snap, line, edits=edits,
                                  with_current_evidence=with_current_evidence)

    def edit_effect(self, edits: dict[str, Any]) -> dict[str, Any]:
        """What an edit of a paused incident does (Edit & approve, the State tab): the node it lands
        as, the nodes that re-run from it and a sentence saying so; the rule forks follow
        (`rerun_plan(..., edits=)` says the same for a past checkpoint)."""
        check_edit_fields(edits)
        return history.edit_effect(edits, history.Flow.of(self.engine))

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

    # -- who acts ------------------------------------------------------------------------------
    def actor_of(self, actor: Actor | None, reviewer: str | None) -> Actor:
        """The actor of an action: given, or (compatibility) a typed name as a demo sign-in."""
        if actor is not None:
            if reviewer is not None and reviewer != actor.id:
                raise UsageError("give an actor or a reviewer name, not both")
            return actor
        return demo_actor(reviewer, self.engine.settings)

    @contextlib.contextmanager
    def _acting(self, incident_id: str, action: str, actor: Actor | None, reviewer: str | None) -> Iterator[Actor]:
        """Resolve who acts and check their role; a refusal (role, identity, the two-person rule, a
        decision after expiry) is audited as `refused:<action>` and re-raised; nothing else changes."""
        who: Actor | None = actor
        try:
            who = self.actor_of(actor, reviewer)
            who.require(action)
            yield who
        except Refused as exc:
            self.audit_refusal(incident_id, action, who, reviewer, exc.message)
            raise
        except NotAwaitingApproval as exc:
            if exc.status == "expired":
                self.audit_refusal(incident_id, action, who, reviewer, exc.message)
            raise

    def audit_refusal(self, incident_id: str, action: str, actor: Actor | None, reviewer: str | None,
                       reason: str) -> None:
        try:
            row = self.records.incident(incident_id)
        except IncidentNotFound:
            return  # nothing to attach the refusal to; the caller gets not-found
        who = actor.id if actor else f"unverified:{(reviewer or '').strip() or '?'}"
        self.records.add_audit(incident_id=incident_id, reviewer=who, action=f"refused:{action}",
                               auth=actor.auth if actor else None, checkpoint_before=row["pending_checkpoint_id"],
                               checkpoint_after=row["pending_checkpoint_id"], before={"status": row["status"]},
                               after={"status": row["status"]}, note=reason)

    def notify(self, conn: Connection, kind: str, incident_id: str, *, event_key: str, facts: dict[str, Any]) -> None:
        """Write an event's notifications to the outbox inside the caller's transaction (no targets: none)."""
        targets = notify_targets()
        if not targets:
            return
        row = incident_row(conn, incident_id)
        outbox.enqueue(conn, rows=messages.rows_for(kind, incident=row, event_key=event_key, facts=facts,
                                                    targets=targets), now=self.records.clock.now())

    # -- decisions -----------------------------------------------------------------------
    def approve(self, incident_id: str, *, actor: Actor | None = None, reviewer: str | None = None,
                expect_interrupt: str | None = None, note: str | None = None, edits: dict[str, Any] | None = None,
                expect_proposal: str | None = None) -> dict[str, Any]:
        """Approve the pending analysis and its fix proposal (with `edits`: correct it first, audited as
        one change). The decision carries the proposal's hash; with `expect_proposal`, an approval of a
        proposal that is no longer the pending one is refused (StaleProposal, exit 3).

        Under the two-person rule the first approval is recorded as partial (the run stays paused
        on the same interrupt) and the second, by another person, opens the gate with both."""
        with self._acting(incident_id, "approve", actor, reviewer) as who:
            if edits:
                check_edit_fields(edits)
            if expect_proposal is not None:
                self._check_proposal(incident_id, expect_proposal)  # again under the claim in _decide
            row = self.records.incident(incident_id)
            if row["claim_owner"] and self._recover_dead_claim(incident_id):
                row = self.records.incident(incident_id)
            needed = self.approvals_needed(row)
            if needed <= 1:
                return self._decide(incident_id, action="approve", actor=who, note=note, expect=expect_interrupt,
                                    edits=edits, set_status="analyzing", expect_proposal=expect_proposal)
            if who.auth == "cli" and who.via is not None:
                # one operator acting --as ann, then --as bob, is one person approving twice
                raise Refused(f"{incident_id}: a two-person approval must be given by the person ({who.id}"
                              f" signed in or with their API token), not by {who.via} acting --as them",
                              action="approve")
            if edits:
                # the edit is a new analysis: approvals count for it, not for the one before; the
                # rule stays the one of the analysis approved (an edit never lowers it)
                doc = self.edit(incident_id, actor=who, edits=edits, expect_interrupt=expect_interrupt)
                expect_interrupt = doc["pending"]["interrupt_id"]
                row = self.records.incident(incident_id)
            return self._approve_in_turn(incident_id, row, who, expect=expect_interrupt, note=note,
                                         needed=max(needed, self.approvals_needed(row)))

    def _check_proposal(self, incident_id: str, expected: str, state: IncidentState | None = None) -> str | None:
        """The pending proposal's hash, or StaleProposal when it is not the one the reviewer saw."""
        if state is None:
            values = self.graph.get_state(thread_config(incident_id)).values
            state = IncidentState.model_validate(values) if values else None
        pending = state.proposal.hash if state and state.proposal else None
        if expected != (pending or ""):
            raise StaleProposal(incident_id, expected, pending)
        return pending

    def _approve_in_turn(self, incident_id: str, row: dict[str, Any], who: Actor, *, expect: str | None,
                         note: str | None, needed: int | None = None) -> dict[str, Any]:
        expected = expect or row["pending_interrupt_id"]
        if expect is None and (row["status"] != "awaiting_approval" or not expected):
            raise NotAwaitingApproval(incident_id, row["status"])
        claim = _Claim(self, incident_id, status_before="awaiting_approval")
        claim.expected = expected
        needed = max(needed or 1, self.approvals_needed(row))
        after = {"status": "awaiting_approval", "approvals_needed": needed}
        if not verified(who):
            after["unverified"] = UNVERIFIED_LIMIT  # the demo's limit, where the audit is read
        audit = dict(incident_id=incident_id, reviewer=who.id, auth=who.auth, action="approve_partial",
                     checkpoint_before=row["pending_checkpoint_id"], checkpoint_after=row["pending_checkpoint_id"],
                     before={"status": "awaiting_approval"}, after=after, note=note)
        turn = approvals_store.take_turn(self.records, incident_id, interrupt_id=expected, actor_id=who.id,
                                         actor_name=who.name, auth=who.auth, needed=needed, owner=claim.owner,
                                         set_status="analyzing", audit=audit)
        if turn.kind == "lost":
            if row["claim_owner"] is None and self._recover_dead_claim(incident_id):
                return self._approve_in_turn(incident_id, self.records.incident(incident_id), who, expect=expect,
                                             note=note, needed=needed)
            raise self._lost(incident_id, expect)
        if turn.kind == "same":
            raise SameApprover(incident_id, who.id)
        if turn.kind == "partial":
            return self.incident(incident_id)
        claim.approvals = turn.approvals
        return self._decide(incident_id, action="approve", actor=who, note=note, expect=expected,
                            set_status="analyzing", claim=claim)

    def reject(self, incident_id: str, *, actor: Actor | None = None, reviewer: str | None = None,
               reason: str, expect_interrupt: str | None = None) -> dict[str, Any]:
        """Reject the pending analysis; the run ends without a fix (one reviewer suffices)."""
        with self._acting(incident_id, "reject", actor, reviewer) as who:
            reason = _required(reason, "a reason for the rejection")
            return self._decide(incident_id, action="reject", actor=who, note=reason,
                                expect=expect_interrupt, set_status="analyzing")

    def revise(self, incident_id: str, *, actor: Actor | None = None, reviewer: str | None = None,
               feedback: str, expect_interrupt: str | None = None) -> dict[str, Any]:
        """Ask for changes: the recommendation is redone with the feedback (at most MAX_REVISIONS times)."""
        with self._acting(incident_id, "revise", actor, reviewer) as who:
            feedback = _required(feedback, "feedback for the revision")
            return self._decide(incident_id, action="revise", actor=who, note=feedback,
                                expect=expect_interrupt, set_status="in_revision")

    def expire(self, incident_id: str, *, expect_interrupt: str | None = None, why: str | None = None) -> dict[str, Any]:
        """Close a paused incident whose SLA and grace passed, through the gate, as `system`."""
        return self._decide(incident_id, action="expire", actor=SYSTEM, note=why or "SLA and grace passed",
                            expect=expect_interrupt, set_status="analyzing")

    def _decide(self, incident_id: str, *, action: Literal["approve", "reject", "revise", "expire"], actor: Actor, note: str | None, expect: str | None,
                set_status: str, edits: dict[str, Any] | None = None, claim: _Claim | None = None,
                expect_proposal: str | None = None) -> dict[str, Any]:
        reviewer = actor
        row = self.records.incident(incident_id)
        if action == "revise" and row["revisions"] >= MAX_REVISIONS:
            raise RevisionLimitReached(incident_id, MAX_REVISIONS)
        claim = claim or self._claim_paused(incident_id, row, expect=expect, set_status=set_status)
        try:
            snap = self._paused_snapshot(incident_id, claim.expected)
            state = IncidentState.model_validate(snap.values)
            if action == "revise" and state.revisions >= MAX_REVISIONS:
                raise RevisionLimitReached(incident_id, MAX_REVISIONS)
            interrupt_id = claim.expected
            after_values = None
            if expect_proposal is not None:  # the proposal the reviewer saw, before any edit of theirs
                self._check_proposal(incident_id, expect_proposal, state)
            if edits:
                # the State tab's and a fork's rule: an edit of the analysis re-runs what depends on it
                effect = history.edit_effect(edits, history.Flow.of(self.engine))
                values = edited_values(state, edits)
                interrupt_id, change_id = self._write_edit(incident_id, values, as_node=effect["as_node"],
                                                           reviewer=reviewer.id, fields=edits)
                after_values = {"edited": list(edits), "change_id": change_id, "reran": effect["reruns"]}
                state = IncidentState.model_validate(self.graph.get_state(thread_config(incident_id)).values)
            proposal_hash = state.proposal.hash if state.proposal else None
            now = self.records.clock.now()
            approvals = claim.approvals or ([{"by": actor.id, "name": actor.name, "auth": actor.auth,
                                              "at": iso(now)}] if action == "approve" else [])
            claim.approvals = approvals
            decision = ApprovalDecision(action=action, reviewer=reviewer.id, note=note, interrupt_id=interrupt_id,
                                        decided_at=now, approvals=approvals, auth=actor.auth,
                                        proposal_hash=proposal_hash if action == "approve" else None)
            if len(approvals) > 1:
                after_values = {**(after_values or {}), "approvals": approvals}
                if any(a.get("auth") == "demo" for a in approvals):
                    after_values["unverified"] = UNVERIFIED_LIMIT
            if action == "approve":
                after_values = {**(after_values or {}), "proposal_hash": proposal_hash}
            # the decision is in the checkpoint even if the run then fails: it is audited either way
            with self._audited_on_failure(claim, action=action, reviewer=reviewer, before=snap, note=note,
                                          after_values=after_values):
                # durability "sync": the decision's checkpoint is committed before code_fix records
                # a fix. With LangGraph's default ("async") a loaded machine could record the fix
                # while the decision was still being written, and a kill then lost the decision
                # (a later reviewer approved again, and the first approval was never audited)
                self.graph.invoke(Command(resume=decision.model_dump(mode="json")), thread_config(incident_id),
                                  context=self.engine.deps, durability="sync")
            claim.finish(action=action, reviewer=reviewer, before=snap, note=note, after_values=after_values)
        finally:
            claim.close()
        return self.incident(incident_id)

    @contextlib.contextmanager
    def _audited_on_failure(self, claim: _Claim, *, action: str, reviewer: Actor, before: StateSnapshot,
                            note: str | None = None, **audit: Any) -> Iterator[None]:
        """When the run fails after a person's change was written, audit the change (noting the
        failure), mark the run failed for the poller to retry, and re-raise."""
        try:
            yield
        except RuntimeFailure as exc:
            claim.finish(action=action, reviewer=reviewer, before=before, closed_at=None, notify=False,
                         note=f"{note or ''} [run failed after the change: {exc.message}]".strip(), **audit)
            record_failure(self.engine, claim.incident_id, exc)
            raise

    # -- who is on it, and what people said ----------------------------------------------------
    def assign(self, incident_id: str, *, to: str, actor: Actor | None = None, reviewer: str | None = None,
               note: str | None = None) -> dict[str, Any]:
        """Put a person on an open incident ("on it: ann"); audited, with `note` (why) when given."""
        with self._acting(incident_id, "assign", actor, reviewer) as who:
            assignee = _required(to, "who to assign (--to)")
            row = self.records.incident(incident_id)
            if row["status"] in CLOSED_STATUSES:
                raise Conflict(f"{incident_id} is {row['status']}: only open incidents are assigned")
            assignments.set_assignee(self.records, incident_id, assignee, audit=dict(
                incident_id=incident_id, reviewer=who.id, auth=who.auth, action="assign",
                checkpoint_before=row["pending_checkpoint_id"], checkpoint_after=row["pending_checkpoint_id"],
                note=(note or "").strip() or None))
        return self.document(incident_id)

    def unassign(self, incident_id: str, *, actor: Actor | None = None, reviewer: str | None = None) -> dict[str, Any]:
        """Take the incident off whoever had it; audited."""
        with self._acting(incident_id, "unassign", actor, reviewer) as who:
            row = self.records.incident(incident_id)
            assignments.set_assignee(self.records, incident_id, None, audit=dict(
                incident_id=incident_id, reviewer=who.id, auth=who.auth, action="unassign",
                checkpoint_before=row["pending_checkpoint_id"], checkpoint_after=row["pending_checkpoint_id"]))
        return self.document(incident_id)

    def comment(self, incident_id: str, *, text: str, actor: Actor | None = None, reviewer: str | None = None) -> dict[str, Any]:
        """Add a plain-text comment to the incident (stored, in the document and the audit)."""
        with self._acting(incident_id, "comment", actor, reviewer) as who:
            text = _required(text, "a comment's text")
            if len(text) > COMMENT_LIMIT:
                raise UsageError(f"a comment holds at most {COMMENT_LIMIT:,} characters (this one has {len(text):,})")
            row = self.records.incident(incident_id)
            return assignments.add_comment(self.records, incident_id, author=who.id, author_name=who.name,
                                           auth=who.auth, text=text, audit=dict(
                incident_id=incident_id, reviewer=who.id, auth=who.auth, action="comment", note=text,
                checkpoint_before=row["pending_checkpoint_id"], checkpoint_after=row["pending_checkpoint_id"],
                before={}, after={"comments": "+1"}))

    # -- state edits -----------------------------------------------------------------------
    def edit(self, incident_id: str, *, actor: Actor | None = None, reviewer: str | None = None, edits: dict[str, Any],
             as_node: str | None = None, expect_interrupt: str | None = None) -> dict[str, Any]:
        """Correct fields of a paused incident; it stays paused at approval with a new interrupt."""
        with self._acting(incident_id, "edit", actor, reviewer) as who:
            return self._edit(incident_id, who, edits=edits, as_node=as_node, expect_interrupt=expect_interrupt)

    def _edit(self, incident_id: str, reviewer: Actor, *, edits: dict[str, Any], as_node: str | None,
              expect_interrupt: str | None) -> dict[str, Any]:
        check_edit_fields(edits)
        # by default the rule a fork follows: an edit of the analysis re-runs recommend and propose_fix
        as_node = as_node or history.edit_effect(edits, history.Flow.of(self.engine))["as_node"]
        if as_node not in EDIT_AS_NODES:
            raise UsageError(f"--as-node must be one of {', '.join(EDIT_AS_NODES)} (got {as_node!r})")
        if as_node == "rca" and any(f.startswith("recommendation.") for f in edits):
            raise UsageError("as_node rca redoes the recommendation: edit recommendation.* with as_node recommend")
        row = self.records.incident(incident_id)
        claim = self._claim_paused(incident_id, row, expect=expect_interrupt, set_status="analyzing")
        try:
            snap = self._paused_snapshot(incident_id, claim.expected)
            state = IncidentState.model_validate(snap.values)
            values = edited_values(state, edits)
            if all(getattr(state, k) == v for k, v in values.items()):
                raise InvalidEdit("the edit changes nothing: every field already has that value",
                                  field=next(iter(edits)))
            note = None if as_node == "recommend" else f"as_node={as_node}"
            with self._audited_on_failure(claim, action="edit", reviewer=reviewer, before=snap, note=note):
                _, change_id = self._write_edit(incident_id, values, as_node=as_node, reviewer=reviewer.id, fields=edits)
            # `edited`: what the person set; the other changed fields were re-derived from it (`reran`)
            reran = history.Flow.of(self.engine).rerun(history.Flow.of(self.engine).static.get(as_node, ()))
            claim.finish(action="edit", reviewer=reviewer, before=snap, note=note,
                         after_values={"change_id": change_id, "edited": list(edits),
                                       "reran": [n for n in reran if n != history.GATE]})
        finally:
            claim.close()
        return self.incident(incident_id)

    def _write_edit(self, incident_id: str, values: dict[str, Any], *, as_node: str, reviewer: str,
                    fields: Iterable[str]) -> tuple[str, str]:
        """Write validated values as a new `update` checkpoint and pause at the gate again.

        update_state on a paused thread keeps `next` at approval but drops the pending interrupt;
        re-invoking lets approval raise a fresh one, so the incident is paused (with a new id)
        the moment the claim is released. Returns the new interrupt id and the change's id.
        """
        cfg = thread_config(incident_id)
        change_cfg, change_id = changes.change_config(cfg, action="edit", reviewer=reviewer, fields=fields)
        self.graph.update_state(change_cfg, values, as_node=as_node)
        self.graph.invoke(None, cfg, context=self.engine.deps)
        return self._require_paused(incident_id).interrupts[0].id, change_id

    # -- time travel -----------------------------------------------------------------------
    def replay(self, incident_id: str, *, checkpoint_id: str, actor: Actor | None = None,
               reviewer: str | None = None, with_current_evidence: bool = False) -> dict[str, Any]:
        """Re-run from a past checkpoint (from the newest one: a re-run on the current branch; from an
        older one: a new branch); the gate fires again (no old answer reused). With
        `with_current_evidence`, the incident's stored events are merged in first (as the runner
        merges new evidence, as intake's output), so the whole analysis re-runs on them."""
        with self._acting(incident_id, "replay", actor, reviewer) as who:
            return self._replay(incident_id, checkpoint_id=checkpoint_id, reviewer=who,
                                with_current_evidence=with_current_evidence)

    def _replay(self, incident_id: str, *, checkpoint_id: str, reviewer: Actor,
                with_current_evidence: bool = False) -> dict[str, Any]:
        target, plan = self._replayable(incident_id, checkpoint_id, with_current_evidence=with_current_evidence)
        claim = self._claim_any(incident_id)
        try:
            before = self.graph.get_state(thread_config(incident_id))
            note = (f"{plan['label']}: re-ran {', '.join(plan['nodes'])}"
                    + ("; with the current evidence" if with_current_evidence else "")
                    + "".join(f" [{w}]" for w in plan["warnings"]))
            with self._audited_on_failure(claim, action="replay", reviewer=reviewer, before=before, note=note):
                start = target.config
                if with_current_evidence:
                    events = self.records.events_of(incident_id)
                    start = self.graph.update_state(target.config, {"evidence": events}, as_node="intake")
                self.graph.invoke(None, start, context=self.engine.deps)
            self._require_paused(incident_id)
            claim.finish(action="replay", reviewer=reviewer, before=before, closed_at=None, note=note)
        finally:
            claim.close()
        return self.incident(incident_id)

    def fork(self, incident_id: str, *, checkpoint_id: str, actor: Actor | None = None, reviewer: str | None = None,
             edits: dict[str, Any]) -> dict[str, Any]:
        """Branch from a past checkpoint with edited values and run the branch to the gate."""
        with self._acting(incident_id, "fork", actor, reviewer) as who:
            return self._fork(incident_id, checkpoint_id=checkpoint_id, reviewer=who, edits=edits)

    def _fork(self, incident_id: str, *, checkpoint_id: str, reviewer: Actor, edits: dict[str, Any]) -> dict[str, Any]:
        """Branch from a past checkpoint with edited values and run the branch to the gate.

        The audit's before/after hold the edited fields as they were at that checkpoint and as
        edited, plus what else differs between the old and the new head.
        """
        check_edit_fields(edits)
        target, plan = self._replayable(incident_id, checkpoint_id, edits=edits)
        try:
            state = IncidentState.model_validate(target.values or {})
        except ValidationError:
            raise InvalidEdit(f"checkpoint {checkpoint_id} holds no state yet to edit (it is the run's input);"
                              " fork from a later checkpoint", field=next(iter(edits))) from None
        values = edited_values(state, edits)  # refused here: nothing is written for an invalid fork
        # an edit of the analysis re-runs what depends on it (recommend, propose_fix): see fork_as_node
        as_node, _ = history.fork_as_node(edits, history.Flow.of(self.engine), tuple(target.next))
        claim = self._claim_any(incident_id)
        try:
            before = self.graph.get_state(thread_config(incident_id))
            edited = state.model_copy(update=values)
            audit: dict[str, Any] = dict(before_values=values_at(state, edits), after_values=values_at(edited, edits),
                         note=f"forked from checkpoint {checkpoint_id}: re-ran {', '.join(plan['nodes'])}"
                              + "".join(f" [{w}]" for w in plan["warnings"]))
            with self._audited_on_failure(claim, action="fork", reviewer=reviewer, before=before, **audit):
                change_cfg, change_id = changes.change_config(target.config, action="fork", reviewer=reviewer.id,
                                                              fields=edits)
                fork_cfg = self.graph.update_state(change_cfg, values, as_node=as_node)
                self.graph.invoke(None, fork_cfg, context=self.engine.deps)
            self._require_paused(incident_id)
            audit["after_values"] = {**audit["after_values"], "change_id": change_id, "edited": list(edits)}
            claim.finish(action="fork", reviewer=reviewer, before=before, closed_at=None, **audit)
        finally:
            claim.close()
        return self.incident(incident_id)

    def _replayable(self, incident_id: str, checkpoint_id: str, *, edits: dict[str, Any] | None = None,
                    with_current_evidence: bool = False) -> tuple[StateSnapshot, dict[str, Any]]:
        self.records.incident(incident_id)
        line = history.lineage(self.engine, incident_id)
        target = history.snapshot_at(self.engine, incident_id, checkpoint_id, line)
        plan = history.rerun_plan(self.engine, incident_id, target, line, edits=edits,
                                  with_current_evidence=with_current_evidence)
        if not plan["allowed"]:
            hint = f" (e.g. checkpoint {plan['suggested_checkpoint']})" if plan["suggested_checkpoint"] else ""
            raise UsageError(f"cannot re-run from {checkpoint_id}: {plan['reason']}{hint}")
        return target, plan

    # -- guards ------------------------------------------------------------------------------
    def _claim_paused(self, incident_id: str, row: dict[str, Any], *, expect: str | None, set_status: str) -> _Claim:
        """Claim an incident paused at approval with the interrupt the reviewer saw (or the current one)."""
        if row["claim_owner"] and self._recover_dead_claim(incident_id):
            row = self.records.incident(incident_id)
        expected = expect or row["pending_interrupt_id"]
        if expect is None and (row["status"] != "awaiting_approval" or not expected):
            raise NotAwaitingApproval(incident_id, row["status"])
        claim = _Claim(self, incident_id, status_before="awaiting_approval")
        claim.expected = expected

        def take() -> bool:
            return self.records.claim(incident_id, claim.owner, statuses=("awaiting_approval",),
                                      interrupt_id=expected, set_status=set_status)

        if not take() and not (self._recover_dead_claim(incident_id) and take()):
            raise self._lost(incident_id, expect)
        return claim

    def _claim_any(self, incident_id: str) -> _Claim:
        """Claim an incident for a replay or fork: waiting, ended or failed, and not in use."""
        row = self.records.incident(incident_id)
        claim = _Claim(self, incident_id, status_before=row["status"])

        def take() -> bool:
            return self.records.claim(incident_id, claim.owner, statuses=REPLAYABLE, set_status="analyzing")

        if not take() and not (self._recover_dead_claim(incident_id) and take()):
            now_row = self.records.incident(incident_id)
            if now_row["status"] not in REPLAYABLE:
                raise Conflict(f"{incident_id} is {now_row['status']}: its run is moving; "
                               "replay or fork once it pauses at approval or ends")
            raise Conflict(f"{incident_id} is in use by another reviewer or the pipeline; try again")
        return claim

    def _recover_dead_claim(self, incident_id: str) -> bool:
        """Finish what an actor killed while holding the incident left behind; True if there was one.

        The runner continues a cut-off run from its checkpoint (code_fix records its fix once per
        decision, so a second pass returns the first record) and puts the record back in step. A
        decision the dead process had applied but not yet audited is audited here, under the
        reviewer named in the decision.
        """
        row = self.records.incident(incident_id)
        if not row["claim_owner"] or owner_alive(row["claim_owner"]):
            return False
        if not advance(self.engine, incident_id):
            return False
        head = self.graph.get_state(thread_config(incident_id))
        decision = IncidentState.model_validate(head.values).decision if head.values else None
        if decision is not None and decision.interrupt_id:
            audited = any(r["after"].get("decision.interrupt_id") == decision.interrupt_id
                          for r in self.records.audit(incident_id))
            if not audited:
                self._audit_recovered(incident_id, head, decision)
        return True

    def _audit_recovered(self, incident_id: str, head: StateSnapshot, decision: ApprovalDecision) -> None:
        line = history.lineage(self.engine, incident_id)
        gate = None
        for cid in line.ancestors(checkpoint_id_of(head)):
            snap = self.graph.get_state(history.checkpoint_config(incident_id, cid))
            if any(i.id == decision.interrupt_id for t in snap.tasks for i in t.interrupts):
                gate = snap
                break
        changes = history.diff(state_json(gate.values if gate else {}), state_json(head.values))
        status = self.records.incident(incident_id)["status"]
        self.records.add_audit(
            incident_id=incident_id, reviewer=decision.reviewer, action=decision.action,
            checkpoint_before=checkpoint_id_of(gate), checkpoint_after=checkpoint_id_of(head),
            before={"status": "awaiting_approval", **{c["field"]: c["before"] for c in changes}},
            after={"status": status, **{c["field"]: c["after"] for c in changes}},
            note=(decision.note + " | " if decision.note else "") + "completed after the deciding process died")

    def _lost(self, incident_id: str, expect: str | None) -> Conflict:
        """The conflict for a claim that was refused, read from the record as it is now."""
        row = self.records.incident(incident_id)
        if expect is not None and row["pending_interrupt_id"] != expect:
            return StaleInterrupt(incident_id, expect, row["pending_interrupt_id"])
        if row["status"] != "awaiting_approval":
            return NotAwaitingApproval(incident_id, row["status"])
        return NotAwaitingApproval(incident_id, "awaiting_approval, but another reviewer or the pipeline "
                                                "is acting on it right now")

    def _paused_snapshot(self, incident_id: str, expected: str | None) -> StateSnapshot:
        """The checkpoint must agree with the record: paused at approval on the expected interrupt."""
        snap = self._require_paused(incident_id)
        pending = snap.interrupts[0].id
        if pending != expected:
            raise StaleInterrupt(incident_id, expected, pending)
        return snap

    def _require_paused(self, incident_id: str) -> StateSnapshot:
        snap = self.graph.get_state(thread_config(incident_id))
        if tuple(snap.next) != (history.GATE,) or not snap.interrupts:
            raise NotAwaitingApproval(incident_id, "its run is not paused at approval")
        return snap
