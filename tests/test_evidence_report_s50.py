"""The evidence report (issue 36.3), session 50: a process told to stop just before the first problem is a
change to check first, and the report says how the incident's lines end (a peer connected again, a disk
remounted read-only), not only how they begin."""
from __future__ import annotations

from pipeline.analyst import evidence_report
from tests.support import analyst_events


def test_a_process_told_to_stop_just_before_the_first_problem_is_the_change_to_check():
    events = analyst_events({"level": "INFO", "service": "orders", "message": "got SIGTERM: draining 12 open requests"},
                            {"level": "WARN", "service": "gw", "message": "POST /orders 503 upstream reset: remote disconnect"},
                            {"level": "INFO", "service": "orders", "message": "bye"})
    report = evidence_report.build(events, [], [])
    assert "got SIGTERM: draining 12 open requests" in report.hypotheses[0].statement


def test_the_report_says_how_the_lines_end_when_it_is_not_how_they_began():
    events = analyst_events({"level": "WARN", "message": "cache connect to kv-1:6380 failed, retry in 1s"},
                            {"level": "INFO", "message": "GET /basket 200"},
                            {"level": "INFO", "message": "cache connected to kv-1:6380 on the second try"})
    said = evidence_report.root_cause(evidence_report.build(events, [], []))
    assert "the last, \"cache connected to kv-1:6380 on the second try\"" in said
    # ... and says nothing more when the last line is the first's pattern
    events = analyst_events({"level": "WARN", "message": "cache connect to kv-1:6380 failed, retry in 1s"})
    assert "the last" not in evidence_report.root_cause(evidence_report.build(events, [], []))
