"""The inbox's views read keyset pages off indexes: every row once, in the view's order, with
counts kept by triggers and a substring search, with or without FTS5."""
from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pytest

from pipeline.clock import ManualClock, iso
from pipeline.errors import UsageError
from pipeline.state import CLOSED_STATUSES, SEVERITIES, LogEvent
from pipeline.store import views
from pipeline.store.records import Records
from pipeline.store.schema import MIGRATIONS
from tests.support import BOTH_BACKENDS

T0 = datetime(2026, 11, 28, 10, 0, tzinfo=timezone.utc)
INBOX_MIGRATION = next(m.version for m in MIGRATIONS if m.optional_needs == "fts5")
STATUSES = ["awaiting_approval", "awaiting_approval", CLOSED_STATUSES[0], "rejected", "analyzing", "failed", "in_revision"]


def _name(k: int) -> str:
    out, k = "", k + 1  # letters: the fingerprint masks digits, and each incident must be its own
    while k:
        k, r = divmod(k - 1, 26)
        out = chr(97 + r) + out
    return out


def seeded(records: Records, n: int = 60) -> list[str]:
    events = [LogEvent(event_id=f"e{k}", time=T0 + timedelta(seconds=k), level="ERROR",
                       service=f"svc-{_name(k % 5)}", exception=f"com.example.{_name(k).capitalize()}Failure",
                       message=f"operation {_name(k)} failed") for k in range(n)]
    ids = []
    for k, event in enumerate(events):  # one at a time: each opens at its own instant
        records.clock.set(T0 + timedelta(seconds=k))
        ids += records.store_batch([event], cursor=None, reopen_minutes=30).incidents_new
    for k, incident_id in enumerate(ids):
        # several share a deadline: the severity and then the opening time must break the tie
        records.clock.set(T0 + timedelta(minutes=k))
        records.update_incident(incident_id, status=STATUSES[k % len(STATUSES)], severity=SEVERITIES[k % 4],
                                category="db_deadlock" if k % 9 == 0 else "disk_full",
                                sla_deadline=iso(T0 + timedelta(hours=k % 4)))
    return ids


@pytest.fixture
def records(database_url):
    store = Records(database_url or ":memory:", clock=ManualClock(T0))
    yield store
    store.close()


def every_page(records: Records, **kwargs) -> list[list[dict]]:
    pages, after = [], None
    while True:
        page = views.inbox_page(records, after=after, limit=7, **kwargs)
        pages.append(page.rows)
        if page.next_cursor is None:
            return pages
        after = page.next_cursor


RANK = {"critical": 0, "high": 1, "medium": 2, "low": 3}


@pytest.mark.parametrize("statuses, key, reverse", [
    (("awaiting_approval",), lambda r: (r["sla_deadline"], RANK[r["severity"]], r["created_at"], r["incident_id"]), False),
    (CLOSED_STATUSES, lambda r: (r["closed_at"], r["incident_id"]), True),
    ((), lambda r: (r["created_at"], r["incident_id"]), True),
])
@BOTH_BACKENDS
def test_keyset_pages_list_every_row_of_a_view_once_in_its_order(records, statuses, key, reverse):
    seeded(records)
    expected = sorted((r for r in records.incidents() if not statuses or r["status"] in statuses), key=key,
                      reverse=reverse)
    pages = every_page(records, statuses=statuses)
    assert [r["incident_id"] for page in pages for r in page] == [r["incident_id"] for r in expected]
    assert all(len(p) == 7 for p in pages[:-1]) and len(expected) > 14


@BOTH_BACKENDS
def test_the_by_service_view_lists_that_service_newest_first(records):
    seeded(records)
    rows = [r for page in every_page(records, service="svc-b") for r in page]
    assert rows and {r["service"] for r in rows} == {"svc-b"}
    assert [r["created_at"] for r in rows] == sorted((r["created_at"] for r in rows), reverse=True)
    assert len(rows) == len([r for r in records.incidents() if r["service"] == "svc-b"])


@BOTH_BACKENDS
def test_search_finds_substrings_of_id_service_title_and_category_names(records):
    ids = seeded(records)
    assert {r["service"] for r in views.inbox_page(records, search="VC-C", limit=100).rows} == {"svc-c"}
    by_title = views.inbox_page(records, search="operation bb fail", limit=100).rows  # title of incident 53
    assert [r["incident_id"] for r in by_title] == [ids[53]] and "operation bb failed" in by_title[0]["title"]
    assert [r["incident_id"] for r in views.inbox_page(records, search=ids[7][-5:], limit=100).rows] == [ids[7]]
    deadlocks = views.inbox_page(records, search="deadlock", limit=100).rows
    assert {r["category"] for r in deadlocks} == {"db_deadlock"} and len(deadlocks) == 7
    assert views.inbox_page(records, search='"; DROP TABLE incidents', limit=5).rows == []


def test_search_without_fts5_falls_back_to_the_same_answers(tmp_path):
    # a build without FTS5 skips the optional statements of the inbox migration: search scans instead
    no_fts = tuple(replace(m, optional_needs="no_such_extension") if m.optional else m for m in MIGRATIONS)
    plain, indexed = (Records(tmp_path / name, clock=ManualClock(T0), migrations=m)
                      for name, m in (("plain.sqlite3", no_fts), ("fts.sqlite3", MIGRATIONS)))
    seeded(plain), seeded(indexed)
    assert not plain.query("SELECT 1 FROM sqlite_master WHERE name = 'incidents_search'")
    for text in ("svc-c", "operation bb", "deadlock", "ab"):
        got = [[r["incident_id"] for r in views.inbox_page(s, search=text, limit=100).rows] for s in (plain, indexed)]
        assert got[0] == got[1] and got[0], text


@BOTH_BACKENDS
def test_counts_follow_every_status_change(records):
    ids = seeded(records)
    counted = lambda: {s: n for s, n in records.status_counts().items()}  # noqa: E731
    recount = lambda: {r["status"]: r["n"] for r in records.query(  # noqa: E731
        "SELECT status, count(*) AS n FROM incidents GROUP BY status")}
    assert counted() == recount() and sum(counted().values()) == 60
    records.update_incident(ids[0], status="fixed")
    records.update_incident(ids[1], severity="high")  # not a status change
    assert counted() == recount()


@BOTH_BACKENDS
def test_a_cursor_from_another_view_is_a_usage_error(records):
    seeded(records)
    cursor = views.inbox_page(records, statuses=("awaiting_approval",), limit=2).next_cursor
    with pytest.raises(UsageError, match="not a cursor"):
        views.inbox_page(records, statuses=CLOSED_STATUSES, after=cursor)


@BOTH_BACKENDS
def test_the_poll_query_finds_paused_incidents_with_new_evidence_only(records):
    ids = seeded(records)
    moving = {i for i, k in zip(ids, range(60)) if STATUSES[k % 7] in ("analyzing", "in_revision", "failed")}
    records.mark_merged(f"e{k}" for k in range(60))
    assert set(records.incidents_needing_work()) == moving
    paused = ids[0]
    late = LogEvent(event_id="late", time=T0 + timedelta(minutes=1), level="ERROR", service="svc-a",
                    exception="com.example.AFailure", message="operation a failed")
    records.store_batch([late], cursor=None, reopen_minutes=30)
    assert records.incident(paused)["event_count"] == 2
    assert set(records.incidents_needing_work()) == moving | {paused}
    assert records.incidents_needing_work() == sorted(
        records.incidents_needing_work(), key=lambda i: records.incident(i)["created_at"])


def test_a_store_of_the_previous_schema_is_searchable_after_migrating(tmp_path):
    path = tmp_path / "app.sqlite3"
    old = Records(path, clock=ManualClock(T0), migrations=tuple(m for m in MIGRATIONS if m.version < INBOX_MIGRATION))
    ids = seeded(old)
    old.close()
    records = Records(path, clock=ManualClock(T0))
    assert [r["incident_id"] for r in views.inbox_page(records, search=ids[7][-6:], limit=5).rows] == [ids[7]]
    assert len(views.inbox_page(records, search="svc-a", limit=100).rows) == 12
    assert records.status_counts() == {r["status"]: r["n"] for r in records.query(
        "SELECT status, count(*) AS n FROM incidents GROUP BY status")}
    records.update_incident(ids[7], category="db_deadlock")  # its search row follows it
    assert ids[7] in [r["incident_id"] for r in views.inbox_page(records, search="deadlock", limit=100).rows]


@BOTH_BACKENDS
def test_the_review_service_pages_the_awaiting_view_as_the_inbox_lists_it(paused_engine):
    from pipeline.review.service import ReviewService

    service = ReviewService(paused_engine)
    listed = [r["incident_id"] for r in service.inbox(status="awaiting_approval")]
    first = service.inbox_page(status="awaiting_approval", limit=3)
    second = service.inbox_page(status="awaiting_approval", limit=3, after=first["next_cursor"])
    assert [r["incident_id"] for r in first["rows"] + second["rows"]] == listed and second["next_cursor"] is None
    assert all(r["approvals_needed"] in (1, 2) and r["approvals"] == [] for r in first["rows"])
