"""The Backtests page's pairwise review (AppTest from app.py): the two answers as A and B in the
stored random order, a judgment refused without a choice or a reason, recorded with the order
shown, counted, listed and downloadable as labelled cases."""
from __future__ import annotations

from pipeline.backtest.candidate import candidate_for
from pipeline.backtest.pairwise import cases
from pipeline.backtest.run import run_backtest
from pipeline.store import judgments
from tests.support import as_reviewer, said, texts, unescape
from tests.test_backtest import decided, docs_without
from tests.test_backtest_pairwise import LACKING


def open_review(app, paused_engine, tmp_path):
    ids = decided(paused_engine)
    run = run_backtest(paused_engine, candidate_for(paused_engine, docs=docs_without(tmp_path, *LACKING)), status="all")
    app.switch_page("app_pages/backtests.py").run()
    assert not app.exception, [e.value for e in app.exception]
    return ids, run.backtest_id


def judge_button(app):
    return next(b for b in app.button if b.label == "Record the judgment")


def test_a_reviewer_judges_two_answers_shown_in_a_stored_random_order(app, paused_engine, tmp_path):
    ids, bt = open_review(app, paused_engine, tmp_path)
    assert judge_button(app).disabled  # no name yet: the button says how to act
    as_reviewer(app, "ann")
    assert not app.exception, [e.value for e in app.exception]
    pick = app.selectbox(key=f"backtests_pair_pick_{bt}")
    pick.set_value(ids["approved"]).run()
    a_side = app.session_state["backtests_pair_orders"][(bt, ids["approved"])]
    assert a_side in ("live", "candidate")
    shown = texts(app)
    # the live answer and the candidate's, each category in the reviewer's words
    assert "upstream rate limited" in shown and "unknown" in shown and "upstream_rate_limited" not in shown
    # the order holds across reruns of the page
    app.run()
    assert app.session_state["backtests_pair_orders"][(bt, ids["approved"])] == a_side
    # no choice, then no reason: refused in words, nothing stored
    app.text_area(key="backtests_judge_reason_0").input("because")
    judge_button(app).click().run()
    assert "Choose A, B or equal." in said(app, "error")
    app.radio(key="backtests_judge_choice_0").set_value("A")
    app.text_area(key="backtests_judge_reason_0").input("   ")
    judge_button(app).click().run()
    assert "Say why: a judgment needs a reason." in said(app, "error")
    assert judgments.of_backtest(paused_engine.records, bt) == []
    app.radio(key="backtests_judge_choice_0").set_value("A")
    app.text_area(key="backtests_judge_reason_0").input("A names what the log says")
    judge_button(app).click().run()
    assert not app.exception, [e.value for e in app.exception]
    [row] = judgments.of_backtest(paused_engine.records, bt)
    assert (row["incident_id"], row["reviewer"], row["a_side"], row["choice"], row["preferred"]) == (
        ids["approved"], "ann", a_side, "A", a_side)
    words = {"live": "the live analyst's", "candidate": "the candidate's"}[a_side]
    assert f"you preferred {words} answer" in said(app, "success")
    metrics = {m.label: m.value for m in app.metric}
    assert metrics["Judgments"] == "1"
    assert metrics["Live preferred" if a_side == "live" else "Candidate preferred"] == "1"
    # the next incident offered is one ann has not judged; the judgment is listed and downloadable
    assert app.selectbox(key=f"backtests_pair_pick_{bt}").value != ids["approved"]
    [download] = app.get("download_button")
    assert download.proto.label == "Download as labelled eval cases (JSONL)"
    [case] = cases(paused_engine, bt)["cases"]  # what the download serves
    assert case["expected"] == "upstream_rate_limited" and case["judgment"]["reason"] == "A names what the log says"


def test_the_page_says_so_when_no_incident_has_two_answers(app, paused_engine):
    run_backtest(paused_engine, candidate_for(paused_engine), status="decided")  # nothing decided: no results
    app.switch_page("app_pages/backtests.py").run()
    assert not app.exception, [e.value for e in app.exception]
    assert "No incident of this backtest has both answers to compare." in said(app, "info")


def test_identical_answers_are_not_offered_and_the_page_says_they_count_as_equal(app, paused_engine, tmp_path):
    ids, bt = open_review(app, paused_engine, tmp_path)
    offered = app.selectbox(key=f"backtests_pair_pick_{bt}").options
    assert len(offered) == 3 and not any(o.startswith(ids["edited"]) for o in offered)
    assert "1 of the 4 incidents has identical answers" in texts(app)
    assert {m.label: m.value for m in app.metric}["Identical answers"] == "1"


def test_each_side_shows_its_whole_root_cause_and_what_its_fix_proposal_says(app, paused_engine, tmp_path):
    """44-bt-report-2.png: the root causes cut mid-word ("Frequent triggers: a Pro") and the fix only as
    "fix proposed" / "no fix proposed", so a candidate that only raised the code-fix threshold could not
    be judged. Now each side's root cause is whole and its fix proposal says its confidence against the
    threshold, the file its diff changes and its plan, or why there is none."""
    from pipeline.backtest.pairwise import pairs
    from tests.support import unescape
    from workbench.literal import analysis_text

    decided(paused_engine)
    settings = tmp_path / "strict.toml"
    settings.write_text("CODE_FIX_MIN_CONFIDENCE = 0.99\n")
    run = run_backtest(paused_engine, candidate_for(paused_engine, settings_file=settings), status="all")
    only_fix = [p for p in pairs(paused_engine, run.backtest_id)
                if p["live"]["fix_proposed"] and not p["candidate"]["fix_proposed"]]
    assert only_fix, "the stricter threshold should take a fix away"
    pair = only_fix[0]
    as_reviewer(app, "ann")
    app.switch_page("app_pages/backtests.py").run()
    app.selectbox(key=f"backtests_pair_pick_{run.backtest_id}").set_value(pair["incident_id"]).run()
    assert not app.exception, [e.value for e in app.exception]
    shown = unescape("\n".join(c.value for c in app.caption))
    # whole, as the incident page shows it: the analyst's code-span backticks dropped
    assert analysis_text(pair["live"]["root_cause"]) in shown
    live_fix = pair["live"]["fix"]
    assert live_fix["plan"] and analysis_text(live_fix["plan"][0]) in shown
    # blind (issue 38.2): each side's own threshold (0.70 against 0.99) told which was the candidate
    captions = [c.value for c in app.caption]
    start = next(i for i, c in enumerate(captions) if c.startswith("Which answer is better"))
    shown = unescape("\n".join(captions[start:]))
    assert "0.99" not in shown and f"{live_fix['threshold']:.2f}" not in shown, shown
    # nor whether a side is above or below its own threshold: "below" beside "at or above" told the side
    assert "threshold" not in shown and "below" not in shown and "above" not in shown, shown
    assert "No fix proposed." in shown and "Fix proposed: " in shown, shown
    # once judged, the thresholds are said
    app.radio(key="backtests_judge_choice_0").set_value("A")
    app.text_area(key="backtests_judge_reason_0").input("the fix")
    judge_button(app).click().run()
    assert "code-fix thresholds: A" in said(app, "success") and "0.99" in said(app, "success")


def test_a_fix_proposal_is_said_with_its_file_plan_and_threshold():
    from workbench.pairwise_view import fix_lines

    proposed = {"fix_proposed": True, "fix": {"plan": ["Set maximum-pool-size 10 → 30"], "target_file": "app.yml",
                                              "diff_lines": 2, "confidence": 0.91, "threshold": 0.5, "why_not": None}}
    assert fix_lines(proposed) == ["Confidence 0.91, at or above the code-fix threshold 0.50.",
                                   "Fix proposed: a diff of app.yml (2 lines changed).", "• Set maximum-pool-size 10 → 30"]
    none = {"fix_proposed": False, "fix": {"plan": [], "confidence": 0.68, "threshold": 0.7,
                                           "why_not": "no code fix: confidence 0.68 is below 0.70"}}
    assert fix_lines(none) == ["Confidence 0.68, below the code-fix threshold 0.70.",
                               "No fix proposed: confidence 0.68 is below 0.70."]
    # blind (the thresholds differ): nothing says a side is above or below its own threshold
    assert fix_lines(none, threshold=False) == ["No fix proposed."]
    assert fix_lines(proposed, threshold=False) == ["Fix proposed: a diff of app.yml (2 lines changed).",
                                                    "• Set maximum-pool-size 10 → 30"]
    other = {"fix_proposed": False, "fix": {"plan": [], "confidence": 0.9, "threshold": 0.7,
                                            "why_not": "no code fix: no known cause"}}
    assert fix_lines(other, threshold=False) == ["No fix proposed: no known cause."]  # a reason of its own stays


def test_nothing_above_the_pairwise_panel_says_which_answer_is_whose(app, paused_engine, tmp_path):
    """The report's cards name each incident's "Live analyst's answer" and "Candidate" and were drawn
    right above the blind panel, for the same incidents: the panel is a tab of its own now."""
    ids, bt = open_review(app, paused_engine, tmp_path)
    cards = [m for m in app.markdown if m.value in ("**Live analyst's answer**", "**Candidate**")]
    assert cards, "the report shows its side-by-side cards"
    tabs = {t.label: t for t in app.tabs}
    report, blind = tabs["Report"], tabs["Pairwise review (blind)"]
    in_report = [m for m in report.markdown if m.value in ("**Live analyst's answer**", "**Candidate**")]
    assert len(in_report) == len(cards)  # every card is in the report's tab, none beside the panel
    said_blind = unescape("\n".join(str(e.value) for kind in ("markdown", "caption", "text", "info")
                                    for e in getattr(blind, kind)))
    assert "Live analyst's answer" not in said_blind and "**Candidate**" not in said_blind
    assert app.selectbox(key=f"backtests_pair_pick_{bt}") in list(blind.selectbox)
