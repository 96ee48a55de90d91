"""The Backtests page (AppTest from app.py): summary, confusion table, chart, each disagreement
side by side, and the link to the incident's time travel at the checkpoint the backtest used."""
from __future__ import annotations

from pipeline.backtest.candidate import candidate_for
from pipeline.backtest.run import run_backtest
from tests.support import texts
from tests.test_backtest import decided, docs_without


def test_the_page_shows_a_backtest_and_opens_a_disagreement_at_its_checkpoint(app, paused_engine, tmp_path):
    ids = decided(paused_engine)
    run = run_backtest(paused_engine, candidate_for(paused_engine, docs=docs_without(tmp_path, "upstream_rate_limited")),
                       status="all")
    app.switch_page("app_pages/backtests.py").run()
    assert not app.exception, [e.value for e in app.exception]
    assert app.selectbox(key="backtests_pick").value == run.backtest_id
    metrics = {m.label: m.value for m in app.metric}
    assert metrics["Incidents"] == "4/4" and metrics["Category changed"] == "1"
    assert metrics["Agreement, live"] == "50%" and metrics["Agreement, candidate"] == "0%"
    [confusion] = [d.value for d in app.dataframe]
    assert confusion.loc["upstream_rate_limited", "unknown"] == 1
    assert len(app.get("plotly_chart")) == 1
    said = texts(app)
    assert f"{ids['approved']} — changes a category reviewers approved" in said
    assert "bob approved after editing rca.category unknown → connection_refused" in said
    assert "approved category: upstream_rate_limited" in said
    disagreements = [b for b in app.button if b.key.startswith("backtests_open_")]
    assert len(disagreements) == 2
    row = next(r for r in run_report(paused_engine, run.backtest_id) if r["incident_id"] == ids["approved"])
    index = [r["incident_id"] for r in run_report(paused_engine, run.backtest_id)].index(ids["approved"])
    app.button(key=f"backtests_open_{index}").click().run()
    assert not app.exception, [e.value for e in app.exception]
    assert app.query_params["incident"] == ids["approved"]
    assert app.session_state[f"incident_tab_{ids['approved']}"] == "History & time travel"
    assert app.selectbox(key=f"incident_history_pick_{ids['approved']}").value == row["checkpoint_id"]


def run_report(engine, backtest_id):
    from pipeline.backtest.report import report

    return report(engine, backtest_id)["disagreements"]


def test_without_backtests_the_page_says_how_to_run_one(app):
    app.switch_page("app_pages/backtests.py").run()
    assert not app.exception
    assert "python -m pipeline backtest" in texts(app)

