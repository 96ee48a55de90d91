"""A decided incident never absorbs new evidence (issue 35.4): the next events of its patterns,
however soon after the decision, open a new incident linked to it, and the reviewer reads
"recurred after INC-… was approved" on that incident (`show`) and in its inbox row."""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

from pipeline.clock import ManualClock, iso
from pipeline.composition import open_engine
from pipeline.review.service import ReviewService
from pipeline.store import checkpoints
from pipeline.unattended.file_ingest import ingest_path
from tests.support import BOTH_BACKENDS, cli, make_settings, write_jsonl

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)


def _refused(at: datetime) -> dict:
    return {"_time": iso(at), "service": "orders-api", "level": "ERROR",
            "message": "Connection refused: connect to inventory-db:5432 failed"}


@BOTH_BACKENDS
def test_events_after_an_approval_open_a_new_incident_that_says_it_recurred(data_dir, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("INCIDENTIQ_DATA_DIR", str(data_dir))
    engine = open_engine(make_settings(data_dir, two_person=()))
    try:
        clock = engine.records.clock = ManualClock(T0)
        review, log = ReviewService(engine), tmp_path / "orders.jsonl"
        ingest_path(engine, write_jsonl(log, [_refused(T0), _refused(T0 + timedelta(seconds=5))]))
        (first,) = engine.records.incidents()
        review.approve(first["incident_id"], reviewer="ann")
        decided = engine.records.incident(first["incident_id"])
        assert decided["status"] in ("approved", "fix_proposed")

        clock.advance(minutes=1)  # the same error a minute after the approval
        ingest_path(engine, write_jsonl(log, [_refused(T0), _refused(T0 + timedelta(seconds=5)),
                                              _refused(T0 + timedelta(minutes=1))]))
        assert engine.records.incident(first["incident_id"])["event_count"] == decided["event_count"] == 2
        (recurred,) = [r for r in engine.records.incidents() if r["incident_id"] != first["incident_id"]]
        assert recurred["event_count"] == 1 and recurred["status"] == "awaiting_approval"
        words = f"recurred after {first['incident_id']} was approved"
        row = next(r for r in review.inbox_page()["rows"] if r["incident_id"] == recurred["incident_id"])
        assert row["link"].startswith(words)
        code, out, _ = cli(capsys, "show", recurred["incident_id"], "--json")
        assert code == 0
        shown = json.loads(out)
        assert shown["link"] == {"incident_id": first["incident_id"], "kind": "recurred",
                                 "status": decided["status"], "text": row["link"]}
        code, out, _ = cli(capsys, "show", recurred["incident_id"])
        assert "R" + words[1:] in out
    finally:
        engine.records.close()
        checkpoints.close_all()



def test_the_inbox_row_of_a_recurrence_says_what_it_recurred_after():
    from workbench.inbox_view import inbox_frame

    row = {"incident_id": "INC-20261201-000002", "service": "orders-api", "severity": "high", "category": None,
           "confidence": None, "event_count": 1, "pattern_count": 1, "service_count": 1, "status": "awaiting_approval",
           "created_at": iso(T0), "sla_deadline": iso(T0 + timedelta(hours=4)), "title": "Connection refused: <STR>",
           "link": "recurred after INC-20261201-000001 was approved"}
    (title,) = inbox_frame([row], T0)["title"]
    assert title.startswith("recurred after INC-20261201-000001 was approved · Connection refused")
