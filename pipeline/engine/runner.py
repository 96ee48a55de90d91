"""Drives incidents' runs (shared by `ingest` and the poller): start new runs to the approval
gate, continue runs a crash cut off, merge new evidence into paused runs, retry failed runs,
and keep the records in step with the checkpoints. Reading files is pipeline/ingest/'s job, turning
events into incidents pipeline/incidents/'.

Every graph invocation on a thread happens under a claim on the incident in the records
store, so no two actors (threads or processes) ever drive one thread at once.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from itertools import islice
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.types import Command, Interrupt, Overwrite, PregelTask, StateSnapshot

from pipeline.store import checkpoints, due, regrouping
from pipeline.engine import Engine
from pipeline.errors import CheckpointStoreError, InvalidCheckpoint, RunCrashed, RuntimeFailure
from pipeline.engine.graph import thread_config
from pipeline.engine.changes import audit_orphaned_changes
from pipeline.engine.lost_runs import recover_lost_runs
from pipeline.clock import iso, parse_iso
from pipeline.redaction import redact
from pipeline.store.owners import process_owner
from pipeline.engine import repeats
from pipeline.state import EVIDENCE_HEAD, EVIDENCE_TAIL, ApprovalDecision, IncidentState, LogEvent, merge_evidence

MAX_ATTEMPTS = 5
NEVER = "9999-12-31T00:00:00+00:00"  # next_attempt_at of a run given up on


@dataclass
class RunReport:
    advanced: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def snapshot(engine: Engine, incident_id: str) -> StateSnapshot:
    return engine.graph.get_state(thread_config(incident_id))


def record_from_snapshot(engine: Engine, incident_id: str, snap: StateSnapshot | _RunEnd | None = None,
                         **extra: Any) -> dict[str, Any]:
    """Write the record fields that follow from the run's newest checkpoint; returns them."""
    snap = snap or snapshot(engine, incident_id)
    if not snap.values:
        return {}
    state = IncidentState.model_validate(snap.values)
    row = engine.records.incident_fields(incident_id, "first_seen", "created_at", "sla_deadline", "backfilled")
    values: dict[str, Any] = {
        "severity": state.severity,
        "category": state.rca.category if state.rca else None,
        "confidence": state.rca.confidence if state.rca else None,
        "revisions": state.revisions,
        "summary": summary_of(state),
        "pending_interrupt_id": None,
        "pending_checkpoint_id": None,
    }
    if snap.next == ("approval",) and snap.interrupts:
        values["status"] = "awaiting_approval"
        values["pending_interrupt_id"] = snap.interrupts[0].id
        values["pending_checkpoint_id"] = snap.config["configurable"]["checkpoint_id"]
    elif not snap.next and state.outcome:
        values["status"] = state.outcome
    elif snap.next or snap.tasks:
        values["status"] = "in_revision" if "revise" in snap.next else "analyzing"
    values.update(_deadline_change(engine, row, state.severity))
    values.update(extra)
    engine.records.update_incident(incident_id, **values)
    return values


def _deadline_change(engine: Engine, row: dict[str, Any], severity: str) -> dict[str, Any]:
    """The SLA deadline (and backfilled mark) to write when the severity changed, or earlier evidence
    moved first_seen: a shorter SLA (critical) can make an older log's incident backfilled."""
    first_seen, opened = parse_iso(row["first_seen"]), parse_iso(row["created_at"])
    assert first_seen is not None and opened is not None  # NOT NULL columns
    due, backfilled = engine.incidents.sla.due(first_seen=first_seen, opened=opened, severity=severity)
    change: dict[str, Any] = {}
    if row["sla_deadline"] != iso(due):
        change["sla_deadline"] = iso(due)
    if bool(row["backfilled"]) != backfilled:
        change["backfilled"] = int(backfilled)
    return change


def summary_of(state: IncidentState) -> dict[str, Any]:
    """What lists and `show` need without opening the checkpoint."""
    return {
        "title": state.title,
        "rca": state.rca.model_dump(mode="json") if state.rca else None,
        "recommendation": state.recommendation.model_dump(mode="json") if state.recommendation else None,
        "decision": state.decision.model_dump(mode="json") if state.decision else None,
        "fix": state.fix.model_dump(mode="json") if state.fix else None,
        "proposal": state.proposal.model_dump(mode="json") if state.proposal else None,
        "requests": list(state.feedback),
        "similar_docs": [{"doc_id": d.doc_id, "title": d.title, "category": d.category, "score": d.score}
                         for d in state.similar_docs],
        "errors": state.errors[-3:],
    }


def initial_state(engine: Engine, incident_id: str, events: list[LogEvent] | None = None, *,
                  row: dict[str, Any] | None = None) -> IncidentState:
    """The run's first state; `row` is the incident's record when the caller has read it (the
    fields used here never change after the incident opens)."""
    row = row or engine.records.incident(incident_id)
    # the run's input is checkpointed as given: pass the bounded sample the state keeps (first and
    # latest events), not every event of a noisy incident (the records store keeps them all)
    events = engine.records.events_of(incident_id) if events is None else events
    return IncidentState(incident_id=incident_id, fingerprint=row["fingerprint"], service=row["service"],
                         title=row["title"], evidence=merge_evidence([], events))


def run_input(state: IncidentState) -> dict[str, Any]:
    """The run's input: the fields set, not the defaults (a model would write every field as a
    channel of its own: a row in the checkpoint store and a version in each checkpoint)."""
    return {name: getattr(state, name) for name in sorted(state.model_fields_set)}


def advance(engine: Engine, incident_id: str) -> bool:
    """Move one incident's run as far as it can go without a human. False if another actor has it."""
    return advance_run(engine, incident_id) is not None


def advance_run(engine: Engine, incident_id: str) -> str | None:
    """Like `advance`, and says what it did: started | merged | counted (new evidence that repeats
    the paused analysis: counted, not re-analysed) | resumed | retried | idle | gave_up, or None
    when another actor drives the run (its new events wait, unmerged, until it is free)."""
    owner = process_owner()
    # the attempt is counted with the claim, before the run, so a run that takes its process
    # down with it counts too; the row is as it was before (its owner a dead one, if we take over)
    row = engine.records.claim_run(incident_id, owner, max_attempts=MAX_ATTEMPTS)
    if row is None:
        return None
    # the step reads the thread's newest checkpoint more than once (here, then LangGraph's
    # update_state and invoke each again): its stored values are decoded once for all of them
    with checkpoints.read_once(engine.graph.checkpointer):
        return _advance_claimed_run(engine, incident_id, owner, row)


def _advance_claimed_run(engine: Engine, incident_id: str, owner: str, row: dict[str, Any]) -> str:
    """advance_run's step once the claim is taken; the claim is released with the record the step
    writes, or here."""
    released = False
    try:
        if row["attempts"] >= MAX_ATTEMPTS:
            _give_up(engine, incident_id, row)
            return "gave_up"
        if row["claim_owner"]:
            # taken over from a dead process: a reviewer's change it wrote but did not audit is
            # audited now, before the run moves on from it
            audit_orphaned_changes(engine, incident_id)
        try:
            snap = _current(engine, incident_id, row)
        except InvalidCheckpoint as exc:  # one edited checkpoint fails its incident, not the poll
            record_failure(engine, incident_id, exc)
            return "idle"
        try:
            kind = _advance_claimed(engine, incident_id, owner, snap, row)
            released = True  # the final write released the claim with the record
        except CheckpointStoreError:
            # the checkpoint store (locked, damaged), not this incident, failed: the poll fails and
            # is retried, and the attempt does not count toward giving the incident up
            engine.records.update_incident(incident_id, attempts=row["attempts"])
            raise
        except RuntimeFailure as exc:
            record_failure(engine, incident_id, exc)
            kind = "started" if not snap.values else "merged" if snap.next == ("approval",) else "resumed"
        except Exception as exc:  # noqa: BLE001 - the per-incident boundary, see below
            # A bug one incident's evidence reaches (a KeyError in the analyst, an overflow on its
            # times) must not stop the other incidents: it is recorded on this incident, counted
            # toward MAX_ATTEMPTS like any failure, and shown with its type to whoever looks.
            record_failure(engine, incident_id, RunCrashed(exc))
            kind = "started" if not snap.values else "merged" if snap.next == ("approval",) else "resumed"
        return "retried" if row["status"] == "failed" and kind != "idle" else kind
    finally:
        if not released:
            engine.records.release(incident_id, owner)


def _current(engine: Engine, incident_id: str, row: dict[str, Any]) -> StateSnapshot | _RunEnd:
    """The run's newest state, read once for the step and only as far as the step needs it. A
    thread with no checkpoint yet (an incident's first run) is told by one indexed read of its newest
    checkpoint id instead of a snapshot. A run paused at the very checkpoint its record was written
    from (`pending_checkpoint_id`: nothing ran since) has that checkpoint's values read (and
    checked) without LangGraph's snapshot around them: new evidence is merged or counted against
    them. Any other step reads the full snapshot."""
    store = cast(checkpoints.CheckpointStore, engine.graph.checkpointer)  # the graph is compiled on our store
    newest = checkpoints.latest_checkpoint_id(store, incident_id)
    if newest is None:
        return _RunEnd(values={}, next=(), interrupts=(), config=thread_config(incident_id))
    if (row["status"] == "awaiting_approval" and row["pending_interrupt_id"] and row["pending_checkpoint_id"] == newest
            and row.get("link_kind") != "merged"):
        values = checkpoints.values_at(store, incident_id, newest)
        if values is not None:
            return _RunEnd(values=values, next=("approval",),
                           interrupts=(Interrupt(value=None, id=row["pending_interrupt_id"]),),
                           config={"configurable": {"thread_id": incident_id, "checkpoint_ns": "",
                                                    "checkpoint_id": newest}})
    return snapshot(engine, incident_id)


def _advance_claimed(engine: Engine, incident_id: str, owner: str, snap: StateSnapshot | _RunEnd,
                     row: dict[str, Any]) -> str:
    # Events count as merged once they are in the run's checkpointed input: a crash after that
    # resumes the run with them, a crash before it starts over from every stored event.
    cfg = thread_config(incident_id)
    merged_ids: list[str] = []
    kind = "idle"
    analysed = False  # whether this run analysed the incident's stored events (analysed_events)
    after: StateSnapshot | _RunEnd | None = None
    if not snap.values:
        events = engine.records.events_of(incident_id)
        state = initial_state(engine, incident_id, events, row=row)
        # every stored event is in the run now, sampled or not: none of them is news to merge later
        engine.records.mark_merged(e.event_id for e in events)
        analysed = True
        # a dict of the state's fields is an input LangGraph takes; its overloads name only the state class
        after = _run_end(engine, incident_id, engine.graph.invoke(run_input(state), cfg,  # type: ignore[call-overload]
                                                                  context=engine.deps))
        kind = "started"
    elif snap.next == ("approval",) and snap.interrupts and (left := _unfinished_regroup(engine, row, snap)):
        # a reviewer's split or merge moved this incident's events, and its process died before the
        # graph followed (review/grouping.py): finish that instead of offering the old analysis
        kind, merged_ids, analysed = ("resumed" if left == "closed" else "merged"), [], left == "merged"
        if left == "closed":
            decision = ApprovalDecision(action="merge", reviewer="system", auth="system",
                                        interrupt_id=snap.interrupts[0].id, decided_at=engine.records.clock.now(),
                                        note=f"merged into {row['linked_to']} (completed after the process that"
                                             " merged it died)")
            engine.graph.invoke(Command(resume=decision.model_dump(mode="json")), cfg, context=engine.deps,
                                durability="sync")
        else:
            events = engine.records.events_of(incident_id)
            merged_ids = [e.event_id for e in events]
            engine.records.update_incident(incident_id, status="analyzing", pending_interrupt_id=None,
                                           pending_checkpoint_id=None)
            engine.graph.update_state(cfg, {"evidence": Overwrite(merge_evidence([], events))}, as_node="intake")
            after = _run_end(engine, incident_id, engine.graph.invoke(None, cfg, context=engine.deps))
    elif snap.next == ("approval",) and snap.interrupts:
        # the held evidence, checked against the state when the checkpoint was read: no validation of the whole state
        held: list[LogEvent] = list(snap.values.get("evidence") or ())
        heads = engine.records.unmerged_heads(incident_id)
        # events already in the paused state are no news: re-running for them would pause twice
        known = {e.event_id for e in held}
        news = [h for h in heads if h[0] not in known]
        if news and not _reanalyse(engine, row, held, news):
            # more of what the analysis holds: counted (the record's event count and times moved
            # when they were stored), kept for the next re-run; the analysis, its pending interrupt
            # and the approvals given on it stand
            engine.records.update_incident(
                incident_id, attempts=0, next_attempt_at=None, last_error=None, release_owner=owner,
                merged_event_ids=[h[0] for h in heads if h[0] in known], repeat_event_ids=[h[0] for h in news],
                **_deadline_change(engine, row, row["severity"]))
            return "counted"
        # the re-run's evidence keeps the first and the latest events (merge_evidence): of the unmerged
        # ones only those ends are read, widened by the unmerged ones it holds already (the filter
        # below drops them; none but after a crash between the run and its record)
        held_unmerged = len(heads) - len(news)
        unmerged = engine.records.evidence_to_merge(
            incident_id, repeats=EVIDENCE_TAIL, first=EVIDENCE_HEAD + held_unmerged,
            last=EVIDENCE_TAIL + held_unmerged) if news else []
        new = [e for e in unmerged if e.event_id not in known]
        merged_ids = [h[0] for h in heads]
        if new:
            analysed = True
            # new evidence re-runs the analysis: the pending interrupt is replaced by a new one
            # the record stops offering the old analysis first: a crash mid-merge leaves the
            # incident 'analyzing' (so the runner finishes it), never paused at a dead interrupt
            # (its events are marked merged once, with the record after the run: a crash before
            # that resumes the run and marks those its checkpointed evidence holds)
            engine.records.update_incident(incident_id, status="analyzing", pending_interrupt_id=None,
                                           pending_checkpoint_id=None)
            # the reducer keeps the first and the latest events of the union: the same as of the
            # union with new's own first and latest, which is all the checkpointed write carries
            engine.graph.update_state(cfg, {"evidence": merge_evidence([], new)}, as_node="intake")
            after = _run_end(engine, incident_id, engine.graph.invoke(None, cfg, context=engine.deps))
            kind = "merged"
    elif snap.next or snap.tasks:
        # a run a crash cut off; finished tasks' writes are kept and not run again
        engine.graph.invoke(None, cfg, context=engine.deps)
        known = _evidence_ids(snapshot(engine, incident_id))
        merged_ids = [e.event_id for e in engine.records.events_of(incident_id, only_unmerged=True)
                      if e.event_id in known]  # merged into the state before the crash, not yet marked
        kind = "resumed"
        analysed = row["analysed_events"] is None  # a first run cut off; a merge's knew its coverage
    record_from_snapshot(engine, incident_id, after, attempts=0, next_attempt_at=None, last_error=None,
                         merged_event_ids=merged_ids, release_owner=owner, analysed=analysed)
    return kind


def _unfinished_regroup(engine: Engine, row: dict[str, Any], snap: StateSnapshot | _RunEnd) -> str | None:
    """What a split or merge whose process died left for the paused run to do: `closed` (merged
    away: end it through the gate), `merged` (its analysis holds events that are another incident's
    now: redo it on its own), or None."""
    if row.get("link_kind") == "merged":
        return "closed"
    # the channel holds our events already (checked when read): no validation of the whole state here
    held = [e.event_id for e in snap.values.get("evidence") or ()]
    return "merged" if regrouping.moved_away(engine.records, row["incident_id"], held) else None


def _reanalyse(engine: Engine, row: dict[str, Any], held: list[LogEvent],
               news: list[tuple[str, str, str | None, str]]) -> bool:
    """Whether new evidence re-runs a paused analysis: a shape it does not hold, or a rise past
    INCIDENTIQ_REANALYSE_GROWTH (engine/repeats.py)."""
    if repeats.grown_past(row["event_count"], row["analysed_events"], engine.settings.reanalyse_growth):
        return True
    return not repeats.all_repeats(news, repeats.held_shapes(held))


@dataclass(frozen=True)
class _RunEnd:
    """What the record needs of a run that just returned, without re-loading its checkpoint."""

    values: dict[str, Any]
    next: tuple[str, ...]
    interrupts: tuple[Interrupt, ...]
    config: RunnableConfig
    tasks: tuple[PregelTask, ...] = ()


def _run_end(engine: Engine, incident_id: str, output: dict[str, Any]) -> _RunEnd:
    # invoke returns at the approval interrupt (the graph's only one) or at END
    interrupts = tuple(output.get("__interrupt__", ()))
    values = {k: v for k, v in output.items() if k != "__interrupt__"}
    checkpoint_id = checkpoints.latest_checkpoint_id(cast(checkpoints.CheckpointStore, engine.graph.checkpointer),
                                                     incident_id)  # the graph is compiled on our store
    return _RunEnd(values=values, next=("approval",) if interrupts else (), interrupts=interrupts,
                   config={"configurable": {"thread_id": incident_id, "checkpoint_ns": "",
                                            "checkpoint_id": checkpoint_id}})


def _evidence_ids(snap: StateSnapshot) -> set[str]:
    return {e.event_id for e in IncidentState.model_validate(snap.values).evidence} if snap.values else set()


def record_failure(engine: Engine, incident_id: str, exc: RuntimeFailure) -> None:
    """Mark a run failed with its error and schedule a bounded retry with backoff."""
    attempts = engine.records.incident_fields(incident_id, "attempts")["attempts"]  # this attempt is already counted
    retry_at = engine.records.clock.now() + timedelta(seconds=min(600, 5 * 2 ** attempts))
    engine.records.update_incident(
        incident_id, status="failed", attempts=attempts, last_error=redact(f"{type(exc).__name__}: {exc.message}")[:2000],
        next_attempt_at=iso(retry_at) if attempts < MAX_ATTEMPTS else NEVER)


def _give_up(engine: Engine, incident_id: str, row: dict[str, Any]) -> None:
    """After MAX_ATTEMPTS runs that failed or were cut off (the process died, or a bug raised),
    stop retrying: the incident shows as failed with the last error until a person acts on it."""
    error = row["last_error"] or (f"the run did not finish in {row['attempts']} attempts: its process died"
                                  " or it hit an unexpected error (see the poller's status)")
    engine.records.update_incident(incident_id, status="failed", last_error=error, next_attempt_at=NEVER)


def run_pending(engine: Engine, *, limit: int | None = None, merge_delay: float = 0.0) -> RunReport:
    """Advance every incident that needs work (new, cut off, new evidence, retry due)."""
    report = RunReport()
    recover_lost_runs(engine)
    # the poller's bounded batches (store/due.py): the next batch is read once this one is worked,
    # so a pass over many due incidents never holds the whole list
    for incident_id in islice(due.due_incidents(engine.records, merge_delay=merge_delay), limit):
        if advance(engine, incident_id):
            status = engine.records.incident_fields(incident_id, "status")["status"]
            (report.failed if status == "failed" else report.advanced).append(incident_id)
        else:
            report.skipped.append(incident_id)
    return report


__all__ = ["advance", "advance_run", "run_pending", "record_from_snapshot", "snapshot", "summary_of"]
