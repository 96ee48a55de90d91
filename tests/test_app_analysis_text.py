"""An analysis's text as the reviewer reads it everywhere it is shown (AppTest): the analyst quotes
the log's words as Markdown code spans (`HikariPool-1`); the incident page showed them as text with
their backticks, the backtests and pairwise panels escaped them into visible backticks (issue 38)."""
from __future__ import annotations

from pipeline.review.service import ReviewService
from tests.support import open_incident, texts
from tests.test_app_pairwise import open_review
from workbench.audit_words import changes_frame

QUOTED = "The pool `HikariPool-1` ran out: raise ``maximum-pool-size``."
READ = "The pool HikariPool-1 ran out: raise maximum-pool-size."


def test_the_incident_page_shows_the_root_cause_without_code_span_backticks(app, paused_engine):
    incident = next(r["incident_id"] for r in paused_engine.records.incidents() if r["service"] == "checkout-api")
    review = ReviewService(paused_engine)
    gate = next(h for h in review.history(incident) if h["is_pending"])["checkpoint_id"]
    review.fork(incident, checkpoint_id=gate, reviewer="ann", edits={"rca.root_cause": QUOTED})
    open_incident(app, incident)
    shown = texts(app)
    # the page's own code spans (the proposal's hash) are markup it renders; the analysis's are dropped
    stray = [line for line in shown.splitlines() if "`" in line and not line.startswith("**Fix proposal** `")]
    assert READ in shown and not stray, stray
    assert "setting the root cause to The pool HikariPool-1 ran out" in shown  # the audit's sentence too


def test_the_history_diff_shows_the_root_cause_as_the_incident_page_does():
    frame = changes_frame([{"field": "rca.root_cause", "before": "a `b` c", "after": QUOTED},
                           {"field": "recommendation.steps", "before": [], "after": ["Raise `pool` size"]}])
    assert list(frame["after"]) == [READ, "Raise pool size"] and list(frame["before"]) == ["a b c", "—"]


def test_backtests_and_pairwise_show_the_root_cause_without_backticks(app, paused_engine, tmp_path):
    ids, bt = open_review(app, paused_engine, tmp_path)
    with paused_engine.records.transaction() as conn:
        conn.execute("UPDATE backtest_results SET old_root_cause = $1, new_root_cause = $1 WHERE backtest_id = $2",
                     (QUOTED, bt))
    app.run()
    app.selectbox(key=f"backtests_pair_pick_{bt}").set_value(ids["approved"]).run()
    assert not app.exception, [e.value for e in app.exception]
    shown = texts(app)
    assert READ in shown and "maximum-pool-size`" not in shown and "`HikariPool" not in shown
