"""Editing a paused incident: validated by the state schema, a new `update` checkpoint, still paused
at approval (with a new interrupt), and refused edits leave no checkpoint behind."""
from __future__ import annotations

import pytest

from pipeline.review.service import ReviewService
from tests.support import by_category, checkpoint_count, cli, pending


def test_edit_keeps_incident_paused_at_approval_with_edited_values(paused_engine, capsys):
    inc = by_category(paused_engine, "db_pool_exhausted")
    old = pending(paused_engine, inc)
    analysed = paused_engine.records.incident(inc)["confidence"]
    code, _, err = cli(capsys, "edit", inc, "--reviewer", "ann", "--set", "rca.confidence=0.7",
                       "--set", 'recommendation.action="Find the connection leak first"')
    assert code == 0, err
    doc = ReviewService(paused_engine).incident(inc)
    assert doc["status"] == "awaiting_approval"
    assert doc["pending"]["interrupt_id"] != old  # the edit re-armed the gate
    assert doc["rca"]["confidence"] == 0.7 and doc["recommendation"]["action"] == "Find the connection leak first"
    # the edit is an `update` checkpoint; the fix proposal is then derived again from the edited
    # analysis (propose_fix), so the reviewer approves a proposal computed from what they see
    head, update = ReviewService(paused_engine).history(inc, limit=2)
    assert head["source"] == "loop" and head["is_pending"] and head["human_action"] == "edit"
    assert head["next"] == ["approval"] and head["writes_by"] == ["propose_fix"]
    assert update["source"] == "update" and update["human_action"] == "edit"
    assert update["next"] == ["propose_fix"] and update["writes_by"] == ["recommend"]
    assert {"field": "rca.confidence", "before": analysed, "after": 0.7} in update["changes"]


def test_approval_with_the_interrupt_seen_before_an_edit_is_refused(paused_engine, capsys):
    inc = by_category(paused_engine, "db_pool_exhausted")
    old = pending(paused_engine, inc)
    assert cli(capsys, "edit", inc, "--reviewer", "ann", "--set", 'severity="high"')[0] == 0
    code, _, err = cli(capsys, "approve", inc, "--reviewer", "bob", "--expect-interrupt", old)
    assert code == 3 and "no longer pending" in err
    assert paused_engine.records.fixes(inc) == []
    new = pending(paused_engine, inc)
    assert cli(capsys, "approve", inc, "--reviewer", "bob", "--expect-interrupt", new)[0] == 0
    doc = ReviewService(paused_engine).incident(inc)
    assert doc["status"] == "fix_proposed" and doc["severity"] == "high" and doc["decision"]["interrupt_id"] == new
    assert len(paused_engine.records.fixes(inc)) == 1


@pytest.mark.parametrize("assignment, field", [
    ('rca.confidence="high"', "rca.confidence"),         # wrong type
    ('rca.confidence="0.8"', "rca.confidence"),          # a string is not a number, even this one
    ("rca.confidence=1.5", "rca.confidence"),            # out of range
    ("rca.confidence=-0.1", "rca.confidence"),
    ('title="hello"', "title"),                          # not an editable field
    ('rca.owner="db team"', "rca.owner"),                # unknown field
    ('severity="urgent"', "severity"),                   # not a severity
    ('rca.category="cosmic_rays"', "rca.category"),      # not a category
    ('rca.evidence="one line"', "rca.evidence"),         # a list is expected
    ("rca.confidence=oops", "rca.confidence"),           # not JSON at all
])
def test_invalid_edits_exit_2_and_leave_no_checkpoint(paused_engine, capsys, assignment, field):
    inc = by_category(paused_engine, "db_pool_exhausted")
    before_row = paused_engine.records.incident(inc)
    before_count = checkpoint_count(paused_engine, inc)
    code, out, err = cli(capsys, "edit", inc, "--reviewer", "ann", "--set", assignment)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and field in err
    assert checkpoint_count(paused_engine, inc) == before_count
    after_row = paused_engine.records.incident(inc)
    assert (after_row["status"], after_row["pending_interrupt_id"], after_row["claim_owner"]) == \
        ("awaiting_approval", before_row["pending_interrupt_id"], None)
    assert paused_engine.records.audit(inc) == []


def test_edit_that_changes_nothing_is_refused(paused_engine, capsys):
    inc = by_category(paused_engine, "db_pool_exhausted")
    count = checkpoint_count(paused_engine, inc)
    severity = paused_engine.records.incident(inc)["severity"]
    code, _, err = cli(capsys, "edit", inc, "--reviewer", "ann", "--set", f'severity="{severity}"')
    assert code == 2 and "changes nothing" in err
    assert checkpoint_count(paused_engine, inc) == count


def test_edit_as_rca_redoes_the_recommendation_from_the_edited_analysis(paused_engine, capsys):
    inc = by_category(paused_engine, "db_pool_exhausted")
    edited = "medium" if paused_engine.records.incident(inc)["severity"] != "medium" else "high"
    code, _, err = cli(capsys, "edit", inc, "--reviewer", "ann", "--as-node", "rca", "--set", f'severity="{edited}"')
    assert code == 0, err
    doc = ReviewService(paused_engine).incident(inc)
    assert doc["status"] == "awaiting_approval" and doc["recommendation"]["risk"] == edited
    newest = ReviewService(paused_engine).history(inc, limit=3)
    assert [h["source"] for h in newest] == ["loop", "loop", "update"]
    assert [h["writes_by"] for h in newest] == [["propose_fix"], ["recommend"], ["rca"]]
    assert {h["human_action"] for h in newest} == {"edit"}


def test_edit_with_an_as_node_that_would_leave_the_gate_exits_2(paused_engine, capsys):
    inc = by_category(paused_engine, "db_pool_exhausted")
    count = checkpoint_count(paused_engine, inc)
    code, _, err = cli(capsys, "edit", inc, "--reviewer", "ann", "--as-node", "approval", "--set", 'severity="high"')
    assert code == 2 and "--as-node" in err
    assert checkpoint_count(paused_engine, inc) == count


def test_edit_of_a_decided_incident_exits_3_and_writes_nothing(paused_engine, capsys):
    inc = by_category(paused_engine, "db_pool_exhausted")
    assert cli(capsys, "reject", inc, "--reviewer", "ann", "--reason", "dup")[0] == 0
    count = checkpoint_count(paused_engine, inc)
    code, _, err = cli(capsys, "edit", inc, "--reviewer", "bob", "--set", 'severity="high"')
    assert code == 3 and "rejected" in err
    assert checkpoint_count(paused_engine, inc) == count


def test_a_resume_after_a_raw_state_update_is_refused_not_swallowed(paused_engine):
    """LangGraph keeps `next` at approval after update_state but drops the pending interrupt, and would
    feed a plain resume to a fresh interrupt nobody saw; the checkpoint check refuses it instead."""
    from pipeline.errors import Conflict
    from pipeline.engine.graph import thread_config
    from pipeline.engine.runner import run_pending

    inc = by_category(paused_engine, "db_pool_exhausted")
    seen = pending(paused_engine, inc)
    cfg = thread_config(inc)
    paused_engine.graph.update_state(cfg, {"severity": "high"}, as_node="propose_fix")  # bypassing the service
    snap = paused_engine.graph.get_state(cfg)
    assert snap.next == ("approval",) and snap.interrupts == ()

    with pytest.raises(Conflict):
        ReviewService(paused_engine).approve(inc, reviewer="ann", expect_interrupt=seen)
    assert paused_engine.graph.get_state(cfg).values["decision"] is None
    assert paused_engine.records.fixes(inc) == [] and paused_engine.records.audit(inc) == []
    assert paused_engine.records.incident(inc)["status"] == "analyzing"  # the record follows the checkpoint

    run_pending(paused_engine)  # the runner re-arms the gate
    assert pending(paused_engine, inc) != seen


# -- one rule for every editor: Edit & approve, the State tab (edit) and a fork -----------------------

def test_an_edit_of_the_category_re_runs_recommend_and_propose_fix_from_it(paused_engine):
    inc = by_category(paused_engine, "db_pool_exhausted")
    review = ReviewService(paused_engine)
    before = review.incident(inc)
    doc = review.edit(inc, reviewer="ann", edits={"rca.category": "db_deadlock"})  # no as_node: the rule
    assert doc["status"] == "awaiting_approval" and doc["rca"]["category"] == "db_deadlock"
    newest = review.history(inc, limit=3)
    assert [h["writes_by"] for h in newest] == [["propose_fix"], ["recommend"], ["rca"]]
    # the recommendation is the deadlock one now, not the pool one the analysis first led to
    assert doc["recommendation"]["action"] != before["recommendation"]["action"]
    assert "DEADLOCK" in doc["recommendation"]["action"]
    # the analysis agrees with the category ann set: no event shows a deadlock, so it is said so, capped and
    # never a fix (set as a request naming it sets it), not the pool's cause and proposal under a new name
    assert doc["rca"]["root_cause"].startswith("Set by reviewer ann to db deadlock; no event of this incident shows it")
    assert doc["proposal"] is None and before["proposal"] is not None


def test_edit_and_approve_of_the_category_approves_what_the_edit_re_derived(paused_engine):
    inc = by_category(paused_engine, "db_pool_exhausted")
    review = ReviewService(paused_engine)
    seen = review.incident(inc)
    doc = review.approve(inc, reviewer="ann", expect_interrupt=seen["pending"]["interrupt_id"],
                         expect_proposal=seen["proposal"]["hash"], edits={"rca.category": "db_deadlock"})
    assert doc["rca"]["category"] == "db_deadlock" and "DEADLOCK" in doc["recommendation"]["action"]
    approval = next(a for a in paused_engine.records.audit(inc) if a["action"] == "approve")
    assert approval["after"]["edited"] == ["rca.category"]
    assert approval["after"]["reran"] == ["recommend", "propose_fix"]
    recorded = paused_engine.records.fixes(inc)
    # what is recorded is what the edited analysis derived, and the decision names it: no event shows a
    # deadlock, so the category ann set proposes no fix (the pool's proposal is not approved under its name)
    assert doc["decision"]["proposal_hash"] == approval["after"]["proposal_hash"] != seen["proposal"]["hash"]
    assert doc["decision"]["proposal_hash"] is None and doc["proposal"] is None and recorded == []


def test_edit_and_approve_of_the_recommendation_keeps_it_as_edited(paused_engine):
    inc = by_category(paused_engine, "db_pool_exhausted")
    review = ReviewService(paused_engine)
    seen = review.incident(inc)
    doc = review.approve(inc, reviewer="ann", expect_interrupt=seen["pending"]["interrupt_id"],
                         edits={"recommendation.action": "Find the connection leak first"})
    assert doc["recommendation"]["action"] == "Find the connection leak first"
    approval = next(a for a in paused_engine.records.audit(inc) if a["action"] == "approve")
    assert approval["after"]["reran"] == ["propose_fix"]


@pytest.mark.parametrize("edits, reruns", [
    ({"rca.category": "db_deadlock"}, ["recommend", "propose_fix"]),
    ({"severity": "low"}, ["recommend", "propose_fix"]),
    ({"recommendation.action": "Find the leak"}, ["propose_fix"]),
    ({"rca.confidence": 0.5, "recommendation.action": "Find the leak"}, ["propose_fix"]),
])
def test_an_edit_of_the_paused_incident_and_a_fork_from_its_gate_follow_one_rule(paused_engine, edits, reruns):
    inc = by_category(paused_engine, "db_pool_exhausted")
    review = ReviewService(paused_engine)
    gate = review.incident(inc)["head_checkpoint_id"]
    effect = review.edit_effect(edits)
    plan = review.rerun_plan(inc, gate, edits=edits)
    assert effect["reruns"] == reruns == plan["nodes"][:-1] and plan["nodes"][-1] == "approval"
    assert effect["effect"] == plan["fork_effect"]
    assert all(field in effect["text"] for field in edits)
