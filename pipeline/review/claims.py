"""The guards every action that moves a run goes through.

Every action that moves a run is guarded twice: first an atomic claim in the records store
(compare-and-set on status and pending interrupt, across threads and processes), then a check
against the checkpoint itself. Only the claim's winner touches the graph; it always answers
through the thread config, never an old checkpoint's config, and it releases the claim in
`finally`. LangGraph has no per-thread lock and, after `update_state` on a paused thread, feeds a
plain resume to a fresh interrupt nobody saw: both are why nothing here runs without the claim.
"""
from __future__ import annotations

import contextlib
from typing import Any, Iterator

from langgraph.types import StateSnapshot

from pipeline.engine.graph import thread_config
from pipeline.engine.runner import advance, record_failure, record_from_snapshot, summary_of
from pipeline.errors import (Conflict, IncidentNotFound, InvalidCheckpoint, NotAwaitingApproval, Refused,
                             RuntimeFailure, StaleInterrupt, UsageError)
from pipeline.notifications import messages
from pipeline.notifications.targets import targets as notify_targets
from pipeline.review import history
from pipeline.review.history import checkpoint_id_of, state_json
from pipeline.review.identity import Actor, demo_actor
from pipeline.review.policy import rule_needs
from pipeline.review.reads import Reads
from pipeline.state import CLOSED_STATUSES, ApprovalDecision, IncidentState
from pipeline.store import outbox
from pipeline.store.owners import owner_alive, process_owner
from pipeline.store.records import incident_row
from pipeline.store.sql import Connection


# replay and fork may start while the incident waits, after it ended, or after a failed run,
# never while a run is moving
REPLAYABLE = ("awaiting_approval", "failed", *CLOSED_STATUSES)
NOTIFIED_DECISIONS = {"approve": "decision", "reject": "decision", "revise": "decision", "expire": "expiry"}


def required(value: str | None, what: str) -> str:
    if value is None or not str(value).strip():
        raise UsageError(f"{what} is required")
    return str(value).strip()


class Claim:
    """The claim on one incident for one action: released in `finally`, records kept in step."""

    def __init__(self, service: "Claims", incident_id: str, *, status_before: str):
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


class Claims(Reads):
    """Who acts (their role checked, a refusal audited), the claim an action takes on its incident,
    the checks against the checkpoint, recovery from a claimant that died, and the two-person
    rule kept before a person replaces an analysis."""

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

    def _keep_rule(self, incident_id: str, *analyses: IncidentState) -> None:
        """Before a person replaces the analysis (edit, fork, replay, revision): keep the approvals
        it needs (and those of `analyses`, e.g. a fork's checkpoint) as the floor of every analysis
        that follows, so a lowered severity never lowers the two-person rule (review/policy.py)."""
        row = self.records.incident(incident_id)
        kb = self.engine.kb
        needed = max([self.approvals_needed(row)]
                     + [rule_needs({"severity": s.severity, "summary": summary_of(s)}, self.engine.settings,
                                   doc_hints=lambda d: kb.by_id[d].fix_hints if d in kb.by_id else [])
                        for s in analyses])
        if needed > (row.get("approvals_floor") or 1):
            self.records.update_incident(incident_id, approvals_floor=needed)

    def _claim_paused(self, incident_id: str, row: dict[str, Any], *, expect: str | None, set_status: str) -> Claim:
        """Claim an incident paused at approval with the interrupt the reviewer saw (or the current one)."""
        if row["claim_owner"] and self._recover_dead_claim(incident_id):
            row = self.records.incident(incident_id)
        expected = expect or row["pending_interrupt_id"]
        if expect is None and (row["status"] != "awaiting_approval" or not expected):
            raise NotAwaitingApproval(incident_id, row["status"])
        claim = Claim(self, incident_id, status_before="awaiting_approval")
        claim.expected = expected

        def take() -> bool:
            return self.records.claim(incident_id, claim.owner, statuses=("awaiting_approval",),
                                      interrupt_id=expected, set_status=set_status)

        if not take() and not (self._recover_dead_claim(incident_id) and take()):
            raise self._lost(incident_id, expect)
        return claim

    def _claim_any(self, incident_id: str) -> Claim:
        """Claim an incident for a replay or fork: waiting, ended or failed, and not in use."""
        row = self.records.incident(incident_id)
        claim = Claim(self, incident_id, status_before=row["status"])

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

    @contextlib.contextmanager
    def _audited_on_failure(self, claim: Claim, *, action: str, reviewer: Actor, before: StateSnapshot,
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
