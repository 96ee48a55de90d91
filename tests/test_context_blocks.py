"""Context events (those that join no incident) are stored as compressed blocks (schema 11): a store
written before keeps its event rows readable, log windows read rows and blocks alike, a re-read
adds nothing, retention drops both, and the data takes a fraction of the log's size."""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import zstandard

from pipeline.clock import iso
from pipeline.incidents.batch import Incidents
from pipeline.state import LogEvent
from pipeline.store import context_blocks, retention
from pipeline.store.records import Records
from pipeline.store.schema import MIGRATIONS, latest
from tests.support import BOTH_BACKENDS, STORED_IDS

START = datetime(2026, 11, 28, 10, 0, tzinfo=timezone.utc)


def _event(i: int, *, level: str = "INFO", service: str = "payments", host: str | None = "web-1",
           offset: timedelta = timedelta(0)) -> LogEvent:
    return LogEvent(event_id=f"{i:024x}", time=(START + timedelta(seconds=i)).astimezone(timezone(offset)),
                    message=f"request {i} served in {i % 97} ms", service=service, host=host, level=level,
                    fields={"format": "json", "n": i, "none": None}, source="app.log", position=f"app.log@{i * 40}",
                    stack="at a\nat b" if i % 7 == 0 else None)


@BOTH_BACKENDS
def test_a_store_of_schema_9_keeps_its_event_rows_and_adds_context_as_blocks(tmp_path, database_url):
    where = database_url or tmp_path / "app.sqlite3"
    old = Records(where, migrations=MIGRATIONS[:9])
    assert old.schema_version == 9
    before = _event(1, offset=timedelta(hours=2))
    with old.transaction() as conn:  # a context event as schema 9 stored it: a row, the whole event its body
        conn.execute("INSERT INTO events(event_id, incident_id, time, service, host, level, exception, message,"
                     " body, source, position, stored_at) VALUES ($1, NULL, $2, $3, $4, $5, NULL, $6, $7, $8, $9, $10)",
                     (before.event_id, iso(before.time), before.service, before.host, before.level, before.message,
                      before.model_dump_json(), before.source, before.position, iso(START)))
    old.close()

    records = Records(where)
    assert records.schema_version == latest()
    incidents = Incidents(records)
    later = [_event(i, offset=timedelta(hours=-5) if i % 2 else timedelta(0)) for i in range(2, 200)]
    errors = [_event(i, level="ERROR") for i in range(200, 203)]
    counts = incidents.store_batch([*later, *errors], cursor=None)
    assert counts.events == len(later) + len(errors) and len(counts.incidents_new) == 1
    # the errors are rows of their incident; the context went into one block
    assert records.query("SELECT count(*) AS n FROM events WHERE incident_id IS NOT NULL")[0]["n"] == 3
    assert records.query("SELECT count(*) AS n, sum(events) AS e FROM context_blocks")[0]["e"] == len(later)
    assert records.event_count() == 1 + len(later) + len(errors)

    window = records.log_window(service="payments", start=START, end=START + timedelta(hours=1), limit=1000)
    assert window == sorted([before, *later, *errors], key=lambda e: e.time)  # every value as it was written
    assert window[0].time.utcoffset() == timedelta(hours=2)
    by_host = records.log_window(service="other", hosts=["web-1"], start=START + timedelta(seconds=50),
                                 end=START + timedelta(seconds=59))
    assert [e.event_id for e in by_host] == [f"{i:024x}" for i in range(50, 60)]
    assert records.log_window(service="payments", start=START, end=START + timedelta(hours=1), limit=5) == window[:5]

    again = incidents.store_batch([before, *later, *errors], cursor=None)  # identity by position: nothing new
    assert again.events == 0
    assert tuple(records.query(f"SELECT count(*) AS n, count(DISTINCT event_id) AS d FROM {STORED_IDS}")[0]) == (
        (1 + len(later) + len(errors),) * 2)
    assert {e.event_id for e in records.all_events()} == {e.event_id for e in [before, *later, *errors]}

    gone = retention.drop_context_events(records, START + timedelta(days=365))
    assert gone == 1 + len(later)
    assert records.event_count() == len(errors)
    assert records.log_window(service="payments", start=START, end=START + timedelta(hours=1)) == errors
    records.close()


def test_a_window_finds_a_block_whose_hour_began_before_the_window(tmp_path):
    records = Records(tmp_path / "app.sqlite3")
    # one block's key for 10:00-10:59: a window from 10:58 must still read it, one from 11:00 must not
    events = [_event(i * 60) for i in range(60)]
    Incidents(records).store_batch(events, cursor=None)
    near = records.log_window(service="payments", start=START + timedelta(minutes=58), end=START + timedelta(hours=2))
    assert [e.event_id for e in near] == [e.event_id for e in events[58:]]
    assert records.log_window(service="payments", start=START + timedelta(hours=1),
                              end=START + timedelta(hours=2)) == []
    records.close()


@BOTH_BACKENDS
def test_a_window_cut_by_its_limit_keeps_the_oldest_of_rows_and_blocks_alike(tmp_path, database_url):
    """The newest events of a window split between an incident's rows and a context block, several
    in one second: every limit keeps the oldest, a second's rows (by id) before its block events
    (by position), whichever half they come from; and each window's events are its caller's own."""
    records = Records(database_url or tmp_path / "app.sqlite3")
    seconds = [0, 1, 1, 2, 2, 2, 2, 3, 4, 5, 5, 6]  # two errors (rows) and three INFO lines (a block) at 2 s
    events = [_event(i, level="ERROR" if i % 3 == 0 else "INFO").model_copy(
        update={"time": START + timedelta(seconds=s), "message": "pool exhausted" if i % 3 == 0 else f"request {i}"})
        for i, s in zip(range(24, 0, -2), seconds)]  # ids fall as time rises: id order is not time order
    counts = Incidents(records).store_batch(events, cursor=None)
    assert counts.events == len(events) and len(counts.incidents_new) == 1
    assert records.query("SELECT count(*) AS n FROM events")[0]["n"] == 4  # the errors; the rest in a block
    rows = {e.event_id for e in events if e.level == "ERROR"}
    expected = sorted(events, key=lambda e: (e.time, e.event_id not in rows,
                                             e.event_id if e.event_id in rows else events.index(e)))
    end = START + timedelta(minutes=1)
    for limit in range(1, len(events) + 2):
        assert records.log_window(service="payments", start=START, end=end, limit=limit) == expected[:limit]
    window = records.log_window(service="payments", start=START, end=end)
    window[0].fields["n"] = -1
    window[1].message = "changed by a caller"
    assert records.log_window(service="payments", start=START, end=end) == expected
    records.close()


def _format_1(events: list[LogEvent]) -> bytes:
    """A block as the code before format 2 wrote it (one zstandard frame: keys, then entries)."""
    keys = [(iso(e.time), e.service, e.host) for e in events]
    text = "\n".join([json.dumps(keys, ensure_ascii=False, separators=(",", ":")),
                      *(json.dumps(context_blocks._entry(e), ensure_ascii=False, separators=(",", ":")) for e in events)])
    return zstandard.ZstdCompressor(level=3).compress(text.encode("utf-8"))


@BOTH_BACKENDS
def test_framed_blocks_give_the_windows_blocks_of_format_1_gave(tmp_path, database_url):
    """Format 2 (keys, then body frames a window decodes only when it builds an event of them)
    returns exactly what format 1 did: every window's events, their values, times and order, at
    every limit; and a store holding blocks of both formats reads both."""
    services = ["payments", "orders", "auth"]
    events = [_event(i, service=services[i % 3], host=f"web-{i % 4}", offset=timedelta(hours=i % 3 - 1))
              .model_copy(update={"time": START + timedelta(seconds=(i * 7) % 300)})  # out of order, ties
              for i in range(3 * context_blocks.FRAME + 17)]
    framed = Records(database_url or tmp_path / "framed.sqlite3")
    assert Incidents(framed).store_batch(events, cursor=None).events == len(events)
    body = framed.query("SELECT body FROM context_blocks")[0]["body"]
    assert bytes(body).startswith(context_blocks.FRAMED)
    old = Records(tmp_path / "old.sqlite3")
    Incidents(old).store_batch(events, cursor=None)
    with old.transaction() as conn:  # the same block as format 1 wrote it
        conn.execute("UPDATE context_blocks SET body = $1", (_format_1(events),))
    windows = [dict(service=s, hosts=h, start=START + timedelta(seconds=a), end=START + timedelta(seconds=a + span))
               for s in [*services, "none"] for h in ([], ["web-1"], ["web-0", "web-3"])
               for a, span in ((0, 300), (100, 80), (299, 1), (-60, 61), (150, 0))]
    for window in windows:
        for limit in (1, 7, 60, 10_000):
            got, expected = framed.log_window(**window, limit=limit), old.log_window(**window, limit=limit)
            assert got == expected
            assert [e.model_dump_json() for e in got] == [e.model_dump_json() for e in expected]
    assert framed.log_window(service="payments", start=START, end=START + timedelta(hours=1), limit=10_000) == sorted(
        (e for e in events if e.service == "payments"), key=lambda e: (e.time, events.index(e)))
    assert sorted(framed.all_events(), key=lambda e: e.event_id) == sorted(old.all_events(), key=lambda e: e.event_id)
    # one store, blocks of both formats: a window reads across them
    Incidents(old).store_batch([_event(i + 5000) for i in range(20)], cursor=None)  # written as format 2
    assert {bytes(r["body"])[:4] == context_blocks.FRAMED for r in old.query("SELECT body FROM context_blocks")} == {True, False}
    mixed = old.log_window(service="payments", start=START, end=START + timedelta(hours=3), limit=10_000)
    later = [_event(i + 5000) for i in range(20)]
    assert mixed == [*sorted((e for e in events if e.service == "payments"), key=lambda e: (e.time, events.index(e))),
                     *later]
    framed.close()
    old.close()


def test_a_cached_event_is_never_the_callers_own(tmp_path):
    """The store keeps the events it built last and hands out copies: an event without fields (an
    empty dict) or with nested ones, changed by a caller, comes back unchanged."""
    records = Records(tmp_path / "app.sqlite3")
    events = [_event(1).model_copy(update={"fields": {}}),
              _event(2).model_copy(update={"fields": {"tags": ["a"], "http": {"status": 500}}})]
    Incidents(records).store_batch(events, cursor=None)
    end = START + timedelta(minutes=1)
    first = records.log_window(service="payments", start=START, end=end)
    assert first == events
    first[0].fields["added"] = 1
    first[1].fields["tags"].append("b")
    first[1].fields["http"]["status"] = 200
    assert records.log_window(service="payments", start=START, end=end) == events
    records.close()
