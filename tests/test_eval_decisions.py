"""Reviewers' corrections become labelled cases: `eval --from-decisions` writes them in
knowledge/eval's shape, and `eval --split decisions` measures the analyst on them."""
from __future__ import annotations

import json
from pathlib import Path

from pipeline.evaluation import load_cases
from tests.support import cli, cli_json
from tests.test_backtest import decided


def test_corrections_are_exported_and_measured(paused_engine, capsys):
    ids = decided(paused_engine)
    assert cli(capsys, "eval", "--split", "decisions")[0] == 2  # nothing exported yet: a clear error
    out = cli_json(capsys, "eval", "--from-decisions", "--since", "1d")
    assert out["cases"] == 2 and out["by_expected"] == {"connection_refused": 1, "unknown": 1}
    lines = [json.loads(line) for line in Path(out["written"]).read_text(encoding="utf-8").splitlines()]
    by_incident = {c["incident_id"]: c for c in lines}
    # approved after the reviewer corrected unknown → connection_refused: labelled with the correction
    edited = by_incident[ids["edited"]]
    assert edited["expected"] == "connection_refused" and edited["split"] == "decisions"
    assert edited["edits"]["rca.category"]["from"] == "unknown" and edited["events"][0]["message"]
    rejected = by_incident[ids["rejected"]]
    assert rejected["expected"] == "unknown" and rejected["rejected_category"] == "null_reference"
    assert "a test fixture, not an outage" in rejected["note"]
    assert ids["approved"] not in by_incident and ids["paused"] not in by_incident  # no correction there
    assert len(load_cases(paused_engine.settings.data_dir / "eval-decisions.jsonl", split="decisions")) == 2
    report = cli_json(capsys, "eval", "--split", "decisions")
    figures = report["splits"]["decisions"]
    # the offline analyzer still says what the reviewers corrected: the team's own figures show it
    assert figures["cases"] == 2 and figures["accuracy"] == 0.0
    assert {m["expected"] for m in report["misses"]} == {"connection_refused", "unknown"}


def test_a_rejection_whose_reason_keeps_the_cause_is_skipped_not_labelled_unknown(paused_engine, capsys):
    """Walkthrough s58: a rejection of the named cause with "not our bug, the vendor rotated it" (the cause
    right, the fault someone else's) became a case expecting `unknown`; it says nothing against the
    analysis, so it is skipped and said so with its reason. A reason denying the incident stays a label."""
    from pipeline.review.service import ReviewService

    ids = decided(paused_engine)
    pool = ReviewService(paused_engine).document(ids["paused"])
    ReviewService(paused_engine).reject(ids["paused"], reviewer="mira", reason="not our bug, the vendor rotated it")
    out = cli_json(capsys, "eval", "--from-decisions", "--since", "1d")
    assert out["by_expected"] == {"connection_refused": 1, "unknown": 1}, out  # the fixture's rejection kept
    [skip] = out["skipped"]
    assert skip["incident_id"] == ids["paused"] and "not our bug, the vendor rotated it" in skip["why"]
    assert "mira" in skip["why"] and pool["category"] in skip["why"]
    text = cli(capsys, "eval", "--from-decisions", "--since", "1d")[1]
    assert "1 skipped:" in text and ids["paused"] in text, text
