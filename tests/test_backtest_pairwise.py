"""Pairwise review of a backtest (issue 38.3): a reviewer's judgment of the live and the candidate
answer of one incident, stored in the records store (migration 19), counted in the report, listed
and exported as labelled eval cases, by the CLI too."""
from __future__ import annotations

import json
import random

import pytest

from pipeline.backtest import pairwise
from pipeline.backtest.candidate import candidate_for
from pipeline.backtest.report import report, report_text
from pipeline.backtest.run import run_backtest
from pipeline.errors import NotPermitted, UsageError
from pipeline.review.identity import Actor
from pipeline.store import backtests, judgments
from pipeline.unattended.file_ingest import ingest_path
from tests.support import BOTH_BACKENDS, FIXTURES, cli, cli_json, run_child
from tests.test_backtest import decided, docs_without

ANN = Actor(id="ann", name="Ann", roles=("reviewer",), auth="demo")
BOB = Actor(id="bob", name="Bob", roles=("reviewer",), auth="demo")


# a candidate without these docs answers three of the four incidents otherwise than the live
# analyst; the edited one (`unknown` both times) gets identical answers
LACKING = ("upstream_rate_limited", "db_pool_exhausted", "null_reference")


def backtested(engine, tmp_path):
    """The small fixture decided four ways, backtested with docs lacking three categories."""
    ids = decided(engine)
    run = run_backtest(engine, candidate_for(engine, docs=docs_without(tmp_path, *LACKING)), status="all")
    return ids, run.backtest_id


@BOTH_BACKENDS
def test_a_judgment_names_the_side_by_the_order_shown_and_a_second_one_replaces_the_first(engine, data_dir,
                                                                                            tmp_path):
    ingest_path(engine, FIXTURES / "small.jsonl")
    ids, bt = backtested(engine, tmp_path)
    inc = ids["approved"]
    # B was the candidate's when A was the live analyst's, and the other way round
    assert judgments.preferred_side("B", "live") == "candidate" and judgments.preferred_side("A", "candidate") == "candidate"
    first = pairwise.judge(engine, ANN, backtest_id=bt, incident_id=inc, a_side="live", choice="B", reason="names the limiter")
    assert first["preferred"] == "candidate"
    pairwise.judge(engine, BOB, backtest_id=bt, incident_id=inc, a_side="candidate", choice="B", reason="the 429s")
    pairwise.judge(engine, ANN, backtest_id=bt, incident_id=inc, a_side="candidate", choice="equal",
                   reason="on second thought both miss it", correction="upstream_timeout")
    rows = judgments.of_backtest(engine.records, bt)
    assert [(r["reviewer"], r["a_side"], r["choice"], r["preferred"], r["correction"]) for r in rows] == [
        ("ann", "candidate", "equal", "equal", "upstream_timeout"), ("bob", "candidate", "B", "live", None)]
    # durable: another process (the CLI in a child) reads what this one wrote
    listed = json.loads(run_child(data_dir, "backtest", "--judgments", bt, "--json").stdout)
    assert (listed["judgments"], listed["live_preferred"], listed["equal"], listed["candidate_preferred"]) == (2, 1, 1, 0)


def test_a_judgment_needs_a_reason_a_reviewer_a_known_category_and_an_incident_with_two_answers(paused_engine,
                                                                                                   tmp_path):
    ids, bt = backtested(paused_engine, tmp_path)
    inc = ids["approved"]
    with pytest.raises(UsageError, match="needs a reason"):
        pairwise.judge(paused_engine, ANN, backtest_id=bt, incident_id=inc, a_side="live", choice="A", reason="  ")
    viewer = Actor(id="vi", name="Vi", roles=("viewer",), auth="demo")
    with pytest.raises(NotPermitted):
        pairwise.judge(paused_engine, viewer, backtest_id=bt, incident_id=inc, a_side="live", choice="A", reason="x")
    with pytest.raises(UsageError, match="not one of the categories"):
        pairwise.judge(paused_engine, ANN, backtest_id=bt, incident_id=inc, a_side="live", choice="A", reason="x",
                       correction="gremlins")
    with pytest.raises(UsageError, match="no two answers of INC-nope"):
        pairwise.judge(paused_engine, ANN, backtest_id=bt, incident_id="INC-nope", a_side="live", choice="A",
                       reason="x")
    with pytest.raises(UsageError, match="the choice is one of"):
        pairwise.judge(paused_engine, ANN, backtest_id=bt, incident_id=inc, a_side="named", choice="A", reason="x")
    assert judgments.of_backtest(paused_engine.records, bt) == []


def test_the_report_counts_the_judgments_and_the_export_labels_them_with_the_corrections(paused_engine, tmp_path):
    ids, bt = backtested(paused_engine, tmp_path)
    pairwise.judge(paused_engine, ANN, backtest_id=bt, incident_id=ids["approved"], a_side="candidate", choice="B",
                   reason="the live answer names the limiter")
    pairwise.judge(paused_engine, ANN, backtest_id=bt, incident_id=ids["paused"], a_side="live", choice="B",
                   reason="the candidate's is sharper")
    pairwise.judge(paused_engine, BOB, backtest_id=bt, incident_id=ids["edited"], a_side="named", choice="equal",
                   reason="both wrong", correction="dns_resolution")
    pairwise.judge(paused_engine, BOB, backtest_id=bt, incident_id=ids["rejected"], a_side="live", choice="equal",
                   reason="same answer")
    rep = report(paused_engine, bt)
    pw = rep["pairwise"]
    assert (pw["judgments"], pw["incidents"], pw["live_preferred"], pw["candidate_preferred"], pw["equal"]) == (4, 4, 1, 1, 2)
    assert "candidate preferred 1, live preferred 1, equal 2" in report_text(rep)
    out = pairwise.cases(paused_engine, bt)
    by = {c["incident_id"]: c for c in out["cases"]}
    # approved: the category reviewers approved; corrected: the reviewer's; undecided: the preferred side's
    assert by[ids["approved"]]["expected"] == "upstream_rate_limited"
    assert by[ids["edited"]]["expected"] == "dns_resolution"
    assert by[ids["edited"]]["corrections"]["rca.category"]["to"] == "connection_refused"  # bob's edit of the live run
    paused = next(p for p in pairwise.pairs(paused_engine, bt) if p["incident_id"] == ids["paused"])
    assert by[ids["paused"]]["expected"] == paused["candidate"]["category"]
    assert all(c["split"] == "pairwise" and c["events"] and c["judgment"]["reason"] for c in out["cases"])
    rejected = next(p for p in pairwise.pairs(paused_engine, bt) if p["incident_id"] == ids["rejected"])
    assert (ids["rejected"] in by) == (rejected["live"]["category"] == rejected["candidate"]["category"])


def test_identical_answers_are_not_for_judging_and_a_preference_between_them_counts_as_equal(paused_engine, capsys,
                                                                                                tmp_path):
    ids, bt = backtested(paused_engine, tmp_path)
    same = ids["edited"]
    assert [p["incident_id"] for p in pairwise.pairs(paused_engine, bt) if p["identical"]] == [same]
    for a_side, choice in (("live", "A"), ("candidate", "B"), ("named", "candidate")):
        with pytest.raises(UsageError, match="identical: neither can be better"):
            pairwise.judge(paused_engine, ANN, backtest_id=bt, incident_id=same, a_side=a_side, choice=choice,
                           reason="x")
    pairwise.judge(paused_engine, BOB, backtest_id=bt, incident_id=same, a_side="live", choice="equal",
                   reason="both miss it", correction="connection_refused")
    # one recorded before such pairs were refused: A (the candidate's) preferred to the same answer
    judgments.record(paused_engine.records, backtest_id=bt, incident_id=same, reviewer="ann", a_side="candidate",
                     choice="A", reason="picked one")
    rep = report(paused_engine, bt)
    pw = rep["pairwise"]
    assert (pw["candidate_preferred"], pw["live_preferred"], pw["equal"], pw["identical"]) == (0, 0, 2, 1)
    assert "1 incident with identical answers (equal, not for judging)" in report_text(rep)
    assert cli_json(capsys, "backtest", "--judgments", bt)["candidate_preferred"] == 0
    assert all(c["judgment"]["preferred"] == "equal" for c in pairwise.cases(paused_engine, bt)["cases"])
    assert same not in {p["incident_id"] for p in cli_json(capsys, "backtest", "--pairs", bt)}
    assert "1 incident with identical answers is not listed" in cli(capsys, "backtest", "--pairs", bt)[1]


def test_the_order_shown_is_random_over_many_draws():
    rng = random.Random(7)
    drawn = [pairwise.shown_order(rng) for _ in range(200)]
    assert set(drawn) == {"live", "candidate"} and 60 < drawn.count("live") < 140


def test_the_cli_shows_pairs_records_a_blind_pick_lists_and_exports(paused_engine, capsys, tmp_path):
    ids, bt = backtested(paused_engine, tmp_path)
    shown = cli_json(capsys, "backtest", "--pairs", bt)
    pair = next(p for p in shown if p["incident_id"] == ids["approved"])
    assert pair["a_side"] in ("live", "candidate") and pair["A"]["category"] and pair["B"]["category"]
    live_letter = "A" if pair["a_side"] == "live" else "B"
    row = cli_json(capsys, "backtest", "--judge", bt, "--incident", ids["approved"], "--pick", live_letter,
                   "--a-side", pair["a_side"], "--reason", "it names the rate limit", "--as", "ann")
    assert row["preferred"] == "live" and row["reviewer"].endswith("ann")
    assert cli(capsys, "backtest", "--judge", bt, "--incident", ids["approved"], "--prefer", "live")[0] == 2  # no reason
    assert cli(capsys, "backtest", "--judge", bt, "--incident", ids["approved"], "--pick", "A",
               "--reason", "x")[0] == 2  # A without saying which side A was
    assert cli(capsys, "backtest", "--judgments", "bt-nope")[0] == 4
    listed = cli_json(capsys, "backtest", "--judgments", bt)
    assert listed["live_preferred"] == 1 and listed["rows"][0]["reason"] == "it names the rate limit"
    again = cli_json(capsys, "backtest", "--pairs", bt)
    assert next(p for p in again if p["incident_id"] == ids["approved"])["judged_by"] == [row["reviewer"]]
    out = tmp_path / "cases.jsonl"
    written = cli_json(capsys, "backtest", "--export", bt, "--out", out)
    assert written["cases"] == 1
    [case] = [json.loads(line) for line in out.read_text().splitlines()]
    assert case["expected"] == "upstream_rate_limited" and case["judgment"]["preferred"] == "live"


def test_retention_removes_a_backtests_judgments_with_it(paused_engine, tmp_path):
    from pipeline.unattended.retention import prune

    ids, bt = backtested(paused_engine, tmp_path)
    pairwise.judge(paused_engine, ANN, backtest_id=bt, incident_id=ids["approved"], a_side="live", choice="A",
                   reason="r")
    prune(paused_engine, days=0)
    assert backtests.backtests(paused_engine.records) == []
    assert paused_engine.records.query("SELECT count(*) AS n FROM backtest_judgments")[0]["n"] == 0


def test_a_secret_pasted_into_a_reason_is_masked_before_it_is_stored(paused_engine, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-4f9a8b7c6d5e")
    ids, bt = backtested(paused_engine, tmp_path)
    row = pairwise.judge(paused_engine, ANN, backtest_id=bt, incident_id=ids["approved"], a_side="live", choice="A",
                         reason="the candidate was run with sk-test-4f9a8b7c6d5e, so ignore it")
    [stored] = judgments.of_backtest(paused_engine.records, bt)
    assert "sk-test-4f9a8b7c6d5e" not in row["reason"] + stored["reason"] and "ignore it" in stored["reason"]
