"""The Operations page's grouping funnel (issue 35.5): lines read → events that reached incidents →
their patterns → incidents, and the dedup ratio, counted from the store's daily counts and indexes."""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

from pipeline.clock import ManualClock, iso
from pipeline.services import OperationsService
from pipeline.unattended.file_ingest import ingest_path
from tests.support import BOTH_BACKENDS

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)


@BOTH_BACKENDS
def test_the_funnel_counts_lines_events_patterns_and_incidents(engine, tmp_path):
    engine.records.clock = ManualClock(T0)
    lines = [{"_time": iso(T0 + timedelta(seconds=i)), "service": "web", "level": "INFO", "message": f"GET /ok {i}"}
             for i in range(20)]
    lines += [{"_time": iso(T0 + timedelta(seconds=30 + i)), "service": "orders-api", "level": "ERROR",
               "message": f"Connection refused: connect to inventory-db:5432 failed (attempt {i})"} for i in range(6)]
    lines += [{"_time": iso(T0 + timedelta(seconds=40 + i)), "service": "gateway", "level": "ERROR",
               "message": f"upstream request timed out after {3000 + i}ms"} for i in range(4)]
    log = tmp_path / "day.jsonl"
    log.write_bytes(("".join(json.dumps(line) + "\n" for line in lines)).encode() + b"not \xff text\n")
    ingest_path(engine, log)
    funnel = OperationsService(engine).funnel(T0 + timedelta(hours=3))
    assert {k: funnel[k] for k in ("lines", "events", "patterns", "incidents")} == {
        "lines": 31, "events": 10, "patterns": 2, "incidents": 2}
    assert funnel["since"] == "2026-12-01T00:00:00+00:00" and abs(funnel["dedup_ratio"] - 0.8) < 1e-9
    assert OperationsService(engine).funnel(T0 + timedelta(days=1))["lines"] == 0  # the next day read nothing


def test_the_operations_page_shows_the_funnel(app, paused_engine):
    app.switch_page("app_pages/operations.py").run()
    assert not app.exception, [e.value for e in app.exception]
    funnel = OperationsService(paused_engine).funnel(datetime.now(timezone.utc) - timedelta(hours=24))
    metrics = {m.label: m.value for m in app.metric}
    assert [metrics[k] for k in ("Lines read", "Incident events", "Patterns", "Incidents")] == [
        str(funnel[k]) for k in ("lines", "events", "patterns", "incidents")]
    assert funnel["incidents"] > 0 and funnel["lines"] >= funnel["events"] >= funnel["patterns"] > 0
    assert any("lines → events → patterns → incidents; dedup ratio" in c.value for c in app.caption)
