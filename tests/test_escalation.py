"""SLA escalation and expiry, driven by the poller with no browser open: at the deadline an incident
is escalated once (audited, notified), after the grace it expires through the gate as `system`;
exactly once across two processes and a restart. Time moves on a ManualClock, never by sleeping."""
from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timedelta, timezone

import pytest

from pipeline.clock import ManualClock, iso, parse_iso
from pipeline.unattended import escalation
from pipeline.review.service import ReviewService
from tests.support import BOTH_BACKENDS, FIXTURES, ROOT, child_env, cli, paused_ids, state_of

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)


@pytest.fixture
def clocked(engine):
    """The engine on a ManualClock at T0, with the small fixture paused at approval."""
    from pipeline.unattended.file_ingest import ingest_path

    engine.records.clock = ManualClock(T0)
    engine.settings = engine.settings.model_copy(update={"expire_after_hours": 2.0})
    ingest_path(engine, FIXTURES / "small.jsonl")
    return engine


def _actions(engine, incident_id):
    return [(a["action"], a["reviewer"]) for a in engine.records.audit(incident_id)]


def test_the_sla_is_configured_per_severity_and_counted_from_first_seen(data_dir, monkeypatch):
    from pipeline.composition import sla_policy
    from tests.support import make_settings

    monkeypatch.setenv("INCIDENTIQ_SLA_HOURS", "medium=10")
    monkeypatch.setenv("INCIDENTIQ_SLA_FROM", "first_seen")
    settings = make_settings(data_dir)
    assert settings.sla == {"critical": 1.0, "high": 4.0, "medium": 10.0, "low": 72.0}
    seen = T0 - timedelta(hours=3)
    assert sla_policy(settings).deadline(first_seen=seen, opened=T0, severity="medium") == seen + timedelta(hours=10)
    monkeypatch.setenv("INCIDENTIQ_SLA_HOURS", "urgent=1")
    from pipeline.errors import UsageError
    with pytest.raises(UsageError, match="INCIDENTIQ_SLA_HOURS"):
        make_settings(data_dir)


@pytest.fixture
def first_seen_base(monkeypatch):
    """SLAs counted from the first error's time (set before the engine opens: request it first)."""
    monkeypatch.setenv("INCIDENTIQ_SLA_FROM", "first_seen")


@BOTH_BACKENDS
def test_a_log_older_than_its_sla_opens_backfilled_incidents_never_escalated_for_its_age(first_seen_base,
                                                                                          clocked):
    # small.jsonl was written on 2026-11-28: at T0 (three days later) every SLA had run out from its first error
    records = clocked.records
    rows = records.incidents()
    assert rows and all(r["backfilled"] for r in rows)
    hours = clocked.settings.sla
    for r in rows:  # the reviewer's clock runs from when the incident was opened here, by its analysed severity
        assert parse_iso(r["sla_deadline"]) == parse_iso(r["created_at"]) + timedelta(hours=hours[r["severity"]])
    assert escalation.run(clocked).escalated == []
    first = min(parse_iso(r["sla_deadline"]) for r in rows)
    records.clock.set(first - timedelta(seconds=1))
    assert escalation.run(clocked).escalated == []
    records.clock.set(first)  # nobody decided within the SLA since the opening: that is an escalation
    assert escalation.run(clocked).escalated != []


def test_a_live_log_counts_from_its_first_error_when_so_configured_and_is_not_backfilled(first_seen_base, engine,
                                                                                         tmp_path):
    from pipeline.unattended.file_ingest import ingest_path
    from tests.support import write_jsonl

    engine.records.clock = ManualClock(T0)
    seen = T0 - timedelta(minutes=10)
    log = write_jsonl(tmp_path / "live.jsonl", [{"_time": iso(seen), "service": "checkout-api", "level": "ERROR",
                                                  "message": "HikariPool-1 - Connection is not available"}])
    ingest_path(engine, log)
    (row,) = engine.records.incidents()
    assert not row["backfilled"]
    assert parse_iso(row["sla_deadline"]) == seen + timedelta(hours=engine.settings.sla[row["severity"]])


def test_the_sla_counts_from_the_opening_by_default(data_dir, monkeypatch):
    from pipeline.composition import sla_policy
    from tests.support import make_settings

    monkeypatch.setenv("INCIDENTIQ_SOURCE", "file:/var/log/app.log")  # not the demo, whose base was always so
    policy = sla_policy(make_settings(data_dir))
    seen = T0 - timedelta(hours=3)
    assert policy.due(first_seen=seen, opened=T0, severity="medium") == (T0 + timedelta(hours=24), False)
    assert policy.due(first_seen=seen, opened=T0, severity="critical") == (T0 + timedelta(hours=1), True)


def test_at_the_deadline_an_incident_escalates_once_and_after_the_grace_expires_as_system(clocked, capsys):
    records, clock = clocked.records, clocked.records.clock
    inc = min(paused_ids(clocked), key=lambda i: records.incident(i)["sla_deadline"])
    deadline = parse_iso(records.incident(inc)["sla_deadline"])
    clock.set(deadline - timedelta(seconds=1))
    assert inc not in escalation.run(clocked).escalated  # not yet
    clock.set(deadline)
    assert inc in escalation.run(clocked).escalated
    assert records.incident(inc)["escalated_at"] == iso(deadline)
    assert escalation.run(clocked).escalated == []  # once
    service = ReviewService(clocked)
    assert service.document(inc)["escalated_at"] == iso(deadline)
    assert service.inbox(status="awaiting_approval")[0]["escalated_at"] is not None

    clock.set(deadline + timedelta(hours=2))
    done = escalation.run(clocked)
    assert inc in done.expired
    assert records.incident(inc)["status"] == "expired"
    decision = state_of(clocked, inc).decision
    assert (decision.action, decision.reviewer, decision.auth) == ("expire", "system", "system")
    assert _actions(clocked, inc) == [("escalate", "system"), ("expire", "system")]

    code, out, err = cli(capsys, "approve", inc, "--as", "ann")
    assert code == 3 and out == "" and err.count("\n") == 1 and "expired" in err
    assert records.incident(inc)["status"] == "expired"
    assert _actions(clocked, inc)[-1] == ("refused:approve", "ann")


def test_grace_zero_never_expires(clocked):
    clocked.settings = clocked.settings.model_copy(update={"expire_after_hours": 0.0})
    clocked.records.clock.advance(hours=24 * 365)
    done = escalation.run(clocked)
    assert done.expired == [] and sorted(done.escalated) == sorted(paused_ids(clocked))


def test_the_poller_escalates_with_no_browser_open(clocked, tmp_path):
    from pipeline.unattended.poller import Poller
    from pipeline.composition import open_source

    quiet = tmp_path / "quiet.jsonl"
    quiet.write_text("")
    clocked.records.clock.advance(hours=24 * 4)
    poller = Poller(clocked, open_source(f"file:{quiet}", clocked.settings), 1.0)
    try:
        report = poller.poll_once()
        again = poller.poll_once()
    finally:
        poller.close()
    escalated = {a["incident_id"] for a in clocked.records.audit() if a["action"] == "escalate"}
    assert escalated and all(clocked.records.incident(i)["status"] == "expired" for i in escalated)
    assert {a["action"] for a in clocked.records.audit()} == {"escalate", "expire"}
    # the operations page sees what escalation did: in the poll's report, its source's counters and the series
    from pipeline.operations import metrics

    assert (report.escalated, report.expired, again.escalated, again.expired) == (len(escalated), len(escalated), 0, 0)
    # `poll --once` prints the same line: what reached a person is in it, and only when something did
    from pipeline.cli.poll import _report_text

    n = len(escalated)
    assert f" {n} escalated, {n} expired; behind: 0 lines" in _report_text(report.as_json())
    assert "escalated" not in _report_text(again.as_json())
    (status,) = metrics.poller_status(clocked.records)
    assert (status["escalated"], status["expired"]) == (len(escalated), len(escalated))
    assert [(p["escalated"], p["expired"]) for p in metrics.metrics_series(clocked.records)] == \
        [(len(escalated), len(escalated)), (0, 0)]


CHILD = r"""
import json, sys
from datetime import datetime
import pipeline
from pipeline.clock import ManualClock
from pipeline.composition import open_engine
from pipeline.unattended import escalation
engine = open_engine(sync_knowledge=False, clock=ManualClock(datetime.fromisoformat(sys.argv[1])))
done = escalation.run(engine)
print(json.dumps({"escalated": done.escalated, "expired": done.expired}))
"""


def _children(data_dir, at: datetime, n: int) -> list[dict]:
    env = {**child_env(data_dir), "INCIDENTIQ_EXPIRE_AFTER_HOURS": "2",
           "INCIDENTIQ_REPO_DIR": str(ROOT / "samples" / "pos-backend")}
    procs = [subprocess.Popen([sys.executable, "-c", CHILD, at.isoformat()], cwd=ROOT, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(n)]
    outs = [p.communicate(timeout=240) for p in procs]
    assert [p.returncode for p in procs] == [0] * n, [e for _, e in outs]
    return [json.loads(o) for o, _ in outs]


@BOTH_BACKENDS
def test_two_processes_and_a_restart_escalate_and_expire_each_incident_exactly_once(clocked, data_dir):
    waiting = sorted(paused_ids(clocked))
    later = T0 + timedelta(days=10)
    first, second = _children(data_dir, later, 2)
    assert sorted(first["expired"] + second["expired"]) == waiting
    assert sorted(first["escalated"] + second["escalated"]) == waiting
    (restart,) = _children(data_dir, later + timedelta(hours=1), 1)
    assert restart == {"escalated": [], "expired": []}
    for inc in waiting:
        assert _actions(clocked, inc) == [("escalate", "system"), ("expire", "system")]
        assert clocked.records.incident(inc)["status"] == "expired"
