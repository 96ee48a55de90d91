"""Time travel after a reviewer regrouped: a replay or fork from a checkpoint taken before a split
does not bring back the events the split gave to another incident (the branch says so)."""
from __future__ import annotations

from pipeline.review.service import ReviewService
from pipeline.store import checkpoints, regrouping
from tests.support import BOTH_BACKENDS, pending, state_of
from tests.test_split_merge import _services_analysed, _two_incidents


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
