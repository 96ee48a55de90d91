"""The reviewer controls grouping: split a member pattern out of a paused incident into an incident of
its own, and merge one paused incident into another (CONTRACT §2, "The reviewer controls grouping").

Both take the claims a decision takes (review/claims.py), so a split or merge racing a decision on
the same incident has exactly one winner, and both are audited with who, when and why (a reason is
required). The analysis is redone on the evidence that results, and the pending interrupt replaced,
the way a request for changes or an edit replaces it: the rule the analysis needed is kept first,
the new evidence is written as an `update` checkpoint as `intake` (so retrieval, rag, rca,
recommend and propose_fix re-run), and the gate pauses again with a new interrupt, which voids the
partial approvals of the old one. The incident merged away ends through its gate (`merge`: status
`merged`), so no decision can be given on it afterwards.
"""
from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.types import Command, Overwrite, StateSnapshot

from pipeline.clock import iso
from pipeline.engine import changes
from pipeline.engine.graph import thread_config
from pipeline.engine.runner import advance, record_from_snapshot
from pipeline.errors import UsageError
from pipeline.incidents import correlation, recurrence
from pipeline.incidents.sla import DEFAULT_SEVERITY
from pipeline.review import history
from pipeline.review.claims import Claim, Claims, required
from pipeline.review.identity import Actor
from pipeline.state import ApprovalDecision, IncidentState, LogEvent, merge_evidence
from pipeline.store import incident_rows, regrouping
from pipeline.store.sql import Connection


class Grouping(Claims):
    """Split and merge, each under the claim of every incident it changes."""

    def patterns(self, incident_id: str) -> list[dict[str, Any]]:
        """The incident's member patterns, most events first: {pattern, events, opening, example}
        (`opening`: the pattern it was opened with, which stays; `example`: one event's first line)."""
        row = self.records.incident(incident_id)
        counts = regrouping.patterns_of(self.records, incident_id)
        examples: dict[str, str] = {}
        if len(counts) > 1:
            events = self.records.events_of(incident_id, limit=2000)
            for event_id, keys in self.engine.incidents.patterns_of(events).items():
                for key in keys:
                    if key in counts and key not in examples:
                        examples[key] = next(correlation.first_line(e.message) for e in events if e.event_id == event_id)
        return [{"pattern": p, "events": n, "opening": p == row["fingerprint"], "example": examples.get(p, "")}
                for p, n in counts.items()]

    def split(self, incident_id: str, *, pattern: str, reason: str, actor: Actor | None = None,
              reviewer: str | None = None, expect_interrupt: str | None = None) -> dict[str, Any]:
        """Split the member `pattern` out of the paused incident into a new incident (linked: "split out
        of INC-…"), run to its own gate; the incident's analysis is redone without those events.
        Returns {"incident": the incident as it is now, "split": the new one}."""
        with self._acting(incident_id, "split", actor, reviewer) as who:
            reason = required(reason, "a reason for the split")
            row = self.records.incident(incident_id)
            counts = regrouping.patterns_of(self.records, incident_id)
            if pattern not in counts:
                raise UsageError(f"{incident_id} has no member pattern {pattern!r} (its patterns: {', '.join(counts)})")
            if pattern == row["fingerprint"]:
                raise UsageError(f"{pattern} is the pattern {incident_id} was opened with: it stays; split the others out")
            claim = self._claim_paused(incident_id, row, expect=expect_interrupt, set_status="analyzing")
            try:
                snap = self._paused_snapshot(incident_id, claim.expected)
                events = self.records.events_of(incident_id)
                keys = self.engine.incidents.patterns_of(events)
                moving = [e for e in events if pattern in keys[e.event_id]]
                staying = [e for e in events if pattern not in keys[e.event_id]]
                if not moving or not staying:
                    raise UsageError(f"{incident_id}: the pattern {pattern} holds "
                                     f"{'none' if not moving else 'every one'} of its events; nothing to split")
                self._keep_rule(incident_id, IncidentState.model_validate(snap.values))
                change = changes.change_config(thread_config(incident_id), action="split", reviewer=who.id,
                                               fields=["evidence"])
                new_id = self._open_split(incident_id, pattern, moving, counts[pattern], who=who, note=reason,
                                          checkpoint=history.checkpoint_id_of(snap), change_id=change[1])
                self._reanalyse(claim, snap, staying, change=change, who=who, note=reason)
            finally:
                claim.close()
            advance(self.engine, new_id)  # to its own gate now; the poller would start it otherwise
            return {"incident": self.incident(incident_id), "split": self.incident(new_id)}

    def merge(self, incident_id: str, *, into: str, reason: str, actor: Actor | None = None,
              reviewer: str | None = None, expect_interrupt: str | None = None,
              expect_into_interrupt: str | None = None) -> dict[str, Any]:
        """Merge the paused incident `incident_id` into the paused incident `into`: its events and
        patterns become `into`'s, whose analysis is redone on them all, and it ends `merged`
        (linked: "merged into INC-…"). Returns {"incident": `into` as it is now, "merged": the other}."""
        with self._acting(incident_id, "merge", actor, reviewer) as who:
            reason = required(reason, "a reason for the merge")
            if into == incident_id:
                raise UsageError(f"{incident_id} cannot be merged into itself")
            target_row = self.records.incident(into)
            row = self.records.incident(incident_id)
            # claimed in the order of their ids, so two merges of the same pair in opposite directions
            # cannot each hold one claim and lose the other: the first to claim the lower id wins
            first, second = sorted([(into, target_row, expect_into_interrupt), (incident_id, row, expect_interrupt)])
            held: dict[str, Claim] = {}
            try:
                for inc, inc_row, expected in (first, second):
                    held[inc] = self._claim_paused(inc, inc_row, expect=expected, set_status="analyzing")
                target, claim = held[into], held[incident_id]
                target_snap = self._paused_snapshot(into, target.expected)
                snap = self._paused_snapshot(incident_id, claim.expected)
                self._keep_rule(into, IncidentState.model_validate(target_snap.values),
                                IncidentState.model_validate(snap.values))
                change = changes.change_config(thread_config(into), action="merge", reviewer=who.id, fields=["evidence"])
                moving = self.records.events_of(incident_id)
                # the regrouping and its audit in one transaction: a process killed after it leaves the
                # graph's part to the runner (engine/runner.py `_unfinished_regroup`), never a silent change
                with self.records.transaction() as conn:
                    stamp = iso(self.records.clock.now())
                    regrouping.move_events(conn, (e.event_id for e in moving), to=into)
                    regrouping.add_patterns_of(conn, incident_id, to=into)
                    regrouping.recount(conn, into, stamp=stamp)
                    incident_rows.link_incident(conn, incident_id, to=into, kind=recurrence.MERGED)
                    self._audit(conn, into, who, reason, snap=target_snap, before={"event_count": target_row["event_count"]},
                                after={"merged": incident_id, "events_moved": len(moving), "change_id": change[1]})
                    self._audit(conn, incident_id, who, reason, snap=snap, before={"status": "awaiting_approval"},
                                after={"status": "merged", "merged_into": into, "events_moved": len(moving),
                                       "decision.interrupt_id": claim.expected})
                self._close_merged(claim, who=who, into=into, note=reason)
                self._reanalyse(target, target_snap, self.records.events_of(into), change=change, who=who, note=reason)
            finally:
                for taken in reversed(list(held.values())):
                    taken.close()
            return {"incident": self.incident(into), "merged": self.incident(incident_id)}

    # -- the steps -------------------------------------------------------------------------------
    def _audit(self, conn: Connection, incident_id: str, who: Actor, reason: str, *, snap: StateSnapshot | None,
               before: dict[str, Any], after: dict[str, Any]) -> None:
        action = "merge" if "merged" in after or "merged_into" in after else "split"
        checkpoint = history.checkpoint_id_of(snap) if snap is not None else None
        self.records.add_audit(incident_id=incident_id, reviewer=who.id, action=action, auth=who.auth,
                               checkpoint_before=checkpoint, checkpoint_after=None, before=before, after=after,
                               note=reason, conn=conn)

    def _open_split(self, source: str, pattern: str, moving: list[LogEvent], member_events: int, *, who: Actor,
                    note: str, checkpoint: str | None, change_id: str) -> str:
        """The new incident of the split pattern, with its events, members, link and the audit of the
        split on both incidents, in one transaction."""
        first = min(moving, key=lambda e: e.time)
        now = self.records.clock.now()
        due, backfilled = self.engine.incidents.sla.due(first_seen=first.time, opened=now, severity=DEFAULT_SEVERITY)
        stamp = iso(now)
        with self.records.transaction() as conn:
            new_id, salt = correlation.incident_id(pattern, first.time), 0
            while incident_rows.incident_exists(conn, new_id):
                salt += 1
                new_id = correlation.incident_id(f"{pattern}:{salt}", first.time)
            incident_rows.insert_incident(conn, incident_id=new_id, fingerprint=pattern, title=correlation.title(first),
                                          service=first.service, severity=DEFAULT_SEVERITY, first_seen=iso(first.time),
                                          stamp=stamp, sla_deadline=iso(due), backfilled=backfilled)
            incident_rows.link_incident(conn, new_id, to=source, kind=recurrence.SPLIT)
            regrouping.move_events(conn, (e.event_id for e in moving), to=new_id)
            regrouping.move_pattern(conn, pattern, source=source, to=new_id, events=member_events)
            regrouping.recount(conn, new_id, stamp=stamp)
            regrouping.recount(conn, source, stamp=stamp)
            moved = {"pattern": pattern, "events_moved": len(moving)}
            self.records.add_audit(incident_id=source, reviewer=who.id, action="split", auth=who.auth,
                                   checkpoint_before=checkpoint, checkpoint_after=None, before={},
                                   after={**moved, "split_into": new_id, "change_id": change_id}, note=note, conn=conn)
            self.records.add_audit(incident_id=new_id, reviewer=who.id, action="split", auth=who.auth,
                                   checkpoint_before=None, checkpoint_after=None, before={},
                                   after={**moved, "split_from": source}, note=note, conn=conn)
        return new_id

    def _reanalyse(self, claim: Claim, snap: StateSnapshot, events: list[LogEvent], *,
                   change: tuple[RunnableConfig, str], who: Actor, note: str) -> None:
        """Redo the claimed incident's analysis on `events` (its evidence now) and pause it again with
        a new interrupt, as a revision does (the change audited already, with its id)."""
        incident_id = claim.incident_id
        action = str(change[0].get("metadata", {}).get(changes.ACTION))
        with self._audited_on_failure(claim, action=action, reviewer=who, before=snap, note=note,
                                      after_values={"change_id": change[1]}):
            # the sample the state keeps of every event it has now, past the reducer: a split takes some away
            self.graph.update_state(change[0], {"evidence": Overwrite(merge_evidence([], events))}, as_node="intake")
            self.graph.invoke(None, thread_config(incident_id), context=self.engine.deps)
        self._recorded(claim, merged_event_ids=[e.event_id for e in events], analysed=True)

    def _close_merged(self, claim: Claim, *, who: Actor, into: str, note: str) -> None:
        """End the merged incident's run through its gate (`merge`: status merged)."""
        decision = ApprovalDecision(action="merge", reviewer=who.id, note=f"merged into {into}: {note}",
                                    interrupt_id=claim.expected, decided_at=self.records.clock.now(), auth=who.auth)
        self.graph.invoke(Command(resume=decision.model_dump(mode="json")), thread_config(claim.incident_id),
                          context=self.engine.deps, durability="sync")
        self._recorded(claim)

    def _recorded(self, claim: Claim, **extra: Any) -> None:
        """The record follows the new checkpoint (the action was audited with its rows)."""
        record_from_snapshot(self.engine, claim.incident_id, attempts=0, next_attempt_at=None, last_error=None, **extra)
        claim.finished = True
