"""What a reviewer decides on an incident paused at the approval gate: approve (under the
two-person rule, in turns), reject, ask for changes (a revision), or correct its state first; and
what the system decides when nobody does (expiry). Each runs under a claim (review/claims.py)."""
from __future__ import annotations

from typing import Any, Iterable, Literal

from langgraph.types import Command

from pipeline.clock import iso
from pipeline.engine import changes
from pipeline.engine.graph import thread_config
from pipeline.errors import (InvalidEdit, NotAwaitingApproval, Refused, RevisionLimitReached, SameApprover,
                             StaleProposal, UsageError)
from pipeline.review import history
from pipeline.review.claims import Claim, Claims, required
from pipeline.review.edits import EDIT_AS_NODES, check_edit_fields, edited_values
from pipeline.review.identity import SYSTEM, UNVERIFIED_LIMIT, Actor, verified
from pipeline.state import MAX_REVISIONS, ApprovalDecision, IncidentState
from pipeline.store import approvals as approvals_store


class Decisions(Claims):
    """Approve (alone or in two turns), reject, ask for changes, expire; and edits of a paused
    incident's state, which the State tab and Edit & approve make."""

    def approve(self, incident_id: str, *, actor: Actor | None = None, reviewer: str | None = None,
                expect_interrupt: str | None = None, note: str | None = None, edits: dict[str, Any] | None = None,
                expect_proposal: str | None = None, full: bool = True) -> dict[str, Any]:
        """Approve the pending analysis and its fix proposal (with `edits`: correct it first, audited as
        one change). The decision carries the proposal's hash; with `expect_proposal`, an approval of a
        proposal that is no longer the pending one is refused (StaleProposal, exit 3).

        Under the two-person rule the first approval is recorded as partial (the run stays paused
        on the same interrupt) and the second, by another person, opens the gate with both.

        Returns the incident as `incident` reads it, or with `full=False` its `document` (the
        records store's: status, decision, fix, approvals), for a page that draws it again anyway."""
        with self._acting(incident_id, "approve", actor, reviewer) as who:
            if edits:
                check_edit_fields(edits)
            row = self.records.incident(incident_id)
            if row["claim_owner"] and self._recover_dead_claim(incident_id):
                row = self.records.incident(incident_id)
            needed = self.approvals_needed(row)
            if needed <= 1:
                if expect_proposal is not None:
                    # refused before the claim, from the record; checked again against the
                    # checkpoint under the claim (_decide), with the state it reads there
                    self._check_recorded_proposal(row, expect_proposal)
                return self._decide(incident_id, action="approve", actor=who, note=note, expect=expect_interrupt,
                                    edits=edits, set_status="analyzing", expect_proposal=expect_proposal,
                                    full=full)
            if expect_proposal is not None:
                self._check_proposal(incident_id, expect_proposal)  # a partial approval never reads it again
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
                                         needed=max(needed, self.approvals_needed(row)), full=full)

    def _check_recorded_proposal(self, row: dict[str, Any], expected: str) -> None:
        """StaleProposal when the record's pending proposal (written with its interrupt from the same
        checkpoint) is not the one the reviewer saw. A record that does not say (written before
        records carried the proposal, or not paused) is left to the check under the claim."""
        summary = row.get("summary") or {}
        if row["status"] != "awaiting_approval" or "proposal" not in summary:
            return
        pending = (summary["proposal"] or {}).get("hash")
        if expected != (pending or ""):
            raise StaleProposal(row["incident_id"], expected, pending)

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
                         note: str | None, needed: int | None = None, full: bool = True) -> dict[str, Any]:
        expected = expect or row["pending_interrupt_id"]
        if expect is None and (row["status"] != "awaiting_approval" or not expected):
            raise NotAwaitingApproval(incident_id, row["status"])
        claim = Claim(self, incident_id, status_before="awaiting_approval")
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
                                             note=note, needed=needed, full=full)
            raise self._lost(incident_id, expect)
        if turn.kind == "same":
            raise SameApprover(incident_id, who.id)
        if turn.kind == "partial":
            return self._read_back(incident_id, full)
        claim.approvals = turn.approvals
        return self._decide(incident_id, action="approve", actor=who, note=note, expect=expected,
                            set_status="analyzing", claim=claim, full=full)

    def reject(self, incident_id: str, *, actor: Actor | None = None, reviewer: str | None = None,
               reason: str, expect_interrupt: str | None = None, full: bool = True) -> dict[str, Any]:
        """Reject the pending analysis; the run ends without a fix (one reviewer suffices). `full` as
        for `approve`."""
        with self._acting(incident_id, "reject", actor, reviewer) as who:
            reason = required(reason, "a reason for the rejection")
            return self._decide(incident_id, action="reject", actor=who, note=reason,
                                expect=expect_interrupt, set_status="analyzing", full=full)

    def revise(self, incident_id: str, *, actor: Actor | None = None, reviewer: str | None = None,
               feedback: str, expect_interrupt: str | None = None, full: bool = True) -> dict[str, Any]:
        """Ask for changes: the recommendation is redone with the feedback (at most MAX_REVISIONS
        times). `full` as for `approve`."""
        with self._acting(incident_id, "revise", actor, reviewer) as who:
            feedback = required(feedback, "feedback for the revision")
            return self._decide(incident_id, action="revise", actor=who, note=feedback,
                                expect=expect_interrupt, set_status="in_revision", full=full)

    def expire(self, incident_id: str, *, expect_interrupt: str | None = None, why: str | None = None) -> dict[str, Any]:
        """Close a paused incident whose SLA and grace passed, through the gate, as `system`."""
        return self._decide(incident_id, action="expire", actor=SYSTEM, note=why or "SLA and grace passed",
                            expect=expect_interrupt, set_status="analyzing")

    def _decide(self, incident_id: str, *, action: Literal["approve", "reject", "revise", "expire"], actor: Actor, note: str | None, expect: str | None,
                set_status: str, edits: dict[str, Any] | None = None, claim: Claim | None = None,
                expect_proposal: str | None = None, full: bool = True) -> dict[str, Any]:
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
            if action == "revise":  # the re-analysis answers the person's words: it never lowers the rule
                self._keep_rule(incident_id, state)
            interrupt_id = claim.expected
            after_values = None
            if expect_proposal is not None:  # the proposal the reviewer saw, before any edit of theirs
                self._check_proposal(incident_id, expect_proposal, state)
            if edits:
                # the State tab's and a fork's rule: an edit of the analysis re-runs what depends on it
                effect = history.edit_effect(edits, history.Flow.of(self.engine))
                values = edited_values(state, edits, kb=self.engine.kb, reviewer=reviewer.id)
                interrupt_id, change_id = self._write_edit(incident_id, state, values, as_node=effect["as_node"],
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
                # (a later reviewer approved again, and the first approval was never audited).
                # One saving thread: with "sync" every save is waited for before the next step, so
                # LangGraph's default pool (a new thread per save, 2-3 a decision) only added thread
                # starts and hand-offs, each a wait for a core on a loaded machine (bench/approve_rerun.py)
                self.graph.invoke(Command(resume=decision.model_dump(mode="json")),
                                  {**thread_config(incident_id), "max_concurrency": 1},
                                  context=self.engine.deps, durability="sync")
            claim.finish(action=action, reviewer=reviewer, before=snap, note=note, after_values=after_values)
        finally:
            claim.close()
        return self._read_back(incident_id, full)

    def _read_back(self, incident_id: str, full: bool) -> dict[str, Any]:
        """The incident after a decision: with its state and evidence (`incident`), or the records
        store's document alone (no checkpoint read, no events)."""
        return self.incident(incident_id) if full else self.document(incident_id)

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
            values = edited_values(state, edits, kb=self.engine.kb, reviewer=reviewer.id)
            if all(getattr(state, k) == v for k, v in values.items()):
                raise InvalidEdit("the edit changes nothing: every field already has that value",
                                  field=next(iter(edits)))
            note = None if as_node == "recommend" else f"as_node={as_node}"
            with self._audited_on_failure(claim, action="edit", reviewer=reviewer, before=snap, note=note):
                _, change_id = self._write_edit(incident_id, state, values, as_node=as_node, reviewer=reviewer.id,
                                                fields=edits)
            # `edited`: what the person set; the other changed fields were re-derived from it (`reran`)
            reran = history.Flow.of(self.engine).rerun(history.Flow.of(self.engine).static.get(as_node, ()))
            claim.finish(action="edit", reviewer=reviewer, before=snap, note=note,
                         after_values={"change_id": change_id, "edited": list(edits),
                                       "reran": [n for n in reran if n != history.GATE]})
        finally:
            claim.close()
        return self.incident(incident_id)

    def _write_edit(self, incident_id: str, before: IncidentState, values: dict[str, Any], *, as_node: str,
                    reviewer: str, fields: Iterable[str]) -> tuple[str, str]:
        """Write validated values over the analysis `before` as a new `update` checkpoint and pause
        at the gate again; the approvals `before` needed are kept first (`_keep_rule`).

        update_state on a paused thread keeps `next` at approval but drops the pending interrupt;
        re-invoking lets approval raise a fresh one, so the incident is paused (with a new id)
        the moment the claim is released. Returns the new interrupt id and the change's id.
        """
        self._keep_rule(incident_id, before)
        cfg = thread_config(incident_id)
        change_cfg, change_id = changes.change_config(cfg, action="edit", reviewer=reviewer, fields=fields)
        self.graph.update_state(change_cfg, values, as_node=as_node)
        self.graph.invoke(None, cfg, context=self.engine.deps)
        return self._require_paused(incident_id).interrupts[0].id, change_id
