"""Time travel after a reviewer regrouped: a replay or fork from a checkpoint taken before a split
does not bring back the events the split gave to another incident (the branch says so)."""
from __future__ import annotations

from datetime import timedelta

from pipeline.clock import iso
from pipeline.review.service import ReviewService
from pipeline.store import checkpoints, regrouping
from pipeline.unattended.file_ingest import ingest_file
from tests.support import BOTH_BACKENDS, pending, state_of, write_jsonl
from tests.test_split_merge import T0, _services_analysed, _two_incidents


def _merged_then_split(engine, tmp_path) -> tuple[str, str, str]:
    """The timeouts merged into the refusal, then split back out: (refusal, the merged gate, new id)."""
    refusal, timeouts = _two_incidents(engine, tmp_path)
    service = ReviewService(engine)
    service.merge(timeouts, into=refusal, reason="one outage", reviewer="ann")
    assert _services_analysed(engine, refusal) == {"orders-api", "gateway"}
    rows = checkpoints.checkpoint_rows(engine.graph.checkpointer, refusal)
    merged_gate = [r["checkpoint_id"] for r in rows if r["raised"]][-1]
    (extra,) = [p for p in regrouping.patterns_of(engine.records, refusal) if p != engine.records.incident(refusal)["fingerprint"]]
    out = service.split(refusal, pattern=extra, reason="two causes after all", reviewer="bob",
                        expect_interrupt=pending(engine, refusal))
    assert _services_analysed(engine, refusal) == {"orders-api"}
    return refusal, merged_gate, out["split"]["incident_id"]


@BOTH_BACKENDS
def test_a_replay_from_before_a_split_leaves_the_split_events_out(engine, tmp_path):
    refusal, merged_gate, split_id = _merged_then_split(engine, tmp_path)
    service = ReviewService(engine)
    plan = service.rerun_plan(refusal, merged_gate)
    assert plan["evidence"]["moved_out"] == 4 and plan["evidence"]["moved_to"] == [split_id]
    assert any(split_id in w and "without them" in w for w in plan["warnings"])
    assert "rca" in plan["nodes"]  # analysed again, not only the gate re-fired

    service.replay(refusal, checkpoint_id=merged_gate, reviewer="carol")
    assert _services_analysed(engine, refusal) == {"orders-api"}
    assert engine.records.incident(refusal)["status"] == "awaiting_approval"
    assert {e.service for e in state_of(engine, split_id).evidence} == {"gateway"}  # the split one untouched


@BOTH_BACKENDS
def test_a_fork_from_before_a_split_keeps_the_edit_and_leaves_the_split_events_out(engine, tmp_path):
    refusal, merged_gate, split_id = _merged_then_split(engine, tmp_path)
    service = ReviewService(engine)
    rows = checkpoints.checkpoint_rows(engine.graph.checkpointer, refusal)
    ids = [r["checkpoint_id"] for r in rows]
    after_rca = ids[ids.index(merged_gate) - 1]  # the merged run's checkpoint before its gate
    service.fork(refusal, checkpoint_id=after_rca, reviewer="ann", edits={"rca.category": "connection_refused"})
    state = state_of(engine, refusal)
    assert {e.service for e in state.evidence} == {"orders-api"}
    assert state.rca.category == "connection_refused"


@BOTH_BACKENDS
def test_a_replay_on_the_current_evidence_from_before_a_split_analyses_what_arrived_since(engine, tmp_path):
    """Replaying "with current evidence" from a checkpoint taken before a split: the events stored for
    the incident since the split are analysed (none left "arrived since"), the split's stay out."""
    refusal, merged_gate, split_id = _merged_then_split(engine, tmp_path)
    later = [{"_time": iso(T0 + timedelta(minutes=5, seconds=i)), "service": "orders-api", "level": "ERROR",
              "message": "Connection refused: connect to inventory-db:5432 failed"} for i in range(3)]
    ingest_file(engine, write_jsonl(tmp_path / "later.jsonl", later))  # stored, not yet analysed
    new_ids = {e.event_id for e in engine.records.events_of(refusal, only_unmerged=True)}
    assert len(new_ids) == 3
    service = ReviewService(engine)
    assert service.document(refusal)["events_since_analysis"] == 3
    moved_ids = {e.event_id for e in engine.records.events_of(split_id)}

    service.replay(refusal, checkpoint_id=merged_gate, reviewer="carol", with_current_evidence=True)
    assert not engine.records.events_of(refusal, only_unmerged=True)  # every stored event analysed
    assert service.document(refusal)["events_since_analysis"] == 0
    evidence = {e.event_id for e in state_of(engine, refusal).evidence}
    assert _services_analysed(engine, refusal) == {"orders-api"}
    assert not evidence & moved_ids  # the split's events stay out
    assert max(e.time for e in state_of(engine, refusal).evidence) == max(e.time for e in engine.records.events_of(refusal))
    assert {e.service for e in state_of(engine, split_id).evidence} == {"gateway"}
