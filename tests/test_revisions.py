"""Request changes re-analyses: rca, recommend and propose_fix run again with every request kept;
a request can steer the category, name an entity, or add a step; the service shows each revision's
before and after."""
from __future__ import annotations

from pipeline.review.service import ReviewService
from tests.support import by_category, cli, state_of


def test_a_request_reruns_the_analysis_and_keeps_every_request(paused_engine):
    service = ReviewService(paused_engine)
    inc = by_category(paused_engine, "db_pool_exhausted")
    service.revise(inc, reviewer="ann", feedback="the table is orders_archive")
    service.revise(inc, reviewer="bob", feedback="add a step: check pgbouncer pool_mode first")
    state = state_of(paused_engine, inc)
    assert state.feedback == ["the table is orders_archive", "add a step: check pgbouncer pool_mode first"]
    assert state.revisions == 2 and [r.reviewer for r in state.revision_log] == ["ann", "bob"]
    # both requests answered in revision 2, the first is not dropped
    steps = state.recommendation.steps
    assert "check pgbouncer pool_mode first" in steps
    assert any("Reviewer request 1: the table is orders_archive" in s for s in steps)
    assert any("Reviewer request 2:" in s for s in steps)
    # the RCA ran again with the request: the reviewer's entity is a finding
    assert ("table", "orders_archive", "reviewer") in {(f.kind, f.value, f.source) for f in state.rca.findings}
    trace = [e.node for e in state.events]
    assert trace.count("rca") == 3 and trace.count("propose_fix") == 3  # analysis, then once per revision


def test_a_category_named_in_a_request_steers_the_rca(paused_engine):
    service = ReviewService(paused_engine)
    inc = by_category(paused_engine, "db_pool_exhausted")
    service.revise(inc, reviewer="ann", feedback="I think this is upstream_timeout, not the pool")
    rca = state_of(paused_engine, inc).rca
    assert rca.category == "upstream_timeout"
    assert any("as a reviewer asked" in n for n in rca.notes)
    row = paused_engine.records.incident(inc)
    assert row["category"] == "upstream_timeout" and row["status"] == "awaiting_approval"


def test_an_unsupported_requested_category_is_capped_below_the_fix_threshold(paused_engine):
    service = ReviewService(paused_engine)
    inc = by_category(paused_engine, "db_pool_exhausted")
    service.revise(inc, reviewer="ann", feedback="category: disk_full")
    state = state_of(paused_engine, inc)
    assert state.rca.category == "disk_full" and state.rca.confidence <= 0.3
    assert state.proposal is None  # below CODE_FIX_MIN_CONFIDENCE: nothing to approve as a fix


def test_the_service_shows_each_revisions_before_and_after(paused_engine, capsys):
    service = ReviewService(paused_engine)
    inc = by_category(paused_engine, "db_pool_exhausted")
    first = state_of(paused_engine, inc)
    service.revise(inc, reviewer="ann", feedback="this is upstream_timeout")
    service.revise(inc, reviewer="bob", feedback="add a step: page the payments team")
    revisions = service.revisions(inc)
    assert [(r["revision"], r["reviewer"], r["feedback"]) for r in revisions] == [
        (1, "ann", "this is upstream_timeout"), (2, "bob", "add a step: page the payments team")]
    one, two = revisions
    assert one["before"]["rca"]["category"] == first.rca.category == "db_pool_exhausted"
    assert one["after"]["rca"]["category"] == "upstream_timeout" == two["before"]["rca"]["category"]
    assert one["before"]["proposal"]["hash"] == first.proposal.hash
    assert {"field": "rca.category", "before": "db_pool_exhausted", "after": "upstream_timeout"} in one["changes"]
    assert "page the payments team" in two["after"]["recommendation"]["steps"]
    assert two["requests"] == ["this is upstream_timeout", "add a step: page the payments team"]
    code, out, _ = cli(capsys, "show", inc)
    assert code == 0 and "Revision 1 asked: this is upstream_timeout" in out and "Revision 2 asked:" in out


def test_model_path_gets_every_request_in_its_prompts(model_engine, stub, tmp_path):
    from tests.support import ingest_one

    inc = ingest_one(model_engine, tmp_path)
    service = ReviewService(model_engine)
    service.revise(inc, reviewer="ann", feedback="Not during trading hours")
    service.revise(inc, reviewer="ann", feedback="Mention the leak detector")
    rca_prompt = [r for r in stub.chat_requests() if r.schema_name == "RCAAnswer"][-1].text()
    rec_prompt = [r for r in stub.chat_requests() if r.schema_name == "RecommendationAnswer"][-1].text()
    for prompt in (rca_prompt, rec_prompt):
        block = prompt.split("<reviewer_feedback>", 1)[1].split("</reviewer_feedback>", 1)[0]
        assert "1. Not during trading hours" in block and "2. Mention the leak detector" in block
