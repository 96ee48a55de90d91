"""Backtests and the eval export read the humans' outcome from who did what: a fork, an edit, a
request for changes and the approvals each count as the person's, and an analysis a person made is
never scored as the live analyst's answer."""
from __future__ import annotations

from pipeline.backtest.candidate import candidate_for
from pipeline.backtest.decisions import decision_cases
from pipeline.backtest.report import DISAGREEING, report, step_words
from pipeline.backtest.run import run_backtest
from pipeline.review.service import ReviewService
from pipeline.store import backtests
from tests.support import texts

FEEDBACK = "Not a null reference: the payment gateway refused the connection (ECONNREFUSED)"


def paused_by_category(engine) -> dict[str, str]:
    return {r["category"]: r["incident_id"] for r in engine.records.incidents(status="awaiting_approval")}


def forked_then_approved(engine) -> str:
    """ann forks the `unknown` incident at the checkpoint after rca, setting connection_refused;
    bob approves the fork's analysis."""
    review = ReviewService(engine)
    incident = paused_by_category(engine)["unknown"]
    after_rca = next(h["checkpoint_id"] for h in review.history(incident) if h["next"] == ["recommend"])
    review.fork(incident, checkpoint_id=after_rca, reviewer="ann", edits={"rca.category": "connection_refused"})
    review.approve(incident, reviewer="bob")
    assert engine.records.incident(incident)["category"] == "connection_refused"
    return incident


def revised_then_approved(engine) -> str:
    """ann asks for changes on the `null_reference` incident; bob approves the revised analysis."""
    review = ReviewService(engine)
    incident = paused_by_category(engine)["null_reference"]
    review.revise(incident, reviewer="ann", feedback=FEEDBACK)
    review.approve(incident, reviewer="bob")
    return incident


def row_of(rep: dict, incident_id: str) -> dict:
    [row] = [r for r in rep["disagreements"] + rep["changes"] if r["incident_id"] == incident_id]
    return row


def test_a_fork_that_corrected_the_category_is_the_forkers_correction_not_the_analysts_answer(paused_engine):
    incident = forked_then_approved(paused_engine)
    rep = report(paused_engine, run_backtest(paused_engine, candidate_for(paused_engine)).backtest_id)
    row = row_of(rep, incident)
    # the live analyst said unknown; ann's fork said connection_refused; the candidate is the analyst again
    assert (row["old_category"], row["human_category"], row["new_category"]) == (
        "unknown", "connection_refused", "unknown")
    assert row["outcome"] == "approved_after_edits" and row["verdict"] == "repeats_correction"
    assert row in rep["disagreements"]
    assert rep["corrections"]["same_mistake"] == [incident]
    assert row["who_did_what"] == ["ann forked the run and set the rca.category unknown → connection_refused",
                                   "bob approved"]
    assert row["human_edit"]["rca.category"]["by"] == "ann"


def test_a_candidate_that_only_raises_the_fix_threshold_scores_as_the_live_analyst(paused_engine, tmp_path):
    forked_then_approved(paused_engine)
    review = ReviewService(paused_engine)
    ids = paused_by_category(paused_engine)
    review.approve(ids["upstream_rate_limited"], reviewer="ann")
    review.reject(ids["null_reference"], reviewer="cy", reason="a test fixture, not an outage")
    settings = tmp_path / "threshold.toml"
    settings.write_text("CODE_FIX_MIN_CONFIDENCE = 0.7\n")
    rep = report(paused_engine, run_backtest(paused_engine, candidate_for(paused_engine, settings_file=settings))
                 .backtest_id)
    s = rep["summary"]
    assert s["category_changed"] == 0  # it names the same category as the live analyst everywhere
    assert s["labelled"] == 2 and s["candidate_agreement"] == s["live_agreement"] == 0.5


def test_a_revision_reads_who_asked_and_who_approved(paused_engine):
    incident = revised_then_approved(paused_engine)
    revised = paused_engine.records.incident(incident)["category"]
    rep = report(paused_engine, run_backtest(paused_engine, candidate_for(paused_engine)).backtest_id)
    rows = {r["incident_id"]: r for r in rep["disagreements"] + rep["changes"]}
    assert all(r["verdict"] in DISAGREEING for r in rep["disagreements"])
    result = paused_engine.records.query("SELECT * FROM backtest_results WHERE incident_id = $1", (incident,))[0]
    # the live analyst's own answer, before ann's request: what the candidate (no request) is compared with
    assert result["old_category"] == "null_reference" and result["outcome"] == "revised"
    if revised != "null_reference":  # the request moved the category: a correction by the reviewers
        assert rows[incident]["verdict"] == "repeats_correction"
        assert rows[incident]["who_did_what"] == [f"ann asked for changes: {FEEDBACK}", "bob approved"]


def test_the_eval_export_keeps_a_forks_correction(paused_engine):
    incident = forked_then_approved(paused_engine)
    [case] = [c for c in decision_cases(paused_engine) if c["incident_id"] == incident]
    assert case["expected"] == "connection_refused"
    assert case["edits"]["rca.category"]["from"] == "unknown"
    assert case["note"] == "approved by bob after ann forked and set rca.category"


def test_the_page_says_who_forked_and_who_approved(app, paused_engine):
    forked = forked_then_approved(paused_engine)
    revised = revised_then_approved(paused_engine)
    run_backtest(paused_engine, candidate_for(paused_engine))
    app.switch_page("app_pages/backtests.py").run()
    assert not app.exception, [e.value for e in app.exception]
    said = texts(app)
    assert f"{forked} — repeats the category a reviewer corrected" in said
    # in the audit's words, not the state's path
    assert "ann forked the run and set the category unknown → connection refused" in said
    assert "rca.category" not in said
    assert "approved as analysed" not in said and "revised by" not in said
    if paused_engine.records.incident(revised)["category"] != "null_reference":
        assert "Live analyst's answer, before the request for changes" in said
        assert f"ann asked for changes: {FEEDBACK}" in said


def test_the_chart_gives_each_outcome_a_whole_label():
    from workbench.backtest_view import agreement_figure

    fig = agreement_figure({"a": {"words": "approved after a person changed the analysis", "same_category": 1,
                                  "changed_category": 2}})
    assert {bar.orientation for bar in fig.data} == {"h"}  # the words beside the bars, not cut under them
    assert fig.layout.yaxis.automargin is True


def test_a_merged_incident_is_read_as_merged_by_who_merged_it_not_as_undecided(paused_engine):
    review = ReviewService(paused_engine)
    ids = paused_by_category(paused_engine)
    merged, into = ids["unknown"], ids["db_pool_exhausted"]
    review.merge(merged, into=into, reason="the same pool outage", reviewer="ann")
    assert paused_engine.records.incident(merged)["status"] == "merged"
    run = run_backtest(paused_engine, candidate_for(paused_engine), status="decided")
    rep = report(paused_engine, run.backtest_id)
    assert rep["by_outcome"]["merged"]["incidents"] == 1 and "pending" not in rep["by_outcome"]
    [result] = [r for r in backtests.results(paused_engine.records, run.backtest_id) if r["incident_id"] == merged]
    assert result["outcome"] == "merged" and result["human_category"] is None
    assert step_words(result["human_decision"]) == [f"ann merged it into {into}: the same pool outage"]
