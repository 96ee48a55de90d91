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
