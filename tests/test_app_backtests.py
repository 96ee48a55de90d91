"""The Backtests page (AppTest from app.py): summary, confusion table, chart, each disagreement
side by side, and the link to the incident's time travel at the checkpoint the backtest used."""
from __future__ import annotations

import os
import re
import signal

from pipeline.backtest.candidate import candidate_for
from pipeline.backtest.run import run_backtest
from pipeline.review.service import ReviewService
from pipeline.store import backtests
from tests.support import said, texts, unescape, wait_for
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
    # the categories in the reviewer's words, as the incident page says them (the report's JSON keeps codes)
    assert confusion.loc["upstream rate limited", "unknown"] == 1
    assert not [c for c in [*confusion.index, *confusion.columns] if "_" in c]
    assert len(app.get("plotly_chart")) == 1
    said = texts(app)
    assert f"{ids['approved']} — changes a category reviewers approved" in said
    assert "bob approved after editing the category unknown → connection refused" in said
    assert "approved category: upstream rate limited" in said
    assert "upstream_rate_limited" not in said
    assert "upstream_rate_limited" in {r["human_category"] for r in run_report(paused_engine, run.backtest_id)}  # codes kept
    disagreements = [b for b in app.button if b.key.startswith("backtests_open_")]
    assert len(disagreements) == 2
    row = next(r for r in run_report(paused_engine, run.backtest_id) if r["incident_id"] == ids["approved"])
    index = [r["incident_id"] for r in run_report(paused_engine, run.backtest_id)].index(ids["approved"])
    app.button(key=f"backtests_open_{index}").click().run()
    assert not app.exception, [e.value for e in app.exception]
    assert app.query_params["incident"] == ids["approved"]
    assert app.session_state[f"incident_tab_{ids['approved']}"] == "History & time travel"
    assert app.selectbox(key=f"incident_history_pick_{ids['approved']}").value == row["checkpoint_id"]


def test_a_candidate_that_agrees_as_often_as_the_live_analyst_shows_no_gain(app, paused_engine):
    decided(paused_engine)
    run_backtest(paused_engine, candidate_for(paused_engine))  # the live analyst again: the same agreement
    app.switch_page("app_pages/backtests.py").run()
    assert not app.exception, [e.value for e in app.exception]
    [metric] = [m for m in app.metric if m.label == "Agreement, candidate"]
    assert metric.value == {m.label: m.value for m in app.metric}["Agreement, live"]
    # not "+0 pts" with a green up arrow
    assert (metric.proto.delta, metric.proto.direction, metric.proto.color) == (
        "no change", metric.proto.MetricDirection.NONE, metric.proto.MetricColor.GRAY)


def run_report(engine, backtest_id):
    from pipeline.backtest.report import report

    return report(engine, backtest_id)["disagreements"]


def test_without_backtests_the_page_says_how_to_run_one(app):
    app.switch_page("app_pages/backtests.py").run()
    assert not app.exception
    assert "python -m pipeline backtest" in texts(app)


def test_a_link_to_a_backtest_when_there_are_none_names_it(app):
    app.switch_page("app_pages/backtests.py")
    app.query_params["backtest"] = "nope"
    app.run()
    assert not app.exception
    assert "In the link, there is no backtest named 'nope': there are no backtests here yet." in said(app, "warning")
    assert "python -m pipeline backtest" in texts(app)  # still says how to run one


def test_a_link_to_a_checkpoint_the_incident_does_not_have_says_so(app, paused_engine):
    from tests.support import INCIDENT_PAGE, said

    incident = paused_engine.records.incidents(status="awaiting_approval")[0]["incident_id"]
    app.switch_page(INCIDENT_PAGE)
    app.query_params["incident"] = incident
    app.query_params["checkpoint"] = "1f0c0ffe-0000-6000-8000-000000000000"
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    assert app.session_state[f"incident_tab_{incident}"] == "History & time travel"
    assert ("The link's checkpoint 1f0c0ffe-0000-6000-8000-000000000000 is not one of this incident's checkpoints: "
            "the History & time travel tab below shows the newest.") in said(app, "warning")
    # said where the link lands, above the header, not ~3,500 px down in the tab (issue 38.4)
    order = [node for node in app.main if getattr(node, "type", None) in ("alert", "metric")
             or type(node).__name__ in ("Warning", "Metric")]
    kinds = [type(node).__name__ for node in order]
    assert "Warning" in kinds and kinds.index("Warning") < kinds.index("Metric"), kinds
    assert said(app, "warning").count("1f0c0ffe") == 1  # once
    newest = max(r["checkpoint_id"] for r in ReviewService(paused_engine).tree(incident)["nodes"])
    assert app.selectbox(key=f"incident_history_pick_{incident}").value == newest


# -- starting, following and cancelling a backtest from the page ----------------------------------
def progress_texts(app) -> str:
    return unescape("\n".join(p.proto.text for p in app.get("progress")))



def start(app, *, kind: str, value: str = "", scope: str = "decided"):
    app.switch_page("app_pages/backtests.py").run()
    app.radio(key="backtests_kind").set_value(kind)
    app.text_input(key="backtests_value").input(value)
    app.selectbox(key="backtests_scope").set_value(scope)
    next(b for b in app.button if b.label == "Start the backtest").click().run()
    assert not app.exception, [e.value for e in app.exception]
    return app


def test_a_backtest_started_on_the_page_runs_in_a_worker_and_its_report_shows(app, paused_engine, tmp_path):
    decided(paused_engine)
    settings = tmp_path / "threshold.toml"
    settings.write_text("CODE_FIX_MIN_CONFIDENCE = 0.7\n")
    start(app, kind="settings", value=str(settings), scope="all")
    assert "Started" in said(app, "success")
    [row] = wait_for(lambda: [r for r in backtests.backtests(paused_engine.records) if r["status"] == "done"],
                     timeout=180)
    assert row["candidate"] == f"settings {settings} (offline analyzer)" and row["done"] == row["total"] == 4
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    assert app.selectbox(key="backtests_pick").value == row["backtest_id"]
    assert {m.label: m.value for m in app.metric}["Incidents"] == "4/4"


def test_a_candidate_that_cannot_run_is_refused_before_any_worker_starts(app, paused_engine, tmp_path):
    start(app, kind="docs", value=str(tmp_path / "missing"))
    assert "not a directory of error docs" in said(app, "error")
    start(app, kind="settings", value="")
    assert "Give the settings file to try." in said(app, "error")
    assert backtests.backtests(paused_engine.records) == []


def test_a_backtest_cancelled_on_the_page_stops_and_resumes_without_duplicates(app, paused_engine, tmp_path):
    from tests.test_backtest import many_decided, result_count

    ids = many_decided(paused_engine, tmp_path, 60)
    start(app, kind="live")

    def worker_paused_after_a_few() -> int | None:
        # the worker is stopped (SIGSTOP) as soon as it has a few results, so the page's cancel
        # always lands mid-run however fast the machine is; SIGCONT then delivers the page's SIGINT
        if result_count(paused_engine) < 3:
            return None
        [row] = paused_engine.records.query("SELECT owner FROM backtests")
        pid = int(row["owner"].split(":")[1])
        os.kill(pid, signal.SIGSTOP)
        return pid

    pid = wait_for(worker_paused_after_a_few, timeout=180, step=0.005)
    [running] = backtests.backtests(paused_engine.records)
    try:
        app.run()
        app.button(key=f"backtests_cancel_{running['backtest_id']}").click().run()
    finally:
        os.kill(pid, signal.SIGCONT)
    assert not app.exception, [e.value for e in app.exception]
    # the worker stops and lets the backtest go (resumable)
    wait_for(lambda: not backtests.backtests(paused_engine.records)[0]["working"], timeout=60)
    cut = result_count(paused_engine)
    total = backtests.backtest(paused_engine.records, running["backtest_id"])["total"]
    assert 3 <= cut < total, "the cancel came too late to test a resume"
    assert backtests.backtest(paused_engine.records, running["backtest_id"])["status"] == "stopped"
    app.run()
    assert f"Stopped: {running['candidate']}, started " in texts(app)
    # not "7/7" for a backtest that stopped at 7 of 28 (issue 38.5)
    assert {m.label: m.value for m in app.metric}["Incidents"] == f"{cut} of {total} (stopped)"
    app.button(key=f"backtests_resume_{running['backtest_id']}").click().run()
    assert not app.exception, [e.value for e in app.exception]
    wait_for(lambda: backtests.backtest(paused_engine.records, running["backtest_id"])["status"] == "done",
             timeout=240)
    counted = paused_engine.records.query("SELECT incident_id, count(*) AS n FROM backtest_results GROUP BY incident_id")
    assert len(counted) == total and {r["n"] for r in counted} == {1} and set(ids) <= {r["incident_id"] for r in counted}


def test_a_link_to_a_backtest_that_is_not_there_says_so(app, paused_engine):
    run = run_backtest(paused_engine, candidate_for(paused_engine))
    app.switch_page("app_pages/backtests.py")
    app.query_params["backtest"] = "bt-gone"
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    assert "The link's backtest bt-gone is not one of the (at most 50 newest) backtests here: showing the newest." in said(app, "warning")
    assert app.selectbox(key="backtests_pick").value == run.backtest_id


def test_a_backtest_started_on_the_page_shows_at_once_refuses_a_second_click_and_is_then_picked(
        app, paused_engine, monkeypatch):
    """A fresh worker loads the analyst for seconds before it claims the incidents: the page says it is
    starting the moment Start is clicked (it said "progress shows below" over nothing, and a second click
    started a second backtest), refuses the same start again meanwhile, and once the worker has claimed
    its backtest shows that one, not the backtest picked before."""
    import socket
    import subprocess
    import types

    from pipeline.backtest import service as service_module
    from pipeline.store.owners import _process_start

    workers: list[subprocess.Popen] = []

    def a_slow_worker(args, **kwargs):  # the worker still loading: a process that has claimed nothing
        workers.append(subprocess.Popen(["sleep", "60"], **kwargs))
        return workers[-1]

    monkeypatch.setattr(service_module, "subprocess", types.SimpleNamespace(Popen=a_slow_worker,
                                                                            DEVNULL=subprocess.DEVNULL))
    backtests.create(paused_engine.records, backtest_id="bt-older", candidate="an older one", candidate_key="k0",
                     selection=[], owner="")
    try:
        start(app, kind="live")
        assert "Starting (decided incidents): the worker is loading the analyst" in progress_texts(app)
        assert app.selectbox(key="backtests_pick").value == "bt-older"
        start(app, kind="live")
        assert "this backtest is starting already" in said(app, "error") and len(workers) == 1
        [worker] = workers
        backtests.create(paused_engine.records, backtest_id="bt-started", candidate="the live analyst",
                         candidate_key="k1", selection=[],
                         owner=f"{socket.gethostname()}:{worker.pid}:{_process_start(worker.pid)}:test")
        app.run()
        assert not app.exception, [e.value for e in app.exception]
        assert app.selectbox(key="backtests_pick").value == "bt-started"
        assert "the worker is loading" not in progress_texts(app)
    finally:
        for worker in workers:
            worker.kill()
            worker.wait()


def test_a_backtest_of_undecided_incidents_claims_no_agreement(app, paused_engine):
    """Nothing approved with a category: the page says there is nothing to agree with, not the green
    "names the category the reviewers approved wherever they approved one" a reviewer reads as a pass."""
    run_backtest(paused_engine, candidate_for(paused_engine), status="paused")
    app.switch_page("app_pages/backtests.py").run()
    assert not app.exception, [e.value for e in app.exception]
    assert "No incident here was approved with a category yet" in said(app, "info")
    assert "wherever they approved one" not in said(app, "success")


def test_a_backtest_is_named_by_its_candidate_and_time_and_its_flags_are_said_in_words(app, paused_engine, monkeypatch):
    """43-bt-done.png and 55-bt-model-after.png: the picker said "bt-834138d575ac · … · 2026-12-06T16:44",
    a refused model "--model gpt-4o-mini: no endpoint…", and the days field "0.00": a backtest is its
    candidate and start time as the workbench writes times, the command's flags are words, days whole."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    run = run_backtest(paused_engine, candidate_for(paused_engine))
    start(app, kind="model", value="gpt-4o-mini")
    refused = said(app, "error")
    assert "model gpt-4o-mini: no endpoint" in refused and "--" not in refused, refused
    picker = app.selectbox(key="backtests_pick")
    assert picker.value == run.backtest_id
    [option] = picker.options
    assert run.backtest_id not in option and not re.search(r"\dT\d", option), option
    # its name only: where it is (running 2/6, done) goes stale in a browser's picker (walkthrough s51)
    assert option.startswith("the live analyst") and option.endswith(" UTC") and "done" not in option, option
    caption = next(c.value for c in app.caption if unescape(c.value).startswith("Candidate:"))
    assert not re.search(r"\dT\d", unescape(caption)), caption
    days = app.number_input(key="backtests_since")
    assert days.value == 0 and isinstance(days.value, int)


def test_the_flags_of_a_backtest_command_read_as_words():
    from workbench.backtest_view import flags_words

    assert flags_words("--status decided --settings /srv/c.toml") == "decided incidents, settings file /srv/c.toml"
    assert flags_words("backtest (--status all --since 7d --limit 3): exited 1") == \
        "backtest (both, opened in the last 7 days, at most 3 incidents): exited 1"


def test_a_disagreement_says_what_each_sides_fix_proposal_says(app, paused_engine, tmp_path):
    """A disagreement's sides said "fix proposed" / "no fix proposed" and cut the root cause at 300
    characters: each now says its confidence against the threshold and its fix's file and plan, or why none."""
    decided(paused_engine)
    settings = tmp_path / "strict.toml"
    settings.write_text("CODE_FIX_MIN_CONFIDENCE = 0.99\n")
    run_backtest(paused_engine, candidate_for(paused_engine, settings_file=settings), status="all")
    app.switch_page("app_pages/backtests.py").run()
    assert not app.exception, [e.value for e in app.exception]
    shown = texts(app)
    assert "below the code-fix threshold 0.99" in shown and "No fix proposed: confidence" in shown, shown
    assert "\nfix proposed\n" not in shown and "\nno fix proposed\n" not in shown


def test_a_backtest_that_stopped_part_way_says_how_far_it_got():
    from workbench.backtest_view import incidents_figure

    assert incidents_figure({"total": 28, "status": "stopped"}, {"incidents": 7, "analysed": 7}) == "7 of 28 (stopped)"
    assert incidents_figure({"total": 4, "status": "done"}, {"incidents": 4, "analysed": 4}) == "4/4"


def test_other_changes_are_headed_by_what_differs_not_by_same_as_live(app, paused_engine, tmp_path):
    """A candidate that only raised the code-fix threshold: its other changes were headed "same as the
    live analysis" (or "agrees with the reviewers") with nothing saying the fix proposal went away."""
    decided(paused_engine)
    settings = tmp_path / "strict.toml"
    settings.write_text("CODE_FIX_MIN_CONFIDENCE = 0.99\n")
    run = run_backtest(paused_engine, candidate_for(paused_engine, settings_file=settings), status="all")
    app.switch_page("app_pages/backtests.py").run()
    assert not app.exception, [e.value for e in app.exception]
    against = {r["incident_id"] for r in run_report(paused_engine, run.backtest_id)}  # headed by the verdict
    heads = [unescape(m.value) for m in app.markdown if re.match(r"INC-\S+ — ", unescape(m.value))
             and unescape(m.value).split(" — ")[0] not in against]
    assert heads, "the other changes list something"
    assert all(h.endswith("proposes no code fix where the live analysis proposed one") for h in heads), heads
    assert not [h for h in heads if "same as the live analysis" in h or "agrees" in h or "repeats" in h], heads


def test_cancel_on_the_page_stops_a_backtest_whose_candidate_is_slow(app, paused_engine, monkeypatch):
    """Walkthrough s51: the demo's backtest is over in two seconds, so its Cancel could not be tried. A
    candidate model behind a loopback endpoint that answers slowly (tests/openai_stub.py) keeps the
    worker on its first incident, as a real model's minutes would: Cancel on the page stops it, the
    record says stopped with none of the incidents done, and the page says so with its Resume."""
    from tests.openai_stub import OpenAIStub, Reply
    from tests.support import KEY

    decided(paused_engine)
    with OpenAIStub() as slow:
        slow.standing = Reply(delay=20.0)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", slow.base_url)
        start(app, kind="model", value="slow-model", scope="all")
        assert "Started" in said(app, "success")
        # the worker has claimed the backtest and waits on the model's first answer
        [running] = wait_for(lambda: slow.requests and [r for r in backtests.backtests(paused_engine.records)
                                                        if r["working"]], timeout=180)
        app.run()
        assert "Cancel" in [b.label for b in app.button if b.key == f"backtests_cancel_{running['backtest_id']}"]
        app.button(key=f"backtests_cancel_{running['backtest_id']}").click().run()
        assert not app.exception, [e.value for e in app.exception]
        wait_for(lambda: not backtests.backtest(paused_engine.records, running["backtest_id"]).get("owner"), timeout=60)
    record = backtests.backtest(paused_engine.records, running["backtest_id"])
    assert record["status"] == "stopped" and record["done"] == 0 < record["total"], record
    app.run()
    assert f"Stopped: {running['candidate']}, started " in texts(app)
    assert f"backtests_resume_{running['backtest_id']}" in [b.key for b in app.button]


def _card(item: dict) -> None:
    from workbench.backtest_view import disagreement

    disagreement(item, index=0)


def test_a_candidate_that_answers_as_the_live_analyst_did_is_not_printed_twice():
    """Walkthrough s58 (28-backtest-report.png): "repeats the category a reviewer corrected" printed the live
    analyst's root cause and fix proposal, then the candidate's, word for word the same."""
    from streamlit.testing.v1 import AppTest

    cause = "The required setting PSP_MERCHANT_ID is missing or empty where the service starts."
    side = {"category": "config_missing", "confidence": 0.95, "root_cause": cause, "proposal_hash": None,
            "fix": {"plan": ["Add the missing environment variable"]}}
    item = {"incident_id": "INC-20261128-996c76", "verdict": "repeats_correction", "newly_fix_eligible": False,
            "checkpoint_id": "c1", "human_decision": {"steps": []}, "outcome_words": "approved after a person "
            "changed the analysis", "outcome": "approved_after_change", "human_category": "dependency_mismatch",
            **{f"old_{k}": v for k, v in side.items()}, **{f"new_{k}": v for k, v in side.items()}}
    at = AppTest.from_function(_card, args=(item,), default_timeout=30).run()
    assert not at.exception, [e.value for e in at.exception]
    shown = unescape(texts(at))
    assert shown.count(cause) == 1 and shown.count("No fix proposed") == 1, shown
    assert "same answer as the live analyst's" in shown
    changed = {**item, "new_root_cause": "Another cause."}
    shown = unescape(texts(AppTest.from_function(_card, args=(changed,), default_timeout=30).run()))
    assert cause in shown and "Another cause." in shown and "same answer" not in shown
