"""Time travel that cannot mislead: the plan says which evidence a branch rests on and whether newer
evidence exists, a replay can take the current evidence, a fork of the analysis re-runs what depends
on it, and a replay from the head is called a re-run."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

from pipeline.unattended.file_ingest import ingest_path
from pipeline.review.service import ReviewService
from tests.support import by_category, pending, state_of, write_jsonl


def _checkpoint_writing(service, inc, node):
    return next(h for h in service.history(inc, limit=200) if h["writes_by"] == [node])


def _more_pool_events(tmp_path, n=6):
    start = datetime(2026, 11, 28, 12, 0, tzinfo=timezone.utc)
    return write_jsonl(tmp_path / "more.jsonl", [
        {"_time": (start + timedelta(seconds=i)).isoformat(), "service": "checkout-api", "host": "co-9",
         "level": "ERROR", "exception": "java.sql.SQLTransientConnectionException",
         "message": f"HikariPool-1 - Connection is not available, request timed out after 3000{i}ms."}
        for i in range(n)])


def test_the_plan_says_an_early_checkpoint_rests_on_older_evidence(paused_engine, tmp_path):
    service = ReviewService(paused_engine)
    inc = by_category(paused_engine, "db_pool_exhausted")
    early = _checkpoint_writing(service, inc, "rca")["checkpoint_id"]
    before = service.rerun_plan(inc, early)
    assert before["evidence"]["newer_evidence"] is False and before["warnings"] == []
    ingest_path(paused_engine, _more_pool_events(tmp_path))  # new evidence merges and re-runs the analysis
    plan = service.rerun_plan(inc, early)
    basis = plan["evidence"]
    assert basis["newer_evidence"] and basis["newer_events"] >= 6
    assert basis["now"]["events"] > basis["at_checkpoint"]["events"]
    assert any("newer events" in w for w in plan["warnings"])
    assert plan["kind"] == "branch" and plan["label"].startswith("new branch from checkpoint")


def test_replay_with_current_evidence_bases_the_branch_on_every_stored_event(paused_engine, tmp_path):
    service = ReviewService(paused_engine)
    inc = by_category(paused_engine, "db_pool_exhausted")
    early = _checkpoint_writing(service, inc, "rca")["checkpoint_id"]
    ingest_path(paused_engine, _more_pool_events(tmp_path))
    plain = service.rerun_plan(inc, early)
    merged = service.rerun_plan(inc, early, with_current_evidence=True)
    assert sorted(merged["nodes"][:2]) == ["rag", "retrieval"] and "rca" in merged["nodes"]
    assert merged["warnings"] == [] and plain["warnings"]
    service.replay(inc, checkpoint_id=early, reviewer="ann", with_current_evidence=True)
    state = state_of(paused_engine, inc)
    newest = max(e.time for e in paused_engine.records.events_of(inc))
    assert max(e.time for e in state.evidence) == newest
    assert paused_engine.records.incident(inc)["status"] == "awaiting_approval"
    assert "with the current evidence" in paused_engine.records.audit(inc)[-1]["note"]


def test_a_fork_of_the_category_reruns_the_recommendation_and_the_proposal(paused_engine):
    service = ReviewService(paused_engine)
    inc = by_category(paused_engine, "db_pool_exhausted")
    before = state_of(paused_engine, inc)
    gate = next(h for h in service.history(inc) if h["is_pending"])["checkpoint_id"]
    edits = {"rca.category": "upstream_timeout"}
    plan = service.rerun_plan(inc, gate, edits=edits)
    assert plan["nodes"] == ["recommend", "propose_fix", "approval"] and plan["fork_effect"] == "reruns_dependents"
    service.fork(inc, checkpoint_id=gate, reviewer="ann", edits=edits)
    after = state_of(paused_engine, inc)
    assert after.rca.category == "upstream_timeout"
    assert after.recommendation != before.recommendation  # recommend ran on the edited analysis
    # the proposal follows the edited category: no pool-size diff for a timeout
    assert after.proposal is None or after.proposal.hash != before.proposal.hash
    assert not (after.proposal and after.proposal.diff and "maximum-pool-size" in after.proposal.diff)


def test_a_fork_of_both_analysis_and_recommendation_says_recommend_does_not_rerun(paused_engine):
    service = ReviewService(paused_engine)
    inc = by_category(paused_engine, "db_pool_exhausted")
    gate = next(h for h in service.history(inc) if h["is_pending"])["checkpoint_id"]
    plan = service.rerun_plan(inc, gate, edits={"rca.category": "upstream_timeout",
                                                "recommendation.action": "Raise the timeout"})
    assert plan["nodes"] == ["propose_fix", "approval"] and plan["fork_effect"] == "keeps_recommendation"
    assert any("recommend does not re-run" in w for w in plan["warnings"])


def test_replay_from_the_head_is_a_rerun_on_the_current_branch(paused_engine):
    service = ReviewService(paused_engine)
    inc = by_category(paused_engine, "db_pool_exhausted")
    head = next(h for h in service.history(inc) if h["is_pending"])["checkpoint_id"]
    plan = service.rerun_plan(inc, head)
    assert (plan["kind"], plan["label"]) == ("rerun", "re-run on the current branch")
    old = pending(paused_engine, inc)
    service.replay(inc, checkpoint_id=head, reviewer="ann")
    assert service.tree(inc)["branches"] == 1  # what the label said
    assert pending(paused_engine, inc) != old
    assert paused_engine.records.audit(inc)[-1]["note"].startswith("re-run on the current branch")
