"""A bug one incident reaches stays that incident's; the poller keeps going and
a dead poller thread is restarted and shown."""
from __future__ import annotations

import json
import threading
import time

import pytest

from pipeline.analyst.offline import OfflineAnalyst
from pipeline.engine.runner import MAX_ATTEMPTS, run_pending
from pipeline.unattended.file_ingest import ingest_path
from pipeline.operations.metrics import poller_status
from pipeline.unattended.poller import Poller
from pipeline.services import OperationsService, ReviewService, Services
from pipeline.sources.file import FileSource
from tests.support import BOTH_BACKENDS, FIXTURES, paused_ids
from workbench.health import light
from workbench.runtime import Workbench


class DyingAnalyst(OfflineAnalyst):
    def rca(self, state):
        if state.service == "promo-engine":
            raise KeyError("customer_id")
        return super().rca(state)


@pytest.mark.parametrize("analyst_for", [lambda _settings, kb: DyingAnalyst(kb)], ids=["dying"])
def test_run_pending_keeps_going_past_an_incident_whose_run_raises_a_bug(engine):
    ingest_path(engine, FIXTURES / "small.jsonl")
    assert engine.records.status_counts() == {"awaiting_approval": 3, "failed": 1}
    (promo,) = engine.records.incidents(status="failed")
    assert promo["service"] == "promo-engine" and promo["attempts"] == 1
    assert promo["last_error"].startswith("RunCrashed: KeyError")
    engine.records.update_incident(promo["incident_id"], next_attempt_at=None)
    report = run_pending(engine)
    assert report.failed == [promo["incident_id"]]
    assert engine.records.incident(promo["incident_id"])["attempts"] == 2 < MAX_ATTEMPTS


def test_run_pending_works_through_more_due_incidents_than_a_batch_and_stops_at_its_limit(engine):
    from pipeline.ingest.events import normalize
    from pipeline.store import due

    n = due.BATCH + 4
    engine.incidents.store_batch([normalize({"_time": f"2026-11-28T10:{k // 60:02d}:{k % 60:02d}Z", "service": f"svc-{k}",
                                           "level": "ERROR", "message": f"payment {k} declined"}, position=str(k))
                                for k in range(n)], cursor=None)
    assert engine.records.status_counts() == {"analyzing": n}
    first = run_pending(engine, limit=3)
    assert len(first.advanced) == 3 and not first.failed and not first.skipped
    assert engine.records.status_counts() == {"analyzing": n - 3, "awaiting_approval": 3}
    rest = run_pending(engine)
    assert len(rest.advanced) == n - 3 and not set(rest.advanced) & set(first.advanced)
    assert engine.records.status_counts() == {"awaiting_approval": n}


class FlakyBugSource(FileSource):
    """A source with a bug on its first reads, then fine."""

    def __init__(self, *args, bugs: int, **kwargs):
        super().__init__(*args, **kwargs)
        self.bugs = bugs

    def read(self, cursor):
        if self.bugs:
            self.bugs -= 1
            raise ZeroDivisionError("a bug in a source")
        return super().read(cursor)


def wait_for(predicate, seconds: float = 60.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


@BOTH_BACKENDS
def test_the_background_poller_survives_a_bug_and_stores_what_follows(engine, tmp_path):
    log = tmp_path / "app.jsonl"
    log.write_bytes((FIXTURES / "small.jsonl").read_bytes())
    poller = Poller(engine, FlakyBugSource(log, max_bytes=engine.settings.max_event_bytes, bugs=2), interval=0.01)
    poller.start()
    try:
        assert wait_for(lambda: len(paused_ids(engine)) == 4), engine.records.status_counts()
        assert poller.alive and poller.restarts == 2
        assert "ZeroDivisionError: a bug in a source" in poller.last_crash
    finally:
        assert poller.stop(timeout=30)


class ThreadKiller(BaseException):
    """Something no handler of ours catches: the thread ends."""


class KillingSource(FileSource):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.kill = threading.Event()
        self.kill.set()

    def read(self, cursor):
        if self.kill.is_set():
            self.kill.clear()
            raise ThreadKiller("gone")
        return super().read(cursor)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
@BOTH_BACKENDS
def test_a_dead_poller_thread_shows_red_and_is_restarted_by_the_health_light(engine, tmp_path):
    log = tmp_path / "app.jsonl"
    log.write_bytes((FIXTURES / "small.jsonl").read_bytes())
    poller = Poller(engine, KillingSource(log, max_bytes=engine.settings.max_event_bytes), interval=0.01)
    services = Services(settings=engine.settings, review=ReviewService(engine), operations=OperationsService(engine),
                        knowledge=None)
    workbench = Workbench(services=services, poller=poller)
    poller.start()
    try:
        assert wait_for(lambda: not poller.alive)
        color, headline, _ = light(workbench, poller_status(engine.records))
        assert (color, headline) == ("red", "Poller stopped")
        assert poller.ensure_running() and poller.restarts == 1
        assert wait_for(lambda: len(paused_ids(engine)) == 4)
        # the light turns green once the restarted poller has recorded a poll (its row says running);
        # the incidents can pause before that poll's end is written
        assert wait_for(lambda: light(workbench, poller_status(engine.records))[0] == "green", seconds=30), \
            light(workbench, poller_status(engine.records))
    finally:
        assert poller.stop(timeout=30)
    assert not poller.ensure_running()  # a poller stopped on purpose stays stopped


@BOTH_BACKENDS
def test_the_foreground_poll_command_survives_a_bug(engine):
    """`poll` (not --once) runs the supervised loop: nothing a source raises ends it."""
    source = FlakyBugSource(FIXTURES / "small.jsonl", max_bytes=engine.settings.max_event_bytes, bugs=1)
    poller = Poller(engine, source, interval=0.01)
    stop = threading.Event()
    seen = []

    def on_report(report):
        seen.append(report)
        if len(paused_ids(engine)) == 4:
            stop.set()

    runner = threading.Thread(target=poller.run_supervised, args=(stop,), kwargs={"on_report": on_report})
    runner.start()
    runner.join(60)
    stop.set()
    assert not runner.is_alive() and poller.restarts == 1
    assert json.dumps(engine.records.status_counts()) == json.dumps({"awaiting_approval": 4})
