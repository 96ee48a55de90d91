"""The records store writes only the columns it offers, and reads the time from its clock."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from pipeline.incidents.batch import Incidents
from pipeline.clock import ManualClock, iso
from pipeline.errors import UnknownColumn, UsageError
from pipeline.state import LogEvent
from pipeline.store import poller_rows
from pipeline.store.records import Records
from tests.support import BOTH_BACKENDS

pytestmark = BOTH_BACKENDS

T0 = datetime(2026, 11, 28, 10, 0, tzinfo=timezone.utc)


def error_event(n: int, at: datetime) -> LogEvent:
    return LogEvent(event_id=f"e{n}", time=at, level="ERROR", service="checkout-api",
                    exception="java.sql.SQLTransientConnectionException", message="HikariPool-1 - timed out")


@pytest.fixture
def clock():
    return ManualClock(T0)


@pytest.fixture
def records(clock, database_url):
    store = Records(database_url or ":memory:", clock=clock)
    yield store
    store.close()


def test_an_unknown_incident_column_is_refused_by_name_and_nothing_is_written(records):
    Incidents(records).store_batch([error_event(1, T0)], cursor=None)
    (row,) = records.incidents()
    with pytest.raises(UnknownColumn, match="incidents.status = 'fixed' --") as caught:
        records.update_incident(row["incident_id"], severity="high", **{"status = 'fixed' --": "x"})
    assert isinstance(caught.value, UsageError) and caught.value.column == "status = 'fixed' --"
    assert records.incident(row["incident_id"])["severity"] == "medium"


@pytest.mark.parametrize("column", ["updated_at", "claimed_at", "claim_owner", "event_count", "fingerprint"])
def test_columns_the_store_keeps_itself_are_not_writable(records, column):
    Incidents(records).store_batch([error_event(1, T0)], cursor=None)
    (row,) = records.incidents()
    with pytest.raises(UnknownColumn, match=f"incidents.{column}"):
        records.update_incident(row["incident_id"], **{column: "x"})


def test_an_unknown_poll_counter_is_refused_by_name(records):
    with pytest.raises(UnknownColumn, match="source_stats.polls = 0, errors"):
        poller_rows.add_poll(records, source="demo", increments={"polls = 0, errors": 1}, latency_ms=1.0,
                            lag_seconds=None, error=None)
    assert poller_rows.source_stats(records) == {}


def test_times_the_store_writes_come_from_its_clock(records, clock):
    Incidents(records).store_batch([error_event(1, T0 - timedelta(hours=3))], cursor=("source:demo", "1"))
    (row,) = records.incidents()
    assert row["created_at"] == row["updated_at"] == iso(T0)
    # medium until analysed, counted from its opening on the clock (not the first error, 3 hours before)
    assert row["sla_deadline"] == iso(T0 + timedelta(hours=24))
    clock.advance(minutes=5)
    records.update_incident(row["incident_id"], status="rejected")
    closed = records.incident(row["incident_id"])
    assert closed["updated_at"] == closed["closed_at"] == iso(T0 + timedelta(minutes=5))


def test_a_decided_incident_takes_no_events_back_however_soon_they_come(records, clock):
    """Before issue 35.4 an incident closed 29 minutes ago (INCIDENTIQ_REOPEN_MINUTES) took its
    pattern's events back; now they open a new incident linked to it."""
    Incidents(records).store_batch([error_event(1, T0)], cursor=None)
    (first,) = records.incidents()
    records.update_incident(first["incident_id"], status="rejected")
    clock.advance(minutes=1)
    opened = Incidents(records).store_batch([error_event(2, clock.now())], cursor=None)
    (new,) = opened.incidents_new
    assert not opened.incidents_updated and records.incident(first["incident_id"])["event_count"] == 1
    linked = records.incident(new)
    assert (linked["linked_to"], linked["link_kind"], linked["link_status"]) == (first["incident_id"], "recurred",
                                                                                 "rejected")
    joined = Incidents(records).store_batch([error_event(3, clock.now())], cursor=None)
    assert joined.incidents_updated == {new} and not joined.incidents_new  # the new one is open: it takes them


def test_new_evidence_of_a_paused_incident_waits_the_merge_delay_on_the_clock(records, clock):
    Incidents(records).store_batch([error_event(1, T0)], cursor=None)
    (row,) = records.incidents()
    records.mark_merged(["e1"])
    records.update_incident(row["incident_id"], status="awaiting_approval")
    Incidents(records).store_batch([error_event(2, T0)], cursor=None)
    clock.advance(seconds=59)
    assert records.incidents_needing_work(merge_delay=60) == []
    clock.advance(seconds=1)
    assert records.incidents_needing_work(merge_delay=60) == [row["incident_id"]]


def test_some_fields_of_an_incident_read_as_the_whole_record_has_them(records):
    from pipeline.errors import IncidentNotFound

    Incidents(records).store_batch([error_event(1, T0)], cursor=None)
    (row,) = records.incidents()
    records.update_incident(row["incident_id"], status="awaiting_approval", summary={"title": "pool"})
    whole = records.incident(row["incident_id"])
    assert records.incident_fields(row["incident_id"], "status", "first_seen", "sla_deadline") == {
        "status": "awaiting_approval", "first_seen": whole["first_seen"], "sla_deadline": whole["sla_deadline"]}
    with pytest.raises(UsageError):  # the summary is stored compressed: `incident` reads it
        records.incident_fields(row["incident_id"], "summary")
    with pytest.raises(UsageError):  # a column name reaches the SQL text
        records.incident_fields(row["incident_id"], "status FROM incidents --")
    with pytest.raises(IncidentNotFound):
        records.incident_fields("INC-00000000-000000", "status")
