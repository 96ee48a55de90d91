"""An opening event's message is masked once when it is stored: by the miner's masks. The
pre-miner masks (the masked fingerprint incidents had before the miner) run only in a store that
held events before the miner came, where such incidents can be (issue 37.2)."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from pipeline.clock import ManualClock
from pipeline.incidents import correlation
from pipeline.incidents.batch import Incidents
from pipeline.state import LogEvent
from pipeline.store import incident_rows
from pipeline.store.records import Records

T0 = datetime(2026, 11, 28, 10, 0, tzinfo=timezone.utc)


def error_event(n: int) -> LogEvent:
    return LogEvent(event_id=f"e{n}", time=T0 + timedelta(seconds=n), level="ERROR", service="checkout-api",
                    exception="java.sql.SQLTransientConnectionException",
                    message=f"HikariPool-1 - Connection is not available, request timed out after {30000 + n}ms.")


@pytest.fixture
def records():
    store = Records(":memory:", clock=ManualClock(T0 + timedelta(minutes=1)))
    yield store
    store.close()


@pytest.fixture
def pre_miner_masks(monkeypatch):
    """Counts the pre-miner masks' runs (`correlation.template`, its titles included)."""
    calls: list[str] = []
    template = correlation.template

    def counted(message: str) -> str:
        calls.append(message)
        return template(message)
    monkeypatch.setattr(correlation, "template", counted)
    return calls


def test_a_burst_of_one_error_is_masked_by_the_miner_alone(records, pre_miner_masks):
    counts = Incidents(records).store_batch([error_event(n) for n in range(50)], cursor=None)
    assert len(counts.incidents_new) == 1
    (incident,) = counts.incidents_new
    assert records.incident(incident)["event_count"] == 50
    # no event is masked a second time (a title in the log's own words masks nothing; one masked by
    # the pre-miner template would be the only run)
    assert len(pre_miner_masks) <= 1


def test_an_incident_opened_before_the_miner_keeps_receiving_its_events(records, pre_miner_masks):
    # a store upgraded from before the miner: it held events then (migration 2 marked it), and an
    # incident of the masked fingerprint is still open
    first = error_event(0)
    with records.transaction() as conn:
        conn.execute("INSERT INTO store_meta(key, value) VALUES ('content_ids', 'yes') ON CONFLICT DO NOTHING")
        incident_rows.insert_incident(conn, incident_id="INC-20261128-0ld0ld", fingerprint=correlation.fingerprint(first),
                                      title="old", service=first.service, severity="medium",
                                      first_seen=T0.isoformat(), stamp=T0.isoformat(),
                                      sla_deadline=(T0 + timedelta(hours=4)).isoformat())
    counts = Incidents(records).store_batch([error_event(n) for n in range(1, 4)], cursor=None)
    assert not counts.incidents_new
    assert records.incident("INC-20261128-0ld0ld")["event_count"] == 3  # the three joined it
    assert pre_miner_masks  # that store still masks for the old fingerprint
