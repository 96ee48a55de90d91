"""The poller in one process: store once, run new incidents, merge evidence, one poller per data
dir, status and metrics in the records store, a background thread that stops cleanly."""
from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest

from pipeline.store import lease
from pipeline.errors import Conflict, StaleInterrupt
from pipeline.engine.graph import thread_config
from pipeline.operations.metrics import metrics_series, poller_status
from pipeline.unattended.poller import Poller
from pipeline.clock import now
from pipeline.review.service import ReviewService
from pipeline.sources import Batch
from pipeline.sources.file import FileSource
from tests.support import BOTH_BACKENDS, FIXTURES, paused_ids

HIKARI = ("HikariPool-1 - Connection is not available, request timed out after {ms}ms.",
          "java.sql.SQLTransientConnectionException")


def hikari_line(second: int, ms: int = 30010) -> str:
    return json.dumps({"_time": f"2026-11-28T10:05:{second:02d}Z", "service": "checkout-api", "host": "co-3",
                       "level": "ERROR", "message": HIKARI[0].format(ms=ms), "exception": HIKARI[1]}) + "\n"


def file_poller(engine, path: Path, **kw) -> Poller:
    return Poller(engine, FileSource(path, max_bytes=engine.settings.max_event_bytes), interval=0.05, **kw)


@pytest.fixture
def log(tmp_path) -> Path:
    path = tmp_path / "logs" / "app.jsonl"
    path.parent.mkdir()
    shutil.copy(FIXTURES / "small.jsonl", path)
    return path


@BOTH_BACKENDS
def test_a_poll_stores_new_events_once_and_runs_new_incidents_to_the_approval_gate(engine, log):
    poller = file_poller(engine, log)
    first = poller.poll_once()
    assert (first.counts.events, len(first.counts.incidents_new), first.runs_started) == (10, 4, 4)
    assert engine.records.status_counts() == {"awaiting_approval": 4}
    again = poller.poll_once()
    assert (again.counts.events, again.runs_started, again.runs_merged) == (0, 0, 0)


def test_status_and_metrics_are_kept_in_the_records_store(engine, log):
    poller = file_poller(engine, log)
    poller.poll_once()
    poller.poll_once()
    (status,) = poller_status(engine.records)
    assert status["source"] == f"file:{log}" and status["state"] == "running" and status["owner"] == poller.owner
    assert (status["polls"], status["events_read"], status["incidents_opened"], status["runs_started"]) == (2, 10, 4, 4)
    assert status["last_poll_at"] and status["latency_ms"] > 0 and status["lag_seconds"] == 0.0
    series = metrics_series(engine.records)
    assert [(r["events"], r["opened"]) for r in series] == [(10, 4), (0, 0)]
    assert metrics_series(engine.records, since=now() + timedelta(minutes=1)) == []
    poller.close()
    assert poller_status(engine.records)[0]["state"] == "stopped"


@BOTH_BACKENDS
def test_a_second_poller_stands_by_and_takes_over_when_the_first_stops(engine, log):
    first, second = file_poller(engine, log), file_poller(engine, log)
    assert not first.poll_once().standby
    waiting = second.poll_once()
    assert waiting.standby and waiting.holder == first.owner and waiting.counts.events == 0
    assert [p["state"] for p in poller_status(engine.records)[0]["pollers"]] == ["standby", "running"]
    first.close()
    with log.open("a") as f:
        f.write(hikari_line(1))
    assert second.poll_once().counts.events == 1
    assert lease.holder(engine.records)["owner"] == second.owner


def test_a_lease_held_by_a_dead_process_is_taken_at_once(engine, log):
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_owner = f"{socket.gethostname()}:{done.stdout.strip()}:gone"
    assert lease.acquire(engine.records, dead_owner, source="demo", ttl=3600)
    assert not file_poller(engine, log).poll_once().standby


@BOTH_BACKENDS
def test_new_evidence_reruns_a_paused_analysis_under_a_new_interrupt(paused_engine, log):
    engine = paused_engine
    incident = next(r for r in engine.records.incidents(status="awaiting_approval") if r["service"] == "checkout-api")
    old_interrupt = incident["pending_interrupt_id"]
    poller = file_poller(engine, log)
    poller.poll_once()  # the same events again: nothing new, nothing re-run
    assert engine.records.incident(incident["incident_id"])["pending_interrupt_id"] == old_interrupt
    with log.open("a") as f:
        f.write(hikari_line(7, 30111) + hikari_line(8, 30222))
    report = poller.poll_once()
    assert (report.counts.events, report.runs_merged) == (2, 1)
    assert report.counts.incidents_updated == {incident["incident_id"]}
    row = engine.records.incident(incident["incident_id"])
    assert row["status"] == "awaiting_approval" and row["pending_interrupt_id"] != old_interrupt
    snap = engine.graph.get_state(thread_config(incident["incident_id"]))
    assert {"30111", "30222"} <= {e.message.split()[-1].rstrip("ms.") for e in snap.values["evidence"]}
    history = list(engine.graph.get_state_history(thread_config(incident["incident_id"])))
    merges = [s for s in history if s.metadata["source"] == "update"]
    assert len(merges) == 1 and merges[0].next == ("retrieval", "rag")  # written as intake
    with pytest.raises(StaleInterrupt):
        ReviewService(engine).approve(incident["incident_id"], reviewer="ana", expect_interrupt=old_interrupt)


@BOTH_BACKENDS
def test_events_for_a_run_in_progress_wait_and_merge_once_it_is_free(paused_engine, log):
    engine = paused_engine
    incident = next(r for r in engine.records.incidents() if r["service"] == "checkout-api")["incident_id"]
    busy = f"{socket.gethostname()}:{__import__('os').getpid()}:reviewer-thread"
    assert engine.records.claim(incident, busy)  # a reviewer's resume holds the run
    with log.open("a") as f:
        f.write(hikari_line(9, 30333))
    poller = file_poller(engine, log)
    report = poller.poll_once()
    assert report.counts.events == 1 and report.runs_merged == 0
    assert engine.records.has_unmerged(incident)
    engine.records.release(incident, busy)
    assert poller.poll_once().runs_merged == 1
    assert not engine.records.has_unmerged(incident)


@BOTH_BACKENDS
def test_the_background_thread_works_and_a_clean_stop_releases_the_lease(engine, log):
    poller = file_poller(engine, log)
    poller.start()
    try:
        # the status is read as the poller records it after a poll: wait for it too (bounded), as
        # the health-light test does; one read could land between the work and its record
        # (before the first poll's end there is no status row at all: nothing to index yet)
        def state() -> str | None:
            rows = poller_status(engine.records)
            return rows[0]["state"] if rows else None

        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and (len(paused_ids(engine)) < 4 or state() != "running"):
            time.sleep(0.05)
        assert poller.alive and state() == "running"
    finally:
        assert poller.stop(timeout=20)
    assert len(paused_ids(engine)) == 4
    assert lease.holder(engine.records) is None
    assert poller_status(engine.records)[0]["state"] == "stopped"


class BrokenSource:
    name = "broken"

    def read(self, cursor):
        raise ZeroDivisionError("a bug in a source")


def test_a_bug_stops_the_loop_loudly_with_its_error_recorded(engine):
    poller = Poller(engine, BrokenSource(), interval=0.01)
    with pytest.raises(ZeroDivisionError):
        poller.run_forever()
    (status,) = poller_status(engine.records)
    assert status["state"] == "error" and status["pollers"][0]["state"] == "crashed"
    assert "ZeroDivisionError: a bug in a source" in status["pollers"][0]["last_error"]
    assert lease.holder(engine.records) is None


class CountingSource:
    """Two batches ready at once, then nothing: the poller reads both in one poll."""

    name = "counting"

    def read(self, cursor):
        n = int(cursor or 0)
        if n >= 2:
            return Batch()
        return Batch(cursor=str(n + 1), more=n + 1 < 2)


def test_a_poll_reads_every_batch_that_is_ready(engine):
    poller = Poller(engine, CountingSource(), interval=0.01)
    report = poller.poll_once()
    assert engine.records.cursor("source:counting") == "2" and not report.more


@BOTH_BACKENDS
def test_poll_once_from_the_cli_refuses_while_another_poller_works(engine, log, monkeypatch):
    from pipeline.cli import main

    monkeypatch.setenv("INCIDENTIQ_SOURCE", f"file:{log}")
    holder = file_poller(engine, log)
    holder.poll_once()
    assert main(["poll", "--once"]) == Conflict.exit_code
    holder.close()
    assert main(["poll", "--once", "--json"]) == 0


def test_a_run_that_keeps_dying_is_given_up_after_the_attempt_limit(data_dir, log):
    """A bug that kills every run of one incident: each try is recorded on that incident and
    counted, the other incidents and the poller keep going, and after MAX_ATTEMPTS it ends
    `failed` with its error instead of being retried forever."""
    from pipeline.store import checkpoints
    from pipeline.analyst.offline import OfflineAnalyst
    from pipeline.composition import open_engine
    from pipeline.engine.runner import MAX_ATTEMPTS
    from tests.support import make_settings

    class DyingAnalyst(OfflineAnalyst):
        def rca(self, state):
            if state.service == "promo-engine":
                raise KeyError("a bug that only this incident's evidence reaches")
            return super().rca(state)

    engine = open_engine(make_settings(data_dir), analyst_for=lambda _settings, kb: DyingAnalyst(kb),
                         sync_knowledge=False)
    try:
        poller = file_poller(engine, log)
        report = poller.poll_once()  # does not raise: the bug is this incident's, not the poller's
        assert report.runs_failed == 1
        assert engine.records.status_counts() == {"awaiting_approval": 3, "failed": 1}
        promo = next(r for r in engine.records.incidents() if r["service"] == "promo-engine")
        assert "RunCrashed: KeyError" in promo["last_error"] and promo["attempts"] == 1
        for _ in range(MAX_ATTEMPTS - 1):
            engine.records.update_incident(promo["incident_id"], next_attempt_at=None)  # retry due now
            assert poller.poll_once().runs_failed == 1
        promo = engine.records.incident(promo["incident_id"])
        assert promo["status"] == "failed" and promo["attempts"] == MAX_ATTEMPTS
        assert "a bug that only this incident" in promo["last_error"]
        assert promo["incident_id"] not in engine.records.incidents_needing_work()
        assert engine.records.status_counts() == {"awaiting_approval": 3, "failed": 1}
    finally:
        engine.records.close()
        checkpoints.close_all()


def test_the_lease_outlasts_an_offline_run(engine, tmp_path):
    offline = Poller(engine, FileSource(tmp_path / "x.jsonl", max_bytes=engine.settings.max_event_bytes), interval=2)
    assert offline.lease_ttl == 30


def _slow_model(_settings, kb):
    from pipeline.analyst.model import ModelAnalyst

    return ModelAnalyst(kb=kb, model="m", base_url="http://127.0.0.1:9/v1", timeout=30)


@pytest.mark.parametrize("analyst_for", [_slow_model], ids=["model"])
def test_the_lease_outlasts_a_slow_model_backed_run(engine, tmp_path):
    slow = Poller(engine, FileSource(tmp_path / "x.jsonl", max_bytes=engine.settings.max_event_bytes), interval=2)
    assert slow.lease_ttl >= 6 * 30  # rca and recommend, each a call and two retries
