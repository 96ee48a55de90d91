"""Decisions on paused incidents end as CONTRACT §4 says, through the CLI and the review service."""
from __future__ import annotations

import pytest

from pipeline.errors import RevisionLimitReached, UsageError
from pipeline.review.service import ReviewService
from tests.support import by_category, cli, pending


def test_approve_eligible_incident_ends_fix_proposed_with_one_fix_record(paused_engine, capsys):
    inc = by_category(paused_engine, "db_pool_exhausted")
    code, out, err = cli(capsys, "approve", inc, "--reviewer", "ann", "--expect-interrupt", pending(paused_engine, inc))
    assert code == 0, err
    row = paused_engine.records.incident(inc)
    assert row["status"] == "fix_proposed" and row["pending_interrupt_id"] is None and row["closed_at"]
    fixes = paused_engine.records.fixes(inc)
    assert len(fixes) == 1 and fixes[0]["attempt"] == 1


def test_approved_but_ineligible_ends_approved_without_fix(paused_engine, capsys):
    inc = by_category(paused_engine, "unknown")  # the promo-engine incident: no known cause
    code, _, err = cli(capsys, "approve", inc, "--reviewer", "ann")
    assert code == 0, err
    assert paused_engine.records.incident(inc)["status"] == "approved"
    assert paused_engine.records.fixes(inc) == []


def test_reject_ends_rejected_without_fix_and_keeps_the_reason(paused_engine, capsys):
    inc = by_category(paused_engine, "db_pool_exhausted")
    code, _, err = cli(capsys, "reject", inc, "--reviewer", "ann", "--reason", "known maintenance window")
    assert code == 0, err
    doc = ReviewService(paused_engine).incident(inc)
    assert doc["status"] == "rejected"
    assert doc["decision"]["action"] == "reject" and doc["decision"]["note"] == "known maintenance window"
    assert paused_engine.records.fixes(inc) == []


@pytest.mark.parametrize("args", [
    ("reject", "--reviewer", "ann"),                      # no reason
    ("reject", "--reviewer", "ann", "--reason", "  "),    # blank reason
    ("revise", "--reviewer", "ann", "--feedback", ""),    # blank feedback
    ("approve", "--reviewer", " "),                       # blank reviewer
])
def test_decisions_missing_required_text_exit_2_and_change_nothing(paused_engine, capsys, args):
    inc = by_category(paused_engine, "db_pool_exhausted")
    before = paused_engine.records.incident(inc)
    code, out, err = cli(capsys, args[0], inc, *args[1:])
    assert code == 2 and out == "" and err.count("\n") == 1
    after = paused_engine.records.incident(inc)
    assert (after["status"], after["pending_interrupt_id"]) == ("awaiting_approval", before["pending_interrupt_id"])
    assert paused_engine.records.audit(inc) == []


def test_revise_redoes_recommendation_with_feedback_and_pauses_again(paused_engine, capsys):
    inc = by_category(paused_engine, "db_pool_exhausted")
    first = pending(paused_engine, inc)
    code, _, err = cli(capsys, "revise", inc, "--reviewer", "ann", "--feedback", "check pgbouncer first")
    assert code == 0, err
    doc = ReviewService(paused_engine).incident(inc)
    assert doc["status"] == "awaiting_approval" and doc["revisions"] == 1 and doc["revisions_left"] == 1
    assert doc["pending"]["interrupt_id"] != first
    assert any("check pgbouncer first" in step for step in doc["recommendation"]["steps"])


def test_third_revision_exits_3_and_incident_still_awaiting(paused_engine, capsys):
    inc = by_category(paused_engine, "db_pool_exhausted")
    for n in (1, 2):
        code, _, err = cli(capsys, "revise", inc, "--reviewer", "ann", "--feedback", f"round {n}")
        assert code == 0, err
    waiting_on = pending(paused_engine, inc)
    code, out, err = cli(capsys, "revise", inc, "--reviewer", "ann", "--feedback", "round 3")
    assert code == 3 and "2 revisions" in err
    row = paused_engine.records.incident(inc)
    assert row["status"] == "awaiting_approval" and row["pending_interrupt_id"] == waiting_on and row["revisions"] == 2
    assert [a["action"] for a in paused_engine.records.audit(inc)] == ["revise", "revise"]
    # approving or rejecting is still possible
    assert cli(capsys, "approve", inc, "--reviewer", "bob", "--expect-interrupt", waiting_on)[0] == 0


def test_revision_limit_is_a_conflict_in_the_service(paused_engine):
    service = ReviewService(paused_engine)
    inc = by_category(paused_engine, "null_reference")
    service.revise(inc, reviewer="ann", feedback="a")
    service.revise(inc, reviewer="ann", feedback="b")
    with pytest.raises(RevisionLimitReached):
        service.revise(inc, reviewer="ann", feedback="c")


def test_edit_then_approve_is_one_audited_change_with_the_edit_before_after(paused_engine, capsys):
    inc = by_category(paused_engine, "db_pool_exhausted")
    analysed = paused_engine.records.incident(inc)["confidence"]
    code, _, err = cli(capsys, "approve", inc, "--reviewer", "ann", "--expect-interrupt", pending(paused_engine, inc),
                       "--set", 'recommendation.action="Raise maximum-pool-size to 30"', "--set", "rca.confidence=0.6")
    assert code == 0, err
    assert paused_engine.records.incident(inc)["status"] == "fix_proposed"
    (entry,) = paused_engine.records.audit(inc)
    assert entry["action"] == "approve" and entry["reviewer"] == "ann"
    assert entry["before"]["rca.confidence"] == analysed and entry["after"]["rca.confidence"] == 0.6
    assert entry["after"]["recommendation.action"] == "Raise maximum-pool-size to 30"
    assert entry["after"]["decision.action"] == "approve" and entry["after"]["status"] == "fix_proposed"
    assert len(paused_engine.records.fixes(inc)) == 1


def test_edit_then_approve_with_invalid_edit_exits_2_and_decides_nothing(paused_engine, capsys):
    inc = by_category(paused_engine, "db_pool_exhausted")
    waiting_on = pending(paused_engine, inc)
    code, _, err = cli(capsys, "approve", inc, "--reviewer", "ann", "--set", "rca.confidence=7")
    assert code == 2 and "rca.confidence" in err
    assert pending(paused_engine, inc) == waiting_on
    assert paused_engine.records.fixes(inc) == [] and paused_engine.records.audit(inc) == []


def test_decision_on_decided_incident_exits_3(paused_engine, capsys):
    inc = by_category(paused_engine, "db_pool_exhausted")
    assert cli(capsys, "reject", inc, "--reviewer", "ann", "--reason", "dup")[0] == 0
    code, _, err = cli(capsys, "approve", inc, "--reviewer", "bob")
    assert code == 3 and "rejected" in err
    assert paused_engine.records.fixes(inc) == []
    assert len(paused_engine.records.audit(inc)) == 1


def test_unknown_incident_exits_4(paused_engine, capsys):
    code, out, err = cli(capsys, "approve", "INC-20990101-000000", "--reviewer", "ann")
    assert code == 4 and out == "" and "not found" in err


def test_service_requires_a_reviewer(paused_engine):
    inc = by_category(paused_engine, "db_pool_exhausted")
    with pytest.raises(UsageError):
        ReviewService(paused_engine).approve(inc, reviewer="")


def test_incident_document_carries_state_evidence_and_what_may_be_edited(paused_engine):
    service = ReviewService(paused_engine)
    inc = by_category(paused_engine, "db_pool_exhausted")
    doc = service.incident(inc)
    assert doc["pending"]["interrupt_id"] == pending(paused_engine, inc)
    assert doc["state"]["incident_id"] == inc and doc["state"]["rca"]["category"] == "db_pool_exhausted"
    assert len(doc["evidence"]) == doc["event_count"] == 3
    assert set(doc["evidence"][0]) >= {"time", "host", "level", "message", "exception", "stack", "trace_id", "event_id"}
    assert doc["log_window"] and doc["similar_docs"][0]["doc_id"]
    assert doc["revisions_left"] == 2 and "rca.confidence" in doc["editable_fields"]
    assert service.counts()["awaiting_approval"] == 4
    assert [r["incident_id"] for r in service.inbox(search="checkout")] == [inc]
