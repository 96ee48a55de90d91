"""Revise with reasons: a reviewer's request for changes and their edits are inputs of the
analysis. The doc their words describe is taken (with what the evidence says of it), what they say it
is not leaves the wording, "not a code defect" means no fix proposal and no code advice, and the
revisions show what changed in the analysis itself."""
from __future__ import annotations

import pytest

from pipeline.analyst.reading import read_requests
from pipeline.review.service import ReviewService
from tests.support import ingest_one, state_of

DEADLOCK = [{"_time": f"2026-11-28T10:00:0{i}Z", "service": "orders-api", "level": "ERROR", "host": "o-1",
             "exception": "pymysql.err.OperationalError",
             "message": "(1213, 'Deadlock found when trying to get lock; try restarting transaction')"}
            for i in range(3)]
LOCK_WAIT = "This is a lock wait timeout (1205), not a deadlock; drop the deadlock wording"


@pytest.fixture
def deadlock(engine, tmp_path):
    incident = ingest_one(engine, tmp_path, DEADLOCK)
    state = state_of(engine, incident)
    assert state.rca.category == "db_deadlock" and state.rca.doc_ids == ["mysql-deadlock-found"]
    return incident


def test_a_request_the_events_contradict_is_answered_with_them_and_the_revision_shows_the_reason(engine, deadlock):
    from workbench.decision_panel import analysis_change

    service = ReviewService(engine)
    before = state_of(engine, deadlock).rca
    service.revise(deadlock, reviewer="ann", feedback=LOCK_WAIT)
    state = state_of(engine, deadlock)
    rca = state.rca
    # the events say "Deadlock found" (1213), none a lock wait timeout (1205): the analysis stands,
    # and says so with the events, rather than taking the reviewer's doc and dropping the words
    assert rca.category == "db_deadlock" and rca.doc_ids == before.doc_ids == ["mysql-deadlock-found"]
    assert rca.confidence == before.confidence
    answer = next(n for n in rca.notes if n.startswith("Reviewer request 1 ("))
    assert "contradict" in answer and "Deadlock found when trying to get lock" in answer
    assert LOCK_WAIT not in rca.root_cause and LOCK_WAIT not in state.recommendation.action  # not pasted in
    assert any(s.startswith(f"Reviewer request 1: {LOCK_WAIT} \u2192 ") and "contradict" in s
               for s in state.recommendation.steps)
    line = analysis_change(service.revisions(deadlock)[0])
    assert line.startswith("The analysis is unchanged") and "Deadlock found when trying to get lock" in line


def test_a_category_the_evidence_contradicts_is_taken_with_the_reason_and_a_low_confidence(engine, deadlock):
    service = ReviewService(engine)
    service.revise(deadlock, reviewer="ann", feedback="It is disk_full, the volume ran out of space")
    state = state_of(engine, deadlock)
    assert state.rca.category == "disk_full" and state.rca.confidence <= 0.3
    assert any("the evidence supports db_deadlock instead" in n for n in state.rca.notes)
    assert state.proposal is None
    changed = {c["field"] for c in service.revisions(deadlock)[0]["changes"]}
    assert {"rca.category", "rca.confidence", "rca.root_cause"} <= changed


def test_not_a_code_defect_in_a_request_means_no_fix_and_no_code_advice(engine, deadlock):
    service = ReviewService(engine)
    assert state_of(engine, deadlock).proposal is not None
    service.revise(deadlock, reviewer="ann", feedback="A DBA ran a migration by hand at 10:00. Not a code defect.")
    state = state_of(engine, deadlock)
    assert state.proposal is None
    assert "no code change" in state.recommendation.action
    assert not any("SHOW ENGINE INNODB STATUS" in s for s in state.recommendation.steps)
    assert any("not a code defect" in n for n in state.rca.notes)
    changed = {c["field"] for c in service.revisions(deadlock)[0]["changes"]}
    assert "proposal.hash" in changed or "proposal" in changed


def test_edit_and_approve_carries_a_root_cause_that_is_not_a_code_defect_through(engine, deadlock):
    service = ReviewService(engine)
    doc = service.approve(deadlock, reviewer="bob", edits={
        "rca.root_cause": "Kafka broker restarted during the deploy. Not a code defect."})
    state = state_of(engine, deadlock)
    assert state.proposal is None and state.fix is None
    assert "no code change" in state.recommendation.action and "Kafka broker restarted" in state.recommendation.action
    assert not any("SQLAlchemy" in s or "INNODB" in s for s in state.recommendation.steps)
    assert doc["status"] in ("approved", "awaiting_approval")  # the two-person rule may want a second approval


def test_the_model_analyst_is_told_the_reviewers_reading_and_the_analysis_they_asked_to_change(engine, deadlock):
    from pipeline.analyst import prompts

    state = state_of(engine, deadlock)
    state = state.model_copy(update={"feedback": [LOCK_WAIT]})
    reading = read_requests(engine.kb, state.feedback)
    user = prompts.rca_messages(state, ["db_deadlock", "unknown"], reading)[1][1]
    assert "Their description matches doc mysql-lock-wait-timeout (category db_deadlock)" in user
    assert "They say it is not: deadlock" in user
    assert "Previous analysis" in user and "mysql" in user.lower() and "category: db_deadlock" in user


def test_the_revisions_panel_says_what_changed_in_the_analysis(engine, deadlock):
    from workbench.decision_panel import analysis_change

    service = ReviewService(engine)
    service.revise(deadlock, reviewer="ann", feedback="It is disk_full, the volume ran out of space")
    line = analysis_change(service.revisions(deadlock)[0])
    assert "category db deadlock → disk full" in line and "confidence 0.88 → 0.3" in line  # words (issue 38.8)
    assert "db_deadlock" not in line and "disk_full" not in line
    assert "root cause rewritten" in line and "fix proposal withdrawn" in line


@pytest.mark.parametrize("question", ["Why is this not a code bug?", "Is this not a code defect?",
                                      "why isn't this a code bug", "Could it be that it is not a code issue?"])
def test_a_question_about_a_code_defect_is_not_read_as_saying_it_is_none(engine, deadlock, question):
    # issue 36.4: "Why is this not a code bug?" asks; it did not say "not a code defect", yet it was
    # read as saying so, and the fix proposal and the code advice were dropped
    service = ReviewService(engine)
    before = state_of(engine, deadlock)
    assert before.proposal is not None
    service.revise(deadlock, reviewer="ann", feedback=question)
    state = state_of(engine, deadlock)
    assert not read_requests(engine.kb, [question]).not_code_defect
    assert state.proposal is not None and state.proposal.hash == before.proposal.hash
    assert "no code change" not in state.recommendation.action
    assert not any(n.startswith("not a code defect, as a reviewer says") for n in state.rca.notes)


def test_a_statement_after_a_question_still_counts(engine, deadlock):
    service = ReviewService(engine)
    service.revise(deadlock, reviewer="ann", feedback="Why was this flagged? It is not a code defect, a DBA held the lock.")
    state = state_of(engine, deadlock)
    assert state.proposal is None and "no code change" in state.recommendation.action
