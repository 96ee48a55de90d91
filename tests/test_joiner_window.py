"""A batch's outage joiner reads from the store only the open incidents whose window can hold one
of its errors (issue 37): an incident last seen a day before the batch, holding the name its errors
name, is not read, however many such incidents the store holds; one active within the burst window
is read and joined as before."""
from __future__ import annotations

from pipeline.incidents.batch import Incidents
from pipeline.state import LogEvent
from pipeline.store import outage_rows
from tests.support import BOTH_BACKENDS


def _error(n: int, at: str, message: str, service: str = "payments") -> LogEvent:
    return LogEvent(event_id=f"e{n}", time=at, level="ERROR", service=service, message=message)


@BOTH_BACKENDS
def test_a_batch_reads_only_the_open_incidents_active_around_its_errors(engine, monkeypatch):
    incidents: Incidents = engine.incidents
    # a day before: an incident holding what the batch's errors name (their service, the host:port)
    incidents.store_batch([_error(1, "2026-11-27T10:00:00Z", "Connection refused: ledger-db:5432")], cursor=None)
    # two minutes before, another service's: within the burst window
    incidents.store_batch([_error(2, "2026-11-28T09:58:00Z", "Timed out calling ledger-db:5432 after 3000 ms",
                                  service="orders")], cursor=None)
    read: list[str] = []
    holding = outage_rows.open_incidents_holding

    def counted(*args, **kwargs):
        found = holding(*args, **kwargs)
        read.extend(found)
        return found

    monkeypatch.setattr(outage_rows, "open_incidents_holding", counted)
    counts = incidents.store_batch([_error(3, "2026-11-28T10:00:00Z", "Query failed: ledger-db:5432 reset by peer")],
                                   cursor=None)
    old, recent = (engine.records.query("SELECT incident_id FROM events WHERE event_id = $1", (e,))[0]["incident_id"]
                   for e in ("e1", "e2"))
    assert recent in read and old not in read
    assert counts.incidents_updated == {recent} and not counts.incidents_new  # joined the active one, as before
