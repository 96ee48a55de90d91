"""Issue 36 (session 59): after a person sets the cause (an edit, a fork, Edit & approve), what is derived from it
follows their cause, not the analyst's: the recommendation's action leads with the root cause they wrote or the
category they set (never the analyst's sentence about the events' exception), and the code-fix eligibility reads
the cause they wrote (a kill at a memory limit is operational: no code fix). Through the real graph with the
offline analyst: paused at the gate, edited or forked as the workbench does (review.edit, review.fork), recommend
and propose_fix re-run."""
from __future__ import annotations

from pipeline.review.service import ReviewService
from pipeline.unattended.file_ingest import ingest_path
from tests.support import by_category, state_of, write_jsonl


def test_an_edited_root_cause_leads_the_recommendation_that_is_redone_from_it(paused_engine):
    service = ReviewService(paused_engine)
    inc = by_category(paused_engine, "db_pool_exhausted")
    before = state_of(paused_engine, inc)
    assert before.recommendation.action.startswith("`HikariPool-1` is exhausted")  # the analyst's cause
    theirs = "A nightly export job keeps every pool connection open for minutes; checkout requests wait behind it."
    service.edit(inc, reviewer="bob", edits={"rca.root_cause": theirs})
    after = state_of(paused_engine, inc)
    assert after.rca.root_cause == theirs
    assert after.recommendation.action.startswith(f"As reviewer bob states: {theirs}"), after.recommendation.action
    assert "HikariPool-1` is exhausted" not in after.recommendation.action
    assert any(n.startswith("root cause as written by reviewer bob") for n in after.rca.notes)


def test_a_fork_to_another_category_does_not_lead_with_the_analysts_sentence_of_the_events(paused_engine):
    service = ReviewService(paused_engine)
    inc = by_category(paused_engine, "db_pool_exhausted")
    after_rca = next(h for h in service.history(inc, limit=200) if h["writes_by"] == ["rca"])["checkpoint_id"]
    service.fork(inc, checkpoint_id=after_rca, reviewer="ann", edits={"rca.category": "upstream_timeout"})
    rec = state_of(paused_engine, inc).recommendation
    # the pool's exception as "the cause" was the analyst's reading; the action says whose cause this is
    assert rec.action.startswith("Reviewer ann set the cause to upstream timeout."), rec.action
    assert "SQLTransientConnectionException` is raised" not in rec.action


def test_an_edit_with_a_category_and_its_cause_leads_with_their_cause_after_the_check(paused_engine):
    service = ReviewService(paused_engine)
    inc = by_category(paused_engine, "null_reference")
    theirs = "ORDERS_DEFAULT_WAREHOUSE is not set in the new deploy, so the warehouse lookup returns None."
    service.edit(inc, reviewer="bob", edits={"rca.category": "config_missing", "rca.root_cause": theirs})
    rec = state_of(paused_engine, inc).recommendation
    assert rec.action.startswith("Confirm config missing first")  # no event shows it: confirmed first
    assert f"If it is confirmed: As reviewer bob states: {theirs}" in rec.action, rec.action
    assert "AttributeError` is raised" not in rec.action


def _heap_events() -> list[dict]:
    trace = ("java.lang.OutOfMemoryError: Java heap space\n\tat java.base/java.util.Arrays.copyOf(Arrays.java:3537)\n"
             "\tat com.acme.ledger.export.StatementBuilder.append(StatementBuilder.java:88)")
    line = {"service": "ledger-export", "host": "ledger-export-7c9d", "level": "ERROR",
            "logger": "com.acme.ledger.export.StatementJob", "exception": "java.lang.OutOfMemoryError",
            "message": "Statement export failed for account batch: java.lang.OutOfMemoryError: Java heap space",
            "stack": trace}
    return [{**line, "_time": f"2026-12-03T04:1{n}:0{n}Z"} for n in range(3)]


def test_a_written_cause_of_a_kill_at_the_memory_limit_takes_the_code_fix_away(engine, tmp_path):
    ingest_path(engine, write_jsonl(tmp_path / "heap.jsonl", _heap_events()))
    inc = by_category(engine, "out_of_memory")
    before = state_of(engine, inc)
    assert before.proposal is not None, before.rca.notes  # a heap exhausted in code: a code cause
    theirs = "The pod was OOMKilled at its 768Mi container limit during the month-end export; the heap is not the bug."
    ReviewService(engine).edit(inc, reviewer="dana", edits={"rca.root_cause": theirs})
    after = state_of(engine, inc)
    assert after.proposal is None
    assert after.recommendation.steps[0].startswith("Runbook (operational, no code change)"), after.recommendation.steps
    assert after.recommendation.action.startswith("Handle ledger-export operationally (a container killed at its "
                                                  "memory limit), no code change: As reviewer dana states:")
