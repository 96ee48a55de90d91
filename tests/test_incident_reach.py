"""What an inbox row says of an incident besides its analysis: how far it reaches ("2 patterns ·
1 service · 14 events", counted as events join it) and whether its patterns are new, rare or
frequent (the days of the last 30 they were seen on). Time moves on a ManualClock."""
from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta, timezone

from pipeline.clock import ManualClock, iso
from pipeline.incidents import recurrence
from pipeline.review.service import ReviewService
from pipeline.store import incident_rows, members
from tests.support import BOTH_BACKENDS, write_jsonl
from workbench.inbox_view import extent_text

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)


def _pool_error(at: datetime) -> dict:
    return {"_time": iso(at), "service": "checkout-api", "level": "ERROR",
            "message": "HikariPool-1 - Connection is not available, request timed out after 30000ms."}


@BOTH_BACKENDS
def test_a_pattern_seen_again_on_more_days_reads_new_then_rare_then_frequent(engine, tmp_path):
    from pipeline.unattended.file_ingest import ingest_path

    clock = engine.records.clock = ManualClock(T0)
    service, log, lines, said = ReviewService(engine), tmp_path / "app.jsonl", [], []
    for day in range(recurrence.FREQUENT_FROM_DAYS):
        clock.set(T0 + timedelta(days=day))
        lines.append(_pool_error(T0 + timedelta(days=day)))  # one more error of the same pattern each day
        ingest_path(engine, write_jsonl(log, lines))
        (row,) = service.inbox_page()["rows"]
        assert extent_text(row) == f"1 pattern · 1 service · {day + 1} event{'s' if day else ''}"
        said.append(row["seen"])
    assert said == ["new"] + ["rare"] * 5 + ["frequent"]
    clock.set(T0 + timedelta(days=recurrence.WINDOW_DAYS))  # 30 days on, the first day has left the window
    assert service.inbox_page()["rows"][0]["days_seen"] == recurrence.FREQUENT_FROM_DAYS - 1


@BOTH_BACKENDS
def test_an_incident_counts_each_of_its_patterns_and_services_once_and_every_event(engine):
    records = engine.records
    with records.transaction() as conn:
        incident_rows.insert_incident(conn, incident_id="INC-20261201-000001", fingerprint="fp-refused",
                                      title="connection refused", service="orders", severity="medium",
                                      first_seen=iso(T0), stamp=iso(T0), sla_deadline=iso(T0 + timedelta(days=1)))
        incident_rows.count_events(conn, "INC-20261201-000001", added=3, first=iso(T0), last=iso(T0), stamp=iso(T0))
        members.count(conn, Counter({("INC-20261201-000001", members.PATTERN, "fp-refused"): 2,
                                     ("INC-20261201-000001", members.PATTERN, "fp-timeout"): 1,
                                     ("INC-20261201-000001", members.SERVICE, "orders"): 2,
                                     ("INC-20261201-000001", members.SERVICE, "gateway"): 1}), day=iso(T0)[:10])
    (row,) = ReviewService(engine).inbox_page()["rows"]
    assert extent_text(row) == "2 patterns · 2 services · 3 events"
